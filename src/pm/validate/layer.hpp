#pragma once
// What the validator needs of a layer: a C++20 concept. A layer is a family of
// linear maps L_w : S^X → S^Y, bilinear in (w, φ), together with its
// transpose (the adjoint in φ) and its parameter gradient (the adjoint in w):
//   apply(w, φ) = L_w φ,  apply_transpose(w, g) = L_wᵀ g,
//   parameter_gradient(φ, g) = ∇_w ⟨g, L_w φ⟩.
// Two optional members sharpen the floating-point bound of docs/tolerances.md:
// magnitude() returns the layer with every weight replaced by its absolute
// value (without it, the layer itself is run on absolute inputs and the
// result taken in absolute value, which bounds Σ|terms| only when its
// internal weights share one sign), and terms()
// bounds the number of products summed into one output (default |X|·|P|).
#include <concepts>

#include "pm/category/parametric_span.hpp"
#include "pm/category/scalar.hpp"
#include "pm/validate/cases.hpp"

namespace pm {

// The forward pass alone is what span recovery (recover.hpp) needs; a Layer
// adds the two adjoints.
template <class L>
concept ForwardLayer = requires(const L &l, const Function<typename L::scalar_type> &v) {
  typename L::scalar_type;
  { l.source_size() } -> std::convertible_to<Index>;
  { l.target_size() } -> std::convertible_to<Index>;
  { l.parameter_size() } -> std::convertible_to<Index>;
  { l.apply(v, v) } -> std::convertible_to<Function<typename L::scalar_type>>;
};

template <class L>
concept Layer = ForwardLayer<L> &&
    requires(const L &l, const Function<typename L::scalar_type> &v) {
  { l.apply_transpose(v, v) } -> std::convertible_to<Function<typename L::scalar_type>>;
  { l.parameter_gradient(v, v) } -> std::convertible_to<Function<typename L::scalar_type>>;
};

template <class L>
concept HasMagnitude = Layer<L> && requires(const L &l) {
  { l.magnitude() } -> std::convertible_to<L>;
};

template <class L>
concept HasTerms = requires(const L &l) {
  { l.terms() } -> std::convertible_to<Index>;
};

// A parametric span seen as a layer: the reference semantics of the category
// core, which every law holds for. The span is also what PSPAN-COMP needs.
template <class S> struct SpanLayer {
  using scalar_type = S;
  ParametricSpan<S> span;

  Index source_size() const { return span.source(); }
  Index target_size() const { return span.target(); }
  Index parameter_size() const { return span.parameters(); }
  Index terms() const { return span.apex(); }
  Function<S> apply(const Function<S> &w, const Function<S> &phi) const {
    return act(span, w, phi);
  }
  Function<S> apply_transpose(const Function<S> &w, const Function<S> &g) const {
    return act(transpose(span), w, g);
  }
  Function<S> parameter_gradient(const Function<S> &phi, const Function<S> &g) const {
    return pm::parameter_gradient(span, phi, g);
  }
  SpanLayer magnitude() const {
    SpanLayer m = *this;
    m.span.span.mu = validation::magnitude(m.span.span.mu);
    return m;
  }
};

} // namespace pm
