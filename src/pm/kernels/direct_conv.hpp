#pragma once
// The direct path of the convolution machines whose channel blocks are
// small (the 2-D and 3-D grid machines): the forward sweep, the dual sweep
// and the weight gradient computed by a register-tiled micro-kernel that is
// vectorised over positions, instead of one matrix product per (level, tap,
// line), whose 8–32 rows leave the matrix-product micro-kernel mostly empty.
//
// The states are copied channel-major into the gapped layout
// (gapped_layout.hpp): channel c of a piece of samples is one row of gapped
// positions with a zero margin on either side, so the input a tap reads for a
// run of consecutive output positions is a contiguous run of its row, shifted
// by the tap's gapped shift, and zero wherever the tap leaves the grid. The
// outputs are computed at every gapped position (those at the gaps are never
// read back); the inputs are kept zero at the gaps.
//
// A tile of the sweeps keeps `rows` output channels × `vectors` packets of
// consecutive positions in registers, and adds for every (tap, input
// channel) the broadcast weight times the shifted input packets. Packet
// width and tile are Eigen's packets of the compile target (AVX-512: 16
// floats and 32 registers; AVX2: 8 floats and 16), so no tile is tied to
// one instruction set (the float copies have an AVX-512 transpose,
// transpose.hpp). The weight gradient on the same rows is in
// direct_gradient.hpp.
//
// A sweep runs as a wavefront over the gapped positions (detail::wavefront):
// the first level advances by a chunk, each later level follows a halo of
// the largest shift behind the one before, and each level copies in, tiles,
// activates and copies out its own range. The rows that later levels read
// (z in the forward, ȳ in the dual) span the piece; the others are a block
// of a chunk per level. The ranges a sweep touches at a time stay in cache
// rather than whole states of a piece passing through memory at each step.
//
// Summation order. An output of the sweeps is its initial value plus the
// terms in the order (tap, input channel), whatever tile or chunk it falls
// in. Work is split over pieces of samples, never inside a sum: the bits do
// not depend on the thread count.
#include <algorithm>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "pm/kernels/activation.hpp"
#include "pm/kernels/gapped_layout.hpp"
#include "pm/kernels/partition.hpp"
#include "pm/kernels/sequence_plan.hpp"
#include "pm/kernels/transpose.hpp"

