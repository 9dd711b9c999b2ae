#pragma once
// Average pooling: a span with a fixed measure and no parameters. It has the
// geometry of a depthwise convolution (groups = channels) whose every edge has
// weight 1/|window|; padded positions count as zeros (PyTorch's
// count_include_pad = true). Layout (position…, channel), row-major.
#include "pm/layers/conv.hpp"

namespace pm {

struct PoolSpec {
  std::vector<Index> spatial;
  Index channels = 1;
  std::vector<Index> window;
  std::vector<Index> pad_lo, pad_hi, stride; // empty: 0, 0, and stride = window

  ConvSpec as_conv() const {
    return ConvSpec{
        spatial, channels, channels, window, pad_lo, pad_hi, stride.empty() ? window : stride,
        {},      channels};
  }
};

template <class S> Span<S> average_pool(const PoolSpec &c) {
  const ConvSpec g = c.as_conv();
  g.validate();
  Span<S> a;
  a.s.codomain = g.input_shape().size();
  a.t.codomain = g.output_shape().size();
  for_each_conv_edge(g, [&](Index x, Index y, Index) {
    a.s.images.push_back(x);
    a.t.images.push_back(y);
  });
  a.mu.assign(a.apex(), S(1) / S(Shape(c.window).size()));
  return a;
}

} // namespace pm
