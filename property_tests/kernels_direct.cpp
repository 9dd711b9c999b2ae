// Differential law of the direct path of the convolution machine kernels
// (src/pm/kernels/direct_conv.hpp, direct_gradient.hpp): on 1-D, 2-D and 3-D grids the direct
// forward sweep, dual sweep and weight gradient, in float and double, agree
// with the reference graded span machine in long double within the bound of
// docs/tolerances.md ("Kernels"), as the product path does (KERNEL-CONV,
// KERNEL-CONV2D, KERNEL-CONV3D). The kernels choose the direct path by shape
// (direct_wanted) only on larger problems than a property can afford to
// check against the reference, so the law calls the direct entry points
// themselves. The grids span several tiles of positions and the channel
// blocks are up to 10 wide, so that partial tiles of outputs and of taps
// occur.
#include "pm/kernels.hpp"
#include "pm/kernels/check_cases.hpp"
#include "support/kernel_check.hpp"
#include "support/law.hpp"

using namespace pm;
using namespace pm::kernels;
using pm_test::verdict;

namespace {

// A convolution machine on 1 to 3 axes.
struct DirectCase {
  std::vector<Index> dims, extents, pad;
  CaseCommon c;
};

SequencePlan plan_of(const DirectCase &c) {
  return plan(ConvGridShape{c.dims, c.extents, c.c.batch, c.pad, c.c.piece});
}

template <class T> MachineKernel<T> direct_kernel(const SequencePlan &plan, Activation sigma) {
  MachineKernel<T> k;
  k.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    direct_forward<T>(plan, sigma, w, y0, z0, y, z);
  };
  k.dual = [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    direct_dual<T>(plan, sigma, w, y, gy, gz, yb, zb);
  };
  k.gradient = [=](auto z, auto yb, auto dw) { direct_weight_gradient<T>(plan, z, yb, dw); };
  return k;
}

template <class T> MachineProblem<T> problem_with(const DirectCase &dc, const SequencePlan &plan) {
  const ConvMachine<LD> m(dc.dims, reference_sigma(dc.c.sigma), dc.pad, dc.extents);
  std::ostringstream os;
  os << "direct conv<" << type_name(T()) << "> grid=";
  for (Index j = 0; j < dc.extents.size(); ++j) os << (j ? "x" : "") << dc.extents[j];
  os << " pad=(";
  for (Index j = 0; j < dc.pad.size(); ++j) os << (j ? "," : "") << dc.pad[j];
  os << ") " << describe(dc.dims, dc.c);
  return machine_problem<T>(os.str(), m.machine(), dc.c.sigma, dc.c.batch, dc.c.seed,
                            direct_kernel<T>(plan, dc.c.sigma), plan.n * plan.taps.size());
}

template <class T> MachineProblem<T> problem(const DirectCase &dc) {
  return problem_with<T>(dc, plan_of(dc));
}

// Mutant: the kernel read backwards along the innermost lines.
MachineProblem<double> flipped(const DirectCase &dc) {
  SequencePlan plan = plan_of(dc);
  for (auto &tap : plan.taps) {
    tap.shift -= 2 * tap.col;
    tap.col = -tap.col;
  }
  return problem_with<double>(dc, plan);
}

} // namespace

namespace rc {
// Axes 1 to 3; innermost lines longer than a tile of positions on one axis;
// padding from 0 to 3 on every side (larger than a grid of 1 or 2).
template <> struct Arbitrary<DirectCase> {
  static Gen<DirectCase> arbitrary() {
    return gen::exec([] {
      DirectCase c;
      const Index axes = *gen::inRange<Index>(1, 4);
      const Index largest[] = {0, 100, 11, 5};
      c.dims = *gen::resize(
          3, gen::nonEmpty(gen::container<std::vector<Index>>(gen::inRange<Index>(1, 11))));
      for (Index j = 0; j < axes; ++j)
        c.extents.push_back(*gen::inRange<Index>(1, largest[axes] + 1));
      for (Index j = 0; j < 2 * axes; ++j) c.pad.push_back(*gen::inRange<Index>(0, 4));
      c.c = *gen::build<CaseCommon>(
          gen::set(&CaseCommon::batch, gen::inRange<Index>(1, 5)),
          gen::set(&CaseCommon::piece, gen::element<Index>(1, 2, 3)),
          gen::set(&CaseCommon::sigma,
                   gen::element(Activation::identity, Activation::tanh, Activation::sigmoid)),
          gen::set(&CaseCommon::seed, gen::arbitrary<std::uint32_t>()));
      return c;
    });
  }
};
} // namespace rc

template <class T> void check(const DirectCase &c, int pass) {
  const MachineProblem<T> p = problem<T>(c);
  verdict(pass == 0 ? compare_forward(p) : compare_backward(p, pass == 2), p.repro);
}

TEST_CASE("KERNEL-DIRECT: the direct path of the convolution kernels agrees with the reference") {
  rc::prop("forward float", [](const DirectCase &c) { check<float>(c, 0); });
  rc::prop("forward double", [](const DirectCase &c) { check<double>(c, 0); });
  rc::prop("dual float", [](const DirectCase &c) { check<float>(c, 1); });
  rc::prop("dual double", [](const DirectCase &c) { check<double>(c, 1); });
  rc::prop("gradient float", [](const DirectCase &c) { check<float>(c, 2); });
  rc::prop("gradient double", [](const DirectCase &c) { check<double>(c, 2); });
}

TEST_CASE("KERNEL-DIRECT mutant: the kernel read backwards along the innermost lines") {
  for (int pass = 0; pass < 3; ++pass)
    CHECK(pm_test::rejects([pass](const DirectCase &c) {
      const MachineProblem<double> p = flipped(c);
      verdict(pass == 0 ? compare_forward(p) : compare_backward(p, pass == 2), p.repro);
    }));
}
