#pragma once
// The plan of the kernels of the machines on sequences: the convolution
// machine on any number of spatial axes and the recurrent machine (seeds.md §3,
// src/pm/layers/conv_machine.hpp and recur_machine.hpp). The index set is
// (position t, channel c), flat t·N + c, so a sample is an N × L
// column-major matrix; W has shape (tap k, input, output), flat
// (k·N + ci)·N + co, so tap k read column-major is the matrix
// M_k = W(k, ·, ·)ᵀ (rows = outputs). Tap k reads the input at t + shift(k):
//   convolution, padding (lo, hi): taps k = 0..lo+hi, shift k − lo;
//   recurrent, lags 0..max_lag:     taps k = lag,      shift −lag.
// The grading is (time block, channel block), lexicographic; the convolution
// machine has a single time block. Cleaning keeps a tap's weights from every
// channel when the tap always crosses time blocks (lag ≥ timeblock) and only
// those from an earlier channel block otherwise. The convolution machine on a
// grid of extents e_0 × … × e_{r−1} is the same with t the row-major flat
// position: tap (k_0, …, k_{r−1}) reads at the flat shift of the offsets
// k_j − lo_j, and the positions where it reads inside the grid are one run
// of each innermost line (Tap::col is the offset along the line, Tap::across
// the offsets along the outer axes).
#include <algorithm>
#include <span>
#include <vector>

#include "pm/kernels/dense_machine.hpp"
#include "pm/kernels/partition.hpp"
#include "pm/kernels/transpose.hpp"

namespace pm::kernels {

// batch_piece: samples swept together by one thread; 0 chooses it from the
// problem (automatic_piece). The bits of a result depend on it, not on the
// thread count.
struct ConvMachineShape {
  std::vector<Index> dims;
  Index length = 1;
  Index batch = 0;
  Index pad_lo = 0, pad_hi = 0;
  Index batch_piece = 0;
};

// ConvMachine on a grid of any number of axes, pad (lo_0, hi_0, lo_1, …).
struct ConvGridShape {
  std::vector<Index> dims;
  std::vector<Index> extents;
  Index batch = 0;
  std::vector<Index> pad;
  Index batch_piece = 0;
};

// ConvMachine on a rows × cols grid, pad (lo0, hi0, lo1, hi1).
struct Conv2MachineShape {
  std::vector<Index> dims;
  Index rows = 1, cols = 1;
  Index batch = 0;
  Index pad[4] = {0, 0, 0, 0};
  Index batch_piece = 0;
};

struct RecurMachineShape {
  std::vector<Index> dims;
  Index length = 1;
  Index batch = 0;
  Index max_lag = 0;
  Index timeblock = 1;
  Index batch_piece = 0;
};

// Enough samples that a product over one time block has about 512 columns
// (positions × samples), the width at which Eigen's products run near their
// best here; but at least two pieces when each still covers 128 columns of
// the whole sequence, so that two threads have work (smaller problems are
// not worth splitting). A function of the problem only.
inline Index automatic_piece(Index timeblock, Index length, Index batch) {
  const Index fill = (512 + timeblock - 1) / timeblock, half = std::max<Index>(1, (batch + 1) / 2);
  return std::max<Index>(1, std::min(fill, length * half >= 128 ? half : batch));
}

// The common plan of the convolution and recurrent machines.
struct SequencePlan {
  struct Tap {
    long shift;
    bool all_channels;             // the tap always crosses time blocks: no channel cleaning
    long col = 0;                  // on a grid: the offset along an innermost line
    std::vector<long> across = {}; // on a grid: the offsets along the outer axes
  };
  std::vector<Index> dims;
  Index n = 0, length = 0, batch = 0, timeblock = 0, batch_piece = 1;
  Index width = 0;          // 0 on a line; on a grid, the positions of an innermost line
  std::vector<Index> outer; // on a grid, the extents of the outer axes
  std::vector<Tap> taps;
  // The layout of the states the kernels read and write: position-major,
  // flat (b·L + t)·N + c (channels last, the library's), or channel-major,
  // flat (b·N + c)·L + t (channels first: PyTorch's NCHW). Each path keeps
  // its own working layout, so the bits do not depend on it; the direct
  // path's channel rows are then copied line by line instead of transposed.
  bool channels_first = false;

