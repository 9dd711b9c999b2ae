// The wavefront of the direct sweeps (src/pm/kernels/direct_conv.hpp,
// detail::wavefront) at the chunks where its edges are: a chunk of one tile
// with shifts of several tiles (the later levels run many chunks behind), a
// chunk longer than a piece of samples (one step), chunks that end inside a
// line and inside a sample of a piece of several, and grids smaller than a
// tile. Each case runs the direct forward and dual sweeps at that chunk and
// compares them with the long double reference machine within the bounds of
// docs/tolerances.md ("Kernels"), as KERNEL-DIRECT does at the default chunk
// (property_tests/kernels_direct.cpp).
#include "pm/kernels.hpp"
#include "pm/kernels/check_cases.hpp"
#include "pm/kernels/reference_check.hpp"

#include <catch2/catch.hpp>

using namespace pm;
using namespace pm::kernels;

namespace {

struct SweepCase {
  std::vector<Index> dims, extents, pad;
  Index batch, piece, chunk;
};

template <class T> MachineProblem<T> problem(const SweepCase &c, Activation sigma) {
  const SequencePlan p = plan(ConvGridShape{c.dims, c.extents, c.batch, c.pad, c.piece});
  const Index chunk = c.chunk;
  MachineKernel<T> k;
  k.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    direct_forward<T>(p, sigma, w, y0, z0, y, z, chunk);
  };
  k.dual = [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    direct_dual<T>(p, sigma, w, y, gy, gz, yb, zb, chunk);
  };
  k.gradient = [=](auto z, auto yb, auto dw) { direct_weight_gradient<T>(p, z, yb, dw); };
  const ConvMachine<LD> m(c.dims, reference_sigma(sigma), c.pad, c.extents);
  return machine_problem<T>("direct sweeps", m.machine(), sigma, c.batch, 7, k,
                            p.n * p.taps.size());
}

void require_agrees(const Comparison &c) {
  INFO(c.failure);
  CHECK_FALSE(c.failed());
  CHECK(c.outputs > 0);
  CHECK_FALSE(c.too_weak());
}

template <class T> void check(const SweepCase &c, Activation sigma) {
  const MachineProblem<T> p = problem<T>(c, sigma);
  require_agrees(compare_forward(p));
  require_agrees(compare_backward(p, false));
}

} // namespace

TEST_CASE("direct sweeps: the wavefront agrees with the reference at every chunk") {
  // A tile is 16–48 positions (the packets of the target); `chunk` is
  // rounded up to tiles.
  const std::vector<SweepCase> cases = {
      // Shifts of up to 65 positions, chunks of one tile: level i runs
      // several chunks behind level i − 1; pieces of two samples.
      {{3, 5, 4, 2}, {4, 6, 7}, {1, 1, 1, 1, 1, 1}, 3, 2, 1},
      // The same with chunks longer than the piece: a single step.
      {{3, 5, 4, 2}, {4, 6, 7}, {1, 1, 1, 1, 1, 1}, 3, 2, 100000},
      // Chunks that end inside lines of 100 and inside the samples of a
      // piece of three, taps up to 3 positions away.
      {{4, 6, 3}, {100}, {3, 2}, 4, 3, 50},
      // Grids smaller than a tile, several samples in a tile, padding
      // larger than the grid.
      {{2, 3, 5}, {3, 2}, {2, 0, 1, 2}, 5, 3, 1},
      {{5, 5}, {2, 2, 2}, {1, 3, 0, 1, 2, 1}, 4, 4, 1},
      // A 2-D grid of several tiles per line, chunks of two tiles.
      {{8, 8, 8}, {5, 70}, {1, 1, 2, 2}, 2, 1, 60},
  };
  for (const SweepCase &c : cases) {
    CAPTURE(c.extents, c.dims, c.chunk);
    check<float>(c, Activation::tanh);
    check<double>(c, Activation::sigmoid);
  }
}
