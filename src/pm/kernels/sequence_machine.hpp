#pragma once
// The forward and dual sweeps of the machines on sequences (the plan and its
// index set: sequence_plan.hpp).
//
// A piece of samples is copied into time-major working buffers (column
// t·nb + b), where a shift by s positions is a shift by s·nb columns and the
// positions that read into the padding are a contiguous column range: each
// (level, tap) is then one matrix product over exactly the weights that can
// be non-zero and the positions that exist.
//
// The grid machines with small channel blocks take the direct path instead
// (direct_conv.hpp).
#include <span>
#include <vector>

#include "pm/kernels/activation.hpp"
#include "pm/kernels/direct_conv.hpp"
#include "pm/kernels/sequence_plan.hpp"

namespace pm::kernels {

// Whether a forward should keep σ'(y) for the dual (sequence_forward with
// `slope`): the dual then evaluates no σ (and copies no y), but the forward
// stores one state more. Only the product path keeps it (the direct path,
// direct_conv.hpp, recomputes σ'), and, as for the dense machine
// (DenseMachineShape::keeps_slope), only while a piece's states are small.
// Measured (docs/performance.md, "The sequence machines' product path"): a
// gain at 160 channels × 16 positions × 16 samples a piece, a loss at
// 256 × 256 × 2 and 256 × 128 × 8.
inline bool keeps_slope(const SequencePlan &p) {
  return !direct_wanted(p) &&
         p.n * p.length * std::min(p.batch, p.batch_piece) <= kept_slope_values;
}

namespace detail {
// A kept slope: a state of the plan, on the product path only.
inline void require_slope(const SequencePlan &p, const char *kernel, Index size) {
  require(size == p.state_size(), kernel, ": slope has ", size, " entries, expected ",
          p.state_size());
  require(!direct_wanted(p), kernel,
          ": a slope is kept on the product path only; this plan takes the direct path");
}
} // namespace detail

// With `slope` (as large as a state; only where !direct_wanted(p)), the
// sweep also writes σ'(y) there, from the same evaluation of σ, for the dual
// sweep at the slope (below). It is kept in the sweep's own order, each piece
// of samples [b0, b1) time-major in the entries of those samples, so that
// neither pass copies it: an opaque state for sequence_dual only.
template <class T>
void sequence_forward(const SequencePlan &p, Activation sigma, std::span<const T> w,
                      std::span<const T> y0, std::span<const T> z0, std::span<T> y, std::span<T> z,
                      std::span<T> slope = {}) {
  detail::require_sizes(p, "sequence_forward",
                        {{y0.size(), "y0"}, {z0.size(), "z0"}, {y.size(), "y"}, {z.size(), "z"}},
                        w.size());
  if (!slope.empty()) detail::require_slope(p, "sequence_forward", slope.size());
  if (direct_wanted(p)) return direct_forward<T>(p, sigma, w, y0, z0, y, z);
  const Index n = p.n, L = p.length;
  for_each_piece(
      p.batch, p.batch_piece,
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0;
        const Index size = n * L * nb;
        T *yw = detail::scratch<T>(0, size), *zw = detail::scratch<T>(1, size),
          *z0w = detail::scratch<T>(2, size),
          *sw = slope.empty() ? nullptr : slope.data() + b0 * n * L;
        detail::to_time_major(y0.data(), yw, n, L, b0, nb, p.channels_first);
        detail::to_time_major(z0.data(), z0w, n, L, b0, nb, p.channels_first);
        const Eigen::OuterStride<> stride(n);
        MatrixView<T> Y(yw, n, L * nb, stride), Z(zw, n, L * nb, stride);
        for (Index t0 = 0; t0 < L; t0 += p.timeblock) {
          const Index t1 = std::min(L, t0 + p.timeblock);
          // A tap that always crosses time blocks reads only earlier, final
          // time blocks: one product into every level's rows, ahead of the
          // levels (n rather than d rows fill the micro-kernel's panels).
          for (Index k = 0; k < p.taps.size(); ++k) {
            if (!p.taps[k].all_channels) continue;
            const ConstMatrixView<T> m(w.data() + k * n * n, n, n, stride);
            p.for_each_run(p.taps[k], 1, t0, t1, [&](Index a, Index b) {
              multiply_add(Y.middleCols(a * nb, (b - a) * nb), m,
                           Z.middleCols(Index(long(a) + p.taps[k].shift) * nb, (b - a) * nb));
            });
          }
          Index o = 0;
          for (Index d : p.dims) {
            for (Index k = 0; k < p.taps.size(); ++k) {
              if (p.taps[k].all_channels || o == 0 || d == 0) continue;
              const ConstMatrixView<T> m(w.data() + k * n * n, n, n, stride);
              p.for_each_run(p.taps[k], 1, t0, t1, [&](Index a, Index b) {
                multiply_add(Y.block(o, a * nb, d, (b - a) * nb), m.block(o, 0, d, o),
                             Z.block(0, Index(long(a) + p.taps[k].shift) * nb, o, (b - a) * nb));
              });
            }
            const Index at = t0 * nb * n + o;
            const BlockShape block{d, (t1 - t0) * nb, n};
            if (sw)
              add_activation<T>(sigma, block, zw + at, sw + at, z0w + at, yw + at);
            else
              add_activation<T>(sigma, block, zw + at, z0w + at, yw + at);
            o += d;
          }
        }
        detail::from_time_major(yw, y.data(), n, L, b0, nb, p.channels_first);
        detail::from_time_major(zw, z.data(), n, L, b0, nb, p.channels_first);
      },
      p.flops());
}

