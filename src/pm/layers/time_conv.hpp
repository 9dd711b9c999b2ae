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
    return ConvSpec{{length}, in_channels, out_channels, {max_lag + 1}, {max_lag}, {0}, {}, {}, 1};
  }
  Shape parameter_shape() const { return Shape({max_lag + 1, in_channels, out_channels}); }
};

template <class S> ParametricSpan<S> time_conv(const TimeConvSpec &c) {
  require(c.length >= 1, "TimeConvSpec.length is 0, expected >= 1");
  ParametricSpan<S> a = conv<S>(c.as_conv());
  const Index block = c.in_channels * c.out_channels;
  for (Index &p : a.pi.images) p = (c.max_lag - p / block) * block + p % block;
  return a;
}

} // namespace pm
