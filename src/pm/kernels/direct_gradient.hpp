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
#include <cstdint>
#include <omp.h>
#include <span>
#include <vector>

#include "pm/kernels/direct_conv.hpp"

namespace pm::kernels {

namespace detail {

// The weight gradient's tile: A taps × B output channels of lane-wise
// partial sums (the packet at part + (a · pa + b) · lanes), over positions
// [q0, q1) (whole packets) of one input row z (shifted by each tap) and B
// rows of ȳ. Per packet of positions it loads A packets of z, at shifts
// that are rarely a whole number of packets (each split across two cache
// lines), and B packets of ȳ, aligned. Measured (float, one thread,
// docs/performance.md "The direct path of the grid machines"): with 32
// registers 3 taps × 8 outputs (24 sums) is the fastest of 4 × 4, 6 × 4,
// 4 × 6, 2 × 8, 4 × 8, 1 × 16 and 3 × 16; with 16 registers 1 × 8 of
// 2 × 4, 3 × 4, 3 × 3, 2 × 6, 2 × 8 and 1 × 16. 3 divides the 9 and 27
// taps of the 2-D and 3-D grids, 8 their 8-, 16- and 32-channel blocks.
template <class T> struct GradientTile {
  static constexpr int taps = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 3 : 1;
  static constexpr int outputs = 8;
  // Positions summed between two visits of the partial sums.
  static constexpr Index chunk = 64 * DirectTile<T>::lanes;
};

// Keeps a packet in a register from here on. g++ 12 otherwise folds the
// load of a packet of ȳ into each of the A multiply-adds that read it: A
// loads instead of one, and the tile ran on the load ports (3 + 24 loads per
// 24 multiply-adds at 3 × 8, measured: perf annotate of the AVX-512 build).
template <class P> void in_register(P &p) {
#if defined(__AVX512F__)
  asm("" : "+v"(p)); // any of the 32 vector registers
#elif defined(__x86_64__) || defined(__i386__)
  asm("" : "+x"(p));
#endif
}

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
    P zv[A]; // A · B + A + 1 registers
    for (int a = 0; a < A; ++a) zv[a] = ei::ploadu<P>(z + shifts[a] + q);
    for (int b = 0; b < B; ++b) {
      P yv = ei::ploadu<P>(yb + b * ld + q);
      in_register(yv);
      for (int a = 0; a < A; ++a) acc[a][b] = ei::pmadd(zv[a], yv, acc[a][b]);
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

namespace detail {

// A window of gapped positions [from, from + count) of channels [c0, c1) of
// the batch (stride n, `samples` samples) in channel-major rows: channel c
// at (c - c0) · ld, position q at q - from, zero at the gaps and outside the
// batch. Each line of a position-major batch is transposed with all its
// channels at once, so a position's channels are read once; of a
// channel-major one, each channel's run is copied. The lines are written in
// increasing position, each after the zeros before it, so that every
// position is written once (clearing the window first cost a second pass
// over it). ld leaves a packet of slack past `count`: a line's last partial
// block of a transpose writes up to a packet past its end, over the zeros or
// the line that follow, which are written after it.
template <class T>
void load_window(const GappedLayout &g, const T *batch, Index n, Index samples, Index c0, Index c1,
                 long from, Index count, T *rows, Index ld) {
  const Index line = g.extents.back(), lines = g.extents_size() / line, r = g.extents.size();
  const long to = from + long(count);
  Index next = 0; // the first position of the window not written yet
  auto zeros_to = [&](Index end) {
    for (Index c = c0; c < c1; ++c)
      std::fill(rows + (c - c0) * ld + next, rows + (c - c0) * ld + end, T(0));
    next = std::max(next, end);
  };
  const long first = std::max(0L, from) / long(g.sample),
             last = std::min(long(samples), to / long(g.sample) + 1);
  for (long b = first; b < last; ++b)
    for (Index l = 0; l < lines; ++l) {
      long at = b * long(g.sample); // the gapped position of the line's first point
      for (Index j = r - 1, rest = l; j-- > 0; rest /= g.extents[j])
        at += long(rest % g.extents[j] * g.strides[j]);
      const long x0 = std::max(at, from), x1 = std::min(at + long(line), to);
      if (x0 >= x1) continue;
      const Index len = x1 - x0;
      zeros_to(x0 - from);
      T *out = rows + (x0 - from);
      if (g.channels_first) // a run of each channel's row
        for (Index c = c0; c < c1; ++c)
          copy_run(batch + ((b * n + c) * lines + l) * line + (x0 - at), out + (c - c0) * ld, len);
      else
        transpose(batch + ((b * lines + l) * line + (x0 - at)) * n + c0, n, out, ld, c1 - c0, len,
                  false, true);
      next = x1 - from;
    }
  zeros_to(count);
}

// Gapped positions of a chunk of the weight gradient: the windows of z
// (chunk plus the largest shift either side) and of ȳ stay within about
// gradient_cache bytes, a second-level cache of 512 KB (a size chosen, not
// tuned; the bits do not depend on it), and a chunk is at least one visit
// of a tile.
constexpr Index gradient_cache = Index(1) << 19;

template <class T> Index gradient_chunk(Index zc, Index yc, Index halo) {
  constexpr Index step = GradientTile<T>::chunk;
  const Index room = gradient_cache / sizeof(T), fixed = 2 * halo * zc;
  const Index fit = room > fixed ? (room - fixed) / std::max<Index>(1, zc + yc) : 0;
  return std::max(step, fit / step * step);
}

// direct_weight_gradient with chunks of `chunk` gapped positions (a whole
// number of packets; 0: gradient_chunk's).
template <class T>
void direct_weight_gradient_by(const SequencePlan &p, std::span<const T> z, std::span<const T> ybar,
                               std::span<T> dw, Index chunk) {
  using Tile = GradientTile<T>;
  using P = typename DirectTile<T>::Packet;
  constexpr Index lanes = DirectTile<T>::lanes, block = 8;
  const Index n = p.n, K = p.taps.size();
  const double work = p.flops();
  const GappedLayout g(p);
  std::fill(dw.begin(), dw.end(), T(0));
  struct Task {
    Index o, d, c0, c1;
  };
  std::vector<Task> tasks;
  Index zc = 0, yc0 = n; // z is read in channels [0, zc), ȳ in [yc0, n)
  for (Index o = 0, i = 0; i < p.dims.size(); o += p.dims[i++])
    for (Index c0 = 0; c0 < o && p.dims[i] > 0; c0 += block) {
      tasks.push_back({o, p.dims[i], c0, std::min(o, c0 + block)});
      zc = std::max(zc, o);
      yc0 = std::min(yc0, o);
    }
  if (tasks.empty()) return;
  // The lane-wise partial sums of every task, kept from chunk to chunk:
  // task t's (input channel, tap, output channel) at part + at[t].
  std::vector<Index> at(tasks.size() + 1, 0);
  for (Index t = 0; t < tasks.size(); ++t)
    at[t + 1] = at[t] + (tasks[t].c1 - tasks[t].c0) * K * tasks[t].d * lanes;
  T *part = scratch<T>(2, at.back());
  std::fill_n(part, at.back(), T(0));
  const Index halo = g.margin, end = pieces(p.batch * g.sample, lanes) * lanes; // positions summed
  if (chunk == 0) chunk = gradient_chunk<T>(zc, n - yc0, halo);
  const Index ld = pieces(chunk + 2 * halo + lanes, lanes) * lanes;
  // Each thread sweeps the chunks for its own group of consecutive tasks,
  // copying the channels they read into its own windows: no thread waits
  // for another between chunks, at the cost of a copy per group. Which
  // thread sums a task does not change its bits, so the groups may follow
  // the thread count.
  const Index groups =
      work >= parallel_work ? std::min<Index>(tasks.size(), omp_get_max_threads()) : 1;
  // The windows start on a packet boundary, so that every load of ȳ
  // is aligned (measured: 1.1–1.2× faster than at the scratch
  // buffers' own alignment).
  auto aligned = [](T *at) {
    const auto u = reinterpret_cast<std::uintptr_t>(at), a = std::uintptr_t(lanes * sizeof(T));
    return reinterpret_cast<T *>((u + a - 1) / a * a);
  };
  for_each_piece(
      groups, 1,
      [&](Index group, Index) {
        const Index t0 = group * tasks.size() / groups, t1 = (group + 1) * tasks.size() / groups;
        Index z0 = n, z1 = 0, y0 = n, y1 = 0; // the group's channels of z and ȳ
        for (Index t = t0; t < t1; ++t) {
          z0 = std::min(z0, tasks[t].c0), z1 = std::max(z1, tasks[t].c1);
          y0 = std::min(y0, tasks[t].o), y1 = std::max(y1, tasks[t].o + tasks[t].d);
        }
        T *zw = aligned(scratch<T>(0, (z1 - z0) * ld + lanes)),
          *yw = aligned(scratch<T>(1, (y1 - y0) * ld + lanes));
        for (Index q0 = 0; q0 < end; q0 += chunk) {
          const Index count = std::min(chunk, end - q0);
          // z of [q0 - halo, q0 + count + halo): what the last chunk's
          // window held past its chunk is moved to the front, the rest
          // copied.
          const Index kept = q0 == 0 ? 0 : 2 * halo;
          load_window(g, ybar.data(), n, p.batch, y0, y1, long(q0), count, yw, ld);
          for (Index c = z0; c < z1 && kept > 0; ++c)
            std::copy_n(zw + (c - z0) * ld + chunk, kept, zw + (c - z0) * ld);
          load_window(g, z.data(), n, p.batch, z0, z1, long(q0) - long(halo) + long(kept),
                      count + 2 * halo - kept, zw + kept, ld);
          for (Index t = t0; t < t1; ++t) {
            const auto [o, d, c0, c1] = tasks[t];
            T *pt = part + at[t];
            for (Index u0 = 0; u0 < count; u0 += Tile::chunk) {
              const Index u1 = std::min(count, u0 + Tile::chunk);
              // The rows of ȳ of a tile and the window of z of an input
              // channel stay in the first-level cache while every tap reads
              // them.
              for (Index ci = c0; ci < c1; ++ci)
                for (Index co = 0; co < d; co += Tile::outputs)
                  for (Index k = 0; k < K; k += Tile::taps)
                    gradient_tile_upto<T, Tile::taps, Tile::outputs>(
                        std::min<Index>(Tile::taps, K - k), std::min<Index>(Tile::outputs, d - co),
                        pt + (((ci - c0) * K + k) * d + co) * lanes, d, zw + (ci - z0) * ld + halo,
                        g.shifts.data() + k, yw + (o - y0 + co) * ld, ld, u0, u1);
            }
          }
        }
      },
      work);
  for (Index t = 0; t < tasks.size(); ++t) {
    const auto [o, d, c0, c1] = tasks[t];
    for (Index ci = c0; ci < c1; ++ci)
      for (Index k = 0; k < K; ++k)
        for (Index co = 0; co < d; ++co)
          dw[(k * n + ci) * n + o + co] = Eigen::internal::predux(
              Eigen::internal::ploadu<P>(part + at[t] + (((ci - c0) * K + k) * d + co) * lanes));
  }
}

} // namespace detail

// The weight gradient on the direct path (sequence_weight_gradient's
// contract): for level i and each input channel ci of the earlier levels,
// ∂W(k, ci, co) = Σ_q z[ci][q + shift_k] · ȳ[co][q] over every gapped
// position q of the batch (ȳ is zero at the gaps). The batch is swept by
// chunks of gapped positions whose z (with a halo of the largest shift) and
// ȳ are copied channel-major into windows that stay in the second-level
// cache; every task (level, block of input channels) sums over a chunk
// before the next chunk is copied, into partial sums kept across chunks, so
// the order of every sum is the position order whatever the chunk.
template <class T>
void direct_weight_gradient(const SequencePlan &p, std::span<const T> z, std::span<const T> ybar,
                            std::span<T> dw) {
  detail::direct_weight_gradient_by<T>(p, z, ybar, dw, 0);
}

} // namespace pm::kernels
