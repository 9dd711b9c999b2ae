#pragma once
// Convolution in any number of spatial dimensions (1, 2 and 3 in practice) as
// a parametric span: cross-correlation with asymmetric zero padding, stride,
// dilation and groups, the semantics of PyTorch's ConvNd.
//
// Layout (row-major, pm::Shape): input X = (position…, channel), output
// Y = (position…, channel), parameters P = (kernel offset…, input channel in
// the group, output channel). For an output (o, c_out), kernel offset k and
// input channel c_in of the group g = c_out / (C_out / groups) the edge runs
// from input (o·stride + k·dilation − pad_lo, g·C_in/groups + c_in) with
// parameter (k, c_in, c_out) and weight 1. Edges whose input position falls
// into the padding are absent: zero padding is the absence of an edge.
//
// The transposed convolution is the transposed span (the adjoint map).
#include <vector>

#include "pm/category/parametric_span.hpp"

namespace pm {

struct ConvSpec {
  std::vector<Index> spatial; // input extents, one per axis
  Index in_channels = 1;
  Index out_channels = 1;
  std::vector<Index> kernel; // kernel extents, one per axis
  // Per axis; an empty vector means 0 padding, stride 1, dilation 1.
  std::vector<Index> pad_lo, pad_hi, stride, dilation;
  Index groups = 1;

  Index rank() const { return spatial.size(); }
  Index lo(Index j) const { return pad_lo.empty() ? 0 : pad_lo[j]; }
  Index hi(Index j) const { return pad_hi.empty() ? 0 : pad_hi[j]; }
  Index step(Index j) const { return stride.empty() ? 1 : stride[j]; }
  Index dil(Index j) const { return dilation.empty() ? 1 : dilation[j]; }

  // The extent of the dilated kernel on axis j.
  Index reach(Index j) const { return dil(j) * (kernel[j] - 1) + 1; }

  void validate() const {
    require(rank() >= 1, "ConvSpec: spatial has no axes, expected at least 1");
    auto per_axis = [&](const std::vector<Index> &v, const char *field, bool optional) {
      require((optional && v.empty()) || v.size() == rank(), "ConvSpec.", field, " has ", v.size(),
              " entries, expected ", rank(), " (one per spatial axis)");
    };
    per_axis(kernel, "kernel", false);
    per_axis(pad_lo, "pad_lo", true);
    per_axis(pad_hi, "pad_hi", true);
    per_axis(stride, "stride", true);
    per_axis(dilation, "dilation", true);
    require(groups >= 1 && in_channels % groups == 0 && out_channels % groups == 0,
            "ConvSpec.groups is ", groups, ", expected a positive divisor of in_channels (",
            in_channels, ") and out_channels (", out_channels, ")");
    for (Index j = 0; j < rank(); ++j) {
      require(kernel[j] >= 1, "ConvSpec.kernel[", j, "] is 0, expected >= 1");
      require(step(j) >= 1, "ConvSpec.stride[", j, "] is 0, expected >= 1");
      require(dil(j) >= 1, "ConvSpec.dilation[", j, "] is 0, expected >= 1");
      require(spatial[j] + lo(j) + hi(j) >= reach(j), "ConvSpec: axis ", j, " has padded extent ",
              spatial[j] + lo(j) + hi(j), ", expected at least the dilated kernel extent ",
              reach(j));
    }
  }

  std::vector<Index> output_extents() const {
    std::vector<Index> o(rank());
    for (Index j = 0; j < rank(); ++j) o[j] = (spatial[j] + lo(j) + hi(j) - reach(j)) / step(j) + 1;
    return o;
  }

  Shape input_shape() const { return with_channels(spatial, in_channels); }
  Shape output_shape() const { return with_channels(output_extents(), out_channels); }
  Shape parameter_shape() const {
    std::vector<Index> p = kernel;
    p.push_back(in_channels / groups);
    p.push_back(out_channels);
    return Shape(p);
  }

  static Shape with_channels(std::vector<Index> positions, Index channels) {
    positions.push_back(channels);
    return Shape(std::move(positions));
  }
};

// Calls edge(source, target, parameter) (flat indices) for every edge, in
// row-major order of (output position, c_out, kernel offset, c_in): each
// output sums its terms in a fixed, natural order.
template <class Edge> void for_each_conv_edge(const ConvSpec &c, Edge &&edge) {
  c.validate();
  const Shape in = c.input_shape(), out = c.output_shape(), ker(c.kernel);
  const Index cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  std::vector<Index> src(c.rank() + 1);
  for (Index y = 0; y < out.size(); ++y) {
    const std::vector<Index> o = out.multi(y);
    const Index co = o.back(), g = co / cout_g;
    for (Index kf = 0; kf < ker.size(); ++kf) {
      const std::vector<Index> k = ker.multi(kf);
      bool inside = true;
      for (Index j = 0; j < c.rank() && inside; ++j) {
        const Index shifted = o[j] * c.step(j) + k[j] * c.dil(j); // position + pad_lo
        inside = shifted >= c.lo(j) && shifted - c.lo(j) < c.spatial[j];
        src[j] = shifted - c.lo(j);
      }
      if (!inside) continue;
      for (Index ci = 0; ci < cin_g; ++ci) {
        src.back() = g * cin_g + ci;
        edge(in.flat(src), y, (kf * cin_g + ci) * c.out_channels + co);
      }
    }
  }
}

template <class S> ParametricSpan<S> conv(const ConvSpec &c) {
  c.validate();
  ParametricSpan<S> a;
  a.span.s.codomain = c.input_shape().size();
  a.span.t.codomain = c.output_shape().size();
  a.pi.codomain = c.parameter_shape().size();
  for_each_conv_edge(c, [&](Index x, Index y, Index p) {
    a.span.s.images.push_back(x);
    a.span.t.images.push_back(y);
    a.pi.images.push_back(p);
  });
  a.span.mu.assign(a.apex(), S(1));
  return a;
}

// The transposed convolution: the adjoint of conv(c), from the output space of
// c to its input space, with the same parameters.
template <class S> ParametricSpan<S> conv_transpose(const ConvSpec &c) {
  return transpose(conv<S>(c));
}

} // namespace pm
