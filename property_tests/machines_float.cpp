// Laws of spec/machines.md in double precision, where σ is transcendental
// (tanh, sigmoid, softplus): bit-identical causality and level schedule, and
// parameter gradients against central finite differences within the bound
// derived in docs/tolerances.md ("Machines"). Each with the mutant it rejects.
#include "support/compare.hpp"
#include "support/machine_generators.hpp"

using namespace pm_test;
using pm::Batch;
using pm::Function;
using D = double;
using Kind = pm::Sigma<D>::Kind;

namespace {

constexpr D u = std::numeric_limits<D>::epsilon() / 2;

bool identical(const Function<D> &a, const Function<D> &b) {
  if (a.size() != b.size()) return false;
  for (Index i = 0; i < a.size(); ++i)
    if (!pm::bit_identical(a[i], b[i])) return false;
  return true;
}

// ---- DEPTH-LEVEL-SCHEDULE in double --------------------------------------

// The sweep performs the operations of the machine equation in the same
// order, so it equals the naive resolvent bit for bit.
template <template <class> class Solver> void law_schedule_double() {
  const auto c = *machine_case<D>(false);
  classify(has_valid_weight(c));
  const auto x = Solver<D>{}(c);
  for (Index b = 0; b < c.y0.cols; ++b) {
    const pm::Machine<D> f = pm::as_machine(c.machine(), c.w, b);
    RC_ASSERT(identical(pm::resolvent(f, c.x0(b), 2 * c.grading.levels()), state(x, b)));
  }
}

// ---- MACH-PARAM-GRADIENT against central differences ----------------------

// sup |σ'|, sup |σ''|, sup |σ'''| over the real line.
struct Sup {
  D s1, s2, s3;
};
Sup sup_derivatives(Kind k) {
  switch (k) {
  case Kind::tanh:
    return {1, 0.77, 2}; // 4/(3√3) < 0.77
  case Kind::sigmoid:
    return {0.25, 0.1, 0.125}; // √3/18 < 0.1
  case Kind::softplus:
    return {1, 0.25, 0.1}; // the sigmoid's bounds, shifted
  default:
    return {1, 0, 0}; // identity
  }
}
// A bound on |σ(y)| for |y| ≤ Y.
D value_bound(Kind k, D y) {
  switch (k) {
  case Kind::tanh:
    return std::min<D>(1, y);
  case Kind::sigmoid:
    return 1;
  case Kind::softplus:
    return y + 0.7; // softplus(y) ≤ max(y, 0) + log 2
  default:
    return y;
  }
}
// The error of evaluating σ (or σ') at a value of magnitude ≤ v, assuming
// libm's exp, log1p and tanh are within 2 ulps (docs/tolerances.md).
D eval_error(Kind k, D v) { return k == Kind::identity ? 0 : 16 * u * (v + 1); }

// Majorants over the segment w + t e_p, |t| ≤ h, per entry of the state:
// y[k], z[k] bound |d^k y/dt^k|, |d^k z/dt^k| (k ≤ 3), and ey, ez bound the
// rounding error of the computed y, z (first order in u).
struct Majorants {
  Batch<D> y[4], z[4], ey, ez;
};
Majorants majorants(const MachineCase<D> &c, const pm::GradedSpanMachine<D> &m, Index p, D h) {
  const Index n = c.y0.rows, cols = c.y0.cols;
  const Sup s = sup_derivatives(c.sigma.kind());
  const auto &sp = m.span().span;
  Majorants a;
  for (auto *v :
       {&a.y[0], &a.y[1], &a.y[2], &a.y[3], &a.z[0], &a.z[1], &a.z[2], &a.z[3], &a.ey, &a.ez})
    *v = Batch<D>(n, cols);
  std::vector<Index> fan_in(n);
  for (Index b = 0; b < cols; ++b)
    for (Index k = 0; k < m.levels(); ++k) {
      std::fill(fan_in.begin(), fan_in.end(), 0);
      for (Index e : m.edges_into(k)) {
        const Index si = sp.s(e), ti = sp.t(e);
        const bool on_p = m.span().pi(e) == p;
        const D mu = std::abs(sp.mu[e]), wt = mu * (std::abs(c.w[m.span().pi(e)]) + (on_p ? h : 0));
        a.y[0](ti, b) += wt * a.z[0](si, b);
        for (int j = 1; j <= 3; ++j)
          a.y[j](ti, b) += wt * a.z[j](si, b) + (on_p ? j * mu * a.z[j - 1](si, b) : 0);
        a.ey(ti, b) += wt * a.ez(si, b);
        ++fan_in[ti];
      }
      for (Index i : m.members(k)) {
        a.y[0](i, b) += std::abs(c.y0(i, b));
        a.ey(i, b) += gamma<D>(2 * fan_in[i] + 2) * a.y[0](i, b);
        const D y1 = a.y[1](i, b), y2 = a.y[2](i, b), y3 = a.y[3](i, b);
        const D s0 = value_bound(c.sigma.kind(), a.y[0](i, b));
        a.z[0](i, b) = std::abs(c.z0(i, b)) + s0;
        a.z[1](i, b) = s.s1 * y1;
        a.z[2](i, b) = s.s2 * y1 * y1 + s.s1 * y2;
        a.z[3](i, b) = s.s3 * y1 * y1 * y1 + 3 * s.s2 * y1 * y2 + s.s1 * y3;
        a.ez(i, b) = u * a.z[0](i, b) + eval_error(c.sigma.kind(), s0) + s.s1 * a.ey(i, b);
      }
    }
  return a;
}

D loss(const pm::MachineState<D> &x, const Batch<D> &gy, const Batch<D> &gz) {
  D l = 0;
  for (Index j = 0; j < gy.data.size(); ++j)
    l += gy.data[j] * x.y.data[j] + gz.data[j] * x.z.data[j];
  return l;
}

// |FD − ∂ℓ/∂w_p| ≤ h² M₃/6 (truncation) + E_ℓ/h (rounding of ℓ at w ± h)
//   + M₁ u (|w_p| + h)/h (rounding of w_p ± h) + γ₂ (M₁ + E_ℓ/h) (the
//   difference quotient) + E_g (rounding of the backward pass),
// with M_k = Σ |g| · (k-th derivative majorant) and E_g from the backward
// pass run on absolute values (docs/tolerances.md, "Machines").
D fd_bound(const MachineCase<D> &c, const pm::GradedSpanMachine<D> &m, Index p, D h,
           const Batch<D> &gy, const Batch<D> &gz) {
  const Majorants a = majorants(c, m, p, h);
  const Sup s = sup_derivatives(c.sigma.kind());
  D m1 = 0, m3 = 0, sum = 0, el = 0;
  for (Index j = 0; j < gy.data.size(); ++j) {
    const D ay = std::abs(gy.data[j]), az = std::abs(gz.data[j]);
    m1 += ay * a.y[1].data[j] + az * a.z[1].data[j];
    m3 += ay * a.y[3].data[j] + az * a.z[3].data[j];
    sum += ay * a.y[0].data[j] + az * a.z[0].data[j];
    el += ay * a.ey.data[j] + az * a.ez.data[j];
  }
  el += gamma<D>(2 * gy.data.size() + 1) * sum;
  // The backward pass on absolute values (weights |μ| |w|, slopes sup |σ'|)
  // bounds |ȳ| and |z̄|; run again with the error of σ'(y) as source, it
  // bounds the first-order effect of that error on ȳ.
  const Index n = c.y0.rows, cols = c.y0.cols;
  pm::ParametricSpan<D> abs_span = m.span();
  for (auto &v : abs_span.span.mu) v = std::abs(v);
  Function<D> abs_w = c.w;
  for (auto &v : abs_w) v = std::abs(v);
  const pm::GradedSpanMachine<D> abs_m(c.grading, abs_span,
                                       pm::Sigma<D>::array(Batch<D>(n, 1, s.s1)));
  const pm::MachineState<D> abs_x{a.y[0], a.z[0]};
  const auto ga = pm::backward(abs_m, abs_w, abs_x, absolute(gy), absolute(gz));
  Batch<D> dc(n, cols);
  for (Index j = 0; j < dc.data.size(); ++j)
    dc.data[j] = (s.s2 * a.ey.data[j] + eval_error(c.sigma.kind(), s.s1)) * ga.z0.data[j];
  const auto gd = pm::backward(abs_m, abs_w, abs_x, dc, Batch<D>(n, cols));
  D ez = 0; // the error of z, carried by ȳ into the gradient
  for (Index b = 0; b < cols; ++b)
    ez += pm::parameter_gradient(abs_span, a.ez.column(b), ga.y0.column(b))[p];
  if (!pm::valid_parameters(c.span, c.grading)[p]) ez = 0;
  const Index chain = 4 * (m.span().apex() + 2 * n + 2) * (2 * m.levels() + 1);
  const D eg = gamma<D>(chain) * ga.w[p] + gd.w[p] + ez;
  const D bound = h * h * m3 / 6 + el / h + m1 * u * (std::abs(c.w[p]) + h) / h +
                  gamma<D>(2) * (m1 + el / h) + eg;
  return bound * (1 + gamma<D>(64)); // the rounding of the bound itself
}

// The reference parameter gradient, and a mutant that does not clean it.
struct Backward {
  Function<D> operator()(const MachineCase<D> &c, const pm::MachineState<D> &x, const Batch<D> &gy,
                         const Batch<D> &gz) const {
    return pm::backward(c.machine(), c.w, x, gy, gz).w;
  }
};
struct UncleanedGradient {
  Function<D> operator()(const MachineCase<D> &c, const pm::MachineState<D> &x, const Batch<D> &gy,
                         const Batch<D> &gz) const {
    const auto g = pm::backward(c.machine(), c.w, x, gy, gz);
    Function<D> w(c.w.size(), 0);
    for (Index b = 0; b < x.y.cols; ++b)
      w = pm::add(w, pm::parameter_gradient(c.span, x.z.column(b), g.y0.column(b)));
    return w;
  }
};

// A gradient 1 % off: shows that the bound is far below the gradient's size.
struct OnePercentOff {
  Function<D> operator()(const MachineCase<D> &c, const pm::MachineState<D> &x, const Batch<D> &gy,
                         const Batch<D> &gz) const {
    Function<D> w = pm::backward(c.machine(), c.w, x, gy, gz).w;
    for (auto &v : w) v *= 1.01;
    return w;
  }
};

// ℓ = ⟨g_y, y⟩ + ⟨g_z, z⟩; (ℓ(w + h e_p) − ℓ(w − h e_p)) / 2h against ∂ℓ/∂w_p.
template <class G> void law_finite_differences() {
  const auto c = *machine_case<D>(false, 3);
  classify(has_valid_weight(c));
  RC_PRE(c.sigma.kind() != Kind::relu && !c.w.empty()); // relu is not differentiable
  // Half of the time a parameter that carries an edge.
  const Index k = *full_size(rc::gen::inRange<Index>(0, c.w.size() + c.span.apex()));
  const Index p = k < c.w.size() ? k : c.span.pi(k - c.w.size());
  const auto gy = *batch<D>(c.y0.rows, c.y0.cols), gz = *batch<D>(c.y0.rows, c.y0.cols);
  const auto m = c.machine();
  const Function<D> g = G{}(c, pm::forward(m, c.w, c.y0, c.z0), gy, gz);
  const D h = std::ldexp(D(1), -17);
  auto at = [&](D t) {
    Function<D> w = c.w;
    w[p] += t;
    return loss(pm::forward(m, w, c.y0, c.z0), gy, gz);
  };
  const D fd = (at(h) - at(-h)) / (2 * h);
  RC_ASSERT(std::abs(fd - g[p]) <= fd_bound(c, m, p, h, gy, gz));
}

} // namespace

MACHINE_LAW("MACH-CAUSALITY", "bit-identical outputs below the perturbed level, in double",
            "in double", (law_causality<D, LevelSolver>), (law_causality<D, ReversedGradingSolver>))
MACHINE_LAW("DEPTH-LEVEL-SCHEDULE", "the sweep equals the naive resolvent bit for bit, in double",
            "in double", law_schedule_double<LevelSolver>,
            law_schedule_double<ReversedGradingSolver>)
MACHINE_LAW("MACH-PARAM-GRADIENT", "parameter gradients match central finite differences",
            "in double", law_finite_differences<Backward>,
            law_finite_differences<UncleanedGradient>)
TEST_CASE("MACH-PARAM-GRADIENT mutant: a gradient 1% off is outside the bound") {
  REQUIRE(rejects([] { law_finite_differences<OnePercentOff>(); }));
}
