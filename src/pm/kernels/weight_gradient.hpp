#pragma once
// The weight gradient of the dense, convolution and recurrent machines,
//   ∂W(k, ci, co) = Σ_{b,t} z(t + shift(k), ci) ȳ(t, co)
// for the weights that cleaning keeps (0 for the others), as a few large
// matrix products with the taps folded into the rows of the result.
//
// The batch is laid out sample-major with gaps: every axis j of the grid is
// followed by g_j zero positions, g_j the largest |offset| of a tap along j,
// and the whole buffer by a zero margin. A tap then reads zeros wherever it
// leaves the grid, so the shifts of z by consecutive offsets along the last
// axis are one overlapping view: with a block of z (its c channels) stored
// at stride c, the matrix with rows (tap j, channel ci) and one column per
// gapped position is the block at address (column + j)·c + ci, a plain
// column-major matrix with column stride c whose rows overlap. For such a
// group of taps and an input block,
//   ∂W[(j, ci), co] = view(block) · ȳ[co]ᵀ
// is one product over every position and sample of the batch; ȳ is zero at
// the gaps, so they add exact zeros. The outputs co are the channels after
// the block (every channel for a tap that always crosses time blocks), so
// the products cover exactly the weights that can be non-zero. On a line,
// a group can instead be one product per tap over the time-major columns
// (t, b) where the tap reads inside the sequence, which holds no zero.
//
// The rows of each product are cut into pieces of a fixed size; each piece
// is one product computed by one thread, whose bits depend on the sizes only:
// the result is the same for any thread count.
#include <algorithm>
#include <span>
#include <vector>

#include "pm/kernels/dense_machine.hpp"
#include "pm/kernels/direct_gradient.hpp"
#include "pm/kernels/gapped_layout.hpp"
#include "pm/kernels/sequence_plan.hpp"

namespace pm::kernels {

namespace detail {

// A run of taps whose gapped shifts are consecutive (first, first + 1, …)
// and whose channels are cleaned alike.
struct TapGroup {
  long first;
  bool all_channels;
  std::vector<Index> taps; // tap of row block j
};

inline std::vector<TapGroup> tap_groups(const SequencePlan &p, const GappedLayout &g) {
  std::vector<Index> order(p.taps.size());
  for (Index k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
    return p.taps[a].all_channels != p.taps[b].all_channels ? p.taps[a].all_channels
                                                            : g.shifts[a] < g.shifts[b];
  });
  std::vector<TapGroup> groups;
  for (Index k : order) {
    TapGroup *last = groups.empty() ? nullptr : &groups.back();
    if (last && last->all_channels == p.taps[k].all_channels &&
        g.shifts[k] == last->first + long(last->taps.size()))
      last->taps.push_back(k);
    else
      groups.push_back({g.shifts[k], p.taps[k].all_channels, {k}});
  }
  return groups;
}

// One product of the gradient: rows (tap j of `taps`, channel of the block
// [ci, ci + inputs)), outputs [co, n), over `cols` columns; row (j, c) of
// column x is z[x · stride + j · inputs + c] and output o of it is
// ybar[x · n + o].
template <class T> struct GradientProduct {
  std::vector<Index> taps;
  const T *z, *ybar;
  Index stride, ci, inputs, co, cols;
};

} // namespace detail

// Rows of the result computed by one task: a multiple of the float
// micro-kernels' row blocks with AVX2 (24) and AVX-512 (48). Measured with
// Eigen 3.4 on AVX-512 at the large sizes' shapes (one thread, GFLOP/s):
// 192 rows × 256 × 256: 93, 384 rows: 142, whole level (768): 143; 192 rows
// × 64 × 4144: 109, 384: 118, 1344: 116.
constexpr Index gradient_rows = 384;

