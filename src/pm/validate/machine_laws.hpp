#pragma once
// The laws of a graded span machine (spec/machines.md), run by the validator
// on random parameters and inputs:
//  - MACH-CAUSALITY: the forward pass is causal for the grading, as the
//    resolvent of a machine of finite depth must be: for every level k,
//    inputs that agree on the grades ≤ k give states that agree there (for a
//    recurrent machine, whose grading orders time blocks first, this is
//    causality in time);
//  - MACH-EQUATION: the level solver's state solves y = y₀ + L_w̃ z,
//    z = z₀ + σ(y);
//  - MACH-BACKWARD: the backward pass is the adjoint of the tangent
//    machine (σ replaced by the array σ'(y)):
//    ⟨g_y, ẏ⟩ + ⟨g_z, ż⟩ = ⟨ȳ, ẏ₀⟩ + ⟨z̄, ż₀⟩;
//  - MACH-PARAM-GRADIENT: ⟨∂ℓ/∂w, ẇ⟩ is the derivative of ℓ along ẇ, i.e. the
//    same pairing for the tangent machine driven by ẏ₀ = L_clean(ẇ) z (so the
//    gradient must be zero on the parameters that cleaning removes).
// Over floating scalars each side is also computed with |μ|, |w|, |σ'| and
// absolute inputs; n = D (m + 3) + 2|I| + 4, m the largest fan-in
// (docs/tolerances.md).
//
// The forward and backward passes under test are parameters, so that a fast
// kernel (or a deliberately wrong one) is checked against the structure
// (grading, span, σ) of the reference machine.
#include "pm/machine.hpp"
#include "pm/validate/cases.hpp"

