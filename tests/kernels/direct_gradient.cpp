// The chunks of the direct path's weight gradient
// (src/pm/kernels/direct_gradient.hpp): with chunks of gapped positions
// smaller than a sample, smaller than the largest shift, not dividing the
// batch, or one chunk for the whole batch, and with a batch of one sample,
// ∂W agrees with the long-double reference within the bound of
// docs/tolerances.md ("Kernels"), as KERNEL-DIRECT checks at the chunks the
// kernel chooses; and its bits depend neither on the chunk nor on the thread
// count (KERNEL-THREADS).
#include "pm/kernels.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>

#include "pm/kernels/reference_check.hpp"
#include "pm/layers/conv_machine.hpp"

using namespace pm;
using namespace pm::kernels;

namespace {

struct GridCase {
  std::vector<Index> dims, extents, pad;
  Index batch;
};

SequencePlan plan_of(const GridCase &c) {
  return plan(ConvGridShape{c.dims, c.extents, c.batch, c.pad});
}

// The reference's verdict on the dual sweep and the gradient with chunks of
// `chunk` positions.
template <class T> Comparison against_reference(const GridCase &c, Index chunk) {
  const SequencePlan p = plan_of(c);
  MachineKernel<T> k;
  k.dual = [p](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    direct_dual<T>(p, Activation::tanh, w, y, gy, gz, yb, zb);
  };
  k.gradient = [p, chunk](auto z, auto yb, auto dw) {
    kernels::detail::direct_weight_gradient_by<T>(p, z, yb, dw, chunk);
  };
  const ConvMachine<LD> m(c.dims, reference_sigma(Activation::tanh), c.pad, c.extents);
  return compare_backward(machine_problem<T>("direct gradient", m.machine(), Activation::tanh,
                                             c.batch, 11, k, p.n * p.taps.size()),
                          true);
}

template <class T> std::vector<T> gradient_bits(const GridCase &c, Index chunk, int threads) {
  const SequencePlan p = plan_of(c);
  const double work_before = parallel_work;
  const int threads_before = omp_get_max_threads();
  parallel_work = 0;
  omp_set_num_threads(threads);
  std::vector<T> z(p.state_size()), yb(p.state_size()), dw(p.weight_size());
  for (Index k = 0; k < z.size(); ++k) {
    z[k] = T(Index(k * 37 % 201) - 100) / T(100);
    yb[k] = T(Index(k * 53 % 199) - 99) / T(99);
  }
  kernels::detail::direct_weight_gradient_by<T>(p, z, yb, dw, chunk);
  parallel_work = work_before;
  omp_set_num_threads(threads_before);
  return dw;
}

template <class T> void check_chunks(const GridCase &c) {
  constexpr Index lanes = kernels::detail::DirectTile<T>::lanes;
  const SequencePlan p = plan_of(c);
  const kernels::detail::GappedLayout g(p);
  const Index end = pieces(c.batch * g.sample, lanes) * lanes;
  // Chunks of one packet (smaller than the largest shift and than a
  // sample), of an odd number of packets that does not divide the batch, and
  // one for the whole batch.
  Index odd = 3 * lanes;
  while (end % odd == 0) odd += 2 * lanes;
  const Index small = lanes, whole = end;
  REQUIRE(g.margin > small);
  REQUIRE(g.sample > odd);
  for (Index chunk : {small, odd, whole}) {
    const Comparison r = against_reference<T>(c, chunk);
    INFO("chunk " << chunk << ": " << r.failure);
    CHECK_FALSE(r.failed());
    CHECK(r.outputs > 0);
    CHECK_FALSE(r.too_weak());
  }
  const std::vector<T> one = gradient_bits<T>(c, 0, 1);
  for (Index chunk : {small, odd, whole})
    for (int threads : {1, 3}) {
      const std::vector<T> other = gradient_bits<T>(c, chunk, threads);
      INFO("chunk " << chunk << ", " << threads << " threads");
      CHECK(std::memcmp(other.data(), one.data(), one.size() * sizeof(T)) == 0);
    }
}

} // namespace

TEST_CASE("direct gradient: chunks inside a sample, smaller than a shift, not dividing the batch") {
  check_chunks<float>({{3, 9, 5}, {4, 5, 19}, {1, 1, 0, 2, 1, 1}, 2});
  check_chunks<double>({{4, 6, 2}, {7, 40}, {1, 1, 2, 1}, 2});
}

TEST_CASE("direct gradient: a batch of one sample") {
  check_chunks<float>({{8, 8}, {9, 33}, {1, 1, 1, 1}, 1});
  check_chunks<double>({{2, 3, 4}, {5, 6, 7}, {2, 1, 1, 2, 1, 0}, 1});
}