  Index state_size() const { return n * length * batch; }
  Index weight_size() const { return taps.size() * n * n; }
  // Output positions t with 0 ≤ t + shift < length, intersected with [t0, t1).
  static std::pair<Index, Index> positions(long shift, Index length, Index t0, Index t1) {
    const long lo = std::max<long>(long(t0), -shift),
               hi = std::min<long>(long(t1), long(length) - shift);
    return lo < hi ? std::pair{Index(lo), Index(hi)} : std::pair{t0, t0};
  }
  // Calls f(a, b) for the runs [a, b) of output positions in [t0, t1) whose
  // input t + dir·shift exists (dir = −1: the tap read backwards, as in the
  // dual sweep), in increasing order: one run on a line, one per innermost
  // line on a grid whose line i + dir·across exists.
  template <class F> void for_each_run(const Tap &tap, long dir, Index t0, Index t1, F &&f) const {
    if (width == 0) {
      const auto [a, b] = positions(dir * tap.shift, length, t0, t1);
      if (a < b) f(a, b);
      return;
    }
    const long w = long(width), col = dir * tap.col;
    for (long i = 0; i < long(length / width); ++i) {
      bool inside = true; // every outer coordinate of the line read is in the grid
      for (long j = long(outer.size()) - 1, rest = i; j >= 0; rest /= long(outer[j]), --j) {
        const long c = rest % long(outer[j]) + dir * tap.across[j];
        inside = inside && c >= 0 && c < long(outer[j]);
      }
      const long lo = std::max(long(t0), i * w + std::max(0L, -col)),
                 hi = std::min(long(t1), (i + 1) * w - std::max(0L, col));
      if (inside && lo < hi) f(Index(lo), Index(hi));
    }
  }
  // Multiply-adds of one pass: every (tap, valid weight, position, sample).
  Index valid_terms() const {
    Index v = 0;
    for (const Tap &tap : taps) {
      Index weights = 0, o = 0, count = 0;
      for (Index d : dims) {
        weights += d * (tap.all_channels ? n : o);
        o += d;
      }
      for_each_run(tap, 1, 0, length, [&](Index a, Index b) { count += b - a; });
      v += weights * count * batch;
    }
    return v;
  }
  // Floating-point operations of one pass (forward, dual or gradient).
  double flops() const { return 2.0 * double(valid_terms()); }
};

inline SequencePlan plan(const ConvGridShape &s) {
  const Index r = s.extents.size();
  require(r >= 1, "ConvGridShape: extents has no axes, expected at least 1");
  require(s.pad.size() == 2 * r, "ConvGridShape: pad has ", s.pad.size(), " entries, expected ",
          2 * r);
  SequencePlan p;
  p.dims = s.dims;
  p.n = DenseMachineShape{s.dims, 0}.channels();
  p.length = 1;
  for (Index j = 0; j < r; ++j) {
    require(s.extents[j] >= 1, "ConvGridShape: extent ", j, " is 0, expected >= 1");
    p.length *= s.extents[j];
  }
  p.width = s.extents[r - 1];
  p.outer.assign(s.extents.begin(), s.extents.end() - 1);
  p.batch = s.batch;
  p.timeblock = p.length; // space is not graded: one time block
  p.batch_piece = s.batch_piece ? s.batch_piece : automatic_piece(p.length, p.length, s.batch);
  // Taps in the order of W's kernel axes (k_0, …, k_{r−1}), row-major.
  std::vector<Index> k(r, 0);
  for (;;) {
    SequencePlan::Tap tap{0, false};
    for (Index j = 0; j < r; ++j) {
      const long d = long(k[j]) - long(s.pad[2 * j]);
      tap.shift = tap.shift * long(s.extents[j]) + d;
      if (j + 1 < r) tap.across.push_back(d);
    }
    tap.col = long(k[r - 1]) - long(s.pad[2 * r - 2]);
    p.taps.push_back(std::move(tap));
    Index j = r; // the next kernel index: the last axis fastest
    for (; j > 0; --j) {
      if (++k[j - 1] <= s.pad[2 * j - 2] + s.pad[2 * j - 1]) break;
      k[j - 1] = 0;
    }
    if (j == 0) break;
  }
  return p;
}

inline SequencePlan plan(const ConvMachineShape &s) {
  require(s.length >= 1, "ConvMachineShape: length is 0, expected >= 1");
  return plan(ConvGridShape{s.dims, {s.length}, s.batch, {s.pad_lo, s.pad_hi}, s.batch_piece});
}

inline SequencePlan plan(const Conv2MachineShape &s) {
  require(s.rows >= 1 && s.cols >= 1, "Conv2MachineShape: grid is ", s.rows, " × ", s.cols,
          ", expected at least 1 × 1");
  return plan(ConvGridShape{
      s.dims, {s.rows, s.cols}, s.batch, {s.pad[0], s.pad[1], s.pad[2], s.pad[3]}, s.batch_piece});
}

inline SequencePlan plan(const RecurMachineShape &s) {
  require(s.length >= 1, "RecurMachineShape: length is 0, expected >= 1");
  require(s.timeblock >= 1, "RecurMachineShape: timeblock is 0, expected >= 1");
  SequencePlan p;
  p.dims = s.dims;
  p.n = DenseMachineShape{s.dims, 0}.channels();
  p.length = s.length;
  p.batch = s.batch;
  p.timeblock = s.timeblock;
  p.batch_piece = s.batch_piece
                      ? s.batch_piece
                      : automatic_piece(std::min(s.timeblock, s.length), s.length, s.batch);
  for (Index lag = 0; lag <= s.max_lag; ++lag) p.taps.push_back({-long(lag), lag >= s.timeblock});
  return p;
}

namespace detail {

// The states of samples [b0, b0 + nb) of a batch with L positions (or only
// sample b0 + only) ↔ time-major working columns (t, b) of N-vectors: copies
// of N-vectors from position-major states, a transpose per sample from
// channel-major ones (SequencePlan::channels_first).
template <class T>
void to_time_major(const T *batch, T *work, Index n, Index length, Index b0, Index nb,
                   bool channels_first, Index only = Index(-1)) {
  for (Index b = 0; b < nb; ++b)
    if (only == Index(-1) || b == only) {
      if (channels_first)
        transpose(batch + (b0 + b) * n * length, length, work + b * n, nb * n, length, n, false,
                  false);
      else
        for (Index t = 0; t < length; ++t)
          std::copy_n(batch + ((b0 + b) * length + t) * n, n, work + (t * nb + b) * n);
    }
}
template <class T>
void from_time_major(const T *work, T *batch, Index n, Index length, Index b0, Index nb,
                     bool channels_first) {
  for (Index b = 0; b < nb; ++b)
    if (channels_first)
      transpose(work + b * n, nb * n, batch + (b0 + b) * n * length, length, n, length, false,
                false);
    else
      for (Index t = 0; t < length; ++t)
        std::copy_n(work + (t * nb + b) * n, n, batch + ((b0 + b) * length + t) * n);
}

// Working buffers of the calling thread, kept from call to call so that a
// kernel does not allocate (and fault in fresh pages) every time; slot k is
// the k-th buffer of a kernel. Their contents are undefined on entry.
template <class T> T *scratch(Index slot, Index size) {
  thread_local std::vector<T> buffers[6];
  if (buffers[slot].size() < size) buffers[slot].resize(size);
  return buffers[slot].data();
}

inline void require_sizes(const SequencePlan &p, const char *kernel,
                          std::initializer_list<std::pair<Index, const char *>> states, Index w) {
  for (auto [size, name] : states)
    require(size == p.state_size(), kernel, ": ", name, " has ", size, " entries, expected ",
            p.state_size());
  require(w == p.weight_size(), kernel, ": W has ", w, " entries, expected ", p.weight_size());
}

} // namespace detail

} // namespace pm::kernels
