#pragma once
// A graded span machine seen as a machine on its whole state x = (y, z) ∈
// S^{2n} (y first), for one batch column b:
//   f(y, z) = (L_w̃ z, σ(y)),   Df(x)(dy, dz) = (L_w̃ dz, σ'(y) ⊙ dy),
//   Df(x)*(u_y, u_z) = (σ'(y) ⊙ u_z, L_w̃ᵀ u_y).
// It is built from the category core's act, independently of the level
// solver, so that the two can be compared; its depth is 2D for
// state_grading (graded_span_machine.hpp).
#include "pm/machine/graded_span_machine.hpp"
#include "pm/machine/machine.hpp"

namespace pm {

template <class S>
Machine<S> as_machine(const GradedSpanMachine<S> &m, const Function<S> &w, Index b = 0) {
  require_size(w, m.parameters(), "as_machine: parameters");
  const Batch<S> &s = m.sigma().slopes();
  require(m.sigma().kind() != Sigma<S>::Kind::array || s.cols == 1 || b < s.cols,
          "as_machine: column ", b, ", expected < the ", s.cols, " columns of the array sigma");
  const Index n = m.size();
  const ParametricSpan<S> a = m.span(), at = transpose(m.span());
  const Function<S> wc = clean(m.span(), m.grading(), w);
  const Sigma<S> sigma = m.sigma();
  auto half = [n](const Function<S> &x, Index part) {
    return Function<S>(x.begin() + part * n, x.begin() + (part + 1) * n);
  };
  auto join = [](Function<S> a, const Function<S> &c) {
    a.insert(a.end(), c.begin(), c.end());
    return a;
  };
  auto slopes = [=](const Function<S> &x) {
    Function<S> s(n);
    for (Index i = 0; i < n; ++i) s[i] = sigma.derivative(x[i], i, b);
    return s;
  };
  return Machine<S>{2 * n,
                    [=](const Function<S> &x) {
                      Function<S> sy(n);
                      for (Index i = 0; i < n; ++i) sy[i] = sigma.value(x[i], i, b);
                      return join(act(a, wc, half(x, 1)), sy);
                    },
                    [=](const Function<S> &x, const Function<S> &v) {
                      return join(act(a, wc, half(v, 1)), hadamard(slopes(x), half(v, 0)));
                    },
                    [=](const Function<S> &x, const Function<S> &u) {
                      return join(hadamard(slopes(x), half(u, 1)), act(at, wc, half(u, 0)));
                    }};
}

} // namespace pm
