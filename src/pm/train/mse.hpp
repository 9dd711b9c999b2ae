#pragma once
// The mean squared error over every entry of a batch (Flux's mse):
//   ℓ(ŷ, y) = (1/n) Σ_i (ŷ_i − y_i)²,   ∂ℓ/∂ŷ = (2/n)(ŷ − y).
#include "pm/category/batch.hpp"

namespace pm {

template <class S> void require_same_shape(const Batch<S> &a, const Batch<S> &b, const char *what) {
  require(a.rows == b.rows && a.cols == b.cols, what, ": prediction is ", a.rows, " × ", a.cols,
          ", expected the target's shape ", b.rows, " × ", b.cols);
  require(!a.data.empty(), what, ": empty batch, expected at least one entry");
}

template <class S> S mse(const Batch<S> &prediction, const Batch<S> &target) {
  require_same_shape(prediction, target, "mse");
  S acc = S(0);
  for (Index i = 0; i < prediction.data.size(); ++i) {
    const S d = prediction.data[i] - target.data[i];
    acc += d * d;
  }
  return acc / S(prediction.data.size());
}

template <class S> Batch<S> mse_gradient(const Batch<S> &prediction, const Batch<S> &target) {
  require_same_shape(prediction, target, "mse_gradient");
  Batch<S> g(prediction.rows, prediction.cols);
  const S k = S(2) / S(prediction.data.size());
  for (Index i = 0; i < g.data.size(); ++i) g.data[i] = k * (prediction.data[i] - target.data[i]);
  return g;
}

} // namespace pm
