#pragma once
// Spans X ←s− E −t→ Y with a measure μ on the apex E, and their linear
// operator L = t_!^μ ∘ s* : S^X → S^Y, i.e. (Lφ)(y) = Σ_{t(e)=y} μ(e) φ(s(e)).
// Spans compose by fibre product; the transpose swaps the legs.
#include <string>

#include "pm/category/fibre_product.hpp"
#include "pm/category/function.hpp"
#include "pm/category/pullback.hpp"
#include "pm/category/pushforward.hpp"

namespace pm {

template <class S> struct Span {
  FinMap s;      // source leg E → X
  FinMap t;      // target leg E → Y
  Measure<S> mu; // weights on E

  Index source() const { return s.codomain; }
  Index apex() const { return s.domain(); }
  Index target() const { return t.codomain; }

  // Legs valid, legs on the same apex, measure on the apex.
  void validate(const std::string &name = "span") const {
    s.validate(name + ".s");
    t.validate(name + ".t");
    require(t.domain() == s.domain(), name, ": target leg has domain size ", t.domain(),
            ", expected the apex size ", s.domain(), " of the source leg");
    require_size(mu, s.domain(), name + ".mu");
  }

  friend bool operator==(const Span &, const Span &) = default;
};

// The identity span X ←id− X −id→ X with unit weights; L(id) = id.
template <class S> Span<S> identity_span(Index n) {
  return Span<S>{identity_map(n), identity_map(n), Measure<S>(n, S(1))};
}

template <class S> Span<S> transpose(const Span<S> &a) { return Span<S>{a.t, a.s, a.mu}; }

// The operator is named `act` (a span acts on functions), not `apply`: an
// unqualified apply(span, vector) would also find std::apply through ADL on
// std::vector and fail to compile.
template <class S> Function<S> act(const Span<S> &a, const Function<S> &phi) {
  return integrate(a.t, a.mu, pullback(a.s, phi));
}

// The composite span over a given fibre product fp of a.t and b.s.
template <class S>
Span<S> compose_over(const Span<S> &b, const Span<S> &a, const FibreProduct &fp) {
  Span<S> c{pm::compose(a.s, fp.p), pm::compose(b.t, fp.q), Measure<S>(fp.size())};
  for (Index e = 0; e < fp.size(); ++e) c.mu[e] = a.mu[fp.p.images[e]] * b.mu[fp.q.images[e]];
  return c;
}

// compose(b, a) = b ∘ a for a : X → Y and b : Y → Z. The apex is the fibre
// product E_a ×_Y E_b (order of fibre_product), weights μ_a(e_a) · μ_b(e_b).
template <class S> Span<S> compose(const Span<S> &b, const Span<S> &a) {
  require(a.target() == b.source(), "compose(b, a): a has target size ", a.target(),
          ", expected the source size of b, ", b.source());
  return compose_over(b, a, fibre_product(a.t, b.s));
}

} // namespace pm
