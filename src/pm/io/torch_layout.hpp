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
#include <memory>
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
  // Each way peels the digits of an index off its last axis (one division
  // each, none for the first) and adds them at the other side's strides: no
  // multi-index is built (a check at full size relabels 10^8 edges).
  struct Way {
    std::vector<Index> extent, stride; // per axis of the input: its extent, its stride out
    Index operator()(Index i) const {
      Index r = 0;
      for (std::size_t a = extent.size(); a-- > 1;) {
        r += (i % extent[a]) * stride[a];
        i /= extent[a];
      }
      return extent.empty() ? i : r + i * stride[0];
    }
  };
  struct Axes {
    Shape to_shape;
    bool identity = true;
    Way forth, back;
    Index to(Index f) const { return identity ? f : forth(f); }
    Index from(Index t) const { return identity ? t : back(t); }
  };
  static std::vector<Index> strides(const std::vector<Index> &extents) {
    std::vector<Index> s(extents.size(), 1);
    for (std::size_t a = extents.size(); a-- > 1;) s[a - 1] = s[a] * extents[a];
    return s;
  }
  static Axes axes(const Shape &s, const std::vector<Index> &order) {
    if (order.empty()) return {s, true, {}, {}};
    Axes x{permuted(s, order), false, {s.extents(), {}}, {{}, {}}};
    const std::vector<Index> from = strides(s.extents()), to = strides(x.to_shape.extents());
    x.forth.stride.assign(order.size(), 0);
    x.back.extent = x.to_shape.extents();
    for (std::size_t j = 0; j < order.size(); ++j) {
      x.forth.stride[order[j]] = to[j];
      x.back.stride.push_back(from[order[j]]);
    }
    return x;
  }
  std::shared_ptr<const SpanRows> base_;
  Axes source_, target_, parameters_;
};

// A rule with the shapes of its spaces, as the constructors, `pmach make` and
// the named-layer reader hand it on.
struct ShapedRows {
  std::shared_ptr<const SpanRows> rows;
  Shape source, target, parameters;
};

// Relabels source, target and parameters of `a` by the axis permutations
// given (an empty order keeps that space as it is).
inline ShapedRows relayout(const ShapedRows &a, const std::vector<Index> &source_order,
                           const std::vector<Index> &target_order,
                           const std::vector<Index> &parameter_order) {
  auto r = std::make_shared<const RelayoutRows>(a.rows, a.source, a.target, a.parameters,
                                                source_order, target_order, parameter_order);
  return {r, r->source_shape(), r->target_shape(), r->parameter_shape()};
}

// (position…, channel) → (channel, position…) for `rank` positions.
inline std::vector<Index> channel_first(Index rank) {
  std::vector<Index> order{rank};
  for (Index j = 0; j < rank; ++j) order.push_back(j);
  return order;
}

// A convolution's parameters (kernel…, c_in/groups, c_out) — conv() and
// conv_transpose() alike — in PyTorch's layout (c_out, c_in/groups, kernel…):
// the weight of ConvNd, and of ConvTransposeNd, which is that of the
// convolution it transposes.
inline std::vector<Index> conv_parameter_order(Index rank) {
  std::vector<Index> order{rank + 1, rank};
  for (Index j = 0; j < rank; ++j) order.push_back(j);
  return order;
}

} // namespace pm::io
