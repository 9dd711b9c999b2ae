#pragma once
// The dense layer as a parametric span. Without bias: X ← X × Y → Y with
// π = id, so P = X × Y is the weight matrix W(x, y), flat x·|Y| + y (input
// major, the layout of the seed's W), and (L_W φ)(y) = Σ_x W(x, y) φ(x).
// With bias: the copairing with the bias span, a span X ⊔ {•} → Y with
// parameters W followed by b (see coproduct.hpp).
#include "pm/layers/coproduct.hpp"

namespace pm {

struct DenseSpec {
  Index in = 0;
  Index out = 0;
  bool bias = false;

  Index source() const { return in + (bias ? 1 : 0); }
  Index parameters() const { return in * out + (bias ? out : 0); }
};

template <class S> ParametricSpan<S> dense(const DenseSpec &spec) {
  // Edges (x, y) in row-major order, so each output sums over x in order.
  ParametricSpan<S> a{Span<S>{FinMap{}, FinMap{}, Measure<S>(spec.in * spec.out, S(1))},
                      identity_map(spec.in * spec.out)};
  a.span.s.codomain = spec.in;
  a.span.t.codomain = spec.out;
  for (Index x = 0; x < spec.in; ++x)
    for (Index y = 0; y < spec.out; ++y) {
      a.span.s.images.push_back(x);
      a.span.t.images.push_back(y);
    }
  return spec.bias ? copair(a, bias<S>(spec.out)) : a;
}

} // namespace pm
