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
// into the padding are absent: zero padding is the absence of an edge. The
// other padding modes of PyTorch (circular, reflect, replicate) read a padded
// position from the input point it copies, so the edge runs from that point
// instead (two edges may then share source and parameter: their weights add).
//
// The rules and the edge-list constructors are in conv.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "pm/category/error.hpp"
#include "pm/category/finite_set.hpp"

namespace pm {

enum class PaddingMode { zeros, circular, reflect, replicate };

// The input coordinate a padded coordinate i ∈ [−lo, n + hi) reads on an axis
// of extent n, or −1 when it reads a zero (F.pad's modes: circular i mod n,
// reflect about the border points without repeating them, replicate the
// nearest border point).
inline std::int64_t padded_coordinate(std::int64_t i, std::int64_t n, PaddingMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
  case PaddingMode::zeros:
    return -1;
  case PaddingMode::circular:
    return ((i % n) + n) % n;
  case PaddingMode::reflect:
    return i < 0 ? -i : 2 * (n - 1) - i; // |padding| < n, checked by ConvSpec::validate
  case PaddingMode::replicate:
    return i < 0 ? 0 : n - 1;
  }
  return -1;
}

// PyTorch's padding_mode names, in the order of PaddingMode.
inline constexpr const char *padding_mode_names[] = {"zeros", "circular", "reflect", "replicate"};

inline PaddingMode padding_mode_named(const std::string &name) {
  for (int m = 0; m < 4; ++m)
    if (name == padding_mode_names[m]) return PaddingMode(m);
  detail::fail("padding_mode: is '", name, "', expected zeros, circular, reflect or replicate");
}

struct ConvSpec {
  std::vector<Index> spatial; // input extents, one per axis
  Index in_channels = 1;
  Index out_channels = 1;
  std::vector<Index> kernel; // kernel extents, one per axis
  // Per axis; an empty vector means 0 padding, stride 1, dilation 1.
  std::vector<Index> pad_lo, pad_hi, stride, dilation;
  Index groups = 1;
  PaddingMode padding_mode = PaddingMode::zeros;

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
      if (padding_mode == PaddingMode::circular || padding_mode == PaddingMode::reflect) {
        const Index most = padding_mode == PaddingMode::reflect ? spatial[j] - 1 : spatial[j];
        require(lo(j) <= most && hi(j) <= most, "ConvSpec: axis ", j, " has padding (", lo(j), ", ",
                hi(j), "), expected at most ", most, " for ",
                padding_mode == PaddingMode::reflect ? "reflect" : "circular",
                " padding of an axis of extent ", spatial[j]);
      }
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

// Calls edge(source, parameter) (flat indices) for every edge into the
// output point y = (o…, c_out) (`o` its multi-index, channel last), in the
// order (kernel offset, c_in): each output sums its terms in a fixed, natural
// order. The output extents are not read, so a pooling window past them
// (ceil_mode) is served too.
template <class Edge>
void conv_row(const ConvSpec &c, const Shape &in, const Shape &ker, const std::vector<Index> &o,
              Edge &&edge) {
  const Index cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  const Index co = o.back(), g = co / cout_g;
  std::vector<Index> src(c.rank() + 1);
  for (Index kf = 0; kf < ker.size(); ++kf) {
    bool inside = true;
    Index rest = kf;
    for (Index j = c.rank(); j-- > 0 && inside;) { // the kernel offset, last axis fastest
      const Index k = rest % c.kernel[j];
      rest /= c.kernel[j];
      const auto at = std::int64_t(o[j] * c.step(j) + k * c.dil(j)) - std::int64_t(c.lo(j));
      const std::int64_t read = padded_coordinate(at, std::int64_t(c.spatial[j]), c.padding_mode);
      inside = read >= 0;
      src[j] = Index(read);
    }
    if (!inside) continue;
    for (Index ci = 0; ci < cin_g; ++ci) {
      src.back() = g * cin_g + ci;
      edge(in.flat(src), (kf * cin_g + ci) * c.out_channels + co);
    }
  }
}

} // namespace pm
