// Differential laws of the machine kernels (src/pm/kernels/): for the dense,
// 1-D convolution and recurrent machines, the forward sweep, the dual sweep
// and the weight gradient, in float and double, agree with the reference
// graded span machine (src/pm/machine/, built by src/pm/layers/) run in long
// double, within a forward error bound derived in docs/tolerances.md
// ("Kernels"). The bound is itself the resolvent of a linear machine on |W|
// (the error recursion runs level by level like the machine), so it is
// computed with the reference solver on absolute values. Each case is drawn
// from a one-line description (shape, σ, batch piece, data seed) that a
// failure prints; a case whose outputs are mostly below their tolerance is
// too weak to show anything and is discarded as such, not passed.
#include "pm/kernels.hpp"

#include "pm/kernels/check_cases.hpp"
#include "support/case_ranges.hpp"
#include "support/kernel_check.hpp"
#include "support/law.hpp"

using namespace pm;
using namespace pm::kernels;
using pm_test::in;
using pm_test::one_of;
using pm_test::verdict;
namespace ranges = pm::kernels::case_ranges;

namespace {

template <class T> void check_forward(const MachineProblem<T> &p) {
  verdict(compare_forward(p), p.repro);
}
template <class T> void check_backward(const MachineProblem<T> &p, bool gradient) {
  verdict(compare_backward(p, gradient), p.repro);
}

rc::Gen<CaseCommon> commons() {
  return rc::gen::build<CaseCommon>(
      rc::gen::set(&CaseCommon::batch, in(ranges::batch)),
      rc::gen::set(&CaseCommon::piece, one_of(ranges::pieces)),
      rc::gen::set(&CaseCommon::sigma, one_of(ranges::sigmas)),
      rc::gen::set(&CaseCommon::seed, rc::gen::arbitrary<std::uint32_t>()));
}

// Channel blocks: size 1 often; for dense also empty blocks.
rc::Gen<std::vector<Index>> blocks(const ranges::Blocks &b) {
  const auto block =
      rc::gen::weightedOneOf<Index>({{std::size_t(b.empty_weight()), rc::gen::just<Index>(0)},
                                     {std::size_t(b.one_weight), rc::gen::just<Index>(1)},
                                     {std::size_t(b.more_weight), in(b.more())}});
  return rc::gen::resize(int(b.max_blocks),
                         rc::gen::nonEmpty(rc::gen::container<std::vector<Index>>(block)));
}

// ---- Mutants: each replaces one call of a correct problem's kernel ------

// Dense: W read transposed in the forward sweep.
template <class T> MachineProblem<T> transposed_weights(const DenseCase &dc) {
  MachineProblem<T> p = problem<T>(dc);
  const DenseMachineShape shape = shape_of(dc);
  const Index n = shape.channels();
  const Activation sigma = dc.c.sigma;
  p.kernel.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    std::vector<T> wt(w.size());
    for (Index x = 0; x < n; ++x)
      for (Index t = 0; t < n; ++t) wt[x * n + t] = w[t * n + x];
    dense_forward<T>(shape, sigma, wt, y0, z0, y, z);
  };
  return p;
}

// Dense: a kernel in T that computes in float, a loss of precision the bound sees.
template <class T> MachineProblem<T> single_precision(const DenseCase &dc) {
  MachineProblem<T> p = problem<T>(dc);
  const DenseMachineShape shape = shape_of(dc);
  const Activation sigma = dc.c.sigma;
  p.kernel.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    const std::vector<float> wf(w.begin(), w.end()), af(y0.begin(), y0.end()),
        bf(z0.begin(), z0.end());
    std::vector<float> yf(y.size()), zf(z.size());
    dense_forward<float>(shape, sigma, wf, af, bf, yf, zf);
    std::copy(yf.begin(), yf.end(), y.begin());
    std::copy(zf.begin(), zf.end(), z.begin());
  };
  return p;
}

