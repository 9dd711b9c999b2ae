#pragma once
// Pullback of functions along f : A → B: (f*φ)(a) = φ(f(a)). Contravariant:
// (g∘f)* = f* ∘ g*.
#include "pm/category/function.hpp"
#include "pm/category/map.hpp"

namespace pm {

template <class S> Function<S> pullback(const FinMap &f, const Function<S> &phi) {
  require_size(phi, f.codomain, "pullback: function on the codomain");
  Function<S> out(f.domain());
  for (Index a = 0; a < f.domain(); ++a) out[a] = phi[f.images[a]];
  return out;
}

} // namespace pm
