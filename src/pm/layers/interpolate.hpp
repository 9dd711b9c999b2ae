#pragma once
// Resampling to a given output size, PyTorch's F.interpolate: a span with a
// fixed measure and no parameters (a one-point parameter space), separable
// over the spatial axes. Each output coordinate d of an axis from n to m
// points reads taps of the input axis:
//   nearest: the point ⌊d·n/m⌋;
//   linear:  the source coordinate x = d·(n−1)/(m−1) (align_corners; 0 when
//            m = 1) or x = max(0, (d + 1/2)·n/m − 1/2), and the points
//            i = ⌊x⌋ and min(i + 1, n − 1) with weights 1 − (x − i) and x − i.
// The weights are rational (3/7 at 4 → 7), held exactly. An output point's
// row is the product of its axes' taps (bilinear, trilinear), channel kept.
// Layout (position…, channel), row-major.
#include "pm/layers/rows.hpp"

namespace pm {

enum class InterpolateMode { nearest, linear };

struct InterpolateSpec {
  std::vector<Index> spatial; // input extents
  Index channels = 1;
  std::vector<Index> size; // output extents, one per axis
  InterpolateMode mode = InterpolateMode::nearest;
  bool align_corners = false;

  void validate() const {
    require(!spatial.empty(), "InterpolateSpec: spatial has no axes, expected at least 1");
    require(size.size() == spatial.size(), "InterpolateSpec.size has ", size.size(),
            " entries, expected ", spatial.size(), " (one per spatial axis)");
    require(channels >= 1, "InterpolateSpec.channels is 0, expected >= 1");
    for (Index j = 0; j < spatial.size(); ++j)
      require(spatial[j] >= 1 && size[j] >= 1, "InterpolateSpec: axis ", j, " is ", spatial[j],
              " -> ", size[j], ", expected extents >= 1");
  }
  Shape input_shape() const { return with_channel(spatial); }
  Shape output_shape() const { return with_channel(size); }

private:
  Shape with_channel(std::vector<Index> v) const {
    v.push_back(channels);
    return Shape(std::move(v));
  }
};

class InterpolateRows final : public SpanRows {
public:
  explicit InterpolateRows(InterpolateSpec c)
      : c_((c.validate(), std::move(c))), in_(c_.input_shape()), out_(c_.output_shape()) {
    for (Index j = 0; j < c_.spatial.size(); ++j) {
      std::vector<std::vector<Tap>> axis(c_.size[j]);
      std::vector<Index> reads(c_.spatial[j], 0);
      Index most = 0;
      for (Index d = 0; d < c_.size[j]; ++d) {
        axis[d] = taps(c_.spatial[j], c_.size[j], d);
        for (const Tap &t : axis[d]) {
          most = std::max(most, ++reads[t.first]);
          integral_ = integral_ && denominator(t.second) == 1;
        }
      }
      max_column_ *= most;
      taps_.push_back(std::move(axis));
    }
  }
  Index source() const override { return in_.size(); }
  Index target() const override { return out_.size(); }
  Index parameters() const override { return 1; }
  void row(Index y, std::vector<RowEdge> &out) const override {
    const std::vector<Index> o = out_.multi(y);
    std::vector<Index> x(o.size());
    x.back() = o.back();
    product(0, o, x, Rational(1), out);
  }
  Index max_row() const override {
    return Index(1) << (c_.mode == InterpolateMode::linear ? c_.spatial.size() : 0);
  }
  Index max_column() const override { return max_column_; }
  Index max_parameter_use() const override { return out_.size() * max_row(); }
  bool integral() const override { return integral_; }

private:
  using Tap = std::pair<Index, Rational>; // input coordinate, weight

  std::vector<Tap> taps(Index n, Index m, Index d) const {
    if (c_.mode == InterpolateMode::nearest) return {{std::min(d * n / m, n - 1), Rational(1)}};
    Rational x = c_.align_corners ? (m == 1 ? Rational(0) : Rational(d * (n - 1), m - 1))
                                  : Rational(2 * d + 1, 2) * Rational(n, m) - Rational(1, 2);
    if (x < 0) x = 0;
    const Index i = Index(numerator(x) / denominator(x)); // ⌊x⌋, x ≥ 0
    const Rational lambda = x - Rational(i);
    if (lambda == 0 || i + 1 >= n) return {{std::min(i, n - 1), Rational(1)}};
    return {{i, 1 - lambda}, {i + 1, lambda}};
  }

  void product(Index j, const std::vector<Index> &o, std::vector<Index> &x, const Rational &w,
               std::vector<RowEdge> &out) const {
    if (j == taps_.size()) {
      out.push_back({in_.flat(x), 0, w});
      return;
    }
    for (const Tap &t : taps_[j][o[j]]) {
      x[j] = t.first;
      product(j + 1, o, x, w * t.second, out);
    }
  }

  InterpolateSpec c_;
  Shape in_, out_;
  std::vector<std::vector<std::vector<Tap>>> taps_; // axis → output coordinate → taps
  Index max_column_ = 1;
  bool integral_ = true;
};

} // namespace pm
