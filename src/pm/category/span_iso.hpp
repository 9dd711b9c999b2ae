#pragma once
// Isomorphism of spans. Two spans X ← E → Y and X ← E' → Y (with measures,
// and for parametric spans the parameter legs into the same P) are isomorphic
// when a bijection h : E → E' commutes with every leg and preserves the
// measure: s'∘h = s, t'∘h = t, π'∘h = π, μ'∘h = μ. Span composition is
// associative and unital only up to such an h, so laws compare spans with
// span_isomorphism, which decides the question and returns the witness.
//
// Decision procedure: an edge is determined up to isomorphism by its key
// (s(e), t(e), π(e), μ(e)); two spans are isomorphic iff their multisets of
// keys agree. Sorting both edge lists stably by key and matching them in
// order gives a witness (the one preserving the original order among edges
// with equal keys).
#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>

#include "pm/category/parametric_span.hpp"

namespace pm {

namespace detail {
template <class S>
std::optional<FinMap> match_edges(const Span<S> &a, const FinMap &pa, const Span<S> &b,
                                  const FinMap &pb) {
  if (a.source() != b.source() || a.target() != b.target() || a.apex() != b.apex() ||
      pa.codomain != pb.codomain)
    return std::nullopt;
  auto key = [](const Span<S> &x, const FinMap &p, Index e) {
    return std::tie(x.s.images[e], x.t.images[e], p.images[e], x.mu[e]);
  };
  auto order = [&](const Span<S> &x, const FinMap &p) {
    std::vector<Index> idx(x.apex());
    std::iota(idx.begin(), idx.end(), Index{0});
    std::stable_sort(idx.begin(), idx.end(),
                     [&](Index i, Index j) { return key(x, p, i) < key(x, p, j); });
    return idx;
  };
  const auto ia = order(a, pa), ib = order(b, pb);
  FinMap h;
  h.codomain = b.apex();
  h.images.resize(a.apex());
  for (Index k = 0; k < ia.size(); ++k) {
    if (key(a, pa, ia[k]) != key(b, pb, ib[k])) return std::nullopt;
    h.images[ia[k]] = ib[k];
  }
  return h;
}
} // namespace detail

// A witness h : E_a → E_b, or nothing when the spans are not isomorphic.
template <class S>
std::optional<FinMap> span_isomorphism(const Span<S> &a, const Span<S> &b) {
  return detail::match_edges(a, terminal_map(a.apex()), b, terminal_map(b.apex()));
}

template <class S>
std::optional<FinMap> span_isomorphism(const ParametricSpan<S> &a, const ParametricSpan<S> &b) {
  return detail::match_edges(a.span, a.pi, b.span, b.pi);
}

// Checks that h is a bijection E_a → E_b commuting with the legs and measure.
template <class S> bool is_span_isomorphism(const Span<S> &a, const Span<S> &b, const FinMap &h) {
  if (h.domain() != a.apex() || h.codomain != b.apex() || a.apex() != b.apex() ||
      a.source() != b.source() || a.target() != b.target())
    return false;
  std::vector<bool> hit(b.apex(), false);
  for (Index e = 0; e < a.apex(); ++e) {
    const Index f = h.images[e];
    if (f >= b.apex() || hit[f]) return false;
    hit[f] = true;
    if (b.s.images[f] != a.s.images[e] || b.t.images[f] != a.t.images[e] || !(b.mu[f] == a.mu[e]))
      return false;
  }
  return true;
}

template <class S>
bool is_span_isomorphism(const ParametricSpan<S> &a, const ParametricSpan<S> &b, const FinMap &h) {
  if (!is_span_isomorphism(a.span, b.span, h) || a.parameters() != b.parameters()) return false;
  for (Index e = 0; e < a.apex(); ++e)
    if (b.pi.images[h.images[e]] != a.pi.images[e]) return false;
  return true;
}

} // namespace pm
