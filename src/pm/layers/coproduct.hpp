#pragma once
// The copairing [a, b] : X_a ⊔ X_b → Y of two parametric spans with the same
// target. Its apex is E_a ⊔ E_b and its parameter space P_a ⊔ P_b, both with
// the a-part first, so L_{(w_a, w_b)}(φ_a, φ_b) = L_{w_a} φ_a + L_{w_b} φ_b.
// A bias is a span from the one-point space {•}; the affine layer is the
// copairing of the linear part with it, evaluated at φ extended by 1 at •.
#include "pm/category/parametric_span.hpp"

namespace pm {

namespace detail {
// a ⊔ b as maps into A ⊔ B: images of b are shifted by |A|.
inline FinMap disjoint_union(const FinMap &a, const FinMap &b) {
  FinMap c;
  c.codomain = a.codomain + b.codomain;
  c.images = a.images;
  for (Index i : b.images) c.images.push_back(a.codomain + i);
  return c;
}

// [a, b] : A ⊔ B → C for maps with the same codomain.
inline FinMap copair_maps(const FinMap &a, const FinMap &b) {
  FinMap c{a.codomain, a.images};
  c.images.insert(c.images.end(), b.images.begin(), b.images.end());
  return c;
}
} // namespace detail

template <class S>
ParametricSpan<S> copair(const ParametricSpan<S> &a, const ParametricSpan<S> &b) {
  require(a.target() == b.target(), "copair(a, b): a has target size ", a.target(),
          ", expected the target size of b, ", b.target());
  Measure<S> mu = a.span.mu;
  mu.insert(mu.end(), b.span.mu.begin(), b.span.mu.end());
  return ParametricSpan<S>{Span<S>{detail::disjoint_union(a.span.s, b.span.s),
                                   detail::copair_maps(a.span.t, b.span.t), std::move(mu)},
                           detail::disjoint_union(a.pi, b.pi)};
}

// The bias on Y = (position, channel) with `positions` × `channels` points:
// the span {•} ← Y → Y, one edge from • to each y with parameter
// channel(y), so (L_b 1)(p, c) = b(c), one bias per channel shared by every
// position. bias(out) is the case of one position.
template <class S> ParametricSpan<S> channel_bias(Index positions, Index channels) {
  const Index n = positions * channels;
  FinMap channel{channels, std::vector<Index>(n)};
  for (Index y = 0; y < n; ++y) channel.images[y] = y % channels;
  return ParametricSpan<S>{Span<S>{terminal_map(n), identity_map(n), Measure<S>(n, S(1))},
                           std::move(channel)};
}
template <class S> ParametricSpan<S> bias(Index out) { return channel_bias<S>(1, out); }

// φ on X extended to X ⊔ {•} by φ(•) = 1, the input of an affine layer.
template <class S> Function<S> adjoin_unit(Function<S> phi) {
  phi.push_back(S(1));
  return phi;
}

} // namespace pm