namespace detail {
// The dual sweep: z̄ = g_z + L_W̃ᵀ ȳ, ȳ = g_y + σ'(y) ⊙ z̄, over the levels in
// reverse; tap k sends ȳ at t back to z̄ at t + shift(k). `state(b0, nb)` is
// y or the kept slope of samples [b0, b0 + nb) time-major;
// `pointwise(block, ȳ, g_y, state, z̄)` computes the block's ȳ from it.
template <class T, class State, class Pointwise>
void sequence_dual_sweep(const SequencePlan &p, std::span<const T> w, State &&state,
                         std::span<const T> ybar0, std::span<const T> zbar0, std::span<T> ybar,
                         std::span<T> zbar, Pointwise &&pointwise) {
  const Index n = p.n, L = p.length;
  for_each_piece(
      p.batch, p.batch_piece,
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0, size = n * L * nb;
        T *ybw = scratch<T>(1, size), *zbw = scratch<T>(2, size), *gyw = scratch<T>(3, size);
        const T *yw = state(b0, nb);
        to_time_major(ybar0.data(), gyw, n, L, b0, nb, p.channels_first);
        to_time_major(zbar0.data(), zbw, n, L, b0, nb, p.channels_first);
        const Eigen::OuterStride<> stride(n);
        MatrixView<T> YB(ybw, n, L * nb, stride), ZB(zbw, n, L * nb, stride);
        const Index blocks = (L + p.timeblock - 1) / p.timeblock;
        for (Index tb = blocks; tb-- > 0;) {
          const Index t0 = tb * p.timeblock, t1 = std::min(L, t0 + p.timeblock);
          // z̄ at t' ∈ [t0, t1) gets ȳ at t' − shift, for t' − shift in range;
          // a tap that always crosses time blocks reads only later, final
          // time blocks: one product into every level's rows, ahead of the
          // levels (as in the forward).
          for (Index k = 0; k < p.taps.size(); ++k) {
            if (!p.taps[k].all_channels) continue;
            const ConstMatrixView<T> m(w.data() + k * n * n, n, n, stride);
            p.for_each_run(p.taps[k], -1, t0, t1, [&](Index a, Index b) {
              multiply_add(ZB.middleCols(a * nb, (b - a) * nb), m.transpose(),
                           YB.middleCols(Index(long(a) - p.taps[k].shift) * nb, (b - a) * nb));
            });
          }
          Index end = n;
          for (auto it = p.dims.rbegin(); it != p.dims.rend(); ++it) {
            const Index d = *it, o = end - d;
            for (Index k = 0; k < p.taps.size(); ++k) {
              if (p.taps[k].all_channels || end == n || d == 0) continue;
              const ConstMatrixView<T> m(w.data() + k * n * n, n, n, stride);
              p.for_each_run(p.taps[k], -1, t0, t1, [&](Index a, Index b) {
                multiply_add(
                    ZB.block(o, a * nb, d, (b - a) * nb), m.block(end, o, n - end, d).transpose(),
                    YB.block(end, Index(long(a) - p.taps[k].shift) * nb, n - end, (b - a) * nb));
              });
            }
            const Index at = t0 * nb * n + o;
            pointwise(BlockShape{d, (t1 - t0) * nb, n}, ybw + at, gyw + at, yw + at, zbw + at);
            end = o;
          }
        }
        from_time_major(ybw, ybar.data(), n, L, b0, nb, p.channels_first);
        from_time_major(zbw, zbar.data(), n, L, b0, nb, p.channels_first);
      },
      p.flops());
}

