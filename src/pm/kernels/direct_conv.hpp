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
// floats and 32 registers; AVX2: 8 floats and 16), so no code is tied to one
// instruction set. The weight gradient on the same rows is in
// direct_gradient.hpp.
//
// Summation order. An output of the sweeps is its initial value plus the
// terms in the order (tap, input channel), whatever tile it falls in. Work
// is split over pieces of samples, never inside a sum: the bits do not
// depend on the thread count.
#include <algorithm>
#include <span>
#include <vector>

#include "pm/kernels/activation.hpp"
#include "pm/kernels/gapped_layout.hpp"
#include "pm/kernels/partition.hpp"
#include "pm/kernels/sequence_plan.hpp"

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
// docs/performance.md "The direct path of the grid machines"): with 32
// vector registers (AVX-512) the direct path is faster up to 32-channel
// blocks; with 16 (AVX2) it is faster at 8 and 16 channels and slower than
// the products at 32.
constexpr Index direct_max_block = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 32 : 16,
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

// out[i · ld_out + j] = in[j · ld_in + i] for i < rows, j < cols: the
// channel-major ↔ position-major copies, by blocks of lanes × lanes
// transposed in registers. A partial block reads whole packets of `in` when
// read_past (the channel rows have a packet of slack at their end) and
// writes whole packets of `out` when write_past (the positions written past
// a line are written again, or cleared, afterwards).
template <class T>
void transpose(const T *in, Index ld_in, T *out, Index ld_out, Index rows, Index cols,
               bool read_past, bool write_past) {
  namespace ei = Eigen::internal;
  using P = typename DirectTile<T>::Packet;
  constexpr Index lanes = DirectTile<T>::lanes;
  if constexpr (lanes == 1) {
    for (Index i = 0; i < rows; ++i)
      for (Index j = 0; j < cols; ++j) out[i * ld_out + j] = in[j * ld_in + i];
  } else {
    // A block of packets of an SIMD type that carries alignment attributes:
    // GCC warns that the template argument drops them, which is harmless
    // here (the block is a local, as in Eigen's own kernels).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
    ei::PacketBlock<P, lanes> block;
#pragma GCC diagnostic pop
    T part[lanes] = {};
    for (Index i0 = 0; i0 < rows; i0 += lanes)
      for (Index j0 = 0; j0 < cols; j0 += lanes) {
        const Index ni = std::min(lanes, rows - i0), nj = std::min(lanes, cols - j0);
        if (ni == lanes && nj == lanes) {
          for (Index k = 0; k < lanes; ++k)
            block.packet[k] = ei::ploadu<P>(in + (j0 + k) * ld_in + i0);
          ei::ptranspose(block);
          for (Index k = 0; k < lanes; ++k)
            ei::pstoreu(out + (i0 + k) * ld_out + j0, block.packet[k]);
          continue;
        }
        // A partial block goes through `part`, padded with zeros.
        for (Index k = 0; k < lanes; ++k) {
          const T *from = in + (j0 + k) * ld_in + i0;
          if (k >= nj) {
            block.packet[k] = ei::pset1<P>(T(0));
          } else if (ni == lanes || read_past) {
            block.packet[k] = ei::ploadu<P>(from);
          } else {
            std::copy_n(from, ni, part);
            block.packet[k] = ei::ploadu<P>(part);
          }
        }
        ei::ptranspose(block);
        for (Index k = 0; k < ni; ++k) {
          T *to = out + (i0 + k) * ld_out + j0;
          if (nj == lanes || write_past) {
            ei::pstoreu(to, block.packet[k]);
          } else {
            ei::pstoreu(part, block.packet[k]);
            std::copy_n(part, nj, to);
          }
        }
      }
  }
}

