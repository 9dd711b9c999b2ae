#pragma once
// The operations of the category core bundled as one type, so that a law can
// be run against the reference (`Reference`) or against a mutant that derives
// from it and hides exactly one operation with a deliberately wrong version.
#include "pm/category.hpp"

namespace pm_test {

using namespace pm;

struct Reference {
  static FinMap id(Index n) { return identity_map(n); }
  static FinMap comp(const FinMap &g, const FinMap &f) { return pm::compose(g, f); }
  static FibreProduct fib(const FinMap &f, const FinMap &g) { return fibre_product(f, g); }
  template <class S> static Function<S> pull(const FinMap &f, const Function<S> &phi) {
    return pullback(f, phi);
  }
  template <class S> static Measure<S> push(const FinMap &f, const Measure<S> &mu) {
    return pushforward(f, mu);
  }
  template <class S>
  static Function<S> integ(const FinMap &f, const Measure<S> &mu, const Function<S> &psi) {
    return integrate(f, mu, psi);
  }
  template <class S> static Span<S> sid(Index n) { return identity_span<S>(n); }
  template <class S> static Span<S> scomp(const Span<S> &b, const Span<S> &a) {
    return pm::compose(b, a);
  }
  template <class S> static Span<S> strans(const Span<S> &a) { return transpose(a); }
  template <class S> static Function<S> sapply(const Span<S> &a, const Function<S> &phi) {
    return act(a, phi);
  }
  template <class S> static Batch<S> sapply_batch(const Span<S> &a, const Batch<S> &phi) {
    return act(a, phi);
  }
  template <class S>
  static Function<S> papply(const ParametricSpan<S> &a, const Function<S> &w,
                            const Function<S> &phi) {
    return act(a, w, phi);
  }
  template <class S> static ParametricSpan<S> ptrans(const ParametricSpan<S> &a) {
    return transpose(a);
  }
  template <class S>
  static Function<S> pgrad(const ParametricSpan<S> &a, const Function<S> &phi,
                           const Function<S> &g) {
    return parameter_gradient(a, phi, g);
  }
  template <class S>
  static ParametricSpan<S> pcomp(const ParametricSpan<S> &b, const ParametricSpan<S> &a) {
    return pm::compose(b, a);
  }
  template <class S> static std::optional<FinMap> siso(const Span<S> &a, const Span<S> &b) {
    return span_isomorphism(a, b);
  }
};

// Helpers for building mutants: a map shifted by one in its codomain.
inline Index shifted(Index i, Index n) { return n == 0 ? i : (i + 1) % n; }

template <class S> Span<S> reversed_measure(Span<S> a) {
  std::reverse(a.mu.begin(), a.mu.end());
  return a;
}

} // namespace pm_test
