#pragma once
// The graded span machine: a finite-depth machine whose linear part is a
// parametric span on a graded index set. With the index set I (|I| = n), a
// grading d : I → {1..D}, a parametric span I ←s− E −t→ I with parameter leg
// π : E → P and weights μ, and a pointwise σ, the state (y, z) ∈ S^I × S^I
// solves
//   y = y₀ + L_w̃ z,   z = z₀ + σ(y),   w̃ = clean(w),
// i.e. x = x₀ + f(x) for x = (y, z) and f(y, z) = (L_w̃ z, σ(y)).
// The machine precomputes its level plan: for each grade k, the edges with a
// valid parameter whose target has grade k, in increasing edge order, and the
// indices of grade k. The level solver (solver.hpp) walks this plan once, so
// the forward pass costs about one evaluation of the span.
#include "pm/machine/clean.hpp"
#include "pm/machine/sigma.hpp"

namespace pm {

template <class S> class GradedSpanMachine {
public:
  GradedSpanMachine(Grading grading, ParametricSpan<S> span, Sigma<S> sigma)
      : grading_(std::move(grading)), span_(std::move(span)), sigma_(std::move(sigma)) {
    require_graded(span_, grading_, "GradedSpanMachine");
    sigma_.require_shape(size(), 0, "GradedSpanMachine");
    const std::vector<bool> valid = valid_parameters(span_, grading_);
    members_ = grading_.members();
    edges_into_.resize(grading_.levels());
    for (Index e = 0; e < span_.apex(); ++e)
      if (valid[span_.pi(e)]) edges_into_[grading_(span_.span.t(e)) - 1].push_back(e);
  }

  const Grading &grading() const { return grading_; }
  const ParametricSpan<S> &span() const { return span_; }
  const Sigma<S> &sigma() const { return sigma_; }
  Index size() const { return grading_.size(); }
  Index levels() const { return grading_.levels(); }
  Index parameters() const { return span_.parameters(); }

  // Indices of grade k + 1, increasing.
  const std::vector<Index> &members(Index k) const { return members_[k]; }
  // Edges with a valid parameter into grade k + 1, increasing.
  const std::vector<Index> &edges_into(Index k) const { return edges_into_[k]; }

private:
  Grading grading_;
  ParametricSpan<S> span_;
  Sigma<S> sigma_;
  std::vector<std::vector<Index>> members_;
  std::vector<std::vector<Index>> edges_into_;
};

// The grading of the state x = (y, z) ∈ S^{2n}: y_i has grade 2 d(i) − 1 and
// z_i grade 2 d(i), so f(y, z) = (L_w̃ z, σ(y)) has depth ≤ 2D.
inline Grading state_grading(const Grading &d) {
  std::vector<Index> g(2 * d.size());
  for (Index i = 0; i < d.size(); ++i) {
    g[i] = 2 * d(i) - 1;
    g[d.size() + i] = 2 * d(i);
  }
  return Grading(2 * d.levels(), std::move(g));
}

} // namespace pm
