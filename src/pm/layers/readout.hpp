#pragma once
// The readout after a machine: the same affine map of the channels at every
// position, (p, c_in) ↦ (p, c_out), i.e. a 1×1 convolution with bias (the
// authors' Conv((1,), N => 1)) or, with one position, Dense(N → out). As a
// span it is the copairing of the pointwise channel mixing with the
// per-channel bias: X ⊔ {•} → Y with parameters W(c_in, c_out) then b(c_out).
#include "pm/category/batch.hpp"
#include "pm/layers/conv.hpp"
#include "pm/layers/coproduct.hpp"

namespace pm {

struct ReadoutSpec {
  Index positions = 1;
  Index in = 1;
  Index out = 1;

  Shape weight_shape() const { return Shape({in, out}); }
  Index parameters() const { return in * out + out; }
};

template <class S> ParametricSpan<S> readout(const ReadoutSpec &r) {
  // A kernel-1 convolution over the flattened positions is the pointwise map.
  const ParametricSpan<S> mix =
      conv<S>(ConvSpec{{r.positions}, r.in, r.out, {1}, {}, {}, {}, {}, 1});
  return copair(mix, channel_bias<S>(r.positions, r.out));
}

// φ on (position, channel) with the point • appended, per sample.
template <class S> Batch<S> adjoin_unit(const Batch<S> &phi) {
  Batch<S> out(phi.rows + 1, phi.cols, S(1));
  for (Index b = 0; b < phi.cols; ++b)
    for (Index i = 0; i < phi.rows; ++i) out(i, b) = phi(i, b);
  return out;
}

} // namespace pm
