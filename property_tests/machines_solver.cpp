// Laws of spec/machines.md on the level solver and the backward pass of the
// graded span machine, checked exactly over the rationals (σ identity, relu,
// polynomial or array), each with the mutant it must reject.
#include "support/machine_generators.hpp"

using namespace pm_test;
using Q = pm::Rational;
using pm::Batch;
using pm::Function;
using pm::Grading;
using pm::Machine;

namespace {

pm::MachineState<Q> solve(const MachineCase<Q> &c) { return LevelSolver<Q>{}(c); }

// ---- DEPTH-NAIVE ---------------------------------------------------------

// The naive iteration runs d = 2D steps on the state; the mutant one fewer.
struct StateDepth {
  Index operator()(Index levels) const { return 2 * levels; }
};
struct OneStepShort {
  Index operator()(Index levels) const { return 2 * levels - 1; }
};

// From any start, after k steps every coordinate of grade ≤ k is final, and
// after d steps the iterate is the level solver's solution.
template <class Steps> void law_naive() {
  const auto c = *machine_case<Q>(true, 4, 1);
  classify(has_valid_weight(c));
  const auto x = solve(c);
  const Grading sg = pm::state_grading(c.grading);
  for (Index b = 0; b < c.y0.cols; ++b) {
    const Machine<Q> f = pm::as_machine(c.machine(), c.w, b);
    const auto xs = pm::naive_iterates(f, c.x0(b), *vector<Q>(f.n), Steps{}(c.grading.levels()));
    const Function<Q> final = state(x, b);
    RC_ASSERT(xs.back() == final);
    for (Index k = 0; k < xs.size(); ++k)
      for (Index i = 0; i < f.n; ++i)
        if (sg(i) <= k) RC_ASSERT(xs[k][i] == final[i]);
  }
}

// ---- DEPTH-LEVEL-SCHEDULE ------------------------------------------------

// (id + f_L) ∘ … ∘ (id + f_1)(x₀) with f_k = (π_k − π_{k−1}) f, and the
// mutant product in the opposite order.
template <bool Reversed>
Function<Q> schedule(const Machine<Q> &f, const Grading &d, const Function<Q> &x0) {
  Function<Q> x = x0;
  for (Index j = 1; j <= d.levels(); ++j) {
    const Index k = Reversed ? d.levels() + 1 - j : j;
    const Function<Q> fx = f(x);
    for (Index i = 0; i < f.n; ++i)
      if (d(i) == k) x[i] += fx[i];
  }
  return x;
}

// The level solver equals the product of level updates, the resolvent by
// naive iteration, and for a linear σ the explicit-matrix oracle.
template <bool Reversed> void law_level_schedule() {
  const auto c = *machine_case<Q>(true);
  classify(has_valid_weight(c));
  const auto x = solve(c);
  const Grading sg = pm::state_grading(c.grading);
  for (Index b = 0; b < c.y0.cols; ++b) {
    const Machine<Q> f = pm::as_machine(c.machine(), c.w, b);
    RC_ASSERT(schedule<Reversed>(f, sg, c.x0(b)) == state(x, b));
    RC_ASSERT(pm::resolvent(f, c.x0(b), sg.levels()) == state(x, b));
    const auto kind = c.sigma.kind();
    if (kind == pm::Sigma<Q>::Kind::identity || kind == pm::Sigma<Q>::Kind::array)
      RC_ASSERT(pm::linear_resolvent(pm::jacobian(f, zeros<Q>(f.n)), c.x0(b)) == state(x, b));
  }
}

// ---- MACH-DERIVATIVE -----------------------------------------------------

// Dual numbers a + bε (ε² = 0) over Q: running the level solver on them
// differentiates it exactly, independently of any formula for D R_f.
struct Dual {
  Q v, d;
  Dual() = default;
  Dual(int k) : v(k) {}
  Dual(Q a, Q b) : v(std::move(a)), d(std::move(b)) {}
  friend Dual operator+(const Dual &a, const Dual &b) { return {a.v + b.v, a.d + b.d}; }
  friend Dual operator-(const Dual &a, const Dual &b) { return {a.v - b.v, a.d - b.d}; }
  friend Dual operator*(const Dual &a, const Dual &b) { return {a.v * b.v, a.v * b.d + a.d * b.v}; }
  Dual operator-() const { return {-v, -d}; }
  Dual &operator+=(const Dual &b) { return *this = *this + b; }
  Dual &operator-=(const Dual &b) { return *this = *this - b; }
  Dual &operator*=(const Dual &b) { return *this = *this * b; }
  friend bool operator>(const Dual &a, const Dual &b) { return a.v > b.v; }
};

std::vector<Dual> lift(const Function<Q> &v, const Function<Q> &dv) {
  std::vector<Dual> out;
  for (Index i = 0; i < v.size(); ++i) out.emplace_back(v[i], dv[i]);
  return out;
}
std::vector<Dual> lift(const Function<Q> &v) { return lift(v, zeros<Q>(v.size())); }
Batch<Dual> lift(const Batch<Q> &v, const Batch<Q> &dv) {
  Batch<Dual> out(v.rows, v.cols);
  out.data = lift(v.data, dv.data);
  return out;
}
Batch<Dual> lift(const Batch<Q> &v) { return lift(v, Batch<Q>(v.rows, v.cols)); }
pm::Sigma<Dual> lift(const pm::Sigma<Q> &s) {
  using K = pm::Sigma<Q>::Kind;
  if (s.kind() == K::relu) return pm::Sigma<Dual>::relu();
  if (s.kind() == K::polynomial) return pm::Sigma<Dual>::polynomial(lift(s.coefficients()));
  if (s.kind() == K::array) return pm::Sigma<Dual>::array(lift(s.slopes()));
  return pm::Sigma<Dual>::identity();
}
pm::GradedSpanMachine<Dual> lift(const MachineCase<Q> &c, const pm::Sigma<Dual> &sigma) {
  const pm::ParametricSpan<Dual> a{
      pm::Span<Dual>{c.span.span.s, c.span.span.t, lift(c.span.span.mu)}, c.span.pi};
  return pm::GradedSpanMachine<Dual>(c.grading, a, sigma);
}
Function<Q> tangent(const Batch<Dual> &x, Index b) {
  Function<Q> out;
  for (Index i = 0; i < x.rows; ++i) out.push_back(x(i, b).d);
  return out;
}

// The oracle evaluates Df at the solution; the mutant at the input x₀.
struct AtSolution {
  Function<Q> operator()(const MachineCase<Q> &, const pm::MachineState<Q> &x, Index b) const {
    return state(x, b);
  }
};
struct AtInput {
  Function<Q> operator()(const MachineCase<Q> &c, const pm::MachineState<Q> &, Index b) const {
    return c.x0(b);
  }
};

// D R_f(x₀) v = R_{Df(x)} v: the exact derivative of the solver equals the
// resolvent of Df(x), both as the explicit (I − Df(x))⁻¹ v and as the linear
// graded span machine with σ'(y) as array σ.
template <class Point> void law_derivative() {
  const auto c = *machine_case<Q>(true);
  classify(has_valid_weight(c));
  const auto vy = *batch<Q>(c.y0.rows, c.y0.cols), vz = *batch<Q>(c.y0.rows, c.y0.cols);
  const auto x = solve(c);
  const auto dx = pm::forward(lift(c, lift(c.sigma)), lift(c.w), lift(c.y0, vy), lift(c.z0, vz));
  Batch<Q> slopes(c.y0.rows, c.y0.cols);
  for (Index b = 0; b < c.y0.cols; ++b)
    for (Index i = 0; i < c.y0.rows; ++i) slopes(i, b) = c.sigma.derivative(x.y(i, b), i, b);
  const pm::GradedSpanMachine<Q> df(c.grading, c.span, pm::Sigma<Q>::array(slopes));
  const auto rdf = pm::forward(df, c.w, vy, vz);
  for (Index b = 0; b < c.y0.cols; ++b) {
    const Function<Q> d = concat(tangent(dx.y, b), tangent(dx.z, b));
    const Function<Q> v = concat(vy.column(b), vz.column(b));
    const Machine<Q> f = pm::as_machine(c.machine(), c.w, b);
    RC_ASSERT(d == pm::tangent_oracle(f, Point{}(c, x, b), v));
    RC_ASSERT(pm::has_depth(pm::jacobian(f, state(x, b)), pm::state_grading(c.grading)));
    RC_ASSERT(d == state(rdf, b));
  }
}

// ---- MACH-BACKWARD, MACH-PARAM-GRADIENT ----------------------------------

// The reference backward pass, and two mutants: a dual machine over the
// original (not reversed) grading, and a parameter gradient left uncleaned.
struct Backward {
  pm::Gradients<Q> operator()(const MachineCase<Q> &c, const pm::MachineState<Q> &x,
                              const Batch<Q> &gy, const Batch<Q> &gz) const {
    return pm::backward(c.machine(), c.w, x, gy, gz);
  }
};
struct UnreversedDual {
  pm::Gradients<Q> operator()(const MachineCase<Q> &c, const pm::MachineState<Q> &x,
                              const Batch<Q> &gy, const Batch<Q> &gz) const {
    pm::Gradients<Q> g = pm::backward(c.machine(), c.w, x, gy, gz);
    const auto d = pm::dual(c.machine(), x.y);
    const auto u =
        pm::forward(pm::GradedSpanMachine<Q>(c.grading, d.span(), d.sigma()), c.w, gz, gy);
    g.y0 = u.z;
    g.z0 = u.y;
    return g;
  }
};
struct UncleanedGradient {
  pm::Gradients<Q> operator()(const MachineCase<Q> &c, const pm::MachineState<Q> &x,
                              const Batch<Q> &gy, const Batch<Q> &gz) const {
    pm::Gradients<Q> g = pm::backward(c.machine(), c.w, x, gy, gz);
    g.w = zeros<Q>(c.w.size());
    for (Index b = 0; b < x.y.cols; ++b)
      g.w = pm::add(g.w, pm::parameter_gradient(c.span, x.z.column(b), g.y0.column(b)));
    return g;
  }
};

struct BackwardCase {
  MachineCase<Q> c;
  pm::MachineState<Q> x;
  Batch<Q> gy, gz;
};
BackwardCase backward_case() {
  const auto c = *machine_case<Q>(true);
  classify(has_valid_weight(c));
  return {c, solve(c), *batch<Q>(c.y0.rows, c.y0.cols), *batch<Q>(c.y0.rows, c.y0.cols)};
}

// (ȳ, z̄) = (I − Df(x)ᵀ)⁻¹ (g_y, g_z) per sample, from the explicit Jacobian.
template <class B> void law_backward() {
  const auto [c, x, gy, gz] = backward_case();
  const auto g = B{}(c, x, gy, gz);
  for (Index b = 0; b < x.y.cols; ++b) {
    check_cotangent(pm::as_machine(c.machine(), c.w, b), state(x, b),
                    concat(gy.column(b), gz.column(b)));
    RC_ASSERT(concat(g.y0.column(b), g.z0.column(b)) ==
              pm::cotangent_oracle(pm::as_machine(c.machine(), c.w, b), state(x, b),
                                   concat(gy.column(b), gz.column(b))));
  }
}

// ℓ = ⟨g_y, y⟩ + ⟨g_z, z⟩ at the solution of the machine run on dual numbers.
Q loss_tangent(const pm::MachineState<Dual> &x, const Batch<Q> &gy, const Batch<Q> &gz) {
  Q dl = Q(0);
  for (Index j = 0; j < gy.data.size(); ++j)
    dl += gy.data[j] * x.y.data[j].d + gz.data[j] * x.z.data[j].d;
  return dl;
}

// ∂ℓ/∂w_p is the ε-part of ℓ when the solver runs on w + ε e_p in dual
// numbers: no formula for the gradient, and no cleaning, is shared with the
// backward pass (the solver's own use of clean(w) makes the derivative of an
// invalid parameter 0). For an array σ, ∂ℓ/∂s likewise along s + ε e_(i,k).
template <class B> void law_param_gradient() {
  const auto [c, x, gy, gz] = backward_case();
  const auto g = B{}(c, x, gy, gz);
  const auto m = lift(c, lift(c.sigma));
  for (Index p = 0; p < c.w.size(); ++p) {
    Function<Q> e = zeros<Q>(c.w.size());
    e[p] = Q(1);
    const auto dx = pm::forward(m, lift(c.w, e), lift(c.y0), lift(c.z0));
    RC_ASSERT(g.w[p] == loss_tangent(dx, gy, gz));
  }
  if (c.sigma.kind() != pm::Sigma<Q>::Kind::array) return;
  // ℓ = ⟨g_y, y⟩ + ⟨g_z, z⟩ along s + ε e_(i,k): its ε-part is ∂ℓ/∂s(i,k).
  const Batch<Q> &s = c.sigma.slopes();
  for (Index k = 0; k < s.data.size(); ++k) {
    Batch<Q> ds(s.rows, s.cols);
    ds.data[k] = Q(1);
    const auto ms = lift(c, pm::Sigma<Dual>::array(lift(s, ds)));
    const auto dx = pm::forward(ms, lift(c.w), lift(c.y0), lift(c.z0));
    RC_ASSERT(g.sigma.data[k] == loss_tangent(dx, gy, gz));
  }
}

} // namespace

MACHINE_LAW("DEPTH-NAIVE", "the naive iteration reaches R_f(x0) in d steps, level by level",
            "exact over Q", law_naive<StateDepth>, law_naive<OneStepShort>)
MACHINE_LAW("DEPTH-LEVEL-SCHEDULE", "the level schedule equals the resolvent", "exact over Q",
            law_level_schedule<false>, law_level_schedule<true>)
MACHINE_LAW("MACH-DERIVATIVE", "D R_f = R_{Df}", "exact over Q", law_derivative<AtSolution>,
            law_derivative<AtInput>)
MACHINE_LAW("MACH-BACKWARD", "backward cotangents = (I - J^T)^-1 g", "exact over Q",
            law_backward<Backward>, law_backward<UnreversedDual>)
MACHINE_LAW("MACH-PARAM-GRADIENT", "parameter gradients equal the oracle", "exact over Q",
            law_param_gradient<Backward>, law_param_gradient<UncleanedGradient>)
MACHINE_LAW("MACH-CAUSALITY", "inputs at level j do not reach outputs below j", "exact over Q",
            (law_causality<Q, LevelSolver>), (law_causality<Q, ReversedGradingSolver>))
