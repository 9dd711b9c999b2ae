#pragma once
// Causal time convolution, the linear part of the recurrent machine:
//   (L_W φ)(t, c_out) = Σ_{lag=0..max_lag, lag ≤ t} Σ_{c_in} W(lag, c_in, c_out) φ(t − lag, c_in).
// It is the 1-D convolution with kernel max_lag + 1 and padding (max_lag, 0),
// whose kernel offset k reads lag max_lag − k; the parameter leg is relabelled
// so that P = (lag, c_in, c_out), row-major. Input and output are
// (time, channel), row-major.
#include "pm/layers/conv.hpp"

namespace pm {

struct TimeConvSpec {
  Index length = 1;
  Index in_channels = 1;
  Index out_channels = 1;
  Index max_lag = 0;

  ConvSpec as_conv() const {
    require(length >= 1, "TimeConvSpec.length is 0, expected >= 1");
    return ConvSpec{{length}, in_channels, out_channels, {max_lag + 1}, {max_lag}, {0}, {}, {}, 1};
  }
  Shape parameter_shape() const { return Shape({max_lag + 1, in_channels, out_channels}); }
};

// The conv rule with its parameters relabelled from kernel offset to lag.
class TimeConvRows final : public IntegerRule<TimeConvRows> {
public:
  explicit TimeConvRows(const TimeConvSpec &c)
      : conv_(c.as_conv()), lag_(c.max_lag), block_(c.in_channels * c.out_channels) {}
  Index source() const override { return conv_.source(); }
  Index target() const override { return conv_.target(); }
  Index parameters() const override { return conv_.parameters(); }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    const std::size_t first = out.size();
    conv_.edges(y, out);
    for (std::size_t e = first; e < out.size(); ++e) {
      const Index p = out[e].parameter;
      out[e].parameter = (lag_ - p / block_) * block_ + p % block_;
    }
  }
  Index max_row() const override { return conv_.max_row(); }
  Index max_column() const override { return conv_.max_column(); }
  Index max_parameter_use() const override { return conv_.max_parameter_use(); }

private:
  ConvRows conv_;
  Index lag_, block_;
};

template <class S> ParametricSpan<S> time_conv(const TimeConvSpec &c) {
  return materialise_as<S>(TimeConvRows(c));
}

} // namespace pm
