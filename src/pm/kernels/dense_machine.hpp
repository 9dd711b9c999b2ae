#pragma once
// The dense machine's kernels (seeds.md §3). Channels 0..N−1 are cut into
// consecutive blocks `dims`; W is N × N, stored source-major like the dense
// layer (W(x, y) at x·N + y is the weight from channel x into channel y), and
// only the weights from an earlier block into a later one are used (W̃, the
// cleaned W). States are batches: channel c of sample b at b·N + c.
//
//   forward  y = y0 + W̃ᵀ z,  z = z0 + σ(y)           blocks in order
//   dual     z̄ = z̄0 + W̃ ȳ,  ȳ = ȳ0 + σ'(y) ⊙ z̄      blocks in reverse order
//   gradient ∂W = clean(Σ_b z ȳᵀ)
//
// Read column-major, the buffer of W is the matrix M = Wᵀ (rows = targets),
// so block i of the forward sweep is one matrix product
// y_i += M[i, blocks < i] · z_{<i} over exactly the weights that can be
// non-zero. The batch is cut into pieces of `batch_piece` samples, each swept
// through all blocks by one thread. The forward sweep can keep σ'(y) (a
// state), so that the dual sweep reads it instead of evaluating σ' again.
#include <span>
#include <string>
#include <vector>

#include "pm/kernels/activation.hpp"
#include "pm/kernels/partition.hpp"

namespace pm::kernels {

// The most values of a piece of samples' states for which a forward keeps
// σ'(y) for the dual (DenseMachineShape::keeps_slope, and keeps_slope of a
// sequence plan): beyond it the extra state costs the forward more than the
// dual saves. Measured in docs/performance.md ("The dual from the forward's
// slope", "The sequence machines' product path").
inline constexpr Index kept_slope_values = Index(1) << 16;

struct DenseMachineShape {
  std::vector<Index> dims; // channel blocks, in grade order; a block may be empty
  Index batch = 0;
  // Samples swept together by one thread. The bits of a result depend on it
  // (through the blocking of the matrix products), not on the thread count.
  Index batch_piece = 128;

  Index channels() const {
    Index n = 0;
    for (Index d : dims) n += d;
    return n;
  }
  Index state_size() const { return channels() * batch; }
  // Whether a forward should keep σ'(y) for the dual (dense_forward with
  // `slope`): the dual then evaluates no σ, but the forward stores one state
  // more, a net loss once a piece's states outgrow the cache. Measured
  // (docs/performance.md, "The dual from the forward's slope"): a gain at 160
  // channels × 32 samples a piece, a loss at 1024 × 128; the bound, 2¹⁶
  // values a piece, lies between the two.
  bool keeps_slope() const {
    return channels() * std::min(batch, batch_piece) <= kept_slope_values;
  }
  Index weight_size() const { return channels() * channels(); }
  // The weights that can be non-zero, Σ_i dims[i] · (channels of blocks < i):
  // each pass (forward, dual, gradient) costs 2 · batch · valid_weights()
  // floating-point operations in its matrix products.
  Index valid_weights() const {
    Index v = 0, o = 0;
    for (Index d : dims) {
      v += d * o;
      o += d;
    }
    return v;
  }
  // Floating-point operations of one pass (forward, dual or gradient).
  double flops() const { return 2.0 * double(batch) * double(valid_weights()); }

  void validate() const {
    require(batch_piece > 0, "DenseMachineShape: batch_piece is 0, expected > 0");
  }
};

namespace detail {
template <class T>
void require_buffer(std::span<T> buffer, Index expected, const char *kernel, const char *name) {
  require(buffer.size() == expected, kernel, ": ", name, " has ", buffer.size(),
          " entries, expected ", expected);
}
} // namespace detail

// With `slope` (a state), the sweep also writes σ'(y) there, from the same
// evaluation of σ, for the dual sweep at the slope (below).
template <class T>
void dense_forward(const DenseMachineShape &shape, Activation sigma, std::span<const T> w,
                   std::span<const T> y0, std::span<const T> z0, std::span<T> y, std::span<T> z,
                   std::span<T> slope = {}) {
  shape.validate();
  const Index n = shape.channels();
  for (auto [buf, name] : {std::pair{y0, "y0"}, std::pair{z0, "z0"}})
    detail::require_buffer(buf, shape.state_size(), "dense_forward", name);
  detail::require_buffer(y, shape.state_size(), "dense_forward", "y");
  detail::require_buffer(z, shape.state_size(), "dense_forward", "z");
  if (!slope.empty()) detail::require_buffer(slope, shape.state_size(), "dense_forward", "slope");
  detail::require_buffer(w, shape.weight_size(), "dense_forward", "W");
  const ConstMatrixView<T> m(w.data(), n, n, Eigen::OuterStride<>(n));
  for_each_piece(
      shape.batch, shape.batch_piece,
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0;
        const Eigen::OuterStride<> stride(n);
        ConstMatrixView<T> Y0(y0.data() + b0 * n, n, nb, stride),
            Z0(z0.data() + b0 * n, n, nb, stride);
        MatrixView<T> Y(y.data() + b0 * n, n, nb, stride), Z(z.data() + b0 * n, n, nb, stride);
        Index o = 0;
        for (Index d : shape.dims) {
          auto yi = Y.middleRows(o, d);
          yi = Y0.middleRows(o, d);
          if (o > 0) multiply_add(yi, m.block(o, 0, d, o), Z.topRows(o));
          if (slope.empty())
            add_activation<T>(sigma, {d, nb, n}, Z.data() + o, Z0.data() + o, Y.data() + o);
          else
            add_activation<T>(sigma, {d, nb, n}, Z.data() + o, slope.data() + b0 * n + o,
                              Z0.data() + o, Y.data() + o);
          o += d;
        }
      },
      shape.flops());
}

