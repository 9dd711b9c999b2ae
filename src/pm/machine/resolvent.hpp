#pragma once
// The resolvent R_f = (id − f)⁻¹, computed two independent ways:
//  - by the naive iteration x ← x₀ + f(x), which for a machine of depth ≤ d
//    reaches R_f(x₀) after d steps from any start (DEPTH-NAIVE); `resolvent`
//    runs d steps from 0 and then demands that one more step changes nothing;
//  - by the oracles, which build the matrix explicitly and solve by Gaussian
//    elimination: R_A x₀ = (I − A)⁻¹ x₀ for a linear machine, and for any
//    machine at a solution x the tangent (I − Df(x))⁻¹ v = D R_f(x₀) v
//    (MACH-DERIVATIVE) and the cotangent (I − Df(x)ᵀ)⁻¹ g (MACH-BACKWARD).
#include "pm/machine/machine.hpp"

namespace pm {

// The iterates x_0 = start, x_{k+1} = x₀ + f(x_k), for k < steps.
template <class S>
std::vector<Function<S>> naive_iterates(const Machine<S> &m, const Function<S> &x0,
                                        const Function<S> &start, Index steps) {
  require_size(x0, m.n, "naive_iterates: input x0");
  require_size(start, m.n, "naive_iterates: start");
  std::vector<Function<S>> xs{start};
  for (Index k = 0; k < steps; ++k) xs.push_back(add(x0, m(xs.back())));
  return xs;
}

template <class S> Function<S> resolvent(const Machine<S> &m, const Function<S> &x0, Index depth) {
  const Function<S> x = naive_iterates(m, x0, Function<S>(m.n, S(0)), depth).back();
  const Function<S> next = add(x0, m(x));
  for (Index i = 0; i < m.n; ++i)
    require(next[i] == x[i], "resolvent: the iteration x <- x0 + f(x) did not settle within depth ",
            depth, ": coordinate ", i, " still changes at step ", depth + 1,
            " (f is not a machine of that depth)");
  return x;
}

template <class S> Function<S> linear_resolvent(const Matrix<S> &a, const Function<S> &x0) {
  return solve(identity_minus(a), x0);
}

// (I − Df(x))⁻¹ v.
template <class S>
Function<S> tangent_oracle(const Machine<S> &m, const Function<S> &x, const Function<S> &v) {
  return solve(identity_minus(jacobian(m, x)), v);
}

// (I − Df(x)ᵀ)⁻¹ g.
template <class S>
Function<S> cotangent_oracle(const Machine<S> &m, const Function<S> &x, const Function<S> &g) {
  return solve(identity_minus(transpose(jacobian(m, x))), g);
}

} // namespace pm
