#pragma once
// unfold and fold (PyTorch's F.unfold / F.fold, im2col and col2im), spans
// with a fixed measure of weight 1 and no parameters (a one-point parameter
// space):
//   unfold: (position…, C) → (block, C·K), K = Π kernel, the output
//     (l, c·K + κ) reading the input at o(l)·stride + κ·dilation − padding
//     per axis (o(l) the l-th block's position, κ the kernel offset, both
//     row-major, last axis fastest), no edge where that falls in the
//     padding; each output reads at most one input, so unfold is a
//     selection;
//   fold: its transpose, (block, C·K) → (position…, C), each output the sum
//     of the columns that read it (PyTorch's col2im sums the overlaps).
// The blocks are those of a convolution with that kernel, stride, dilation
// and (symmetric) padding: ⌊(n + 2p − d(k − 1) − 1)/s⌋ + 1 per axis.
#include <cstdint>

#include "pm/layers/conv_spec.hpp"
#include "pm/layers/rows.hpp"

namespace pm {

struct UnfoldSpec {
  std::vector<Index> spatial; // the image's extents
  Index channels = 1;         // C
  std::vector<Index> kernel;  // per axis
  // Per axis; empty: padding 0, stride 1, dilation 1.
  std::vector<Index> padding, stride, dilation;

  ConvSpec as_conv() const {
    return ConvSpec{spatial, channels, channels, kernel, padding, padding, stride, dilation, 1};
  }
  Index blocks() const {
    const ConvSpec c = as_conv();
    c.validate();
    Index l = 1;
    for (Index n : c.output_extents()) l *= n;
    return l;
  }
  Index kernel_size() const {
    Index k = 1;
    for (Index n : kernel) k *= n;
    return k;
  }
  Shape image_shape() const { return ConvSpec::with_channels(spatial, channels); }
  Shape columns_shape() const { return Shape({blocks(), channels * kernel_size()}); }
};

class UnfoldRows final : public IntegerRule<UnfoldRows> {
public:
  // transpose: fold, from the columns to the image.
  UnfoldRows(UnfoldSpec u, bool transpose)
      : c_(u.as_conv()), transpose_(transpose), image_(u.image_shape()),
        columns_(u.columns_shape()), ker_(u.kernel) {
    c_.validate();
    blocks_ = Shape(c_.output_extents());
  }
  Index source() const override { return (transpose_ ? columns_ : image_).size(); }
  Index target() const override { return (transpose_ ? image_ : columns_).size(); }
  Index parameters() const override { return 1; }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    if (!transpose_) {
      const Index x = read(y);
      if (x != none) out.push_back({x, 0, 1});
      return;
    }
    // fold: the columns (l, c·K + κ) whose read is the image point y, κ in
    // ascending order.
    const std::vector<Index> at = image_.multi(y);
    const Index ch = at.back();
    std::vector<Index> o(c_.rank());
    for (Index kf = 0; kf < ker_.size(); ++kf) {
      bool hit = true;
      Index rest = kf;
      for (Index j = c_.rank(); j-- > 0 && hit;) {
        const Index k = rest % c_.kernel[j];
        rest /= c_.kernel[j];
        const auto t =
            std::int64_t(at[j]) + std::int64_t(c_.lo(j)) - std::int64_t(k * c_.dil(j)); // o·s
        hit = t >= 0 && t % std::int64_t(c_.step(j)) == 0 &&
              t / std::int64_t(c_.step(j)) < std::int64_t(blocks_.extents()[j]);
        if (hit) o[j] = Index(t / std::int64_t(c_.step(j)));
      }
      if (hit)
        out.push_back({blocks_.flat(o) * columns_.extents()[1] + ch * ker_.size() + kf, 0, 1});
    }
  }
  Index max_row() const override { return transpose_ ? ker_.size() : 1; }
  Index max_column() const override { return transpose_ ? 1 : ker_.size(); }
  Index max_parameter_use() const override { return target() * max_row(); }

private:
  static constexpr Index none = ~Index(0);
  // The image point the column point y reads, or none (padding).
  Index read(Index y) const {
    const Index width = columns_.extents()[1], l = y / width, ck = y % width;
    const Index ch = ck / ker_.size();
    Index rest = ck % ker_.size();
    const std::vector<Index> o = blocks_.multi(l);
    std::vector<Index> at(c_.rank() + 1);
    for (Index j = c_.rank(); j-- > 0;) {
      const Index k = rest % c_.kernel[j];
      rest /= c_.kernel[j];
      const auto p = std::int64_t(o[j] * c_.step(j) + k * c_.dil(j)) - std::int64_t(c_.lo(j));
      if (p < 0 || p >= std::int64_t(c_.spatial[j])) return none;
      at[j] = Index(p);
    }
    at.back() = ch;
    return image_.flat(at);
  }
  ConvSpec c_;
  bool transpose_;
  Shape image_, columns_, ker_, blocks_;
};

} // namespace pm