// A piece of nb samples in the channel-major gapped layout: row c at
// c · stride, gapped position q (of [0, nb · sample)) at lead + q, zeros
// outside the grid; `end` positions, a whole number of tiles, are computed.
template <class T> struct ChannelRows {
  const GappedLayout &g;
  Index nb, lead, end, stride;

  ChannelRows(const GappedLayout &layout, Index samples, Index unit)
      : g(layout), nb(samples),
        lead(pieces(layout.margin, DirectTile<T>::lanes) * DirectTile<T>::lanes),
        end(pieces(samples * layout.sample, unit) * unit),
        stride(pieces(lead + end + layout.margin + DirectTile<T>::lanes, DirectTile<T>::lanes) *
               DirectTile<T>::lanes) {}

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
  // The gapped positions of the piece.
  Index used() const { return nb * g.sample; }
  // Zero at the gaps and past the piece (up to `end`) in rows [0, n): the
  // pointwise passes run over whole rows, the gaps included.
  void clear_gaps(T *rows, Index n) const {
    const Index line = g.extents.back();
    for (Index c = 0; c < n; ++c) {
      T *row = rows + c * stride + lead;
      Index from = 0;
      for_each_line([&](Index q, Index) {
        std::fill(row + from, row + q, T(0));
        from = q + line;
      });
      std::fill(row + from, row + end, T(0));
    }
  }
  // The margins and the positions past the piece, zero in channels [0, n).
  void clear_edges(T *rows, Index n) const {
    for (Index c = 0; c < n; ++c) {
      std::fill_n(rows + c * stride, lead, T(0));
      std::fill_n(rows + c * stride + lead + nb * g.sample, stride - lead - nb * g.sample, T(0));
    }
  }
  // Channels [c, c + lanes) ∩ [0, n) of the piece's samples, samples
  // [b0, b0 + nb) of `batch` (stride n), into the rows (to_rows) or back.
  // Lines go in increasing order, so the packet a partial block writes past
  // the end of a line into the rows is written again by the next line, or
  // cleared with the gaps.
  void copy_channels(bool to_rows, const T *batch_in, T *batch_out, Index n, Index b0, Index c,
                     const T *rows_in, T *rows_out) const {
    const Index line = g.extents.back(), length = g.extents_size(),
                width = std::min(DirectTile<T>::lanes, n - c);
    for (Index b = 0; b < nb; ++b)
      for_each_line(b, [&](Index q, Index t) {
        const Index at = (b0 * length + t) * n + c, row = c * stride + lead + q;
        if (to_rows)
          transpose(batch_in + at, n, rows_out + row, stride, width, line, false, true);
        else
          transpose(rows_in + row, stride, batch_out + at, n, line, width, true, false);
      });
  }
  // Channels [0, n) of samples [b0, b0 + nb) into the rows, zero elsewhere;
  // the channel blocks in parallel when `work` says so.
  void load(const T *batch, Index n, Index b0, T *rows, double work = 0) const {
    for_each_piece(
        n, DirectTile<T>::lanes,
        [&](Index c, Index) { copy_channels(true, batch, nullptr, n, b0, c, nullptr, rows); },
        work);
    clear_edges(rows, n);
    clear_gaps(rows, n);
  }
  void store(const T *rows, Index n, Index b0, T *batch) const {
    for (Index c = 0; c < n; c += DirectTile<T>::lanes)
      copy_channels(false, nullptr, batch, n, b0, c, rows, nullptr);
  }
};

