#pragma once
// Deliberately wrong variants of the category core, one mistake each. Every
// law in spec/spans.md is run against one of them and must reject it; a law
// that accepted its mutant could not fail and would prove nothing.
#include "span_impl.hpp"

namespace pm_test {

// The identity map replaced by the reversal permutation.
struct MutIdentity : Reference {
  static FinMap id(Index n) {
    FinMap f = identity_map(n);
    std::reverse(f.images.begin(), f.images.end());
    return f;
  }
};

// Composition that reads g at f(i) + i instead of f(i). (A shift that does not
// depend on i would still be associative: g ∘ σ ∘ f composes like ∘.)
struct MutCompose : Reference {
  static FinMap comp(const FinMap &g, const FinMap &f) {
    FinMap h = pm::compose(g, f);
    for (Index i = 0; i < f.domain(); ++i) h.images[i] = g.images[(f.images[i] + i) % g.domain()];
    return h;
  }
};

// Pullback that reads φ one step off.
struct MutPull : Reference {
  template <class S> static Function<S> pull(const FinMap &f, const Function<S> &phi) {
    Function<S> out = pullback(f, phi);
    for (Index a = 0; a < f.domain(); ++a) out[a] = phi[shifted(f.images[a], f.codomain)];
    return out;
  }
};

// Pushforward into the neighbouring fibre.
struct MutPush : Reference {
  template <class S> static Measure<S> push(const FinMap &f, const Measure<S> &mu) {
    Measure<S> out(f.codomain, S(0));
    for (Index a = 0; a < f.domain(); ++a) out[shifted(f.images[a], f.codomain)] += mu[a];
    return out;
  }
};

// Integration into the neighbouring fibre.
struct MutIntegrate : Reference {
  template <class S>
  static Function<S> integ(const FinMap &f, const Measure<S> &mu, const Function<S> &psi) {
    Function<S> out(f.codomain, S(0));
    for (Index a = 0; a < f.domain(); ++a) out[shifted(f.images[a], f.codomain)] += mu[a] * psi[a];
    return out;
  }
};

// A fibre product that forgets its last pair.
struct MutFibre : Reference {
  static FibreProduct fib(const FinMap &f, const FinMap &g) {
    FibreProduct fp = fibre_product(f, g);
    if (fp.size() > 0) {
      fp.p.images.pop_back();
      fp.q.images.pop_back();
    }
    return fp;
  }
};

// Composite weights μ_a − μ_b instead of μ_a · μ_b (not associative, not unital).
struct MutMeasureDifference : Reference {
  template <class S> static Span<S> scomp(const Span<S> &b, const Span<S> &a) {
    const FibreProduct fp = fibre_product(a.t, b.s);
    Span<S> c = compose_over(b, a, fp);
    for (Index e = 0; e < fp.size(); ++e) c.mu[e] = a.mu[fp.p(e)] - b.mu[fp.q(e)];
    return c;
  }
};

// Composition that drops the measure of the second span.
struct MutDroppedMeasure : Reference {
  template <class S> static Span<S> scomp(const Span<S> &b, const Span<S> &a) {
    const FibreProduct fp = fibre_product(a.t, b.s);
    Span<S> c = compose_over(b, a, fp);
    for (Index e = 0; e < fp.size(); ++e) c.mu[e] = a.mu[fp.p(e)];
    return c;
  }
};

// An identity span whose source leg is reversed.
struct MutSpanIdentity : Reference {
  template <class S> static Span<S> sid(Index n) {
    Span<S> a = identity_span<S>(n);
    a.s = MutIdentity::id(n);
    return a;
  }
};

// Transposes that swap the legs but damage the measure.
struct MutTransposeUnitMeasure : Reference {
  template <class S> static Span<S> strans(const Span<S> &a) {
    return Span<S>{a.t, a.s, Measure<S>(a.apex(), S(1))};
  }
};
struct MutTransposeReversedMeasure : Reference {
  template <class S> static Span<S> strans(const Span<S> &a) {
    return reversed_measure(transpose(a));
  }
};

// Batch application that writes the columns in reverse order.
struct MutBatch : Reference {
  template <class S> static Batch<S> sapply_batch(const Span<S> &a, const Batch<S> &phi) {
    Batch<S> out = act(a, phi);
    for (Index b = 0; b < phi.cols; ++b) out.set_column(b, act(a, phi.column(phi.cols - 1 - b)));
    return out;
  }
};

// A layer that adds the parameter to the input instead of multiplying.
struct MutApplyAdds : Reference {
  template <class S>
  static Function<S> papply(const ParametricSpan<S> &a, const Function<S> &w,
                            const Function<S> &phi) {
    return integrate(a.span.t, a.span.mu, add(pullback(a.pi, w), pullback(a.span.s, phi)));
  }
};

// A transpose that also reverses the parameter leg.
struct MutPTranspose : Reference {
  template <class S> static ParametricSpan<S> ptrans(const ParametricSpan<S> &a) {
    ParametricSpan<S> b = transpose(a);
    std::reverse(b.pi.images.begin(), b.pi.images.end());
    return b;
  }
};

// A parameter gradient that drops the measure.
struct MutGradient : Reference {
  template <class S>
  static Function<S> pgrad(const ParametricSpan<S> &a, const Function<S> &phi,
                           const Function<S> &g) {
    return integrate(a.pi, Measure<S>(a.apex(), S(1)),
                     hadamard(pullback(a.span.s, phi), pullback(a.span.t, g)));
  }
};

// Composite parameters flattened as p_b · |P_a| + p_a, disagreeing with tensor.
struct MutParameterOrder : Reference {
  template <class S>
  static ParametricSpan<S> pcomp(const ParametricSpan<S> &b, const ParametricSpan<S> &a) {
    ParametricSpan<S> c = pm::compose(b, a);
    for (auto &p : c.pi.images) p = (p % b.parameters()) * a.parameters() + p / b.parameters();
    return c;
  }
};

// An isomorphism test that ignores the measure.
struct MutIso : Reference {
  template <class S> static std::optional<FinMap> siso(const Span<S> &a, const Span<S> &b) {
    Span<S> a1 = a, b1 = b;
    std::fill(a1.mu.begin(), a1.mu.end(), S(0));
    std::fill(b1.mu.begin(), b1.mu.end(), S(0));
    return span_isomorphism(a1, b1);
  }
};

} // namespace pm_test

