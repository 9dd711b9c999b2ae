#pragma once
// Generators for the category core. They reach the corners on purpose: empty
// sets and fibres, non-injective and non-surjective maps, repeated edges, zero
// and negative weights. Scalars are built from small integers so that
// shrinking terminates and rational arithmetic stays small.
#include <rapidcheck.h>

#include "pm/category.hpp"

namespace pm_test {

using pm::Index;

// RapidCheck scales ranges by a size that starts at 0 and grows over the run,
// so that at the default 100 cases most draws would be the degenerate ones
// (empty sets, zero scalars). Every generator here draws at full size from
// the first case; shrinking still works.
template <class T> rc::Gen<T> full_size(rc::Gen<T> g) {
  return rc::gen::resize(rc::kNominalSize, std::move(g));
}

// Small rationals p/q with p ∈ [−4, 4], q ∈ [1, 3]: zero one time in four,
// otherwise p ≠ 0 with either sign equally likely.
// For floating types, k/997 with k ∈ [−996, 996]: zero one time in four,
// otherwise not dyadic (997 is prime and |k| < 997), so that floating-point
// rounding really happens in double checks.
template <class S> rc::Gen<S> scalar() {
  auto nonzero = [](int bound) {
    return rc::gen::map(rc::gen::pair(rc::gen::inRange(1, bound + 1), rc::gen::arbitrary<bool>()),
                        [](std::pair<int, bool> k) { return k.second ? -k.first : k.first; });
  };
  if constexpr (std::is_floating_point_v<S>) {
    return full_size(rc::gen::weightedOneOf<S>(
        {{1, rc::gen::just(S(0))},
         {3, rc::gen::map(nonzero(996), [](int k) { return S(k) / S(997); })}}));
  } else {
    return full_size(
        rc::gen::weightedOneOf<S>({{1, rc::gen::just(S(0))},
                                   {3, rc::gen::apply([](int p, int q) { return S(p) / S(q); },
                                                      nonzero(4), rc::gen::inRange(1, 4))}}));
  }
}

template <class S> rc::Gen<pm::Function<S>> function(Index n) {
  return rc::gen::container<pm::Function<S>>(n, scalar<S>());
}

// A size in 0..max: empty one time in 2(max + 1), otherwise uniform in 1..max.
inline rc::Gen<Index> size(Index max) {
  return full_size(rc::gen::oneOf(rc::gen::inRange<Index>(0, max + 1),
                                  rc::gen::inRange<Index>(max == 0 ? 0 : 1, max + 1)));
}

// A size in 1..max, for laws whose interesting cases need every set non-empty
// (the empty corners then come from empty spans).
inline rc::Gen<Index> nonempty_size(Index max) {
  return full_size(rc::gen::inRange<Index>(1, max + 1));
}

// A map {0..domain−1} → {0..codomain−1}; requires codomain > 0 unless domain = 0.
inline rc::Gen<pm::FinMap> finmap(Index domain, Index codomain) {
  if (domain == 0) return rc::gen::just(pm::empty_map(codomain));
  return rc::gen::map(
      full_size(
          rc::gen::container<std::vector<Index>>(domain, rc::gen::inRange<Index>(0, codomain))),
      [codomain](std::vector<Index> t) { return pm::FinMap(codomain, std::move(t)); });
}

// A number of edges in 0..cap, half of the time at least cap/2, so that
// composites (fibre products) are mostly non-empty.
inline rc::Gen<Index> apex_size(Index cap) {
  return rc::gen::oneOf(size(cap), full_size(rc::gen::inRange<Index>((cap + 1) / 2, cap + 1)));
}

// A span X → Y with at most max_apex edges (none if X or Y is empty).
template <class S> rc::Gen<pm::Span<S>> span(Index x, Index y, Index max_apex = 6) {
  const Index cap = (x == 0 || y == 0) ? 0 : max_apex;
  return rc::gen::mapcat(apex_size(cap), [x, y](Index e) {
    return rc::gen::apply(
        [](pm::FinMap s, pm::FinMap t, pm::Measure<S> mu) {
          return pm::Span<S>{std::move(s), std::move(t), std::move(mu)};
        },
        finmap(e, x), finmap(e, y), function<S>(e));
  });
}

template <class S>
rc::Gen<pm::ParametricSpan<S>> parametric_span(Index x, Index y, Index p, Index max_apex = 6) {
  const Index cap = (x == 0 || y == 0 || p == 0) ? 0 : max_apex;
  return rc::gen::mapcat(span<S>(x, y, cap), [p](pm::Span<S> sp) {
    const Index e = sp.apex();
    return rc::gen::map(finmap(e, p), [sp](pm::FinMap pi) {
      return pm::ParametricSpan<S>{sp, std::move(pi)};
    });
  });
}

} // namespace pm_test
