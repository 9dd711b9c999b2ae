// KERNEL-LAYOUT: the sequence kernels on channel-major states
// (SequencePlan::channels_first, PyTorch's NCHW) give the bits of the same
// kernels on the position-major states, permuted: forward, dual (at y and at
// a kept slope) and weight gradient, on the direct path (2-D and 3-D grids,
// several pieces, lines cut by the wavefront's chunks) and on the product
// path (1-D convolutions, recurrent machines with several time blocks).
// Agreement of the position-major kernels with the reference is
// KERNEL-CONV*, KERNEL-RECUR and KERNEL-DIRECT (property_tests/).
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

// A position-major state of the plan, channel-major ((b·N + c)·L + t), or
// back.
template <class T>
std::vector<T> permuted(const SequencePlan &p, const std::vector<T> &v, bool to) {
  std::vector<T> out(v.size());
  for (Index b = 0; b < p.batch; ++b)
    for (Index t = 0; t < p.length; ++t)
      for (Index c = 0; c < p.n; ++c) {
        const Index pm = (b * p.length + t) * p.n + c, cm = (b * p.n + c) * p.length + t;
        (to ? out[cm] : out[pm]) = to ? v[pm] : v[cm];
      }
  return out;
}

template <class T> bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Every output of the three kernels, position-major, on the plan's layout.
template <class T> struct Passes {
  std::vector<T> y, z, ybar, zbar, dw, ybar_at_slope, zbar_at_slope;
};

// `permute`: the states handed over in the plan's layout (else as they are).
template <class T> Passes<T> run(const SequencePlan &p, Activation sigma, bool permute = true) {
  const Index ns = p.state_size(), nw = p.weight_size();
  const bool cf = p.channels_first && permute;
  auto in = [&](unsigned seed) {
    const std::vector<T> v = random_values<T>(ns, seed);
    return cf ? permuted(p, v, true) : v;
  };
  auto out = [&](const std::vector<T> &v) { return cf ? permuted(p, v, false) : v; };
  const std::vector<T> w = random_values<T>(nw, 1), y0 = in(2), z0 = in(3), gy = in(4), gz = in(5);
  std::vector<T> y(ns), z(ns), yb(ns), zb(ns), dw(nw);
  sequence_forward<T>(p, sigma, w, y0, z0, y, z);
  sequence_dual<T>(p, sigma, w, y, gy, gz, yb, zb);
  sequence_weight_gradient<T>(p, z, yb, dw);
  Passes<T> r{out(y), out(z), out(yb), out(zb), dw, {}, {}};
  if (keeps_slope(p)) { // the slope is the kernel's own order: opaque in either layout
    std::vector<T> slope(ns), y2(ns), z2(ns), yb2(ns), zb2(ns);
    sequence_forward<T>(p, sigma, w, y0, z0, y2, z2, slope);
    sequence_dual<T>(p, w, slope, gy, gz, yb2, zb2);
    r.ybar_at_slope = out(yb2);
    r.zbar_at_slope = out(zb2);
  }
  return r;
}

template <class T> void check_layouts(SequencePlan p, Activation sigma) {
  p.channels_first = false;
  const Passes<T> rows = run<T>(p, sigma);
  p.channels_first = true;
  const Passes<T> cols = run<T>(p, sigma);
  CHECK(same_bits(cols.y, rows.y));
  CHECK(same_bits(cols.z, rows.z));
  CHECK(same_bits(cols.ybar, rows.ybar));
  CHECK(same_bits(cols.zbar, rows.zbar));
  CHECK(same_bits(cols.dw, rows.dw));
  CHECK(same_bits(cols.ybar_at_slope, rows.ybar_at_slope));
  CHECK(same_bits(cols.zbar_at_slope, rows.zbar_at_slope));
  // Not a vacuous comparison: the machine moved every state.
  CHECK(std::any_of(rows.zbar.begin(), rows.zbar.end(), [](T v) { return v != T(0); }));
}

} // namespace

TEST_CASE("KERNEL-LAYOUT: channel-major states give the bits of position-major ones") {
  SECTION("direct path: 2-D and 3-D grids, several pieces") {
    const SequencePlan a = plan(ConvGridShape{{4, 8, 5, 3}, {9, 13}, 5, {1, 1, 1, 1}, 2});
    const SequencePlan b = plan(ConvGridShape{{3, 6, 4}, {4, 5, 7}, 3, {1, 1, 1, 1, 2, 0}, 0});
    const SequencePlan c = plan(ConvGridShape{{16, 16, 16}, {40, 60}, 2, {1, 1, 2, 2}, 1});
    for (const SequencePlan &p : {a, b, c}) {
      REQUIRE(direct_wanted(p));
      check_layouts<float>(p, Activation::tanh);
      check_layouts<double>(p, Activation::sigmoid);
    }
  }
  SECTION("product path: 1-D convolutions and recurrent machines, kept slopes") {
    const SequencePlan a = plan(ConvMachineShape{{5, 7, 4}, 11, 6, 3, 2, 4});
    const SequencePlan b = plan(RecurMachineShape{{4, 6, 3}, 17, 5, 6, 5, 2});
    const SequencePlan c = plan(ConvGridShape{{80, 80}, {9, 9}, 3, {1, 1, 1, 1}, 0});
    for (const SequencePlan &p : {a, b, c}) {
      REQUIRE_FALSE(direct_wanted(p));
      check_layouts<float>(p, Activation::tanh);
      check_layouts<double>(p, Activation::identity);
    }
    REQUIRE(keeps_slope(a));
  }
}

TEST_CASE("KERNEL-THREADS: channel-major states give the same bits for 1 and 2 threads") {
  const double before = kernels::parallel_work;
  const int threads = omp_get_max_threads();
  kernels::parallel_work = 0; // every call of more than one piece in parallel
  for (SequencePlan p : {plan(ConvGridShape{{4, 8, 5, 3}, {9, 13}, 5, {1, 1, 1, 1}, 2}),
                         plan(RecurMachineShape{{4, 6, 3}, 17, 5, 6, 5, 2})}) {
    p.channels_first = true;
    omp_set_num_threads(1);
    const Passes<float> one = run<float>(p, Activation::tanh);
    omp_set_num_threads(2);
    const Passes<float> two = run<float>(p, Activation::tanh);
    CHECK(same_bits(two.z, one.z));
    CHECK(same_bits(two.zbar, one.zbar));
    CHECK(same_bits(two.dw, one.dw));
    CHECK(same_bits(two.zbar_at_slope, one.zbar_at_slope));
  }
  kernels::parallel_work = before;
  omp_set_num_threads(threads);
}

TEST_CASE("KERNEL-LAYOUT mutant: position-major states read as channel-major change the bits") {
  SequencePlan p = plan(ConvGridShape{{4, 8, 5, 3}, {9, 13}, 5, {1, 1, 1, 1}, 2});
  const Passes<float> rows = run<float>(p, Activation::tanh);
  p.channels_first = true;
  const Passes<float> wrong = run<float>(p, Activation::tanh, false);
  CHECK_FALSE(same_bits(wrong.z, rows.z));
  CHECK_FALSE(same_bits(wrong.dw, rows.dw));
}