// out[r][q..] += Σ_k Σ_c w[k·wk + c·wc + r·wr] · in[c][q + shift_k ..] for
// R output rows and one tile of positions; rows at stride `ld` (out and in).
template <class T, int R>
void direct_tile(T *out, const T *in, Index ld, const std::vector<long> &shifts, Index inputs,
                 const T *w, Index wk, Index wc, Index wr) {
  namespace ei = Eigen::internal;
  using Tile = DirectTile<T>;
  using P = typename Tile::Packet;
  constexpr int V = Tile::vectors;
  constexpr Index lanes = Tile::lanes;
  P acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = ei::ploadu<P>(out + r * ld + v * lanes);
  for (Index k = 0; k < shifts.size(); ++k) {
    const T *src = in + shifts[k], *wt = w + k * wk;
    for (Index c = 0; c < inputs; ++c, src += ld, wt += wc) {
      P x[V];
      for (int v = 0; v < V; ++v) x[v] = ei::ploadu<P>(src + v * lanes);
      for (int r = 0; r < R; ++r) {
        const P b = ei::pset1<P>(wt[r * wr]);
        for (int v = 0; v < V; ++v) acc[r][v] = ei::pmadd(b, x[v], acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) ei::pstoreu(out + r * ld + v * lanes, acc[r][v]);
}

// direct_tile with r ≤ R rows.
template <class T, int R, class... Args> void direct_tile_upto(Index r, Args &&...args) {
  if constexpr (R > 1)
    if (r < R) return direct_tile_upto<T, R - 1>(r, args...);
  direct_tile<T, R>(args...);
}

// One level of a sweep: `rows` output rows from `inputs` input rows, every
// tile of positions of the piece. out and in point at gapped position 0 of
// their first row.
template <class T>
void direct_level(const ChannelRows<T> &cr, T *out, Index rows, const T *in, Index inputs,
                  const std::vector<long> &shifts, const T *w, Index wk, Index wc, Index wr) {
  constexpr int R = DirectTile<T>::rows;
  for (Index q = 0; q < cr.end; q += DirectTile<T>::positions)
    for (Index r = 0; r < rows; r += R) {
      T *o = out + r * cr.stride + q;
      const T *x = in + q, *wr0 = w + r * wr;
      direct_tile_upto<T, R>(std::min<Index>(R, rows - r), o, x, cr.stride, shifts, inputs, wr0, wk,
                             wc, wr);
    }
}

} // namespace detail

// The forward sweep on the direct path (sequence_forward's contract).
template <class T>
void direct_forward(const SequencePlan &p, Activation sigma, std::span<const T> w,
                    std::span<const T> y0, std::span<const T> z0, std::span<T> y, std::span<T> z) {
  const Index n = p.n;
  const detail::GappedLayout g(p);
  std::vector<long> shifts = g.shifts;
  for_each_piece(
      p.batch, p.batch_piece,
      [&](Index b0, Index b1) {
        const detail::ChannelRows<T> cr(g, b1 - b0, detail::DirectTile<T>::positions);
        T *yg = detail::scratch<T>(0, cr.size(n)), *zg = detail::scratch<T>(1, cr.size(n)),
          *z0g = detail::scratch<T>(2, cr.size(n));
        cr.load(y0.data(), n, b0, yg);
        cr.load(z0.data(), n, b0, z0g);
        cr.clear_edges(zg, n); // every level's rows are written before they are read
        Index o = 0;
        for (Index d : p.dims) {
          if (o > 0 && d > 0)
            detail::direct_level<T>(cr, yg + o * cr.stride + cr.lead, d, zg + cr.lead, o, shifts,
                                    w.data() + o, n * n, n, 1);
          const Index at = o * cr.stride + cr.lead;
          add_activation<T>(sigma, {cr.used(), d, cr.stride}, zg + at, z0g + at, yg + at);
          cr.clear_gaps(zg + o * cr.stride, d);
          o += d;
        }
        cr.store(yg, n, b0, y.data());
        cr.store(zg, n, b0, z.data());
      },
      p.flops());
}

// The dual sweep on the direct path (sequence_dual's contract): z̄ of level
// i gets, for every tap, W(k, level i, later levels) · ȳ read backwards.
template <class T>
void direct_dual(const SequencePlan &p, Activation sigma, std::span<const T> w,
                 std::span<const T> y, std::span<const T> ybar0, std::span<const T> zbar0,
                 std::span<T> ybar, std::span<T> zbar) {
  const Index n = p.n;
  const detail::GappedLayout g(p);
  std::vector<long> back = g.shifts;
  for (long &s : back) s = -s;
  for_each_piece(
      p.batch, p.batch_piece,
      [&](Index b0, Index b1) {
        const detail::ChannelRows<T> cr(g, b1 - b0, detail::DirectTile<T>::positions);
        T *yg = detail::scratch<T>(0, cr.size(n)), *gyg = detail::scratch<T>(1, cr.size(n)),
          *zbg = detail::scratch<T>(2, cr.size(n)), *ybg = detail::scratch<T>(3, cr.size(n));
        cr.load(y.data(), n, b0, yg);
        cr.load(ybar0.data(), n, b0, gyg);
        cr.load(zbar0.data(), n, b0, zbg);
        cr.clear_edges(ybg, n); // every level's rows are written before they are read
        Index end = n;
        for (auto it = p.dims.rbegin(); it != p.dims.rend(); ++it) {
          const Index d = *it, o = end - d;
          if (end < n && d > 0)
            detail::direct_level<T>(cr, zbg + o * cr.stride + cr.lead, d,
                                    ybg + end * cr.stride + cr.lead, n - end, back,
                                    w.data() + o * n + end, n * n, 1, n);
          const Index at = o * cr.stride + cr.lead;
          add_activation_derivative<T>(sigma, {cr.used(), d, cr.stride}, ybg + at, gyg + at,
                                       yg + at, zbg + at);
          cr.clear_gaps(ybg + o * cr.stride, d);
          end = o;
        }
        cr.store(ybg, n, b0, ybar.data());
        cr.store(zbg, n, b0, zbar.data());
      },
      p.flops());
}

} // namespace pm::kernels