namespace pm_test {

// For the floating-point laws: the layer operations accumulate in float
// whatever the scalar (a kernel with a single-precision accumulator). In
// double the error is about 2^-24 relative, far beyond γ_n of double.
struct MutFloatAccumulator : Reference {
  template <class S>
  static Function<S> integ(const FinMap &f, const Measure<S> &mu, const Function<S> &psi) {
    std::vector<float> out(f.codomain, 0.0f);
    for (Index a = 0; a < f.domain(); ++a) out[f.images[a]] += float(mu[a] * psi[a]);
    return Function<S>(out.begin(), out.end());
  }
  template <class S> static Function<S> sapply(const Span<S> &a, const Function<S> &phi) {
    return integ(a.t, a.mu, pullback(a.s, phi));
  }
  template <class S>
  static Function<S> papply(const ParametricSpan<S> &a, const Function<S> &w,
                            const Function<S> &phi) {
    return integ(a.span.t, a.span.mu, hadamard(pullback(a.pi, w), pullback(a.span.s, phi)));
  }
  template <class S>
  static Function<S> pgrad(const ParametricSpan<S> &a, const Function<S> &phi,
                           const Function<S> &g) {
    return integ(a.pi, a.span.mu, hadamard(pullback(a.span.s, phi), pullback(a.span.t, g)));
  }
};

} // namespace pm_test
