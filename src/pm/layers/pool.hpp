#pragma once
// Average pooling: a span with a fixed measure and no parameters. It has the
// geometry of a depthwise convolution (groups = channels, conv_row) whose
// edges into an output have weight 1/divisor, with PyTorch's AvgPoolNd
// options: the divisor counts the padded positions of the window
// (count_include_pad, the default) or only the input's; ceil_mode adds a
// last output on an axis whose window starts inside the input or its low
// padding but runs past the high padding, and that window's divisor counts
// only the positions up to the end of the high padding (as PyTorch's). Layout
// (position…, channel), row-major.
#include "pm/layers/conv.hpp"

namespace pm {

struct PoolSpec {
  std::vector<Index> spatial;
  Index channels = 1;
  std::vector<Index> window;
  std::vector<Index> pad_lo, pad_hi, stride; // empty: 0, 0, and stride = window
  bool count_include_pad = true;
  bool ceil_mode = false;

  ConvSpec as_conv() const {
    return ConvSpec{
        spatial, channels, channels, window, pad_lo, pad_hi, stride.empty() ? window : stride,
        {},      channels};
  }
  // ⌊(n + lo + hi − k)/s⌋ + 1 outputs, or with ceil_mode ⌈…⌉ + 1 less one
  // when the last window would start in the high padding.
  std::vector<Index> output_extents() const {
    const ConvSpec c = as_conv();
    c.validate();
    std::vector<Index> o = c.output_extents();
    if (ceil_mode)
      for (Index j = 0; j < c.rank(); ++j) {
        const Index room = spatial[j] + c.lo(j) + c.hi(j) - window[j];
        o[j] = (room + c.step(j) - 1) / c.step(j) + 1;
        if ((o[j] - 1) * c.step(j) >= spatial[j] + c.lo(j)) --o[j];
      }
    return o;
  }
  Shape input_shape() const { return ConvSpec::with_channels(spatial, channels); }
  Shape output_shape() const { return ConvSpec::with_channels(output_extents(), channels); }
};

class PoolRows final : public SpanRows {
public:
  explicit PoolRows(PoolSpec p)
      : p_(std::move(p)), c_(p_.as_conv()), in_(p_.input_shape()), out_(p_.output_shape()),
        ker_(p_.window) {}
  Index source() const override { return in_.size(); }
  Index target() const override { return out_.size(); }
  Index parameters() const override { return 1; }
  void row(Index y, std::vector<RowEdge> &out) const override {
    const std::vector<Index> o = out_.multi(y);
    const Rational weight = Rational(1) / Rational(divisor(o));
    conv_row(c_, in_, ker_, o, [&](Index x, Index) { out.push_back({x, 0, weight}); });
  }
  Index max_row() const override { return ker_.size(); }
  Index max_column() const override { return ker_.size(); }
  Index max_parameter_use() const override { return out_.size() * ker_.size(); }
  bool integral() const override { return ker_.size() == 1; }

private:
  // The window of output o on axis j is [o·s − lo, o·s − lo + k), cut at the
  // end of the high padding, and for !count_include_pad to the input.
  Index divisor(const std::vector<Index> &o) const {
    Index d = 1;
    for (Index j = 0; j < c_.rank(); ++j) {
      const auto n = std::int64_t(p_.spatial[j]), lo = std::int64_t(c_.lo(j));
      std::int64_t start = std::int64_t(o[j] * c_.step(j)) - lo;
      std::int64_t end = std::min(start + std::int64_t(p_.window[j]), n + std::int64_t(c_.hi(j)));
      if (!p_.count_include_pad) start = std::max<std::int64_t>(start, 0), end = std::min(end, n);
      d *= Index(end - start);
    }
    return d;
  }
  PoolSpec p_;
  ConvSpec c_;
  Shape in_, out_, ker_;
};

template <class S> Span<S> average_pool(const PoolSpec &c) {
  return materialise_as<S>(PoolRows(c)).span;
}

} // namespace pm
