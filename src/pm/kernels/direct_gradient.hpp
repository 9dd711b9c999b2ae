#pragma once
// The weight gradient on the direct path of the convolution machines whose
// channel blocks are small (direct_conv.hpp): ∂W summed by a register tile
// of taps × output channels of lane-wise partial sums over the gapped
// channel-major rows of z and ȳ, instead of one matrix product per level
// whose 8–32 columns leave the matrix-product micro-kernel mostly empty.
//
// Summation order. A weight gradient is summed lane-wise in position order
// over chunks of a fixed size, the lanes added in a fixed order at the end.
// Work is split over (level, block of input channels), never inside a sum:
// the bits do not depend on the thread count.
#include <algorithm>
#include <span>
#include <vector>

#include "pm/kernels/direct_conv.hpp"

namespace pm::kernels {

namespace detail {

// The weight gradient's tile: A taps × B output channels of lane-wise
// partial sums (the packet at part + (a · pa + b) · lanes), over positions [q0, q1) (whole
// packets) of one input row z (shifted by each tap) and B rows of ȳ.
template <class T> struct GradientTile {
  static constexpr int taps = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 4 : 2;
  static constexpr int outputs = 4;
  // Positions summed between two visits of the partial sums.
  static constexpr Index chunk = 64 * DirectTile<T>::lanes;
};

template <class T, int A, int B>
void gradient_tile(T *part, Index pa, const T *z, const long *shifts, const T *yb, Index ld,
                   Index q0, Index q1) {
  namespace ei = Eigen::internal;
  using P = typename DirectTile<T>::Packet;
  constexpr Index lanes = DirectTile<T>::lanes;
  P acc[A][B];
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b) acc[a][b] = ei::ploadu<P>(part + (a * pa + b) * lanes);
  for (Index q = q0; q < q1; q += DirectTile<T>::lanes) {
    P yv[B];
    for (int b = 0; b < B; ++b) yv[b] = ei::ploadu<P>(yb + b * ld + q);
    for (int a = 0; a < A; ++a) {
      const P zv = ei::ploadu<P>(z + shifts[a] + q);
      for (int b = 0; b < B; ++b) acc[a][b] = ei::pmadd(zv, yv[b], acc[a][b]);
    }
  }
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b) ei::pstoreu(part + (a * pa + b) * lanes, acc[a][b]);
}

// gradient_tile with a ≤ A taps and b ≤ B outputs.
template <class T, int A, int B, class... Args>
void gradient_tile_upto(Index a, Index b, Args &&...args) {
  if constexpr (A > 1)
    if (a < A) return gradient_tile_upto<T, A - 1, B>(a, b, args...);
  if constexpr (B > 1)
    if (b < B) return gradient_tile_upto<T, A, B - 1>(a, b, args...);
  gradient_tile<T, A, B>(args...);
}

} // namespace detail

// The weight gradient on the direct path (sequence_weight_gradient's
// contract): for level i and each input channel ci of the earlier levels,
// ∂W(k, ci, co) = Σ_q z[ci][q + shift_k] · ȳ[co][q] over every gapped
// position q of the batch (ȳ is zero at the gaps). Tasks are (level, block
// of input channels); each sums over the whole batch.
template <class T>
void direct_weight_gradient(const SequencePlan &p, std::span<const T> z, std::span<const T> ybar,
                            std::span<T> dw) {
  using Tile = detail::GradientTile<T>;
  using P = typename detail::DirectTile<T>::Packet;
  constexpr Index lanes = detail::DirectTile<T>::lanes, block = 8;
  const Index n = p.n, K = p.taps.size();
  const double work = p.flops();
  const detail::GappedLayout g(p);
  const detail::ChannelRows<T> cr(g, p.batch, lanes);
  T *zg = detail::scratch<T>(0, cr.size(n)), *ybg = detail::scratch<T>(1, cr.size(n));
  cr.load(z.data(), n, 0, zg, work);
  cr.load(ybar.data(), n, 0, ybg, work);
  std::fill(dw.begin(), dw.end(), T(0));
  struct Task {
    Index o, d, c0, c1;
  };
  std::vector<Task> tasks;
  for (Index o = 0, i = 0; i < p.dims.size(); o += p.dims[i++])
    for (Index c0 = 0; c0 < o && p.dims[i] > 0; c0 += block)
      tasks.push_back({o, p.dims[i], c0, std::min(o, c0 + block)});
  for_each_piece(
      tasks.size(), 1,
      [&](Index t, Index) {
        const auto [o, d, c0, c1] = tasks[t];
        const Index rows = (c1 - c0) * K; // (input channel, tap), tap fastest
        T *part = detail::scratch<T>(2, rows * d * lanes);
        std::fill_n(part, rows * d * lanes, T(0));
        for (Index q0 = 0; q0 < cr.end; q0 += Tile::chunk) {
          const Index q1 = std::min(cr.end, q0 + Tile::chunk);
          // The rows of ȳ of a tile and the window of z of an input channel
          // stay in the first-level cache while every tap reads them.
          for (Index ci = c0; ci < c1; ++ci)
            for (Index co = 0; co < d; co += Tile::outputs)
              for (Index k = 0; k < K; k += Tile::taps)
                detail::gradient_tile_upto<T, Tile::taps, Tile::outputs>(
                    std::min<Index>(Tile::taps, K - k), std::min<Index>(Tile::outputs, d - co),
                    part + (((ci - c0) * K + k) * d + co) * lanes, d, zg + ci * cr.stride + cr.lead,
                    g.shifts.data() + k, ybg + (o + co) * cr.stride + cr.lead, cr.stride, q0, q1);
        }
        for (Index ci = c0; ci < c1; ++ci)
          for (Index k = 0; k < K; ++k)
            for (Index co = 0; co < d; ++co)
              dw[(k * n + ci) * n + o + co] = Eigen::internal::predux(
                  Eigen::internal::ploadu<P>(part + (((ci - c0) * K + k) * d + co) * lanes));
      },
      work);
}

} // namespace pm::kernels
