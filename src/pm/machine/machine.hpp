#pragma once
// Machines as callables. A machine is an endofunction f of S^n such that
// id − f is invertible: the machine equation x = x₀ + f(x) has exactly one
// solution x = R_f(x₀), R_f = (id − f)⁻¹ the resolvent (resolvent.hpp). A
// Machine carries f with its Jacobian-vector product v ↦ Df(x) v and its
// vector-Jacobian product u ↦ Df(x)* u. The combinators follow the paper:
// sums (the sum rule), direct sums, and linear machines from matrices.
#include <functional>

#include "pm/machine/matrix.hpp"

namespace pm {

template <class S> struct Machine {
  using Map = std::function<Function<S>(const Function<S> &)>;
  using Product = std::function<Function<S>(const Function<S> &, const Function<S> &)>;

  Index n = 0;
  Map f;
  Product jvp; // (x, v) ↦ Df(x) v
  Product vjp; // (x, u) ↦ Df(x)* u

  Function<S> operator()(const Function<S> &x) const {
    require_size(x, n, "Machine: argument");
    return f(x);
  }
  Function<S> tangent(const Function<S> &x, const Function<S> &v) const {
    require_size(x, n, "Machine::tangent: point");
    require_size(v, n, "Machine::tangent: direction");
    return jvp(x, v);
  }
  Function<S> cotangent(const Function<S> &x, const Function<S> &u) const {
    require_size(x, n, "Machine::cotangent: point");
    require_size(u, n, "Machine::cotangent: covector");
    return vjp(x, u);
  }
};

// x ↦ A x.
template <class S> Machine<S> linear_machine(const Matrix<S> &a) {
  require(a.rows == a.cols, "linear_machine: matrix is ", a.rows, " x ", a.cols,
          ", expected square");
  const Matrix<S> at = transpose(a);
  return Machine<S>{a.rows, [a](const Function<S> &x) { return act(a, x); },
                    [a](const Function<S> &, const Function<S> &v) { return act(a, v); },
                    [at](const Function<S> &, const Function<S> &u) { return act(at, u); }};
}

// f₁ + f₂.
template <class S> Machine<S> sum(const Machine<S> &f1, const Machine<S> &f2) {
  require(f1.n == f2.n, "sum: machines have sizes ", f1.n, " and ", f2.n, ", expected equal");
  return Machine<S>{f1.n, [f1, f2](const Function<S> &x) { return add(f1(x), f2(x)); },
                    [f1, f2](const Function<S> &x, const Function<S> &v) {
                      return add(f1.tangent(x, v), f2.tangent(x, v));
                    },
                    [f1, f2](const Function<S> &x, const Function<S> &u) {
                      return add(f1.cotangent(x, u), f2.cotangent(x, u));
                    }};
}

// f × g on S^{n_f} ⊕ S^{n_g}: (a, b) ↦ (f(a), g(b)).
template <class S> Machine<S> direct_sum(const Machine<S> &f, const Machine<S> &g) {
  auto split = [n = f.n](const Function<S> &x) {
    return std::pair<Function<S>, Function<S>>{Function<S>(x.begin(), x.begin() + n),
                                               Function<S>(x.begin() + n, x.end())};
  };
  auto join = [](Function<S> a, const Function<S> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  auto lift = [=](auto fp, auto gp) {
    return [=](const Function<S> &x, const Function<S> &v) {
      const auto [xa, xb] = split(x);
      const auto [va, vb] = split(v);
      return join(fp(xa, va), gp(xb, vb));
    };
  };
  return Machine<S>{f.n + g.n,
                    [=](const Function<S> &x) {
                      const auto [a, b] = split(x);
                      return join(f(a), g(b));
                    },
                    lift([f](auto &x, auto &v) { return f.tangent(x, v); },
                         [g](auto &x, auto &v) { return g.tangent(x, v); }),
                    lift([f](auto &x, auto &u) { return f.cotangent(x, u); },
                         [g](auto &x, auto &u) { return g.cotangent(x, u); })};
}

// The residual x₀ + f(x) − x of the machine equation.
template <class S>
Function<S> residual(const Machine<S> &m, const Function<S> &x0, const Function<S> &x) {
  require_size(x0, m.n, "residual: input x0");
  return add(add(x0, m(x)), scale(S(-1), x));
}

// The explicit Jacobian Df(x), column j = Df(x) e_j.
template <class S> Matrix<S> jacobian(const Machine<S> &m, const Function<S> &x) {
  Matrix<S> j(m.n, m.n);
  for (Index c = 0; c < m.n; ++c) {
    Function<S> e(m.n, S(0));
    e[c] = S(1);
    const Function<S> col = m.tangent(x, e);
    for (Index r = 0; r < m.n; ++r) j(r, c) = col[r];
  }
  return j;
}

} // namespace pm
