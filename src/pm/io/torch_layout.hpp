#pragma once
// PyTorch's layout of a layer's spaces and parameters (docs/formats.md §2.5).
// A parametric span does not care how its spaces are enumerated: renaming
// the points of X, Y or P by a bijection gives an isomorphic span, with the
// same layer up to that renaming of inputs, outputs and weights. So any
// framework's weight tensor is the parameter array unchanged once π sends
// each edge to the flat index its weight has in that tensor: the layout is a
// choice of π (and of s, t), never a copy or a transposition of the weights.
// Here the choice is a permutation of axes: (position…, channel) becomes
// (channel, position…) and (kernel…, c_in/groups, c_out) becomes
// (c_out, c_in/groups, kernel…), PyTorch's Conv weight W(O, C/groups, k…).
#include <utility>
#include <vector>

#include "pm/category/parametric_span.hpp"
#include "pm/category/span_rows.hpp"

namespace pm::io {

// The shape whose axis j is axis order[j] of s.
inline Shape permuted(const Shape &s, const std::vector<Index> &order) {
  std::vector<Index> ext;
  for (Index j : order) ext.push_back(s.extents()[j]);
  return Shape(ext);
}

// The flat index of each point of `from` in permuted(from, order).
inline FinMap relayout_map(const Shape &from, const std::vector<Index> &order) {
  const Shape to = permuted(from, order);
  std::vector<Index> images(from.size());
  std::vector<Index> t(order.size());
  for (Index f = 0; f < from.size(); ++f) {
    const auto m = from.multi(f);
    for (std::size_t j = 0; j < order.size(); ++j) t[j] = m[order[j]];
    images[f] = to.flat(t);
  }
  return FinMap(to.size(), std::move(images));
}

// A layer with its spaces, as the reader and `pmach make` hand it on.
struct ShapedSpan {
  ParametricSpan<Rational> span;
  Shape source, target, parameters;
};

// Relabels source, target and parameters of `a` by the axis permutations
// given (an empty order keeps that space as it is).
inline ShapedSpan relayout(ShapedSpan a, const std::vector<Index> &source_order,
                           const std::vector<Index> &target_order,
                           const std::vector<Index> &parameter_order) {
  if (!source_order.empty()) {
    a.span.span.s = compose(relayout_map(a.source, source_order), a.span.span.s);
    a.source = permuted(a.source, source_order);
  }
  if (!target_order.empty()) {
    a.span.span.t = compose(relayout_map(a.target, target_order), a.span.span.t);
    a.target = permuted(a.target, target_order);
  }
  if (!parameter_order.empty()) {
    a.span.pi = compose(relayout_map(a.parameters, parameter_order), a.span.pi);
    a.parameters = permuted(a.parameters, parameter_order);
  }
  return a;
}

// (position…, channel) → (channel, position…) for `rank` positions.
inline std::vector<Index> channel_first(Index rank) {
  std::vector<Index> order{rank};
  for (Index j = 0; j < rank; ++j) order.push_back(j);
  return order;
}

// A convolution of `rank` spatial axes (conv() or conv_transpose(), whose
// parameters are (kernel…, c_in/groups, c_out) either way) in PyTorch's
// layout: channels first, parameters (c_out, c_in/groups, kernel…) — the
// weight of ConvNd, and of ConvTransposeNd, which is that of the
// convolution it transposes.
inline ShapedSpan conv_in_torch_layout(ShapedSpan a, Index rank) {
  std::vector<Index> param{rank + 1, rank};
  for (Index j = 0; j < rank; ++j) param.push_back(j);
  return relayout(std::move(a), channel_first(rank), channel_first(rank), param);
}

// A rule with its source, target and parameters relabelled as relayout()
// relabels an edge list: the rows of the relabelled target point, each edge's
// source and parameter sent to their new flat indices (an empty order keeps
// that space).
class RelayoutRows final : public SpanRows {
public:
  // source, target, parameters: the shapes of `base`'s spaces.
  RelayoutRows(std::shared_ptr<const SpanRows> base, const Shape &source, const Shape &target,
               const Shape &parameters, const std::vector<Index> &source_order,
               const std::vector<Index> &target_order, const std::vector<Index> &parameter_order)
      : base_(std::move(base)), source_(axes(source, source_order)),
        target_(axes(target, target_order)), parameters_(axes(parameters, parameter_order)) {
    require(source.size() == base_->source() && target.size() == base_->target() &&
                parameters.size() == base_->parameters(),
            "RelayoutRows: the shapes do not fit the rule");
  }
  Shape source_shape() const { return source_.to_shape; }
  Shape target_shape() const { return target_.to_shape; }
  Shape parameter_shape() const { return parameters_.to_shape; }
  Index source() const override { return base_->source(); }
  Index target() const override { return base_->target(); }
  Index parameters() const override { return base_->parameters(); }
  void row(Index y, std::vector<RowEdge> &out) const override {
    const std::size_t first = out.size();
    base_->row(target_.from(y), out);
    relabel(out, first);
  }
  void integer_row(Index y, std::vector<IntegerEdge> &out) const override {
    const std::size_t first = out.size();
    base_->integer_row(target_.from(y), out);
    relabel(out, first);
  }
  Index max_row() const override { return base_->max_row(); }
  Index max_column() const override { return base_->max_column(); }
  Index max_parameter_use() const override { return base_->max_parameter_use(); }
  bool exact() const override { return base_->exact(); }
  bool integral() const override { return base_->integral(); }
  bool integer_rows() const override { return base_->integer_rows(); }

private:
  template <class Edge> void relabel(std::vector<Edge> &out, std::size_t first) const {
    for (std::size_t e = first; e < out.size(); ++e) {
      out[e].source = source_.to(out[e].source);
      out[e].parameter = parameters_.to(out[e].parameter);
    }
  }
  // A permutation of the axes of a shape, both ways between flat indices.
  struct Axes {
    Shape from_shape, to_shape;
    std::vector<Index> order; // empty: the identity
    Index to(Index f) const {
      if (order.empty()) return f;
      const auto m = from_shape.multi(f);
      std::vector<Index> t(order.size());
      for (std::size_t j = 0; j < order.size(); ++j) t[j] = m[order[j]];
      return to_shape.flat(t);
    }
    Index from(Index t) const {
      if (order.empty()) return t;
      const auto m = to_shape.multi(t);
      std::vector<Index> f(order.size());
      for (std::size_t j = 0; j < order.size(); ++j) f[order[j]] = m[j];
      return from_shape.flat(f);
    }
  };
  static Axes axes(const Shape &s, const std::vector<Index> &order) {
    return {s, order.empty() ? s : permuted(s, order), order};
  }
  std::shared_ptr<const SpanRows> base_;
  Axes source_, target_, parameters_;
};

} // namespace pm::io
