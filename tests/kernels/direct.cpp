// The direct path of the convolution kernels (src/pm/kernels/direct_conv.hpp, direct_gradient.hpp):
// the same bits for 1, 2 and 4 threads and for buffers at other alignments
// (KERNEL-THREADS), which shapes take it, and that the sequence kernels hand
// those shapes to it. Agreement with the reference is KERNEL-DIRECT
// (property_tests/kernels_direct.cpp).
#include "pm/kernels.hpp"
#include "tests/support/random_values.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>
#include <random>

using namespace pm;
using namespace pm::kernels;
using pm_test::random_values;

namespace {

// The outputs of the three direct passes, read at `offset` into their
// buffers, run with `threads` threads and every call of more than one piece
// in parallel.
template <class T> std::vector<T> direct_outputs(const SequencePlan &p, int threads, Index offset) {
  const double work_before = parallel_work;
  const int threads_before = omp_get_max_threads();
  parallel_work = 0;
  omp_set_num_threads(threads);
  const Index ns = p.state_size(), nw = p.weight_size();
  const auto w = random_values<T>(nw, 1, offset), y0 = random_values<T>(ns, 2, offset),
             z0 = random_values<T>(ns, 3, offset), gy = random_values<T>(ns, 4, offset),
             gz = random_values<T>(ns, 5, offset);
  std::vector<T> y(ns + offset), z(ns + offset), yb(ns + offset), zb(ns + offset), dw(nw + offset);
  auto in = [offset](const std::vector<T> &v) { return std::span<const T>(v).subspan(offset); };
  auto out = [offset](std::vector<T> &v) { return std::span<T>(v).subspan(offset); };
  direct_forward<T>(p, Activation::tanh, in(w), in(y0), in(z0), out(y), out(z));
  direct_dual<T>(p, Activation::tanh, in(w), in(y), in(gy), in(gz), out(yb), out(zb));
  direct_weight_gradient<T>(p, in(z), in(yb), out(dw));
  parallel_work = work_before;
  omp_set_num_threads(threads_before);
  std::vector<T> all;
  for (const auto *v : {&y, &z, &yb, &zb, &dw})
    all.insert(all.end(), v->begin() + offset, v->end());
  return all;
}

template <class T> bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

std::vector<SequencePlan> plans() {
  return {plan(ConvGridShape{{3, 9, 5}, {4, 5, 19}, 5, {1, 1, 0, 2, 1, 1}, 2}),
          plan(ConvGridShape{{8, 8}, {7, 40}, 3, {1, 1, 2, 1}, 0}),
          plan(ConvMachineShape{{4, 6, 2}, 150, 3, 3, 3, 1})};
}

} // namespace

TEST_CASE("KERNEL-THREADS: the direct path gives the same bits for 1, 2 and 4 threads") {
  for (const SequencePlan &p : plans()) {
    const auto one = direct_outputs<float>(p, 1, 0);
    CHECK(same_bits(direct_outputs<float>(p, 2, 0), one));
    CHECK(same_bits(direct_outputs<float>(p, 4, 0), one));
    CHECK(same_bits(direct_outputs<float>(p, 2, 3), one)); // buffers off their alignment
    const auto one_double = direct_outputs<double>(p, 1, 0);
    CHECK(same_bits(direct_outputs<double>(p, 4, 1), one_double));
  }
}

TEST_CASE("direct path: chosen for small channel blocks on long enough grids") {
  // Rows of bench/compare_pytorch.py with 32-, 16- and 8-channel blocks (at
  // 64 channels the choice follows the registers of the target).
  CHECK(direct_wanted(plan(ConvGridShape{{16, 16, 16, 16}, {32, 32}, 8, {1, 1, 1, 1}})));
  CHECK(direct_wanted(plan(ConvGridShape{{8, 8, 8, 8}, {16, 16, 16}, 4, {1, 1, 1, 1, 1, 1}})));
  CHECK(direct_wanted(plan(ConvGridShape{{32, 32, 32, 32}, {64, 64}, 8, {1, 1, 1, 1}})));
  CHECK(direct_wanted(plan(ConvMachineShape{{64, 64, 64, 64}, 256, 16, 3, 3})) ==
        (direct_max_block >= 64));
  // Wider blocks, short sequences, several time blocks, one position.
  CHECK_FALSE(direct_wanted(plan(ConvMachineShape{{65, 65}, 256, 16, 3, 3})));
  CHECK_FALSE(direct_wanted(plan(ConvMachineShape{{32, 32, 32, 32, 32}, 16, 32, 3, 3})));
  CHECK_FALSE(direct_wanted(plan(RecurMachineShape{{8, 8}, 128, 16, 6, 5})));
  CHECK_FALSE(direct_wanted(plan(ConvMachineShape{{8, 8}, 1, 16, 0, 0})));
}

TEST_CASE("direct path: the sequence kernels run it where it is chosen") {
  const SequencePlan p = plan(ConvGridShape{{4, 4}, {9, 9}, 2, {1, 1, 1, 1}});
  REQUIRE(direct_wanted(p));
  const Index ns = p.state_size(), nw = p.weight_size();
  const auto w = random_values<float>(nw, 1, 0), y0 = random_values<float>(ns, 2, 0),
             z0 = random_values<float>(ns, 3, 0), g = random_values<float>(ns, 4, 0);
  std::vector<float> y(ns), z(ns), yd(ns), zd(ns), yb(ns), zb(ns), ybd(ns), zbd(ns), dw(nw),
      dwd(nw);
  sequence_forward<float>(p, Activation::sigmoid, w, y0, z0, y, z);
  direct_forward<float>(p, Activation::sigmoid, w, y0, z0, yd, zd);
  sequence_dual<float>(p, Activation::sigmoid, w, y, g, z0, yb, zb);
  direct_dual<float>(p, Activation::sigmoid, w, y, g, z0, ybd, zbd);
  sequence_weight_gradient<float>(p, z, yb, dw);
  direct_weight_gradient<float>(p, z, yb, dwd);
  CHECK(same_bits(y, yd));
  CHECK(same_bits(z, zd));
  CHECK(same_bits(yb, ybd));
  CHECK(same_bits(zb, zbd));
  CHECK(same_bits(dw, dwd));
}
