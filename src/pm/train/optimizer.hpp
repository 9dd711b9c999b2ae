#pragma once
// First-order optimizers on one flat parameter vector (one instance per
// tensor): plain gradient descent and Adam (Kingma & Ba 2015, with Flux's
// defaults β₁ = 0.9, β₂ = 0.999, ε = 1e-8 and bias correction):
//   m ← β₁ m + (1 − β₁) g,  v ← β₂ v + (1 − β₂) g²,
//   w ← w − η (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + ε).
#include <cmath>

#include "pm/category/function.hpp"

namespace pm {

template <class S> class Sgd {
public:
  explicit Sgd(S learning_rate) : eta_(learning_rate) {}
  void step(Function<S> &w, const Function<S> &g) const {
    require_size(g, w.size(), "Sgd::step: gradient");
    for (Index i = 0; i < w.size(); ++i) w[i] -= eta_ * g[i];
  }

private:
  S eta_;
};

template <class S> class Adam {
public:
  explicit Adam(S learning_rate, S beta1 = S(0.9), S beta2 = S(0.999), S epsilon = S(1e-8))
      : eta_(learning_rate), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}

  void step(Function<S> &w, const Function<S> &g) {
    require_size(g, w.size(), "Adam::step: gradient");
    if (m_.empty()) m_.assign(w.size(), S(0)), v_.assign(w.size(), S(0));
    require_size(w, m_.size(), "Adam::step: parameters (the optimizer's tensor)");
    ++t_;
    const S c1 = S(1) - std::pow(beta1_, S(t_)), c2 = S(1) - std::pow(beta2_, S(t_));
    for (Index i = 0; i < w.size(); ++i) {
      m_[i] = beta1_ * m_[i] + (S(1) - beta1_) * g[i];
      v_[i] = beta2_ * v_[i] + (S(1) - beta2_) * g[i] * g[i];
      w[i] -= eta_ * (m_[i] / c1) / (std::sqrt(v_[i] / c2) + epsilon_);
    }
  }

private:
  S eta_, beta1_, beta2_, epsilon_;
  Function<S> m_, v_;
  long t_ = 0;
};

} // namespace pm
