#pragma once
// Functions on a finite set X, i.e. vectors in S^X, and measures on X (also
// elements of S^X, read as weights). The operations here are the pointwise
// vector-space structure and the pairing ⟨φ, ψ⟩ = Σ_x φ(x) ψ(x).
#include <string>
#include <vector>

#include "pm/category/finite_set.hpp"

namespace pm {

template <class S> using Function = std::vector<S>;
template <class S> using Measure = std::vector<S>;

template <class S>
void require_size(const std::vector<S> &v, Index expected, const std::string &what) {
  require(v.size() == expected, what, " has length ", v.size(), ", expected ", expected);
}

template <class S> S dot(const Function<S> &a, const Function<S> &b) {
  require_size(b, a.size(), "dot: second argument");
  S acc = S(0);
  for (Index i = 0; i < a.size(); ++i) acc += a[i] * b[i];
  return acc;
}

template <class S> Function<S> add(const Function<S> &a, const Function<S> &b) {
  require_size(b, a.size(), "add: second argument");
  Function<S> c(a);
  for (Index i = 0; i < a.size(); ++i) c[i] += b[i];
  return c;
}

template <class S> Function<S> scale(const S &k, const Function<S> &a) {
  Function<S> c(a);
  for (auto &x : c) x *= k;
  return c;
}

// Pointwise product φ · ψ.
template <class S> Function<S> hadamard(const Function<S> &a, const Function<S> &b) {
  require_size(b, a.size(), "hadamard: second argument");
  Function<S> c(a);
  for (Index i = 0; i < a.size(); ++i) c[i] *= b[i];
  return c;
}

template <class S> Function<S> constant(Index n, const S &value) { return Function<S>(n, value); }

} // namespace pm