// Dense: σ' taken at z instead of y (the dual kernel is given the wrong state).
template <class T> MachineProblem<T> activation_of_z(const DenseCase &dc) {
  MachineProblem<T> p = problem<T>(dc);
  auto dual = p.kernel.dual;
  const std::vector<T> zs = p.b;
  p.kernel.dual = [dual, zs](auto w, auto, auto gy, auto gz, auto yb, auto zb) {
    dual(w, zs, gy, gz, yb, zb);
  };
  return p;
}

// Dense: the gradient cleaned as if every block had one channel (too little).
template <class T> MachineProblem<T> uncleaned(const DenseCase &dc) {
  MachineProblem<T> p = problem<T>(dc);
  DenseMachineShape g = shape_of(dc);
  g.dims = std::vector<Index>(g.channels(), 1);
  p.kernel.gradient = [=](auto z, auto yb, auto dw) { dense_weight_gradient<T>(g, z, yb, dw); };
  return p;
}

// Sequences: the kernel read backwards (a true convolution); on grids along
// the innermost lines only.
void flip(SequencePlan &plan, bool grid) {
  for (auto &tap : plan.taps)
    if (grid) {
      tap.shift -= 2 * tap.col;
      tap.col = -tap.col;
    } else {
      tap.shift = -tap.shift;
    }
}
template <class Case> MachineProblem<double> flipped(const Case &c, bool grid) {
  MachineProblem<double> p = problem<double>(c);
  SequencePlan plan = plan_of(c);
  flip(plan, grid);
  p.kernel = sequence_kernel<double>(plan, c.c.sigma);
  return p;
}

// Recurrent: the kernel's time block off by one.
MachineProblem<double> timeblock_off(const RecurCase &rc) {
  MachineProblem<double> p = problem<double>(rc);
  RecurCase k = rc;
  ++k.timeblock;
  p.kernel = sequence_kernel<double>(plan_of(k), rc.c.sigma);
  return p;
}

} // namespace

namespace rc {
template <> struct Arbitrary<DenseCase> {
  static Gen<DenseCase> arbitrary() {
    return gen::build<DenseCase>(gen::set(&DenseCase::dims, blocks(ranges::dense_blocks)),
                                 gen::set(&DenseCase::c, commons()));
  }
};
// Lengths from 1 (shorter than the padding) up; padding on either side.
template <> struct Arbitrary<ConvCase> {
  static Gen<ConvCase> arbitrary() {
    return gen::build<ConvCase>(gen::set(&ConvCase::dims, blocks(ranges::conv_blocks)),
                                gen::set(&ConvCase::length, in(ranges::conv_length)),
                                gen::set(&ConvCase::lo, in(ranges::conv_pad)),
                                gen::set(&ConvCase::hi, in(ranges::conv_pad)),
                                gen::set(&ConvCase::c, commons()));
  }
};
// Grids from 1 × 1 (× 1) (smaller than the padding) up; padding on every side.
template <Index Axes> struct Arbitrary<GridCase<Axes>> {
  static Gen<GridCase<Axes>> arbitrary() {
    return gen::exec([] {
      GridCase<Axes> c;
      c.dims = *blocks(ranges::grid_blocks);
      for (Index j = 0; j < Axes; ++j) c.extents.push_back(*in(ranges::grid_extent<Axes>));
      for (Index j = 0; j < 2 * Axes; ++j) c.pad.push_back(*in(ranges::grid_pad));
      c.c = *commons();
      return c;
    });
  }
};
// Lengths not divisible by the time block, lags beyond the time block and
// beyond the length.
template <> struct Arbitrary<RecurCase> {
  static Gen<RecurCase> arbitrary() {
    return gen::build<RecurCase>(gen::set(&RecurCase::dims, blocks(ranges::recur_blocks)),
                                 gen::set(&RecurCase::length, in(ranges::recur_length)),
                                 gen::set(&RecurCase::max_lag, in(ranges::recur_lag)),
                                 gen::set(&RecurCase::timeblock, in(ranges::recur_timeblock)),
                                 gen::set(&RecurCase::c, commons()));
  }
};
} // namespace rc

TEST_CASE("KERNEL-DENSE-FORWARD: the forward sweep agrees with the level solver") {
  rc::prop("float", [](const DenseCase &c) { check_forward(problem<float>(c)); });
  rc::prop("double", [](const DenseCase &c) { check_forward(problem<double>(c)); });
}

