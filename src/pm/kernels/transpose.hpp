#pragma once
// Transposes of blocks of a matrix by packets in registers: the copies
// between the position-major states (a position's channels consecutive) and
// channel-major rows (a channel's positions consecutive) of the sequence
// kernels. A copy: the bits are those of any transpose.
#include <algorithm>
#include <type_traits>

#include "pm/category/finite_set.hpp"
#include "pm/kernels/eigen.hpp"

namespace pm::kernels::detail {

#if defined(__AVX512F__)
// A 16 × 16 block of floats transposed in registers: out[i · ld_out + j] =
// in[j · ld_in + i] for i < `stores`, j < 16, rows j ≥ `loads` of `in` read
// as zeros; whole packets are read and written. Four stages of 16 shuffles
// (within 128-bit lanes, then across them). Eigen's ptranspose of a
// PacketBlock<Packet16f, 16>, inlined into transpose_by, kept the block on
// the stack (g++ 12: a store and a reload of every packet) and went through
// half-width inserts and extracts; out of line, this function keeps every
// value in a register. A copy: the bits are those of any transpose.
[[gnu::noinline]] inline void transpose16x16(const float *in, Index ld_in, float *out, Index ld_out,
                                             Index loads, Index stores) {
  __m512 r[16], t[16];
  for (Index k = 0; k < 16; ++k)
    r[k] = k < loads ? _mm512_loadu_ps(in + k * ld_in) : _mm512_setzero_ps();
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  // r[4g + j]: rows 4g..4g+3 of column j + 4 l in the 128-bit lane l.
  for (int g = 0; g < 16; g += 4) {
    const __m512d a = _mm512_castps_pd(t[g]), b = _mm512_castps_pd(t[g + 1]),
                  c = _mm512_castps_pd(t[g + 2]), d = _mm512_castps_pd(t[g + 3]);
    r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // t[8h + j] (0x88): rows 8h..8h+3 of columns j, j + 8, then rows
  // 8h+4..8h+7 of the same; t[8h + 4 + j] (0xdd): columns j + 4, j + 12.
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j) {
      t[8 * h + j] = _mm512_shuffle_f32x4(r[8 * h + j], r[8 * h + 4 + j], 0x88);
      t[8 * h + 4 + j] = _mm512_shuffle_f32x4(r[8 * h + j], r[8 * h + 4 + j], 0xdd);
    }
  // t[8h + m], m < 8: rows 8h..8h+3 of columns m, m + 8, then rows
  // 8h+4..8h+7 of the same; lanes 0 and 2 of both halves are column m,
  // lanes 1 and 3 column m + 8.
  for (Index m = 0; m < 8; ++m) {
    if (m < stores) _mm512_storeu_ps(out + m * ld_out, _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88));
    if (m + 8 < stores)
      _mm512_storeu_ps(out + (m + 8) * ld_out, _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd));
  }
}
#endif

// out[i · ld_out + j] = in[j · ld_in + i] for i < rows, j < cols: the
// channel-major ↔ position-major copies, by blocks of lanes × lanes
// transposed in registers. A partial block reads whole packets of `in` when
// read_past (the channel rows have a packet of slack at their end) and
// writes whole packets of `out` when write_past (the positions written past
// a line are written again, or cleared, afterwards).
//
// Blocks of packets P; transpose takes the target's packets, or its half
// packets where rows or cols fit in one (the blocks of a channel block
// narrower than a packet: 8 channels with AVX-512 code), so that narrow
// blocks are whole blocks instead of going through `part`.
template <class P, class T>
void transpose_by(const T *in, Index ld_in, T *out, Index ld_out, Index rows, Index cols,
                  bool read_past, bool write_past) {
  namespace ei = Eigen::internal;
  constexpr Index lanes = ei::unpacket_traits<P>::size;
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
#if defined(__AVX512F__)
        // Whole packets read and written: the full blocks, and the partial
        // ones wherever the generic path below would read or write whole
        // packets too (the same values, zeros for the missing positions).
        if constexpr (std::is_same_v<T, float> && lanes == 16)
          if ((ni == lanes || read_past) && (nj == lanes || write_past)) {
            transpose16x16(in + j0 * ld_in + i0, ld_in, out + i0 * ld_out + j0, ld_out, nj, ni);
            continue;
          }
#endif
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

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
template <class T>
void transpose(const T *in, Index ld_in, T *out, Index ld_out, Index rows, Index cols,
               bool read_past, bool write_past) {
  using P = typename Eigen::internal::packet_traits<T>::type;
  using Half = typename Eigen::internal::unpacket_traits<P>::half;
  if (std::min(rows, cols) <= Eigen::internal::unpacket_traits<Half>::size)
    return transpose_by<Half>(in, ld_in, out, ld_out, rows, cols, read_past, write_past);
  transpose_by<P>(in, ld_in, out, ld_out, rows, cols, read_past, write_past);
}
#pragma GCC diagnostic pop

// Each of `samples` consecutive rows × cols row-major matrices of `in`
// transposed into `out` (cols × rows each): a batch of states between the
// position-major and channel-major layouts.
template <class T>
void transpose_samples(const T *in, T *out, Index rows, Index cols, Index samples) {
  for (Index at = 0; at < samples * rows * cols; at += rows * cols)
    transpose(in + at, cols, out + at, rows, cols, rows, false, false);
}

// out[i] = in[i] for i < len: a run of a row (a line of a channel, a
// position's channels), by packets inline. The runs are short (a line of a
// grid, 24–64 values): a memmove call per run cost more than the copy, and
// Eigen's assignment of a run aligns its stores with a scalar loop (up to 15
// values of a 24-value line). Here a run of at least a packet is copied by
// unaligned packets, the last one ending at the run's end (overlapping the
// one before it, which wrote the same values: `in` and `out` are apart).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
template <class T> void copy_run(const T *in, T *out, Index len) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr Index lanes = ei::unpacket_traits<P>::size;
  if (len < lanes) {
    std::copy_n(in, len, out);
    return;
  }
  for (Index i = 0; i + lanes < len; i += lanes) ei::pstoreu(out + i, ei::ploadu<P>(in + i));
  ei::pstoreu(out + len - lanes, ei::ploadu<P>(in + len - lanes));
}
#pragma GCC diagnostic pop

} // namespace pm::kernels::detail
