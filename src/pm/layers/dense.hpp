#pragma once
// The dense layer as a parametric span. Without bias: X ← X × Y → Y with
// π = id, so P = X × Y is the weight matrix W(x, y), flat x·|Y| + y (input
// major, the layout of the seed's W), and (L_W φ)(y) = Σ_x W(x, y) φ(x).
// With bias: the copairing with the bias span, a span X ⊔ {•} → Y with
// parameters W followed by b (see coproduct.hpp).
#include "pm/layers/coproduct.hpp"
#include "pm/layers/rows.hpp"

namespace pm {

struct DenseSpec {
  Index in = 0;
  Index out = 0;
  bool bias = false;

  Index source() const { return in + (bias ? 1 : 0); }
  Index parameters() const { return in * out + (bias ? out : 0); }
};

// The rows of the dense layer: y's row is (x, x·|Y| + y, 1) for every x, then
// the bias edge (BiasRows) when there is one.
class DenseRows final : public IntegerRule<DenseRows> {
public:
  explicit DenseRows(Index in, Index out) : in_(in), out_(out) {}
  Index source() const override { return in_; }
  Index target() const override { return out_; }
  Index parameters() const override { return in_ * out_; }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    for (Index x = 0; x < in_; ++x) out.push_back({x, x * out_ + y, 1});
  }
  Index max_row() const override { return in_; }
  Index max_column() const override { return out_; }
  Index max_parameter_use() const override { return 1; }

private:
  Index in_, out_;
};

inline std::shared_ptr<const SpanRows> dense_rows(const DenseSpec &spec) {
  auto a = std::make_shared<const DenseRows>(spec.in, spec.out);
  if (!spec.bias) return a;
  return std::make_shared<const BiasRows>(a, Shape({spec.out}), 0);
}

// The edge list keeps the input-major order (x, y) of the seed's W, which the
// extracted model of proofs/Layers.v is compared with edge by edge; its rows
// are those of dense_rows (tests/layers/rows.cpp).
template <class S> ParametricSpan<S> dense(const DenseSpec &spec) {
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
