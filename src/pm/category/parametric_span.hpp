#pragma once
// Parametric spans: a span X ←s− E −t→ Y with a third leg π : E → P into a
// parameter space. With parameters w ∈ S^P the layer is
//   L_w φ = t_!^μ(π*w · s*φ),   (L_w φ)(y) = Σ_{t(e)=y} μ(e) w(π(e)) φ(s(e)).
// The pairing ⟨g, L_w φ⟩ = Σ_e μ(e) φ(s(e)) w(π(e)) g(t(e)) is symmetric in
// the three legs, which gives the transpose (swap s and t) and the parameter
// gradient π_!^μ(s*φ · t*g) as layers of the same kind.
#include "pm/category/span.hpp"

namespace pm {

template <class S> struct ParametricSpan {
  Span<S> span;
  FinMap pi; // parameter leg E → P

  Index source() const { return span.source(); }
  Index apex() const { return span.apex(); }
  Index target() const { return span.target(); }
  Index parameters() const { return pi.codomain; }

  void validate(const std::string &name = "parametric span") const {
    span.validate(name);
    pi.validate(name + ".pi");
    require(pi.domain() == span.apex(), name, ": parameter leg has domain size ", pi.domain(),
            ", expected the apex size ", span.apex());
  }

  friend bool operator==(const ParametricSpan &, const ParametricSpan &) = default;
};

template <class S> ParametricSpan<S> transpose(const ParametricSpan<S> &a) {
  return ParametricSpan<S>{transpose(a.span), a.pi};
}

template <class S>
Function<S> act(const ParametricSpan<S> &a, const Function<S> &w, const Function<S> &phi) {
  require_size(w, a.parameters(), "act: parameters");
  return integrate(a.span.t, a.span.mu, hadamard(pullback(a.pi, w), pullback(a.span.s, phi)));
}

// ∂⟨g, L_w φ⟩/∂w = π_!^μ(s*φ · t*g), a function on P.
template <class S>
Function<S> parameter_gradient(const ParametricSpan<S> &a, const Function<S> &phi,
                               const Function<S> &g) {
  return integrate(a.pi, a.span.mu, hadamard(pullback(a.span.s, phi), pullback(a.span.t, g)));
}

// compose(b, a) for a : X → Y with parameters P_a and b : Y → Z with P_b.
// The parameter space is P_a × P_b, flat index p_a · |P_b| + p_b (row-major,
// so iterated products agree with Shape's enumeration). The layer of the
// composite at w_a ⊗ w_b is L_{w_b} ∘ L_{w_a}.
template <class S>
ParametricSpan<S> compose(const ParametricSpan<S> &b, const ParametricSpan<S> &a) {
  require(a.target() == b.source(), "compose(b, a): a has target size ", a.target(),
          ", expected the source size of b, ", b.source());
  const FibreProduct fp = fibre_product(a.span.t, b.span.s);
  ParametricSpan<S> c{compose_over(b.span, a.span, fp), FinMap{}};
  c.pi.codomain = a.parameters() * b.parameters();
  c.pi.images.resize(fp.size());
  for (Index e = 0; e < fp.size(); ++e)
    c.pi.images[e] = a.pi.images[fp.p.images[e]] * b.parameters() + b.pi.images[fp.q.images[e]];
  return c;
}

// (w_a ⊗ w_b)(p_a, p_b) = w_a(p_a) w_b(p_b), in the order of compose.
template <class S> Function<S> tensor(const Function<S> &wa, const Function<S> &wb) {
  Function<S> w;
  w.reserve(wa.size() * wb.size());
  for (const S &x : wa)
    for (const S &y : wb) w.push_back(x * y);
  return w;
}

} // namespace pm
