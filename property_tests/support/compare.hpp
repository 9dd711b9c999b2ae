#pragma once
// Comparing the two sides of a law. Over an exact scalar the sides must be
// equal (==). Over a floating scalar they must agree within the forward error
// bound γ_n (Σ|terms|_lhs + Σ|terms|_rhs) per component, where Σ|terms| is
// obtained by evaluating the same side on the absolute values of the inputs
// and n bounds the length of any chain of roundings (docs/tolerances.md).
#include <rapidcheck.h>

#include <type_traits>

#include "law.hpp"
#include "pm/category.hpp"

namespace pm_test {

template <class S> constexpr bool is_exact = !std::is_floating_point_v<S>;

template <class S> S absolute(const S &x) requires std::is_arithmetic_v<S> { return std::abs(x); }
template <class S> std::vector<S> absolute(std::vector<S> v) {
  for (auto &x : v) x = absolute(x);
  return v;
}
template <class S> pm::Batch<S> absolute(pm::Batch<S> b) {
  b.data = absolute(std::move(b.data));
  return b;
}
template <class S> pm::Span<S> absolute(pm::Span<S> a) {
  a.mu = absolute(a.mu);
  return a;
}
template <class S> pm::ParametricSpan<S> absolute(pm::ParametricSpan<S> a) {
  a.span = absolute(a.span);
  return a;
}

template <class S> std::vector<S> components(const std::vector<S> &v) { return v; }
template <class S> std::vector<S> components(const S &x) requires std::is_arithmetic_v<S> {
  return {x};
}
template <class S> std::vector<S> components(const pm::Batch<S> &b) { return b.data; }

// `sides(args...)` returns the pair (lhs, rhs) of a law.
template <class S, class Sides, class... Args>
void expect_same(Sides &&sides, std::size_t n, const Args &...args) {
  const auto [lhs, rhs] = sides(args...);
  if constexpr (is_exact<S>) {
    RC_ASSERT(lhs == rhs);
  } else {
    const auto [ml, mr] = sides(absolute(args)...);
    const auto l = components<S>(lhs), r = components<S>(rhs), a = components<S>(ml),
               b = components<S>(mr);
    RC_ASSERT(l.size() == r.size());
    for (std::size_t i = 0; i < l.size(); ++i) {
      RC_LOG() << "component " << i << ": " << l[i] << " vs " << r[i] << ", bound "
               << gamma<S>(n) * (a[i] + b[i]) << "\n";
      RC_ASSERT(within_bound(l[i], r[i], a[i], b[i], n));
    }
  }
}

} // namespace pm_test