template <class T>
void require_dual_sizes(const SequencePlan &p, std::span<const T> w, std::span<const T> ybar0,
                        std::span<const T> zbar0, std::span<T> ybar, std::span<T> zbar) {
  require_sizes(p, "sequence_dual",
                {{ybar0.size(), "ybar0"},
                 {zbar0.size(), "zbar0"},
                 {ybar.size(), "ybar"},
                 {zbar.size(), "zbar"}},
                w.size());
}
} // namespace detail

// The dual (backward) sweep at the pre-activations y of a forward sweep, for
// the cotangents ȳ0 of y and z̄0 of z; returns ȳ = ∂/∂y0 and z̄ = ∂/∂z0.
// σ' is recomputed from y.
template <class T>
void sequence_dual(const SequencePlan &p, Activation sigma, std::span<const T> w,
                   std::span<const T> y, std::span<const T> ybar0, std::span<const T> zbar0,
                   std::span<T> ybar, std::span<T> zbar) {
  detail::require_sizes(p, "sequence_dual", {{y.size(), "y"}}, w.size());
  detail::require_dual_sizes(p, w, ybar0, zbar0, ybar, zbar);
  if (direct_wanted(p)) return direct_dual<T>(p, sigma, w, y, ybar0, zbar0, ybar, zbar);
  const auto y_of = [&](Index b0, Index nb) {
    T *yw = detail::scratch<T>(0, p.n * p.length * nb);
    detail::to_time_major(y.data(), yw, p.n, p.length, b0, nb, p.channels_first);
    return static_cast<const T *>(yw);
  };
  detail::sequence_dual_sweep(p, w, y_of, ybar0, zbar0, ybar, zbar,
                              [&](BlockShape s, T *yb, const T *gy, const T *at, const T *zb) {
                                add_activation_derivative<T>(sigma, s, yb, gy, at, zb);
                              });
}

// The same at the slopes σ'(y) the forward sweep wrote (sequence_forward
// with `slope`): no σ is evaluated, and the bits are those of the sweep
// above.
template <class T>
void sequence_dual(const SequencePlan &p, std::span<const T> w, std::span<const T> slope,
                   std::span<const T> ybar0, std::span<const T> zbar0, std::span<T> ybar,
                   std::span<T> zbar) {
  detail::require_slope(p, "sequence_dual", slope.size());
  detail::require_dual_sizes(p, w, ybar0, zbar0, ybar, zbar);
  // The slope is kept time-major piece by piece: read in place.
  const auto slope_of = [&](Index b0, Index) { return slope.data() + b0 * p.n * p.length; };
  detail::sequence_dual_sweep(p, w, slope_of, ybar0, zbar0, ybar, zbar,
                              [&](BlockShape s, T *yb, const T *gy, const T *at, const T *zb) {
                                add_slope_product<T>(s, yb, gy, at, zb);
                              });
}

} // namespace pm::kernels