namespace pm::kernels {

// The direct path applies to plans with a single time block whose taps are
// all cleaned (every convolution machine; a recurrent machine only when a
// sequence is one time block).
inline bool direct_applies(const SequencePlan &p) {
  if (p.timeblock < p.length) return false;
  return std::none_of(p.taps.begin(), p.taps.end(), [](const auto &t) { return t.all_channels; });
}

// The sequence kernels take the direct path when it applies, every channel
// block has at most direct_max_block channels and a sample has at least
// direct_min_positions positions. Measured (float, one thread, CPU clock,
// docs/performance.md "The direct path of the grid machines"): on an AMD
// EPYC (Zen 5 class) the direct path is 10–30 % faster than the products
// up to 64-channel blocks with 32 vector registers (AVX-512: the 1-D conv
// large row) and up to 32-channel blocks with 16 (AVX2: conv2d large), and
// slower at 64 with 16 registers. (On a Sapphire Rapids–class CPU with
// AVX2 code, before the channel-major states, it had been 6–13 % slower at
// 32.)
constexpr Index direct_max_block = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 64 : 32,
                direct_min_positions = 64;

inline bool direct_wanted(const SequencePlan &p) {
  Index largest = 0;
  for (Index d : p.dims) largest = std::max(largest, d);
  return direct_applies(p) && largest <= direct_max_block && p.length >= direct_min_positions;
}

namespace detail {

template <class T> struct DirectTile {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  static constexpr Index lanes = Eigen::internal::unpacket_traits<Packet>::size;
  // rows × vectors accumulators, `vectors` input packets and a broadcast
  // weight fit in the registers.
  static constexpr int rows = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 8 : 4;
  static constexpr int vectors = 3;
  static constexpr Index positions = lanes * vectors;
};

// A piece of nb samples in the channel-major gapped layout: row c at
// c · stride, gapped position q (of [0, nb · sample)) at lead + q, zeros
// outside the grid; `end` positions, a whole number of tiles, are computed.
template <class T> struct ChannelRows {
  const GappedLayout &g;
  Index nb, lead, end, stride;
  // The first gapped and flat position of every innermost line of the
  // piece, in increasing order.
  struct Line {
    Index q, t;
  };
  std::vector<Line> starts;

  ChannelRows(const GappedLayout &layout, Index samples, Index unit)
      : g(layout), nb(samples),
        lead(pieces(layout.margin, DirectTile<T>::lanes) * DirectTile<T>::lanes),
        end(pieces(samples * layout.sample, unit) * unit),
        stride(pieces(lead + end + layout.margin + DirectTile<T>::lanes, DirectTile<T>::lanes) *
               DirectTile<T>::lanes) {
    for_each_line([&](Index q, Index t) { starts.push_back({q, t}); });
  }

  Index size(Index channels) const { return channels * stride; }

  // f(q, t) for the innermost lines [l0, l1) of sample b of the piece: the
  // first gapped position q and the first flat position t of each (sample b
  // at b · length).
  template <class F> void for_each_line(Index b, Index l0, Index l1, F &&f) const {
    const Index line = g.extents.back(), lines = g.extents_size() / line, r = g.extents.size();
    for (Index l = l0; l < l1; ++l) {
      Index at = 0;
      for (Index j = r - 1, rest = l; j-- > 0; rest /= g.extents[j])
        at += rest % g.extents[j] * g.strides[j];
      f(b * g.sample + at, (b * lines + l) * line);
    }
  }
  template <class F> void for_each_line(Index b, F &&f) const {
    for_each_line(b, 0, g.extents_size() / g.extents.back(), f);
  }
  template <class F> void for_each_line(F &&f) const {
    for (Index b = 0; b < nb; ++b) for_each_line(b, f);
  }
  // f(q, t, len) for the parts of lines in gapped positions [q0, q1), in
  // increasing order: the part's first gapped and flat position, its length.
  template <class F> void for_each_part(Index q0, Index q1, F &&f) const {
    const Index line = g.extents.back();
    auto it = std::partition_point(starts.begin(), starts.end(),
                                   [&](const Line &l) { return l.q + line <= q0; });
    for (; it != starts.end() && it->q < q1; ++it) {
      const Index a = std::max(it->q, q0), b = std::min(it->q + line, q1);
      f(a, it->t + (a - it->q), b - a);
    }
  }
  // The gapped positions of the piece.
  Index used() const { return nb * g.sample; }
  // The margins and the positions past the piece, zero in channels [0, n).
  void clear_edges(T *rows, Index n) const {
    for (Index c = 0; c < n; ++c) {
      std::fill_n(rows + c * stride, lead, T(0));
      std::fill_n(rows + c * stride + lead + nb * g.sample, stride - lead - nb * g.sample, T(0));
    }
  }
  // Channels [c0, c1) of the piece's positions [q0, q1) between `batch`
  // (samples [b0, b0 + nb), n channels) and rows at stride ld, `rows`
  // pointing at channel c0, position q0: into the rows (to_rows) or back, by
  // the parts of lines in the range (for_each_part). From a channel-major
  // batch a part of a line is a run of each channel's row, copied as it is;
  // from a position-major one it is transposed. A partial block of a
  // transpose writes past a part into the rows, up to a packet, only
  // positions after it, with zeros: positions of a later part, of a gap or
  // past q1, all written again (or cleared) before they are read. The batch
  // is read past a block's channels only inside a position.
  void copy_range(bool to_rows, const T *batch_in, T *batch_out, Index n, Index b0, Index c0,
                  Index c1, Index q0, Index q1, const T *rows_in, T *rows_out, Index ld) const {
    const Index length = g.extents_size();
    for_each_part(q0, q1, [&](Index q, Index t, Index len) {
      if (g.channels_first) {
        const Index b = t / length, at = (b0 + b) * n * length + t - b * length;
        for (Index c = c0; c < c1; ++c) {
          const Index row = (c - c0) * ld + q - q0;
          if (to_rows)
            copy_run(batch_in + at + c * length, rows_out + row, len);
          else
            copy_run(rows_in + row, batch_out + at + c * length, len);
        }
        return;
      }
      for (Index c = c0; c < c1; c += DirectTile<T>::lanes) {
        const Index width = std::min(DirectTile<T>::lanes, c1 - c), at = (b0 * length + t) * n + c,
                    row = (c - c0) * ld + q - q0;
        if (to_rows)
          transpose(batch_in + at, n, rows_out + row, ld, width, len, c + DirectTile<T>::lanes <= n,
                    true);
        else
          transpose(rows_in + row, ld, batch_out + at, n, len, width, true, false);
      }
    });
  }
  // Zero at the gaps in positions [q0, q1) and past the piece, in n rows at
  // stride ld, `rows` pointing at position q0 of the first.
  void clear_gaps(T *rows, Index ld, Index n, Index q0, Index q1) const {
    Index from = q0;
    auto clear = [&](Index to) {
      for (Index c = 0; c < n; ++c)
        std::fill(rows + c * ld + from - q0, rows + c * ld + to - q0, T(0));
    };
    for_each_part(q0, q1, [&](Index q, Index, Index len) {
      clear(q);
      from = q + len;
    });
    clear(q1);
  }
  // Channels [0, n) of samples [b0, b0 + nb) into the rows, zero elsewhere;
  // the channel blocks in parallel when `work` says so.
  void load(const T *batch, Index n, Index b0, T *rows, double work = 0) const {
    for_each_piece(
        n, DirectTile<T>::lanes,
        [&](Index c0, Index c1) {
          copy_range(true, batch, nullptr, n, b0, c0, c1, 0, end, nullptr,
                     rows + c0 * stride + lead, stride);
        },
        work);
    clear_edges(rows, n);
    clear_gaps(rows + lead, stride, n, 0, end);
  }
};

// out[r][q..] += Σ_k Σ_c w[k·wk + c·wc + r·wr] · in[c][q + shift_k ..] for
// R output rows (stride ld_out) and one tile of positions, input rows at
// stride ld_in.
template <class T, int R>
void direct_tile(T *out, Index ld_out, const T *in, Index ld_in, const std::vector<long> &shifts,
                 Index inputs, const T *w, Index wk, Index wc, Index wr) {
  namespace ei = Eigen::internal;
  using Tile = DirectTile<T>;
  using P = typename Tile::Packet;
  constexpr int V = Tile::vectors;
  constexpr Index lanes = Tile::lanes;
  P acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = ei::ploadu<P>(out + r * ld_out + v * lanes);
  for (Index k = 0; k < shifts.size(); ++k) {
    const T *src = in + shifts[k], *wt = w + k * wk;
    for (Index c = 0; c < inputs; ++c, src += ld_in, wt += wc) {
      P x[V];
      for (int v = 0; v < V; ++v) x[v] = ei::ploadu<P>(src + v * lanes);
      for (int r = 0; r < R; ++r) {
        const P b = ei::pset1<P>(wt[r * wr]);
        for (int v = 0; v < V; ++v) acc[r][v] = ei::pmadd(b, x[v], acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) ei::pstoreu(out + r * ld_out + v * lanes, acc[r][v]);
}

// direct_tile with r ≤ R rows.
template <class T, int R, class... Args> void direct_tile_upto(Index r, Args &&...args) {
  if constexpr (R > 1)
    if (r < R) return direct_tile_upto<T, R - 1>(r, args...);
  direct_tile<T, R>(args...);
}

// One level of a sweep over `count` positions (whole tiles): `rows` output
// rows at stride ld_out from `inputs` input rows at stride ld_in, both
// pointing at the first position.
template <class T>
void direct_level(T *out, Index ld_out, Index rows, const T *in, Index ld_in, Index inputs,
                  const std::vector<long> &shifts, const T *w, Index wk, Index wc, Index wr,
                  Index count) {
  constexpr int R = DirectTile<T>::rows;
  for (Index q = 0; q < count; q += DirectTile<T>::positions)
    for (Index r = 0; r < rows; r += R)
      direct_tile_upto<T, R>(std::min<Index>(R, rows - r), out + r * ld_out + q, ld_out, in + q,
                             ld_in, shifts, inputs, w + r * wr, wk, wc, wr);
}

// The positions a sweep advances its first level by at a time, rounded up
// to tiles (measured: docs/performance.md, "The direct path of the grid
// machines").
constexpr Index direct_chunk = 768;

template <class T> Index wavefront_step(Index chunk) {
  constexpr Index tile = DirectTile<T>::positions;
  return pieces(std::max<Index>(chunk, 1), tile) * tile;
}

// A sweep of `levels` levels over the tiles of positions [0, cr.end) as a
// wavefront: level(i, q0, q1) computes level i (in the sweep's order) at
// [q0, q1), at most `step` positions, final there once it returns. The
// first level advances by `step` positions at a time and level i runs up
// to i · halo behind it, halo the largest |shift| rounded up to tiles, so
// that every input a level reads at a shift was made final by an earlier
// level before. Each output is computed once, in the same order, whatever
// the step: the bits do not depend on it.
template <class T, class F>
void wavefront(const ChannelRows<T> &cr, Index levels, Index step, F &&level) {
  constexpr Index tile = DirectTile<T>::positions;
  const Index halo = pieces(cr.g.margin, tile) * tile;
  std::vector<Index> done(levels, 0);
  for (Index front = step; done.back() < cr.end; front += step)
    for (Index i = 0; i < levels; ++i) {
      const Index to = front > i * halo ? std::min(cr.end, front - i * halo) : 0;
      if (to > done[i]) level(i, done[i], to);
      done[i] = std::max(done[i], to);
    }
}

} // namespace detail

// The forward sweep on the direct path (sequence_forward's contract), a
// wavefront over the positions (detail::wavefront) by `chunk` positions.
// z, which later levels read at every tap, has rows for the whole piece; y
// is read by its own level only, so a level's range of y is a small block of
// rows that stays in cache: y0 and z0 are copied into them, the tiles add
// the terms to y, z = z0 + σ(y) in place, and y and z are copied out.
template <class T>
void direct_forward(const SequencePlan &p, Activation sigma, std::span<const T> w,
                    std::span<const T> y0, std::span<const T> z0, std::span<T> y, std::span<T> z,
                    Index chunk = detail::direct_chunk) {
  const Index n = p.n, step = detail::wavefront_step<T>(chunk),
              ld = step + detail::DirectTile<T>::lanes;
  const detail::GappedLayout g(p);
  std::vector<Index> offsets;
  for (Index o = 0; Index d : p.dims) offsets.push_back(std::exchange(o, o + d));
  const Index widest = *std::max_element(p.dims.begin(), p.dims.end());
  for_each_piece(
      p.batch, p.batch_piece,
      [&](Index b0, Index b1) {
        const detail::ChannelRows<T> cr(g, b1 - b0, detail::DirectTile<T>::positions);
        T *zg = detail::scratch<T>(0, cr.size(n)), *yl = detail::scratch<T>(1, widest * ld);
        cr.clear_edges(zg, n);
        detail::wavefront(cr, p.dims.size(), step, [&](Index i, Index q0, Index q1) {
          const Index o = offsets[i], d = p.dims[i];
          T *zq = zg + cr.lead + q0, *zl = zq + o * cr.stride;
          if (d == 0) return;
          cr.copy_range(true, y0.data(), nullptr, n, b0, o, o + d, q0, q1, nullptr, yl, ld);
          cr.copy_range(true, z0.data(), nullptr, n, b0, o, o + d, q0, q1, nullptr, zl, cr.stride);
          if (o > 0)
            detail::direct_level<T>(yl, ld, d, zq, cr.stride, o, g.shifts, w.data() + o, n * n, n,
                                    1, q1 - q0);
          if (q0 < cr.used())
            for (Index c = 0; c < d; ++c)
              add_activation<T>(sigma, {std::min(q1, cr.used()) - q0, 1, 0}, zl + c * cr.stride,
                                zl + c * cr.stride, yl + c * ld);
          cr.clear_gaps(zl, cr.stride, d, q0, q1);
          cr.copy_range(false, nullptr, y.data(), n, b0, o, o + d, q0, q1, yl, nullptr, ld);
          cr.copy_range(false, nullptr, z.data(), n, b0, o, o + d, q0, q1, zl, nullptr, cr.stride);
        });
      },
      p.flops());
}

// The dual sweep on the direct path (sequence_dual's contract), a wavefront
// as the forward from the last level to the first: z̄ of level i gets, for
// every tap, W(k, level i, later levels) · ȳ read backwards. ȳ has rows for
// the whole piece; y and z̄ are small blocks of rows per level and range.
// z̄0 and ȳ0 are copied into z̄ and ȳ, ȳ = ȳ0 + σ'(y) ⊙ z̄ in place.
template <class T>
void direct_dual(const SequencePlan &p, Activation sigma, std::span<const T> w,
                 std::span<const T> y, std::span<const T> ybar0, std::span<const T> zbar0,
                 std::span<T> ybar, std::span<T> zbar, Index chunk = detail::direct_chunk) {
  const Index n = p.n, levels = p.dims.size(), step = detail::wavefront_step<T>(chunk),
              ld = step + detail::DirectTile<T>::lanes;
  const detail::GappedLayout g(p);
  std::vector<long> back = g.shifts;
  for (long &s : back) s = -s;
  std::vector<Index> offsets;
  for (Index o = 0; Index d : p.dims) offsets.push_back(std::exchange(o, o + d));
  const Index widest = *std::max_element(p.dims.begin(), p.dims.end());
  for_each_piece(
      p.batch, p.batch_piece,
      [&](Index b0, Index b1) {
        const detail::ChannelRows<T> cr(g, b1 - b0, detail::DirectTile<T>::positions);
        T *ybg = detail::scratch<T>(0, cr.size(n)), *yl = detail::scratch<T>(1, widest * ld),
          *zl = detail::scratch<T>(2, widest * ld);
        cr.clear_edges(ybg, n);
        detail::wavefront(cr, levels, step, [&](Index i, Index q0, Index q1) {
          const Index o = offsets[levels - 1 - i], d = p.dims[levels - 1 - i], end = o + d;
          T *ybq = ybg + cr.lead + q0, *ybl = ybq + o * cr.stride;
          if (d == 0) return;
          cr.copy_range(true, y.data(), nullptr, n, b0, o, end, q0, q1, nullptr, yl, ld);
          cr.copy_range(true, ybar0.data(), nullptr, n, b0, o, end, q0, q1, nullptr, ybl,
                        cr.stride);
          cr.copy_range(true, zbar0.data(), nullptr, n, b0, o, end, q0, q1, nullptr, zl, ld);
          if (end < n)
            detail::direct_level<T>(zl, ld, d, ybq + end * cr.stride, cr.stride, n - end, back,
                                    w.data() + o * n + end, n * n, 1, n, q1 - q0);
          if (q0 < cr.used())
            for (Index c = 0; c < d; ++c)
              add_activation_derivative<T>(sigma, {std::min(q1, cr.used()) - q0, 1, 0},
                                           ybl + c * cr.stride, ybl + c * cr.stride, yl + c * ld,
                                           zl + c * ld);
          cr.clear_gaps(ybl, cr.stride, d, q0, q1);
          cr.copy_range(false, nullptr, ybar.data(), n, b0, o, end, q0, q1, ybl, nullptr,
                        cr.stride);
          cr.copy_range(false, nullptr, zbar.data(), n, b0, o, end, q0, q1, zl, nullptr, ld);
        });
      },
      p.flops());
}

} // namespace pm::kernels
