#pragma once
// Rearrangements, spans with a fixed measure of weight 1 and no parameters
// (a one-point parameter space), each a bijection of points:
//   pixel_shuffle(r): (position…, C·r^k) → (position·r…, C), the output
//     (h₁, …, h_k, c) reading the input (h₁/r, …, h_k/r, c·r^k + Σ (h_j mod r)·r^(k−1−j)),
//     PyTorch's F.pixel_shuffle for k = 2 in its layout; pixel_unshuffle is
//     its inverse, which is its transpose;
//   roll(shifts): on any shaped space, out(i) = x(i − shift mod n) per axis,
//     torch.roll.
// Layout (position…, channel), row-major, for pixel_shuffle.
#include <cstdint>

#include "pm/layers/rows.hpp"

namespace pm {

struct PixelShuffleSpec {
  std::vector<Index> spatial; // the input's extents (unshuffle: the output's)
  Index channels = 1;         // C: the channels after the shuffle
  Index factor = 1;           // r

  Shape shuffled_shape() const { // (position·r…, C)
    std::vector<Index> v;
    for (Index n : spatial) v.push_back(n * factor);
    v.push_back(channels);
    return Shape(v);
  }
  Shape stacked_shape() const { // (position…, C·r^k)
    std::vector<Index> v = spatial;
    Index block = 1;
    for (Index j = 0; j < spatial.size(); ++j) block *= factor;
    v.push_back(channels * block);
    return Shape(v);
  }
};

class PixelShuffleRows final : public IntegerRule<PixelShuffleRows> {
public:
  // inverse: pixel_unshuffle, from the shuffled shape to the stacked one.
  PixelShuffleRows(PixelShuffleSpec c, bool inverse) : c_(std::move(c)), inverse_(inverse) {
    require(!c_.spatial.empty() && c_.factor >= 1 && c_.channels >= 1,
            "pixel_shuffle: expected at least one spatial axis, factor >= 1 and channels >= 1");
    stacked_ = c_.stacked_shape();
    shuffled_ = c_.shuffled_shape();
  }
  Index source() const override { return (inverse_ ? shuffled_ : stacked_).size(); }
  Index target() const override { return (inverse_ ? stacked_ : shuffled_).size(); }
  Index parameters() const override { return 1; }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    out.push_back({inverse_ ? shuffled_of(y) : stacked_of(y), 0, 1});
  }
  Index max_row() const override { return 1; }
  Index max_column() const override { return 1; }
  Index max_parameter_use() const override { return target(); }

private:
  // The stacked point a shuffled point reads, and its inverse.
  Index stacked_of(Index y) const {
    std::vector<Index> h = shuffled_.multi(y);
    Index c = h.back();
    for (Index j = 0; j < c_.spatial.size(); ++j) {
      c = c * c_.factor + h[j] % c_.factor;
      h[j] /= c_.factor;
    }
    h.back() = c;
    return stacked_.flat(h);
  }
  Index shuffled_of(Index x) const {
    std::vector<Index> h = stacked_.multi(x);
    Index c = h.back();
    for (Index j = c_.spatial.size(); j-- > 0;) {
      h[j] = h[j] * c_.factor + c % c_.factor;
      c /= c_.factor;
    }
    h.back() = c;
    return shuffled_.flat(h);
  }
  PixelShuffleSpec c_;
  bool inverse_;
  Shape stacked_, shuffled_;
};

class RollRows final : public IntegerRule<RollRows> {
public:
  RollRows(Shape shape, std::vector<std::int64_t> shifts)
      : shape_(std::move(shape)), shifts_(std::move(shifts)) {
    require(shifts_.size() == shape_.rank(), "roll: shifts has ", shifts_.size(),
            " entries, expected ", shape_.rank(), " (one per axis)");
  }
  Index source() const override { return shape_.size(); }
  Index target() const override { return shape_.size(); }
  Index parameters() const override { return 1; }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    std::vector<Index> i = shape_.multi(y);
    for (Index j = 0; j < i.size(); ++j) {
      const auto n = std::int64_t(shape_.extents()[j]);
      i[j] = Index((((std::int64_t(i[j]) - shifts_[j]) % n) + n) % n);
    }
    out.push_back({shape_.flat(i), 0, 1});
  }
  Index max_row() const override { return 1; }
  Index max_column() const override { return 1; }
  Index max_parameter_use() const override { return target(); }

private:
  Shape shape_;
  std::vector<std::int64_t> shifts_;
};

} // namespace pm
