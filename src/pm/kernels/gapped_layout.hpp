#pragma once
// The gapped layout of a batch of a sequence plan: every axis j of the grid
// is followed by g_j zero positions, g_j the largest |offset| of a tap along
// j, and the whole batch by a zero margin, so that a tap reads zeros wherever
// it leaves the grid and a shift of the input by a tap is a shift of the
// flat gapped position by GappedLayout::shifts[k].
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "pm/kernels/eigen.hpp"
#include "pm/kernels/partition.hpp"
#include "pm/kernels/sequence_plan.hpp"
#include "pm/kernels/transpose.hpp"

namespace pm::kernels::detail {

// The gapped layout of a plan's batch.
struct GappedLayout {
  std::vector<Index> extents, gaps, strides; // per axis, outermost first
  Index sample = 0;                          // gapped positions of one sample
  Index margin = 0;                          // zero positions before and after the batch
  std::vector<long> shifts;                  // per tap, in gapped positions
  bool channels_first = false;               // the batch's layout (SequencePlan)

  explicit GappedLayout(const SequencePlan &p) : channels_first(p.channels_first) {
    if (p.width == 0) {
      extents = {p.length};
    } else {
      extents = p.outer;
      extents.push_back(p.width);
    }
    const Index r = extents.size();
    gaps.assign(r, 0);
    for (const auto &tap : p.taps)
      for (Index j = 0; j < r; ++j)
        gaps[j] = std::max<Index>(gaps[j], std::labs(offset(p, tap, j)));
    strides.assign(r, 1);
    for (Index j = r - 1; j > 0; --j) strides[j - 1] = strides[j] * (extents[j] + gaps[j]);
    sample = strides[0] * (extents[0] + gaps[0]);
    for (const auto &tap : p.taps) {
      long s = 0;
      for (Index j = 0; j < r; ++j) s += offset(p, tap, j) * long(strides[j]);
      shifts.push_back(s);
      margin = std::max<Index>(margin, std::labs(s));
    }
  }
  // The offset of a tap along an axis: Tap::across on the outer axes; along
  // the innermost line, what the flat shift leaves once the outer offsets are
  // taken out (Tap::col for a plan's own taps), so that the layout reads
  // where the flat shift does.
  static long offset(const SequencePlan &p, const SequencePlan::Tap &tap, Index axis) {
    if (p.width == 0) return tap.shift;
    if (axis < p.outer.size()) return tap.across[axis];
    long rest = tap.shift, stride = long(p.width);
    for (Index j = p.outer.size(); j-- > 0; stride *= long(p.outer[j]))
      rest -= tap.across[j] * stride;
    return rest;
  }
  // The layout is the plain one (no gap, no margin): no copy is needed.
  bool plain() const { return margin == 0 && sample == extents_size(); }
  Index extents_size() const {
    Index s = 1;
    for (Index e : extents) s *= e;
    return s;
  }

  // Copies channels [0, c) of every position of a position-major `batch` (stride n) into
  // `out` (stride c, margin included), gaps and margins zero. The lines of a
  // sample are visited in increasing gapped position, so each position is
  // written once: the zeros before a line, then the line.
  template <class T>
  void copy(const T *batch, Index n, Index c, Index samples, T *out, double work) const {
    require(!channels_first, "GappedLayout::copy: a channel-major batch, expected position-major");
    std::fill_n(out, margin * c, T(0));
    std::fill_n(out + (margin + samples * sample) * c, margin * c, T(0));
    const Index line = extents.back(), lines = extents_size() / line, r = extents.size();
    for_each_piece(
        samples, 1,
        [&](Index b, Index) {
          T *dst = out + (margin + b * sample) * c;
          Index next = 0; // the first gapped position not written yet
          for (Index l = 0; l < lines; ++l) {
            Index at = 0; // the gapped position of the line's first point
            for (Index j = r - 1, rest = l; j-- > 0; rest /= extents[j])
              at += rest % extents[j] * strides[j];
            std::fill(dst + next * c, dst + at * c, T(0));
            const T *src = batch + (b * lines + l) * line * n;
            if (c == n)
              std::copy_n(src, line * n, dst + at * c);
            else // runs of c values: a packet loop, not a memmove call per position
              for (Index x = 0; x < line; ++x) copy_run(src + x * n, dst + (at + x) * c, c);
            next = at + line;
          }
          std::fill(dst + next * c, dst + sample * c, T(0));
        },
        work);
  }
};

} // namespace pm::kernels::detail
