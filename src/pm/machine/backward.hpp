#pragma once
// The backward pass as a dual machine. Linearising y = y₀ + L_w̃ z,
// z = z₀ + σ(y) at a solution and taking adjoints gives, for the cotangents
// (ȳ, z̄) = (∂ℓ/∂y₀, ∂ℓ/∂z₀) of a loss ℓ with gradients (g_y, g_z) at (y, z):
//   z̄ = g_z + L_w̃ᵀ ȳ,   ȳ = g_y + σ'(y) ⊙ z̄.
// This is again a graded span machine: the transposed span, over the reversed
// grading (edges that raised the grade now raise the reversed one), with the
// array σ'(y), inputs (g_z, g_y) and state (z̄, ȳ). The same level solver runs
// it, over the levels in reverse order, at the cost of the forward pass. The
// parameter gradient is then ∂ℓ/∂w = clean(Σ_b π_!^μ(s*z · t*ȳ)), and for an
// array σ with slopes s, ∂ℓ/∂s = y ⊙ z̄.
#include "pm/machine/solver.hpp"

namespace pm {

template <class S> struct Gradients {
  Batch<S> y0;    // ȳ = ∂ℓ/∂y₀
  Batch<S> z0;    // z̄ = ∂ℓ/∂z₀
  Function<S> w;  // ∂ℓ/∂w, cleaned
  Batch<S> sigma; // ∂ℓ/∂s for an array σ (shape of the slopes); empty otherwise
};

// The dual machine at pre-activations y.
template <class S> GradedSpanMachine<S> dual(const GradedSpanMachine<S> &m, const Batch<S> &y) {
  require_batch(m, y, y.cols, "dual: y");
  m.sigma().require_shape(m.size(), y.cols, "dual");
  Batch<S> slopes(m.size(), y.cols);
  for (Index b = 0; b < y.cols; ++b)
    for (Index i = 0; i < m.size(); ++i) slopes(i, b) = m.sigma().derivative(y(i, b), i, b);
  return GradedSpanMachine<S>(m.grading().reversed(), transpose(m.span()),
                              Sigma<S>::array(std::move(slopes)));
}

template <class S>
Gradients<S> backward(const GradedSpanMachine<S> &m, const Function<S> &w, const MachineState<S> &x,
                      const Batch<S> &gy, const Batch<S> &gz) {
  require_batch(m, x.y, x.y.cols, "backward: state y");
  require_batch(m, x.z, x.y.cols, "backward: state z");
  require_batch(m, gy, x.y.cols, "backward: gradient g_y");
  require_batch(m, gz, x.y.cols, "backward: gradient g_z");
  const MachineState<S> u = forward(dual(m, x.y), w, gz, gy);
  Gradients<S> g{u.z, u.y, Function<S>(m.parameters(), S(0)), Batch<S>()};
  for (Index b = 0; b < x.y.cols; ++b)
    g.w = add(g.w, parameter_gradient(m.span(), x.z.column(b), g.y0.column(b)));
  g.w = clean(m.span(), m.grading(), g.w);
  if (m.sigma().kind() == Sigma<S>::Kind::array) {
    const Batch<S> &s = m.sigma().slopes();
    g.sigma = Batch<S>(s.rows, s.cols);
    for (Index b = 0; b < x.y.cols; ++b)
      for (Index i = 0; i < m.size(); ++i)
        g.sigma(i, s.cols == 1 ? 0 : b) += x.y(i, b) * g.z0(i, b);
  }
  return g;
}

} // namespace pm
