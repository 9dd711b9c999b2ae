#pragma once
// The one dispatch point from the structured description of a seed machine
// (src/pm/layers/seed_machines.hpp) to a kernel: DenseMachine, the ConvMachine
// on any number of spatial axes and RecurMachine with σ ∈ {identity, tanh, sigmoid} run the
// fast kernels; every other machine runs the generic graded span solver of
// src/pm/machine/ (an edge list in a fixed order, so deterministic too).
// The layer of a parametric span runs the CSR span kernel in float and
// double and the reference pm::act for exact scalars.
#include <optional>

#include "pm/kernels/dense_machine.hpp"
#include "pm/kernels/sequence_machine.hpp"
#include "pm/kernels/span_kernel.hpp"
#include "pm/kernels/weight_gradient.hpp"
#include "pm/layers/seed_machine.hpp"

namespace pm::kernels {

enum class Path { dense, sequence, generic };

template <class T> std::optional<Activation> activation_of(const Sigma<T> &s) {
  switch (s.kind()) {
  case Sigma<T>::Kind::identity:
    return Activation::identity;
  case Sigma<T>::Kind::tanh:
    return Activation::tanh;
  case Sigma<T>::Kind::sigmoid:
    return Activation::sigmoid;
  default:
    return std::nullopt;
  }
}

// Exact scalars (e.g. pm::Rational) always take the generic path.
template <class T> Path path(const SeedMachine<T> &m) {
  if (!std::is_floating_point_v<T> || !activation_of(m.machine().sigma())) return Path::generic;
  const SeedDescription &d = m.description();
  if (d.kind == "DenseMachine") return Path::dense;
  if (d.kind == "ConvMachine" || d.kind == "RecurMachine") return Path::sequence;
  return Path::generic;
}

namespace detail {
template <class T> SequencePlan sequence_plan(const SeedDescription &d, Index batch) {
  if (d.kind == "ConvMachine") return plan(ConvGridShape{d.dims, d.positions, batch, d.pad});
  return plan(RecurMachineShape{d.dims, d.positions[0], batch, d.pad[0], d.timeblock});
}
} // namespace detail

// Solves y = y₀ + L_W̃ z, z = z₀ + σ(y), like SeedMachine::forward. With
// `slope`, a machine whose kernel keeps_slope() (DenseMachineShape, or the
// sequence plan) also keeps σ'(y) there for backward, which then evaluates
// no σ (the same bits: dense_forward and sequence_forward with a slope);
// otherwise *slope is left empty.
template <class T>
MachineState<T> forward(const SeedMachine<T> &m, const Function<T> &w, const Batch<T> &y0,
                        const Batch<T> &z0, std::vector<T> *slope = nullptr) {
  const Path p = path(m);
  if constexpr (std::is_floating_point_v<T>) {
    if (p != Path::generic) {
      const Batch<T> a = m.expand_channels(y0, "y0"), b = m.expand_channels(z0, "z0");
      require(a.cols == b.cols, "forward: z0 has ", b.cols, " columns, expected ", a.cols);
      MachineState<T> x{Batch<T>(a.rows, a.cols), Batch<T>(a.rows, a.cols)};
      const Activation sigma = *activation_of(m.machine().sigma());
      if (slope) slope->clear();
      if (p == Path::dense) {
        const DenseMachineShape dense{m.dims(), a.cols};
        if (slope && dense.keeps_slope()) {
          slope->resize(a.data.size());
          dense_forward<T>(dense, sigma, w, a.data, b.data, x.y.data, x.z.data, *slope);
        } else
          dense_forward<T>(dense, sigma, w, a.data, b.data, x.y.data, x.z.data);
      } else {
        const SequencePlan s = detail::sequence_plan<T>(m.description(), a.cols);
        if (slope && keeps_slope(s)) {
          slope->resize(a.data.size());
          sequence_forward<T>(s, sigma, w, a.data, b.data, x.y.data, x.z.data, *slope);
        } else
          sequence_forward<T>(s, sigma, w, a.data, b.data, x.y.data, x.z.data);
      }
      return x;
    }
  }
  return m.forward(w, y0, z0);
}

// Cotangents of y₀, z₀ and W, like SeedMachine::backward; `slope` is what
// forward kept for this state, if it kept one.
template <class T>
Gradients<T> backward(const SeedMachine<T> &m, const Function<T> &w, const MachineState<T> &x,
                      const Batch<T> &gy, const Batch<T> &gz,
                      const std::vector<T> *slope = nullptr) {
  const Path p = path(m);
  if constexpr (std::is_floating_point_v<T>) {
    if (p != Path::generic) {
      const Index rows = x.y.rows, cols = x.y.cols;
      Gradients<T> g{Batch<T>(rows, cols), Batch<T>(rows, cols), Function<T>(w.size()), Batch<T>()};
      const Activation sigma = *activation_of(m.machine().sigma());
      if (p == Path::dense) {
        const DenseMachineShape s{m.dims(), cols};
        if (slope && !slope->empty())
          dense_dual<T>(s, w, *slope, gy.data, gz.data, g.y0.data, g.z0.data);
        else
          dense_dual<T>(s, sigma, w, x.y.data, gy.data, gz.data, g.y0.data, g.z0.data);
        dense_weight_gradient<T>(s, x.z.data, g.y0.data, g.w);
      } else {
        const SequencePlan s = detail::sequence_plan<T>(m.description(), cols);
        if (slope && !slope->empty())
          sequence_dual<T>(s, w, *slope, gy.data, gz.data, g.y0.data, g.z0.data);
        else
          sequence_dual<T>(s, sigma, w, x.y.data, gy.data, gz.data, g.y0.data, g.z0.data);
        sequence_weight_gradient<T>(s, x.z.data, g.y0.data, g.w);
      }
      return g;
    }
  }
  return m.backward(w, x, gy, gz);
}

// L_w φ column by column, like pm::act.
template <class T>
Batch<T> act(const ParametricSpan<T> &a, const Function<T> &w, const Batch<T> &phi) {
  if constexpr (std::is_floating_point_v<T>) {
    require(phi.rows == a.source(), "act: batch has ", phi.rows,
            " rows, expected the span source size ", a.source());
    Batch<T> out(a.target(), phi.cols);
    span_forward<T>(span_plan(a), w, phi.data, phi.cols, out.data);
    return out;
  } else {
    return pm::act(a, w, phi);
  }
}

// L_wᵀ g column by column, like pm::act of the transposed span.
template <class T>
Batch<T> act_transpose(const ParametricSpan<T> &a, const Function<T> &w, const Batch<T> &g) {
  if constexpr (std::is_floating_point_v<T>) {
    require(g.rows == a.target(), "act_transpose: batch has ", g.rows,
            " rows, expected the span target size ", a.target());
    Batch<T> out(a.source(), g.cols);
    span_transpose<T>(span_plan(a), w, g.data, g.cols, out.data);
    return out;
  } else {
    return pm::act(transpose(a), w, g);
  }
}

// Σ_b ∇_w ⟨g_b, L_w φ_b⟩, like pm::parameter_gradient of two batches.
template <class T>
Function<T> parameter_gradient(const ParametricSpan<T> &a, const Batch<T> &phi, const Batch<T> &g) {
  if constexpr (std::is_floating_point_v<T>) {
    require(phi.cols == g.cols, "parameter_gradient: ", phi.cols, " and ", g.cols,
            " columns, expected equal");
    Function<T> out(a.parameters());
    span_parameter_gradient<T>(span_plan(a), phi.data, g.data, phi.cols, out);
    return out;
  } else {
    return pm::parameter_gradient(a, phi, g);
  }
}

} // namespace pm::kernels
