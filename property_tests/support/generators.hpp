#pragma once
// Generators for the category core. They reach the corners on purpose: empty
// sets and fibres, non-injective and non-surjective maps, repeated edges, zero
// and negative weights. Scalars are built from small integers so that
// shrinking terminates and rational arithmetic stays small.
#include <rapidcheck.h>

#include "pm/category.hpp"

namespace pm_test {

using pm::Index;

// Small rationals p/q with p ∈ [−4, 4], q ∈ [1, 3]; zero is frequent.
// For floating types, values in [−1, 1] that are not dyadic, so that
// floating-point rounding really happens in double checks.
template <class S> rc::Gen<S> scalar() {
  if constexpr (std::is_floating_point_v<S>) {
    return rc::gen::map(rc::gen::inRange(-997, 998), [](int k) { return S(k) / S(997); });
  } else {
    return rc::gen::apply([](int p, int q) { return S(p) / S(q); }, rc::gen::inRange(-4, 5),
                          rc::gen::inRange(1, 4));
  }
}

template <class S> rc::Gen<pm::Function<S>> function(Index n) {
  return rc::gen::container<pm::Function<S>>(n, scalar<S>());
}

inline rc::Gen<Index> size(Index max) { return rc::gen::inRange<Index>(0, max + 1); }

// A map {0..domain−1} → {0..codomain−1}; requires codomain > 0 unless domain = 0.
inline rc::Gen<pm::FinMap> finmap(Index domain, Index codomain) {
  if (domain == 0) return rc::gen::just(pm::empty_map(codomain));
  return rc::gen::map(
      rc::gen::container<std::vector<Index>>(domain, rc::gen::inRange<Index>(0, codomain)),
      [codomain](std::vector<Index> t) { return pm::FinMap(codomain, std::move(t)); });
}

// A span X → Y with at most max_apex edges (none if X or Y is empty).
template <class S> rc::Gen<pm::Span<S>> span(Index x, Index y, Index max_apex = 6) {
  const Index cap = (x == 0 || y == 0) ? 0 : max_apex;
  return rc::gen::mapcat(size(cap), [x, y](Index e) {
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
