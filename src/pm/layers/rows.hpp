#pragma once
// What every layer rule shares: the rule interface (the catalogue's
// edge-list constructors are materialise_as of their rule, so the geometry
// lives in the rule alone) and the bias added to a rule.
#include <memory>

#include "pm/category/span_rows.hpp"

namespace pm {

// The copairing [L, b] : X ⊔ {•} → Y of a rule with a bias: one more edge
// into every y, from the point • (the last source point) with parameter
// |P| + y's coordinate on `channel_axis` of `target` (one bias per channel),
// the layout of copair(a, channel bias) and of a layer file's "bias".
class BiasRows final : public SpanRows {
public:
  BiasRows(std::shared_ptr<const SpanRows> base, Shape target, Index channel_axis)
      : base_(std::move(base)), target_(std::move(target)), axis_(channel_axis) {
    require(target_.size() == base_->target() && axis_ < target_.rank(),
            "BiasRows: the target shape does not match the layer's");
  }
  Index source() const override { return base_->source() + 1; }
  Index target() const override { return base_->target(); }
  Index parameters() const override { return base_->parameters() + channels(); }
  void row(Index y, std::vector<RowEdge> &out) const override {
    base_->row(y, out);
    out.push_back({base_->source(), bias_parameter(y), 1});
  }
  void integer_row(Index y, std::vector<IntegerEdge> &out) const override {
    base_->integer_row(y, out);
    out.push_back({base_->source(), bias_parameter(y), 1});
  }
  Index max_row() const override { return base_->max_row() + 1; }
  Index max_column() const override { return std::max(base_->max_column(), base_->target()); }
  Index max_parameter_use() const override {
    return std::max(base_->max_parameter_use(), base_->target() / channels());
  }
  bool exact() const override { return base_->exact(); }
  bool integral() const override { return base_->integral(); }
  bool integer_rows() const override { return base_->integer_rows(); }

private:
  Index channels() const { return target_.extents()[axis_]; }
  Index bias_parameter(Index y) const { return base_->parameters() + target_.multi(y)[axis_]; }
  std::shared_ptr<const SpanRows> base_;
  Shape target_;
  Index axis_;
};

} // namespace pm
