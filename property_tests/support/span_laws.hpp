#pragma once
// The laws of spec/spans.md as RapidCheck properties, each a template over the
// implementation I (Reference or a mutant, see span_impl.hpp) and the scalar
// S. Inputs are generated inside the property.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "compare.hpp"
#include "generators.hpp"
#include "span_impl.hpp"

namespace pm_test {

// A codomain size that admits a map from a set of size `domain`.
inline Index codomain_for(Index domain, Index max = 4) {
  return *full_size(rc::gen::inRange<Index>(domain == 0 ? 0 : 1, max + 1));
}

// ---- maps -------------------------------------------------------------------

template <class I> void law_map_unit_left() {
  const Index a = *size(5), b = codomain_for(a, 5);
  const FinMap f = *finmap(a, b);
  classify(a > 0);
  RC_ASSERT(I::comp(I::id(b), f) == f);
}

template <class I> void law_map_unit_right() {
  const Index a = *size(5), b = codomain_for(a, 5);
  const FinMap f = *finmap(a, b);
  classify(a > 0);
  RC_ASSERT(I::comp(f, I::id(a)) == f);
}

template <class I> void law_map_assoc() {
  const Index a = *size(4), b = codomain_for(a), c = codomain_for(b), d = codomain_for(c);
  const FinMap f = *finmap(a, b), g = *finmap(b, c), h = *finmap(c, d);
  classify(a > 0);
  RC_ASSERT(I::comp(I::comp(h, g), f) == I::comp(h, I::comp(g, f)));
}

// ---- pullback, pushforward, integration --------------------------------------

template <class I, class S> void law_pull_id() {
  const Index a = *size(5);
  const auto phi = *function<S>(a);
  classify(a > 0);
  RC_ASSERT(I::pull(I::id(a), phi) == phi);
}

template <class I, class S> void law_pull_comp() {
  const Index a = *size(4), b = codomain_for(a), c = codomain_for(b);
  const FinMap f = *finmap(a, b), g = *finmap(b, c);
  const auto phi = *function<S>(c);
  classify(a > 0);
  RC_ASSERT(I::pull(I::comp(g, f), phi) == I::pull(f, I::pull(g, phi)));
}

template <class I, class S> void law_push_id() {
  const Index a = *size(5);
  const auto mu = *function<S>(a);
  classify(a > 0);
  RC_ASSERT(I::push(I::id(a), mu) == mu);
}

template <class I, class S> void law_push_comp() {
  const Index a = *size(5), b = codomain_for(a), c = codomain_for(b);
  const FinMap f = *finmap(a, b), g = *finmap(b, c);
  const auto mu = *function<S>(a);
  classify(a > 0);
  // Both sides sum the same terms, in different groupings: chain ≤ a + 1.
  expect_same<S>(
      [&](const Measure<S> &m) {
        return std::pair{I::push(I::comp(g, f), m), I::push(g, I::push(f, m))};
      },
      a + 1, mu);
}

template <class I, class S> void law_int_comp() {
  const Index a = *size(5), b = codomain_for(a), c = codomain_for(b);
  const FinMap f = *finmap(a, b), g = *finmap(b, c);
  const auto mu = *function<S>(a), psi = *function<S>(a);
  classify(a > 0);
  expect_same<S>(
      [&](const Measure<S> &m, const Function<S> &p) {
        return std::pair{I::integ(I::comp(g, f), m, p),
                         I::integ(g, Measure<S>(b, S(1)), I::integ(f, m, p))};
      },
      a + 2, mu, psi);
}

template <class I, class S> void law_proj_formula() {
  const Index a = *size(5), b = codomain_for(a);
  const FinMap f = *finmap(a, b);
  const auto mu = *function<S>(a), psi = *function<S>(a), phi = *function<S>(b);
  classify(a > 0);
  expect_same<S>(
      [&](const Measure<S> &m, const Function<S> &ps, const Function<S> &ph) {
        return std::pair{I::integ(f, m, hadamard(ps, I::pull(f, ph))),
                         hadamard(ph, I::integ(f, m, ps))};
      },
      a + 3, mu, psi, phi);
}

template <class I, class S> void law_beck_chevalley() {
  const Index y = *full_size(rc::gen::inRange<Index>(1, 4)), a = *size(4), b = *size(4);
  const FinMap f = *finmap(a, y), g = *finmap(b, y);
  const auto mu = *function<S>(a), phi = *function<S>(a);
  const FibreProduct fp = I::fib(f, g);
  classify(fp.size() > 0);
  expect_same<S>(
      [&](const Measure<S> &m, const Function<S> &ph) {
        return std::pair{I::pull(g, I::integ(f, m, ph)),
                         I::integ(fp.q, I::pull(fp.p, m), I::pull(fp.p, ph))};
      },
      a * b + 2, mu, phi);
}

// ---- spans --------------------------------------------------------------------

// Written apart from pm::span_isomorphism and pm::is_span_isomorphism: h is
// a bijection of the apexes preserving both legs and the weights.
template <class S> bool preserves(const Span<S> &l, const Span<S> &r, const std::vector<Index> &h) {
  if (l.source() != r.source() || l.target() != r.target() || l.apex() != r.apex()) return false;
  std::vector<bool> hit(r.apex(), false);
  for (Index e = 0; e < l.apex(); ++e) {
    const Index f = h[e];
    if (hit[f] || l.s(e) != r.s(f) || l.t(e) != r.t(f) || !(l.mu[e] == r.mu[f])) return false;
    hit[f] = true;
  }
  return true;
}

// Whether an isomorphism exists, by brute force over all bijections for
// apexes of at most 6 edges; beyond, by comparing the sorted lists of edges
// (s, t, μ), which is equivalent and does not share pm's matching code.
template <class S> bool isomorphic_by_search(const Span<S> &l, const Span<S> &r) {
  if (l.source() != r.source() || l.target() != r.target() || l.apex() != r.apex()) return false;
  std::vector<Index> h(l.apex());
  std::iota(h.begin(), h.end(), Index{0});
  if (l.apex() <= 6) {
    do
      if (preserves(l, r, h)) return true;
    while (std::next_permutation(h.begin(), h.end()));
    return false;
  }
  auto edges = [](const Span<S> &a) {
    std::vector<std::tuple<Index, Index, S>> v;
    for (Index e = 0; e < a.apex(); ++e) v.emplace_back(a.s(e), a.t(e), a.mu[e]);
    std::sort(v.begin(), v.end());
    return v;
  };
  return edges(l) == edges(r);
}

// Spans are compared up to isomorphism: the search above decides that there
// is one, and the witness of I is checked by `preserves`.
template <class I, class S> void assert_isomorphic(const Span<S> &l, const Span<S> &r) {
  RC_ASSERT(isomorphic_by_search(l, r));
  const auto h = I::siso(l, r);
  RC_ASSERT(h.has_value());
  RC_ASSERT(preserves(l, r, h->images));
}

template <class I, class S> void law_span_assoc() {
  // The middle sets are small so that the triple composite is mostly non-empty.
  const Index x = *nonempty_size(3), y = *nonempty_size(2), z = *nonempty_size(2),
              w = *nonempty_size(3);
  const auto a = *span<S>(x, y, 4), b = *span<S>(y, z, 4), c = *span<S>(z, w, 4);
  const auto left = I::scomp(I::scomp(c, b), a);
  classify(left.apex() > 0);
  assert_isomorphic<I>(left, I::scomp(c, I::scomp(b, a)));
}

template <class I, class S> void law_span_unit_left() {
  const Index x = *size(4), y = *size(4);
  const auto a = *span<S>(x, y);
  classify(a.apex() > 0);
  assert_isomorphic<I>(I::scomp(I::template sid<S>(y), a), a);
}

template <class I, class S> void law_span_unit_right() {
  const Index x = *size(4), y = *size(4);
  const auto a = *span<S>(x, y);
  classify(a.apex() > 0);
  assert_isomorphic<I>(I::scomp(a, I::template sid<S>(x)), a);
}

template <class I, class S> void law_span_iso_witness() {
  const Index x = *size(4), y = *size(4);
  const auto a = *span<S>(x, y);
  classify(a.apex() > 1);
  // Relabel the apex by a random permutation: the result is isomorphic.
  // A random permutation: the argsort of random keys (ties broken by index).
  const auto keys = *rc::gen::container<std::vector<int>>(a.apex(), rc::gen::arbitrary<int>());
  std::vector<Index> perm(a.apex());
  std::iota(perm.begin(), perm.end(), Index{0});
  std::stable_sort(perm.begin(), perm.end(), [&](Index i, Index j) { return keys[i] < keys[j]; });
  Span<S> b{FinMap(x, std::vector<Index>(a.apex())), FinMap(y, std::vector<Index>(a.apex())),
            Measure<S>(a.apex())};
  for (Index e = 0; e < a.apex(); ++e) {
    b.s.images[perm[e]] = a.s.images[e];
    b.t.images[perm[e]] = a.t.images[e];
    b.mu[perm[e]] = a.mu[e];
  }
  assert_isomorphic<I>(a, b);
  // Changing one weight breaks the isomorphism (the multiset of weights changes).
  if (a.apex() > 0) {
    const Index e = *full_size(rc::gen::inRange<Index>(0, a.apex()));
    b.mu[perm[e]] += S(1);
    RC_ASSERT(!isomorphic_by_search(a, b));
    RC_ASSERT(!I::siso(a, b).has_value());
  }
}

template <class I, class S> void law_span_lin_comp() {
  // Non-empty sets: an empty one empties the composite, and with size()
  // about 43 % of the composites were (the empty corners come from spans
  // without edges).
  const Index x = *nonempty_size(4), y = *nonempty_size(4), z = *nonempty_size(4);
  const auto a = *span<S>(x, y), b = *span<S>(y, z);
  const auto phi = *function<S>(x);
  classify(I::scomp(b, a).apex() > 0);
  expect_same<S>(
      [&](const Span<S> &sa, const Span<S> &sb, const Function<S> &ph) {
        return std::pair{I::sapply(I::scomp(sb, sa), ph), I::sapply(sb, I::sapply(sa, ph))};
      },
      a.apex() * b.apex() + a.apex() + b.apex() + 3, a, b, phi);
}

template <class I, class S> void law_span_lin_id() {
  const Index x = *size(5);
  const auto phi = *function<S>(x);
  classify(x > 0);
  RC_ASSERT(I::sapply(I::template sid<S>(x), phi) == phi);
}

template <class I, class S> void law_span_transpose_invol() {
  const Index x = *size(4), y = *size(4);
  const auto a = *span<S>(x, y);
  classify(a.apex() > 0);
  RC_ASSERT(I::strans(I::strans(a)) == a);
}

template <class I, class S> void law_span_adjoint() {
  const Index x = *size(4), y = *size(4);
  const auto a = *span<S>(x, y);
  const auto phi = *function<S>(x), g = *function<S>(y);
  classify(a.apex() > 0);
  expect_same<S>(
      [&](const Span<S> &sa, const Function<S> &ph, const Function<S> &gg) {
        return std::pair{dot(gg, I::sapply(sa, ph)), dot(I::sapply(I::strans(sa), gg), ph)};
      },
      a.apex() + x + y + 3, a, phi, g);
}

template <class I, class S> void law_batch_columnwise() {
  // Two columns or more three times in four, so that their order matters.
  const Index x = *size(4), y = *size(4),
              n = *full_size(rc::gen::weightedOneOf<Index>(
                  {{1, rc::gen::inRange<Index>(0, 4)}, {3, rc::gen::inRange<Index>(2, 4)}}));
  const auto a = *span<S>(x, y);
  const auto cols = *rc::gen::container<std::vector<Function<S>>>(n, function<S>(x));
  classify(a.apex() > 0 && n > 1);
  const Batch<S> out = I::sapply_batch(a, Batch<S>::from_columns(x, cols));
  RC_ASSERT(out.rows == y);
  RC_ASSERT(out.cols == n);
  // Each column summed edge by edge, written apart from pm::act.
  for (Index b = 0; b < n; ++b) {
    Function<S> expected(y, S(0));
    for (Index e = 0; e < a.apex(); ++e) expected[a.t(e)] += a.mu[e] * cols[b][a.s(e)];
    RC_ASSERT(out.column(b) == expected);
  }
}

// ---- parametric spans --------------------------------------------------------------

template <class I, class S> void law_pspan_bilinear() {
  const Index x = *size(4), y = *size(4), p = *size(3);
  const auto a = *parametric_span<S>(x, y, p);
  const auto w1 = *function<S>(p), w2 = *function<S>(p), f1 = *function<S>(x), f2 = *function<S>(x);
  const S al = *scalar<S>(), be = *scalar<S>();
  classify(a.apex() > 0);
  const std::size_t n = a.apex() + 6;
  // Linear in w, then linear in φ.
  expect_same<S>(
      [&](const ParametricSpan<S> &s, const Function<S> &u, const Function<S> &v,
          const Function<S> &ph, const S &k1, const S &k2) {
        return std::pair{I::papply(s, add(scale(k1, u), scale(k2, v)), ph),
                         add(scale(k1, I::papply(s, u, ph)), scale(k2, I::papply(s, v, ph)))};
      },
      n, a, w1, w2, f1, al, be);
  expect_same<S>(
      [&](const ParametricSpan<S> &s, const Function<S> &u, const Function<S> &v,
          const Function<S> &ph, const S &k1, const S &k2) {
        return std::pair{I::papply(s, ph, add(scale(k1, u), scale(k2, v))),
                         add(scale(k1, I::papply(s, ph, u)), scale(k2, I::papply(s, ph, v)))};
      },
      n, a, f1, f2, w1, al, be);
}

template <class I, class S> void law_pspan_adjoint() {
  const Index x = *size(4), y = *size(4), p = *size(3);
  const auto a = *parametric_span<S>(x, y, p);
  const auto w = *function<S>(p), phi = *function<S>(x), g = *function<S>(y);
  classify(a.apex() > 0);
  expect_same<S>(
      [&](const ParametricSpan<S> &s, const Function<S> &ww, const Function<S> &ph,
          const Function<S> &gg) {
        return std::pair{dot(gg, I::papply(s, ww, ph)), dot(I::papply(I::ptrans(s), ww, gg), ph)};
      },
      a.apex() + x + y + 4, a, w, phi, g);
}

template <class I, class S> void law_pspan_gradient() {
  const Index x = *size(4), y = *size(4), p = *size(3);
  const auto a = *parametric_span<S>(x, y, p);
  const auto w = *function<S>(p), phi = *function<S>(x), g = *function<S>(y);
  classify(a.apex() > 0);
  expect_same<S>(
      [&](const ParametricSpan<S> &s, const Function<S> &ww, const Function<S> &ph,
          const Function<S> &gg) {
        return std::pair{dot(gg, I::papply(s, ww, ph)), dot(ww, I::pgrad(s, ph, gg))};
      },
      a.apex() + y + p + 4, a, w, phi, g);
}

template <class I, class S> void law_pspan_comp() {
  const Index x = *nonempty_size(3), y = *nonempty_size(2), z = *nonempty_size(3),
              p = *nonempty_size(3), q = *nonempty_size(3);
  const auto a = *parametric_span<S>(x, y, p, 4), b = *parametric_span<S>(y, z, q, 4);
  const auto wa = *function<S>(p), wb = *function<S>(q), phi = *function<S>(x);
  classify(I::pcomp(b, a).apex() > 0);
  expect_same<S>(
      [&](const ParametricSpan<S> &sa, const ParametricSpan<S> &sb, const Function<S> &u,
          const Function<S> &v, const Function<S> &ph) {
        return std::pair{I::papply(I::pcomp(sb, sa), tensor(u, v), ph),
                         I::papply(sb, v, I::papply(sa, u, ph))};
      },
      a.apex() * b.apex() + a.apex() + b.apex() + 6, a, b, wa, wb, phi);
}

} // namespace pm_test
