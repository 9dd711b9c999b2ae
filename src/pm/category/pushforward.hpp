#pragma once
// Integration along the fibres of f : A → B with a measure μ on A:
//   (f_!^μ ψ)(b) = Σ_{a : f(a) = b} μ(a) ψ(a),
// summed in increasing order of a (this fixes the floating-point result).
// The pushforward of the measure itself is f_! μ = f_!^μ 1. Covariant:
// (g∘f)_!^μ = g_!^1 ∘ f_!^μ and (g∘f)_! μ = g_!(f_! μ).
#include "pm/category/function.hpp"
#include "pm/category/map.hpp"

namespace pm {

template <class S>
Function<S> integrate(const FinMap &f, const Measure<S> &mu, const Function<S> &psi) {
  require_size(mu, f.domain(), "integrate: measure on the domain");
  require_size(psi, f.domain(), "integrate: function on the domain");
  Function<S> out(f.codomain, S(0));
  for (Index a = 0; a < f.domain(); ++a) out[f.images[a]] += mu[a] * psi[a];
  return out;
}

template <class S> Measure<S> pushforward(const FinMap &f, const Measure<S> &mu) {
  require_size(mu, f.domain(), "pushforward: measure on the domain");
  Measure<S> out(f.codomain, S(0));
  for (Index a = 0; a < f.domain(); ++a) out[f.images[a]] += mu[a];
  return out;
}

} // namespace pm