namespace detail {
// The dual sweep, levels in reverse; `pointwise(block, offset)` computes
// ȳ_i = ȳ0_i + σ'(y_i) ⊙ z̄_i of the block at that offset of the states.
template <class T, class Pointwise>
void dense_dual_sweep(const DenseMachineShape &shape, std::span<const T> w,
                      std::span<const T> zbar0, std::span<T> ybar, std::span<T> zbar,
                      Pointwise &&pointwise) {
  const Index n = shape.channels();
  const ConstMatrixView<T> m(w.data(), n, n, Eigen::OuterStride<>(n));
  for_each_piece(
      shape.batch, shape.batch_piece,
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0;
        const Eigen::OuterStride<> stride(n);
        ConstMatrixView<T> ZB0(zbar0.data() + b0 * n, n, nb, stride);
        MatrixView<T> YB(ybar.data() + b0 * n, n, nb, stride),
            ZB(zbar.data() + b0 * n, n, nb, stride);
        Index end = n; // one past the current block
        for (auto it = shape.dims.rbegin(); it != shape.dims.rend(); ++it) {
          const Index d = *it, o = end - d, later = n - end;
          auto zi = ZB.middleRows(o, d);
          zi = ZB0.middleRows(o, d);
          if (later > 0)
            multiply_add(zi, m.block(end, o, later, d).transpose(), YB.bottomRows(later));
          pointwise(BlockShape{d, nb, n}, b0 * n + o);
          end = o;
        }
      },
      shape.flops());
}

template <class T>
void require_dual_buffers(const DenseMachineShape &shape, std::span<const T> w,
                          std::span<const T> ybar0, std::span<const T> zbar0, std::span<T> ybar,
                          std::span<T> zbar) {
  shape.validate();
  for (auto [buf, name] : {std::pair{ybar0, "ybar0"}, std::pair{zbar0, "zbar0"}})
    require_buffer(buf, shape.state_size(), "dense_dual", name);
  require_buffer(ybar, shape.state_size(), "dense_dual", "ybar");
  require_buffer(zbar, shape.state_size(), "dense_dual", "zbar");
  require_buffer(w, shape.weight_size(), "dense_dual", "W");
}
} // namespace detail

// The dual (backward) sweep at the pre-activations y of a forward sweep, for
// the cotangents ȳ0 of y and z̄0 of z; returns ȳ = ∂/∂y0 and z̄ = ∂/∂z0.
// σ' is recomputed from y.
template <class T>
void dense_dual(const DenseMachineShape &shape, Activation sigma, std::span<const T> w,
                std::span<const T> y, std::span<const T> ybar0, std::span<const T> zbar0,
                std::span<T> ybar, std::span<T> zbar) {
  detail::require_buffer(y, shape.state_size(), "dense_dual", "y");
  detail::require_dual_buffers(shape, w, ybar0, zbar0, ybar, zbar);
  detail::dense_dual_sweep(shape, w, zbar0, ybar, zbar, [&](BlockShape s, Index at) {
    add_activation_derivative<T>(sigma, s, ybar.data() + at, ybar0.data() + at, y.data() + at,
                                 zbar.data() + at);
  });
}

// The same at the slopes σ'(y) the forward sweep wrote (dense_forward with
// `slope`): no σ is evaluated, and the bits are those of the sweep above.
template <class T>
void dense_dual(const DenseMachineShape &shape, std::span<const T> w, std::span<const T> slope,
                std::span<const T> ybar0, std::span<const T> zbar0, std::span<T> ybar,
                std::span<T> zbar) {
  detail::require_buffer(slope, shape.state_size(), "dense_dual", "slope");
  detail::require_dual_buffers(shape, w, ybar0, zbar0, ybar, zbar);
  detail::dense_dual_sweep(shape, w, zbar0, ybar, zbar, [&](BlockShape s, Index at) {
    add_slope_product<T>(s, ybar.data() + at, ybar0.data() + at, slope.data() + at,
                         zbar.data() + at);
  });
}

} // namespace pm::kernels
