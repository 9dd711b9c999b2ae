#pragma once
// Finite spaces. A finite set is {0, …, n−1}; a shaped set is a product of
// ranges [0,n_0) × … × [0,n_{k−1}) enumerated in row-major order, so a
// multi-index (i_0,…,i_{k−1}) has the flat index Σ_j i_j · Π_{l>j} n_l.
#include <cstddef>
#include <vector>

#include "pm/category/error.hpp"

namespace pm {

using Index = std::size_t;

class Shape {
public:
  Shape() = default;
  explicit Shape(std::vector<Index> extents) : extents_(std::move(extents)) {}

  const std::vector<Index> &extents() const { return extents_; }
  Index rank() const { return extents_.size(); }

  // The number of elements: the product of the extents (1 for rank 0).
  Index size() const {
    Index n = 1;
    for (Index e : extents_) n *= e;
    return n;
  }

  Index flat(const std::vector<Index> &multi) const {
    require(multi.size() == extents_.size(), "Shape::flat: multi-index has ", multi.size(),
            " coordinates, expected ", extents_.size());
    Index f = 0;
    for (Index j = 0; j < extents_.size(); ++j) {
      require(multi[j] < extents_[j], "Shape::flat: coordinate ", j, " is ", multi[j],
              ", expected < ", extents_[j]);
      f = f * extents_[j] + multi[j];
    }
    return f;
  }

  std::vector<Index> multi(Index flat) const {
    require(flat < size(), "Shape::multi: flat index ", flat, ", expected < ", size());
    std::vector<Index> m(extents_.size());
    for (Index j = extents_.size(); j-- > 0;) {
      m[j] = flat % extents_[j];
      flat /= extents_[j];
    }
    return m;
  }

  friend bool operator==(const Shape &, const Shape &) = default;

private:
  std::vector<Index> extents_;
};

} // namespace pm