TEST_CASE("KERNEL-DENSE-FORWARD mutant: weights read transposed") {
  CHECK(pm_test::rejects([](const DenseCase &c) { check_forward(transposed_weights<double>(c)); }));
}

TEST_CASE("KERNEL-DENSE-FORWARD mutant: a double kernel that rounds to float") {
  CHECK(pm_test::rejects([](const DenseCase &c) { check_forward(single_precision<double>(c)); }));
}

TEST_CASE("KERNEL-DENSE-DUAL: the dual sweep agrees with the reference backward pass") {
  rc::prop("float", [](const DenseCase &c) { check_backward(problem<float>(c), false); });
  rc::prop("double", [](const DenseCase &c) { check_backward(problem<double>(c), false); });
}

TEST_CASE("KERNEL-DENSE-DUAL mutant: sigma' taken at z instead of y") {
  CHECK(pm_test::rejects(
      [](const DenseCase &c) { check_backward(activation_of_z<double>(c), false); }));
}

TEST_CASE("KERNEL-DENSE-GRADIENT: the weight gradient agrees with the reference") {
  rc::prop("float", [](const DenseCase &c) { check_backward(problem<float>(c), true); });
  rc::prop("double", [](const DenseCase &c) { check_backward(problem<double>(c), true); });
}

TEST_CASE("KERNEL-DENSE-GRADIENT mutant: the gradient cleaned for single-channel blocks") {
  CHECK(pm_test::rejects([](const DenseCase &c) { check_backward(uncleaned<double>(c), true); }));
}

// The six properties of a machine's kernels: forward sweep, dual sweep and
// weight gradient, in float and double; make(T(), case) builds the problem.
template <class Case, class Make> void check_machine(Make make) {
  rc::prop("forward float", [make](const Case &c) { check_forward(make(float(), c)); });
  rc::prop("forward double", [make](const Case &c) { check_forward(make(double(), c)); });
  rc::prop("dual float", [make](const Case &c) { check_backward(make(float(), c), false); });
  rc::prop("dual double", [make](const Case &c) { check_backward(make(double(), c), false); });
  rc::prop("gradient float", [make](const Case &c) { check_backward(make(float(), c), true); });
  rc::prop("gradient double", [make](const Case &c) { check_backward(make(double(), c), true); });
}

// The three statements each reject a mutant machine: make(case) builds the
// mutant's problem in double.
template <class Case, class Make> void check_rejected(Make make) {
  CHECK(pm_test::rejects([make](const Case &c) { check_forward(make(c)); }));
  CHECK(pm_test::rejects([make](const Case &c) { check_backward(make(c), false); }));
  CHECK(pm_test::rejects([make](const Case &c) { check_backward(make(c), true); }));
}

TEST_CASE("KERNEL-CONV: the 1-D convolution machine kernels agree with the reference") {
  check_machine<ConvCase>([](auto t, const ConvCase &c) { return problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-CONV mutant: the kernel read backwards") {
  check_rejected<ConvCase>([](const ConvCase &c) { return flipped(c, false); });
}

TEST_CASE("KERNEL-CONV2D: the 2-D convolution machine kernels agree with the reference") {
  check_machine<Conv2Case>([](auto t, const Conv2Case &c) { return problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-CONV2D mutant: the kernel read backwards along the rows") {
  check_rejected<Conv2Case>([](const Conv2Case &c) { return flipped(c, true); });
}

TEST_CASE("KERNEL-CONV3D: the 3-D convolution machine kernels agree with the reference") {
  check_machine<Conv3Case>([](auto t, const Conv3Case &c) { return problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-CONV3D mutant: the kernel read backwards along the innermost lines") {
  check_rejected<Conv3Case>([](const Conv3Case &c) { return flipped(c, true); });
}

TEST_CASE("KERNEL-RECUR: the recurrent machine kernels agree with the reference") {
  check_machine<RecurCase>([](auto t, const RecurCase &c) { return problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-RECUR mutant: the time block off by one") {
  check_rejected<RecurCase>([](const RecurCase &c) { return timeblock_off(c); });
}