namespace pm {
namespace validation {

template <class S> Batch<S> column(const Function<S> &v) {
  return Batch<S>::from_columns(v.size(), {v});
}

// The tangent machine at pre-activations y: σ replaced by the array σ'(y),
// or by |σ'(y)| with |μ| for the magnitude run.
template <class S>
GradedSpanMachine<S> tangent_machine(const GradedSpanMachine<S> &m, const Function<S> &y,
                                     bool absolute) {
  Batch<S> slopes(m.size(), 1);
  for (Index i = 0; i < m.size(); ++i) {
    slopes(i, 0) = m.sigma().derivative(y[i], i, 0);
    if (absolute) slopes(i, 0) = magnitude(slopes(i, 0));
  }
  ParametricSpan<S> span = m.span();
  if (absolute) span.span.mu = magnitude(span.span.mu);
  return GradedSpanMachine<S>(m.grading(), std::move(span), Sigma<S>::array(std::move(slopes)));
}

template <class S> S pairing(const Batch<S> &a, const Function<S> &b) {
  return dot(a.column(0), b);
}

// A machine's size, for a row that ran fewer cases than asked (scaled_note).
inline std::string machine_size_text(Index points, Index parameters) {
  return "the machine's size (" + std::to_string(points) + " points, " +
         std::to_string(parameters) + " parameters)";
}

} // namespace validation

// fwd(w, y0, z0) -> MachineState<S>; bwd(w, state, g_y, g_z) -> Gradients<S>,
// or nullptr for an implementation without a backward pass (its two laws are
// then not applicable).
template <class S, class Forward, class Backward>
Report validate_machine(const GradedSpanMachine<S> &m, Forward &&fwd, Backward &&bwd,
                        const std::string &subject, const ValidateOptions &opt = {}) {
  using namespace validation;
  using F = Function<S>;
  Report rep;
  const Index n = m.size(), p = m.parameters();
  // A term's chain of roundings: at each of the D levels one sum of at most
  // m terms (m the largest number of edges into one index, in either
  // direction) and three products; then a pairing over y and one over z.
  const std::size_t fan_in = std::max(max_fibre(m.span().span.t), max_fibre(m.span().span.s));
  const std::size_t rounds = m.levels() * (fan_in + 3) + 2 * n + 4;
  const int range = code_range<S>();
  const ParametricSpan<S> abs_span{
      Span<S>{m.span().span.s, m.span().span.t, magnitude(m.span().span.mu)}, m.span().pi};
  // A case of `passes` forward or backward passes (the implementation's and
  // the reference tangent machine's), each with w, y0 and z0 in and y and z
  // out, against opt.value_budget.
  auto cost = [&](std::size_t passes) {
    return CaseCost{passes, p + 4 * n, machine_size_text(n, p)};
  };
  // Over floating scalars MACH-BACKWARD and MACH-PARAM-GRADIENT make their
  // three passes again on absolute values.
  const std::size_t adjoint_passes = is_exact<S> ? 3 : 6;

  // MACH-CAUSALITY: the forward pass at every level k, against inputs
  // redrawn on the grades above k.
  add_row(rep, opt, "MACH-CAUSALITY", subject, [&] {
    return run_law("MACH-CAUSALITY", subject,
                   {{"w", p, On::parameters},
                    {"y0", n, On::source},
                    {"z0", n, On::source},
                    {"y0'", n, On::source},
                    {"z0'", n, On::source}},
                   range, true, opt, cost(m.levels() + 1), [&](const Codes &c) {
                     const auto v = values<S>(c);
                     Comparison cmp;
                     cmp.vacuous = false;
                     const MachineState<S> x = fwd(v[0], column(v[1]), column(v[2]));
                     for (Index k = 1; k <= m.levels() && cmp.ok; ++k) {
                       F y0 = v[3], z0 = v[4];
                       for (Index i = 0; i < n; ++i)
                         if (m.grading()(i) <= k) y0[i] = v[1][i], z0[i] = v[2][i];
                       const MachineState<S> x2 = fwd(v[0], column(y0), column(z0));
                       for (Index i = 0; i < n && cmp.ok; ++i)
                         if (m.grading()(i) <= k &&
                             (!(x.y(i, 0) == x2.y(i, 0)) || !(x.z(i, 0) == x2.z(i, 0)))) {
                           cmp.ok = false;
                           cmp.where = "index " + std::to_string(i) + " of grade " +
                                       std::to_string(m.grading()(i)) +
                                       " changes with the inputs of grades above " +
                                       std::to_string(k) + " (inputs y0', z0' there)";
                         }
                     }
                     return cmp;
                   });
  });

  // MACH-EQUATION.
  add_row(rep, opt, "MACH-EQUATION", subject, [&] {
    return run_law("MACH-EQUATION", subject,
                   {{"w", p, On::parameters}, {"y0", n, On::source}, {"z0", n, On::source}}, range,
                   is_exact<S>, opt, cost(1), [&](const Codes &c) {
                     const auto v = values<S>(c);
                     const F wc = clean(m.span(), m.grading(), v[0]);
                     const MachineState<S> x = fwd(v[0], column(v[1]), column(v[2]));
                     const F y = x.y.column(0), z = x.z.column(0);
                     F sy(n), msy(n);
                     for (Index i = 0; i < n; ++i) {
                       sy[i] = m.sigma().value(y[i], i, 0);
                       msy[i] = magnitude(sy[i]);
                     }
                     const F lhs = concat(y, z),
                             rhs = concat(add(v[1], act(m.span(), wc, z)), add(v[2], sy));
                     if constexpr (is_exact<S>)
                       return compare<S>(lhs, rhs, {}, {}, rounds);
                     else {
                       const F mag =
                           concat(add(magnitude(v[1]), act(abs_span, magnitude(wc), magnitude(z))),
                                  add(magnitude(v[2]), msy));
                       return compare<S>(lhs, rhs, mag, mag, rounds);
                     }
                   });
  });

  if constexpr (std::is_null_pointer_v<std::decay_t<Backward>>) {
    for (const char *law : {"MACH-BACKWARD", "MACH-PARAM-GRADIENT"})
      add_row(rep, opt, law, subject, [&]() -> LawResult {
        return {law, subject,  Status::not_applicable,
                0,   true,     0,
                0,   opt.seed, "the implementation has no backward pass"};
      });
    return rep;
  } else {
    // The pairing of the tangent machine, forward (lhs) and through backward (rhs).
    auto adjoint_sides = [&](const F &w, const F &y0, const F &z0, const F &dy0, const F &dz0,
                             const F &gy, const F &gz, bool absolute) {
      const MachineState<S> x = fwd(w, column(y0), column(z0));
      const GradedSpanMachine<S> t = tangent_machine(m, x.y.column(0), absolute);
      const F wt = absolute ? magnitude(w) : w;
      const MachineState<S> d = forward(t, wt, column(dy0), column(dz0));
      // Magnitudes: the reference backward pass of the absolute tangent machine.
      const Gradients<S> g =
          absolute ? backward(t, wt, x, column(gy), column(gz)) : bwd(w, x, column(gy), column(gz));
      return std::pair{F{pairing(d.y, gy) + pairing(d.z, gz)},
                       F{pairing(g.y0, dy0) + pairing(g.z0, dz0)}};
    };
    add_row(rep, opt, "MACH-BACKWARD", subject, [&] {
      return run_law("MACH-BACKWARD", subject,
                     {{"w", p, On::parameters},
                      {"y0", n, On::source},
                      {"z0", n, On::source},
                      {"ẏ0", n, On::source},
                      {"ż0", n, On::source},
                      {"g_y", n, On::source},
                      {"g_z", n, On::source}},
                     range, is_exact<S>, opt, cost(adjoint_passes), [&](const Codes &c) {
                       const auto v = values<S>(c);
                       const auto [lhs, rhs] =
                           adjoint_sides(v[0], v[1], v[2], v[3], v[4], v[5], v[6], false);
                       if constexpr (is_exact<S>)
                         return compare<S>(lhs, rhs, {}, {}, rounds);
                       else {
                         const auto [ml, mr] =
                             adjoint_sides(v[0], v[1], v[2], magnitude(v[3]), magnitude(v[4]),
                                           magnitude(v[5]), magnitude(v[6]), true);
                         return compare<S>(lhs, rhs, ml, mr, rounds);
                       }
                     });
    });

    // MACH-PARAM-GRADIENT: the tangent along ẇ is driven by ẏ₀ = L_clean(ẇ) z.
    auto gradient_sides = [&](const F &w, const F &dw, const F &y0, const F &z0, const F &gy,
                              const F &gz, bool absolute) {
      const MachineState<S> x = fwd(w, column(y0), column(z0));
      const GradedSpanMachine<S> t = tangent_machine(m, x.y.column(0), absolute);
      const F wt = absolute ? magnitude(w) : w;
      const F dwc = clean(m.span(), m.grading(), dw);
      const F z = absolute ? magnitude(x.z.column(0)) : x.z.column(0);
      const F drive = act(t.span(), dwc, z);
      const MachineState<S> d = forward(t, wt, column(drive), column(F(n, S(0))));
      // Magnitudes: the backward pass of the absolute tangent machine at |z|.
      const Gradients<S> g =
          absolute ? backward(t, wt, MachineState<S>{x.y, column(z)}, column(gy), column(gz))
                   : bwd(w, x, column(gy), column(gz));
      // Paired with ẇ itself, not clean(ẇ): the gradient must vanish on the
      // invalid parameters, which the machine ignores.
      return std::pair{F{pairing(d.y, gy) + pairing(d.z, gz)}, F{dot(g.w, dw)}};
    };
    add_row(rep, opt, "MACH-PARAM-GRADIENT", subject, [&]() -> LawResult {
      if (p == 0)
        return {"MACH-PARAM-GRADIENT",
                subject,
                Status::not_applicable,
                0,
                true,
                0,
                0,
                opt.seed,
                "the machine has no parameters"};
      return run_law("MACH-PARAM-GRADIENT", subject,
                     {{"w", p, On::parameters},
                      {"ẇ", p, On::parameters},
                      {"y0", n, On::source},
                      {"z0", n, On::source},
                      {"g_y", n, On::source},
                      {"g_z", n, On::source}},
                     range, is_exact<S>, opt, cost(adjoint_passes), [&](const Codes &c) {
                       const auto v = values<S>(c);
                       const auto [lhs, rhs] =
                           gradient_sides(v[0], v[1], v[2], v[3], v[4], v[5], false);
                       if constexpr (is_exact<S>)
                         return compare<S>(lhs, rhs, {}, {}, rounds);
                       else {
                         const auto [ml, mr] =
                             gradient_sides(v[0], magnitude(v[1]), v[2], v[3], magnitude(v[4]),
                                            magnitude(v[5]), true);
                         return compare<S>(lhs, rhs, ml, mr, rounds);
                       }
                     });
    });
    return rep;
  }
}

// The reference machine: the level solver and its dual.
template <class S>
Report validate(const GradedSpanMachine<S> &m, const std::string &subject = "machine",
                const ValidateOptions &opt = {}) {
  return validate_machine(
      m,
      [&](const Function<S> &w, const Batch<S> &y0, const Batch<S> &z0) {
        return forward(m, w, y0, z0);
      },
      [&](const Function<S> &w, const MachineState<S> &x, const Batch<S> &gy, const Batch<S> &gz) {
        return backward(m, w, x, gy, gz);
      },
      subject, opt);
}

} // namespace pm