template <class T>
void sequence_weight_gradient(const SequencePlan &p, std::span<const T> z, std::span<const T> ybar,
                              std::span<T> dw) {
  detail::require_sizes(p, "sequence_weight_gradient", {{z.size(), "z"}, {ybar.size(), "ybar"}},
                        dw.size());
  if (direct_wanted(p)) return direct_weight_gradient<T>(p, z, ybar, dw);
  if (p.channels_first) {
    // The products read position-major columns: both states are transposed
    // once, sample by sample, and the gradient of those is the same sum.
    SequencePlan q = p;
    q.channels_first = false;
    const Index size = p.state_size();
    T *zp = detail::scratch<T>(4, size), *yp = detail::scratch<T>(5, size);
    detail::transpose_samples(z.data(), zp, p.n, p.length, p.batch);
    detail::transpose_samples(ybar.data(), yp, p.n, p.length, p.batch);
    return sequence_weight_gradient<T>(q, {zp, size}, {yp, size}, dw);
  }
  const Index n = p.n, nb = p.batch;
  const double work = p.flops();
  const detail::GappedLayout g(p);
  const std::vector<detail::TapGroup> groups = detail::tap_groups(p, g);
  const Index cols = nb * g.sample, span = cols + 2 * g.margin;
  // A group of taps is one product per input block in the gapped layout,
  // whose columns include the gaps and the positions where a tap reads
  // outside the sequence (zeros), or, on a line, one product per tap and
  // block over the time-major columns (t, b) where the tap reads inside it,
  // which are consecutive: exact, but narrower. The time-major products are
  // taken when the gapped ones would compute a fifth more terms.
  const bool plain = g.plain();
  std::vector<bool> exact(groups.size(), false);
  bool gapped = false, timemajor = false;
  for (Index q = 0; q < groups.size(); ++q) {
    Index valid = 0;
    for (Index k : groups[q].taps) {
      const auto [t0, t1] = SequencePlan::positions(p.taps[k].shift, p.length, 0, p.length);
      valid += t1 - t0;
    }
    exact[q] = !plain && p.width == 0 && 5 * valid < 4 * groups[q].taps.size() * g.sample;
    (exact[q] ? timemajor : gapped) = true;
  }
  // ȳ in the gapped layout and z block by block (block [o, o + d) at stride
  // d), or the inputs themselves: a plain layout has no shift, so every group
  // is one tap and reads z at stride n.
  const T *yb = ybar.data(), *zb = z.data(), *yt = nullptr, *zt = nullptr;
  if (!plain && gapped) {
    T *ybg = detail::scratch<T>(0, span * n), *zg = detail::scratch<T>(1, span * n);
    g.copy(ybar.data(), n, n, nb, ybg, work);
    for (Index o = 0, i = 0; i < p.dims.size(); o += p.dims[i++])
      if (p.dims[i] > 0) g.copy(z.data() + o, n, p.dims[i], nb, zg + span * o, work);
    yb = ybg + g.margin * n;
    zb = zg;
  }
  if (timemajor) {
    T *both = detail::scratch<T>(2, 2 * p.state_size());
    for_each_piece(
        nb, 1,
        [&](Index b, Index) {
          detail::to_time_major(ybar.data(), both, n, p.length, 0, nb, false, b);
          detail::to_time_major(z.data(), both + p.state_size(), n, p.length, 0, nb, false, b);
        },
        work);
    yt = both;
    zt = both + p.state_size();
  }
  // The products: per group of taps (or tap) and input block, one for the
  // outputs that can be non-zero: every channel for a tap that always crosses
  // time blocks, the channels after the block for a cleaned one.
  std::vector<detail::GradientProduct<T>> products;
  for (Index q = 0; q < groups.size(); ++q)
    for (Index o = 0, i = 0; i < p.dims.size(); o += p.dims[i++]) {
      const auto &group = groups[q];
      const Index d = p.dims[i], co = group.all_channels ? 0 : o + d;
      if (d == 0 || co >= n) continue;
      if (!exact[q]) {
        const Index stride = plain ? n : d;
        const T *base =
            (plain ? zb + o : zb + span * o) + (long(g.margin) + group.first) * long(stride);
        products.push_back({group.taps, base, yb, stride, o, d, co, cols});
        continue;
      }
      for (Index k : group.taps) {
        const long shift = p.taps[k].shift;
        const auto [t0, t1] = SequencePlan::positions(shift, p.length, 0, p.length);
        products.push_back({{k},
                            zt + (long(t0) + shift) * long(nb * n) + long(o),
                            yt + t0 * nb * n,
                            n,
                            o,
                            d,
                            co,
                            (t1 - t0) * nb});
      }
    }
  // Tasks are (product, piece of rows), the largest first: the threads take
  // them in this order, so the last ones to start are the small ones (a
  // block's products shrink with the outputs after it). Which thread runs a
  // task does not change its bits.
  std::vector<std::pair<Index, Index>> tasks;
  for (Index q = 0; q < products.size(); ++q)
    for (Index r0 = 0; r0 < products[q].taps.size() * products[q].inputs; r0 += gradient_rows)
      tasks.push_back({q, r0});
  auto terms = [&](std::pair<Index, Index> t) {
    const auto &pr = products[t.first];
    return std::min(gradient_rows, pr.taps.size() * pr.inputs - t.second) * (n - pr.co) * pr.cols;
  };
  std::stable_sort(tasks.begin(), tasks.end(), [&](auto a, auto b) { return terms(a) > terms(b); });
  // The weights that cleaning zeroes: row (k, ci) of dW of a cleaned tap
  // is zero for the outputs up to the end of ci's own block.
  std::vector<Index> block_end(n);
  for (Index o = 0, i = 0; i < p.dims.size(); o += p.dims[i++])
    for (Index c = o; c < o + p.dims[i]; ++c) block_end[c] = o + p.dims[i];
  for_each_piece(
      p.taps.size() * n, 256,
      [&](Index r0, Index r1) {
        for (Index r = r0; r < r1; ++r)
          if (!p.taps[r / n].all_channels) std::fill_n(dw.data() + r * n, block_end[r % n], T(0));
      },
      work);
  for_each_piece(
      tasks.size(), 1,
      [&](Index task, Index) {
        const auto [q, r0] = tasks[task];
        const detail::GradientProduct<T> &pr = products[q];
        const Index c = pr.inputs, outputs = n - pr.co;
        const Index rows = std::min(gradient_rows, pr.taps.size() * c - r0);
        // Row r of the view: channel pr.ci + r % c of tap r / c (a block read
        // at stride n > c belongs to a single tap).
        const ConstMatrixView<T> A(pr.z + r0, rows, pr.cols, Eigen::OuterStride<>(pr.stride));
        const ConstMatrixView<T> Y(pr.ybar + pr.co, outputs, pr.cols, Eigen::OuterStride<>(n));
        // The operand order whose rows fill more of the micro-kernel: the
        // result's rows are either the view's (taps × channels) or the
        // outputs; a tie keeps the outputs, whose result columns are runs of
        // a row of dW.
        T *out = detail::scratch<T>(3, rows * outputs);
        if (row_fill<T>(rows) > row_fill<T>(outputs)) {
          MatrixView<T> R(out, rows, outputs, Eigen::OuterStride<>(rows));
          R.setZero();
          multiply_add(R, A, Y.transpose());
          for (Index r = 0; r < rows; ++r) {
            const Index j = (r0 + r) / c, ci = pr.ci + (r0 + r) % c, k = pr.taps[j];
            T *row = dw.data() + (k * n + ci) * n + pr.co;
            for (Index x = 0; x < outputs; ++x) row[x] = R(r, x);
          }
        } else {
          MatrixView<T> Rt(out, outputs, rows, Eigen::OuterStride<>(outputs));
          Rt.setZero();
          multiply_add(Rt, Y, A.transpose());
          for (Index r = 0; r < rows; ++r) {
            const Index j = (r0 + r) / c, ci = pr.ci + (r0 + r) % c, k = pr.taps[j];
            std::copy_n(&Rt(0, r), outputs, dw.data() + (k * n + ci) * n + pr.co);
          }
        }
      },
      work);
}

// ∂W = clean(Σ_b z ȳᵀ) of the dense machine: the sequence gradient of a
// single position and a single tap (the layouts coincide).
template <class T>
void dense_weight_gradient(const DenseMachineShape &shape, std::span<const T> z,
                           std::span<const T> ybar, std::span<T> dw) {
  shape.validate();
  detail::require_buffer(z, shape.state_size(), "dense_weight_gradient", "z");
  detail::require_buffer(ybar, shape.state_size(), "dense_weight_gradient", "ybar");
  detail::require_buffer(dw, shape.weight_size(), "dense_weight_gradient", "dW");
  sequence_weight_gradient<T>(plan(ConvMachineShape{shape.dims, 1, shape.batch, 0, 0}), z, ybar,
                              dw);
}

} // namespace pm::kernels
