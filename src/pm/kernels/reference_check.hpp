#pragma once
// A kernel against the reference: the outputs of the machine kernels (dense,
// convolution on any number of axes, recurrent) and of the span kernel, in
// float or double, compared with the reference semantics run in long double
// on the same data, output by output, within the forward error bounds derived
// in docs/tolerances.md ("Kernels", "The span kernel"). The laws KERNEL-* of
// spec/kernels.md (property_tests/kernels*.cpp) and `pmach check --kernels`
// (src/pm/validate/kernel_checks.hpp) both decide through these functions.
//
// A comparison says how many outputs it compared, how many of them were
// larger than their bound (informative: a case whose outputs are mostly
// below their tolerance shows nothing and is too weak), the worst ratio of
// error to bound and, on failure, which output exceeded its bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pm/kernels/activation.hpp"
#include "pm/kernels/graph_conv.hpp"
#include "pm/kernels/span_kernel.hpp"
#include "pm/machine.hpp"
#include "pm/numeric/rounding.hpp"

namespace pm::kernels {

using LD = long double;

// Data from a case's seed, the same with every standard library: k/997 for
// k ∈ [−997, 997], scaled; rounded to T once, and the reference reads
// exactly these values.
template <class T> std::vector<T> draw(std::mt19937 &g, Index n, T scale) {
  std::vector<T> v(n);
  for (T &x : v) x = T(int(g() % 1995) - 997) / T(997) * scale;
  return v;
}

struct Comparison {
  Index outputs = 0;     // compared within a bound > 0
  Index informative = 0; // of which larger than their bound
  LD worst = 0;          // the largest |kernel − reference| / bound (0 when every error is 0)
  LD error = 0;          // |kernel − reference| at the worst ratio
  LD bound = 0;          // and its bound
  std::string failure;   // the first output beyond its bound (or otherwise wrong)

  bool failed() const { return !failure.empty(); }
  // Most outputs must be larger than their tolerance for a pass to show something.
  bool too_weak() const { return outputs == 0 || 2 * informative < outputs; }

  template <class T>
  void add(const char *what, const std::vector<T> &kernel, const std::vector<LD> &reference,
           const std::vector<LD> &bounds) {
    for (Index k = 0; k < kernel.size(); ++k) {
      const LD e = std::fabs(LD(kernel[k]) - reference[k]);
      if (!(e <= bounds[k]) && failure.empty()) {
        std::ostringstream os;
        os << what << "[" << k << "] kernel=" << kernel[k] << " reference=" << reference[k]
           << " bound=" << bounds[k];
        failure = os.str();
      }
      const LD ratio = e == 0 ? LD(0) : bounds[k] > 0 ? e / bounds[k] : LD(INFINITY);
      if (ratio > worst || (worst == 0 && bounds[k] > bound)) {
        worst = ratio;
        error = e;
        bound = bounds[k];
      }
      // An output without terms has bound 0 and is compared exactly; it
      // says nothing about the rounding, so it is not counted.
      if (bounds[k] == 0) continue;
      ++outputs;
      if (std::fabs(reference[k]) > bounds[k]) ++informative;
    }
  }
  void fail(std::string why) {
    if (failure.empty()) failure = std::move(why);
  }
};

// Kernel data widened to the reference's long double, optionally |·|.
template <class T> std::vector<LD> widened(const std::vector<T> &v, bool abs = false) {
  std::vector<LD> out(v.begin(), v.end());
  if (abs)
    for (LD &x : out) x = std::fabs(x);
  return out;
}

inline Batch<LD> batch_of(std::vector<LD> v, Index rows, Index cols) {
  Batch<LD> b(rows, cols);
  b.data = std::move(v);
  return b;
}

inline ParametricSpan<LD> magnitude(ParametricSpan<LD> a) {
  for (LD &m : a.span.mu) m = std::fabs(m);
  return a;
}

// u of T plus u of long double: the kernel's and the reference's rounding.
template <class T> LD combined_roundoff() { return LD(unit_roundoff<T>()) + unit_roundoff<LD>(); }

inline const char *type_name(float) { return "float"; }
inline const char *type_name(double) { return "double"; }

inline Sigma<LD> reference_sigma(Activation a) {
  switch (a) {
  case Activation::identity:
    return Sigma<LD>::identity();
  case Activation::tanh:
    return Sigma<LD>::tanh();
  case Activation::sigmoid:
    return Sigma<LD>::sigmoid();
  }
  return Sigma<LD>::identity();
}

// The reference weight gradient Σ_b π_!(s*φ_b · t*g_b) of a batch of column
// major φ and g in the kernel's type, and its mass: the same sum over |μ|,
// |φ| and |g|, which the error bounds scale.
struct GradientReference {
  Function<LD> value, mass;
};
template <class T>
GradientReference batch_gradient(const ParametricSpan<LD> &a, const std::vector<T> &phi_in,
                                 const std::vector<T> &g_in, Index batch) {
  const Batch<LD> phi = batch_of(widened(phi_in), a.source(), batch),
                  g = batch_of(widened(g_in), a.target(), batch),
                  phi_abs = batch_of(widened(phi_in, true), a.source(), batch),
                  g_abs = batch_of(widened(g_in, true), a.target(), batch);
  const ParametricSpan<LD> a_abs = magnitude(a);
  GradientReference r{Function<LD>(a.parameters(), 0), Function<LD>(a.parameters(), 0)};
  for (Index b = 0; b < batch; ++b) {
    r.value = pm::add(r.value, pm::parameter_gradient(a, phi.column(b), g.column(b)));
    r.mass = pm::add(r.mass, pm::parameter_gradient(a_abs, phi_abs.column(b), g_abs.column(b)));
  }
  return r;
}

// ---- Machine kernels ----------------------------------------------------

// A machine kernel in T, as three calls on flat buffers in the reference
// machine's layout (one column per sample).
template <class T> struct MachineKernel {
  using Buffer = std::span<const T>;
  using Out = std::span<T>;
  std::function<void(Buffer w, Buffer y0, Buffer z0, Out y, Out z)> forward;
  std::function<void(Buffer w, Buffer y, Buffer gy, Buffer gz, Out yb, Out zb)> dual;
  std::function<void(Buffer z, Buffer yb, Out dw)> gradient;
};

// A problem: the reference machine in long double, the kernel, σ and data.
template <class T> struct MachineProblem {
  std::string repro;
  GradedSpanMachine<LD> machine;
  Activation sigma;
  Index batch;
  MachineKernel<T> kernel;
  std::vector<T> w, a, b, gy, gz; // weights; y0 (or y), z0 (or z); cotangents

  Index size() const { return machine.size(); }
  const ParametricSpan<LD> &span() const { return machine.span(); }
};

// Data from `seed`; weights scaled like Glorot's 1/√(fan-in) keep tanh and
// sigmoid off saturation, so that the backward outputs are not mostly zero.
template <class T>
MachineProblem<T> machine_problem(std::string repro, GradedSpanMachine<LD> m, Activation sigma,
                                  Index batch, std::uint32_t seed, MachineKernel<T> kernel,
                                  Index fan_in) {
  std::mt19937 g(seed);
  const T scale = T(1) / std::sqrt(T(std::max<Index>(fan_in, 1)));
  const Index states = m.size() * batch;
  std::vector<T> w = draw<T>(g, m.parameters(), scale);
  std::vector<T> a = draw<T>(g, states, T(2)), b = draw<T>(g, states, T(2));
  std::vector<T> gy = draw<T>(g, states, T(1)), gz = draw<T>(g, states, T(1));
  return MachineProblem<T>{std::move(repro),  std::move(m), sigma,        batch,
                           std::move(kernel), std::move(w), std::move(a), std::move(b),
                           std::move(gy),     std::move(gz)};
}

namespace detail {

template <class T> Batch<LD> batch_of(const std::vector<T> &v, Index rows, Index cols) {
  Batch<LD> b(rows, cols);
  for (Index k = 0; k < v.size(); ++k) b.data[k] = LD(v[k]);
  return b;
}

inline Batch<LD> abs(Batch<LD> b) {
  for (LD &x : b.data) x = std::fabs(x);
  return b;
}

template <class T> Function<LD> function_of(const std::vector<T> &v, bool abs = false) {
  Function<LD> f(v.begin(), v.end());
  if (abs)
    for (LD &x : f) x = std::fabs(x);
  return f;
}

// Rounding of the kernel in T plus that of the reference in long double:
// unit roundoff u and the absolute errors of σ and σ' in units of u.
struct Rounding {
  LD u, sigma, derivative;
};

template <class T> Rounding rounding(Activation a) {
  const SigmaError et = sigma_error<T>(a), el = sigma_error<LD>(a);
  // The two error sources add: u_T c_T + u_LD c_LD ≤ (u_T + u_LD) max(c_T, c_LD).
  return {combined_roundoff<T>(), std::max(et.value, el.value),
          std::max(et.derivative, el.derivative)};
}

// Valid edges per target, per source and per parameter: the lengths of the
// sums that produce each output of the forward sweep, the dual sweep and the
// gradient (per sample).
struct Terms {
  std::vector<Index> into, from, per_parameter;
};

inline Terms terms(const GradedSpanMachine<LD> &m) {
  const ParametricSpan<LD> &a = m.span();
  const std::vector<bool> valid = valid_parameters(a, m.grading());
  Terms t{std::vector<Index>(m.size()), std::vector<Index>(m.size()),
          std::vector<Index>(a.parameters())};
  for (Index e = 0; e < a.apex(); ++e)
    if (valid[a.pi(e)]) {
      ++t.into[a.span.t(e)];
      ++t.from[a.span.s(e)];
      ++t.per_parameter[a.pi(e)];
    }
  return t;
}

} // namespace detail

// Forward: (y, z) from (W, y0, z0) against the level solver. Bound:
// e_y = γ_{m+1}(|y0| + L_|W̃| |ẑ|) + L_|W̃| e_z, e_z = u|ẑ| + c_σ u + sup|σ'| e_y,
// m the valid edges into the output, solved level by level (the error
// recursion runs like the machine, so it is the reference solver on |W|).
template <class T> Comparison compare_forward(const MachineProblem<T> &p) {
  using namespace detail;
  const Index n = p.size();
  std::vector<T> y(p.a.size()), z(p.a.size());
  p.kernel.forward(p.w, p.a, p.b, y, z);
  const Batch<LD> y0 = detail::batch_of(p.a, n, p.batch), z0 = detail::batch_of(p.b, n, p.batch);
  const MachineState<LD> ref = pm::forward(p.machine, function_of(p.w), y0, z0);

  const Rounding r = rounding<T>(p.sigma);
  const Function<LD> w_abs = pm::clean(p.span(), p.machine.grading(), function_of(p.w, true));
  const Batch<LD> zk = detail::abs(detail::batch_of(z, n, p.batch));
  const Terms m = terms(p.machine);
  Batch<LD> alpha = pm::act(p.span(), w_abs, zk), beta(n, p.batch);
  for (Index b = 0; b < p.batch; ++b)
    for (Index i = 0; i < n; ++i) {
      alpha(i, b) = pm::gamma(LD(m.into[i] + 1), r.u) * (std::fabs(y0(i, b)) + alpha(i, b));
      beta(i, b) = r.u * zk(i, b) + r.sigma * r.u;
    }
  const GradedSpanMachine<LD> error(p.machine.grading(), p.span(),
                                    Sigma<LD>::array(Batch<LD>(n, 1, bounds(p.sigma).slope)));
  const MachineState<LD> e = pm::forward(error, w_abs, alpha, beta);
  Comparison c;
  c.add("y", y, ref.y.data, e.y.data);
  c.add("z", z, ref.z.data, e.z.data);
  return c;
}

// Dual sweep (gradient = false) or weight gradient at the state (y, z) =
// (a, b) and output cotangents (g_y, g_z), against the reference backward
// pass (neither needs the state to solve the forward equation). Bounds: the
// dual recursion e_z̄ = γ_{m+1}(|g_z| + L_|W̃|ᵀ |ȳ̂|) + L_|W̃|ᵀ e_ȳ,
// e_ȳ = γ_2(|g_y| + |σ̂'||ẑ̄|) + c_σ' u |ẑ̄| + sup|σ'| e_z̄ over the reversed
// grading, m the valid edges out of the index; then, with q the valid edges
// of the parameter, e_∂W = π_!(|z| · (γ_{qB}|ȳ̂| + e_ȳ)); cleaned entries
// exactly 0. The gradient reads the kernel's own ȳ.
template <class T> Comparison compare_backward(const MachineProblem<T> &p, bool gradient) {
  using namespace detail;
  const Index n = p.size();
  std::vector<T> ybar(p.a.size()), zbar(p.a.size()), dw(p.w.size());
  p.kernel.dual(p.w, p.a, p.gy, p.gz, ybar, zbar);
  if (gradient) p.kernel.gradient(p.b, ybar, dw);

  const MachineState<LD> state{detail::batch_of(p.a, n, p.batch),
                               detail::batch_of(p.b, n, p.batch)};
  const Batch<LD> gyl = detail::batch_of(p.gy, n, p.batch),
                  gzl = detail::batch_of(p.gz, n, p.batch);
  const Gradients<LD> ref = pm::backward(p.machine, function_of(p.w), state, gyl, gzl);

  const Rounding r = rounding<T>(p.sigma);
  const Function<LD> w_abs = pm::clean(p.span(), p.machine.grading(), function_of(p.w, true));
  const Terms m = terms(p.machine);
  const Batch<LD> ybk = detail::abs(detail::batch_of(ybar, n, p.batch)),
                  zbk = detail::abs(detail::batch_of(zbar, n, p.batch));
  Batch<LD> alpha = pm::act(transpose(p.span()), w_abs, ybk), beta(n, p.batch);
  for (Index b = 0; b < p.batch; ++b)
    for (Index i = 0; i < n; ++i) {
      alpha(i, b) = pm::gamma(LD(m.from[i] + 1), r.u) * (std::fabs(gzl(i, b)) + alpha(i, b));
      const LD d =
          std::fabs(p.machine.sigma().derivative(state.y(i, b), i, b)) + r.derivative * r.u;
      beta(i, b) = pm::gamma(LD(2), r.u) * (std::fabs(gyl(i, b)) + d * zbk(i, b)) +
                   r.derivative * r.u * zbk(i, b);
    }
  const GradedSpanMachine<LD> error(p.machine.grading().reversed(), transpose(p.span()),
                                    Sigma<LD>::array(Batch<LD>(n, 1, bounds(p.sigma).slope)));
  const MachineState<LD> e = pm::forward(error, w_abs, alpha, beta); // (e_z̄, e_ȳ)

  Comparison c;
  if (!gradient) {
    c.add("ybar", ybar, ref.y0.data, e.z.data);
    c.add("zbar", zbar, ref.z0.data, e.y.data);
    return c;
  }
  // ∂W: each entry sums q·B products z ȳ̂, and ȳ̂ carries e_ȳ. The rounding
  // term is bounded with the largest q, which keeps it one pushforward.
  const Index q = std::accumulate(m.per_parameter.begin(), m.per_parameter.end(), Index(0),
                                  [](Index x, Index y) { return std::max(x, y); });
  const Batch<LD> zl = detail::abs(state.z);
  Function<LD> bound(p.w.size(), LD(0));
  for (Index b = 0; b < p.batch; ++b) {
    Function<LD> t(n);
    for (Index i = 0; i < n; ++i) t[i] = pm::gamma(LD(q * p.batch), r.u) * ybk(i, b) + e.z(i, b);
    bound = pm::add(bound, pm::parameter_gradient(p.span(), zl.column(b), t));
  }
  const std::vector<bool> valid = valid_parameters(p.span(), p.machine.grading());
  std::vector<T> dv;
  std::vector<LD> rv, bv;
  for (Index k = 0; k < dw.size(); ++k) {
    if (!valid[k]) {
      if (dw[k] != T(0)) c.fail("dW[" + std::to_string(k) + "] is not cleaned");
      continue;
    }
    dv.push_back(dw[k]);
    rv.push_back(ref.w[k]);
    bv.push_back(bound[k]);
  }
  c.add("dW", dv, rv, bv);
  return c;
}

// ---- The span kernel ------------------------------------------------------

// A layer problem: the span in long double, the kernel's plan (built from
// the span in T), and data w, φ (on the source) and g (on the target).
template <class T, class Plan> struct LayerProblem {
  std::string repro;
  ParametricSpan<LD> reference;
  Plan plan;
  Index batch;
  std::vector<T> w, phi, g;
};
template <class T> using SpanProblem = LayerProblem<T, SpanPlan<T>>;

template <class T> ParametricSpan<LD> in_long_double(const ParametricSpan<T> &a) {
  return ParametricSpan<LD>{
      Span<LD>{a.span.s, a.span.t, Measure<LD>(a.span.mu.begin(), a.span.mu.end())}, a.pi};
}

// Data from `seed` for the layer of a, run by `plan`.
template <class T, class Plan>
LayerProblem<T, Plan> layer_problem(std::string repro, const ParametricSpan<T> &a, Plan plan,
                                    Index batch, std::uint32_t seed) {
  std::mt19937 g(seed ^ 0x9e3779b9u);
  std::vector<T> w = draw<T>(g, a.parameters(), T(1));
  std::vector<T> phi = draw<T>(g, a.source() * batch, T(2)),
                 gv = draw<T>(g, a.target() * batch, T(1));
  return {std::move(repro), in_long_double(a), std::move(plan), batch,
          std::move(w),     std::move(phi),    std::move(gv)};
}

template <class T>
SpanProblem<T> span_problem(std::string repro, const ParametricSpan<T> &a, Index batch,
                            std::uint32_t seed) {
  return layer_problem(std::move(repro), a, span_plan(a), batch, seed);
}

// The reference layer (or its transpose) a on a batch of the kernel's input,
// and its mass: the same on |μ|, |w| and |input|, which the bounds scale.
struct LayerReference {
  Batch<LD> value, mass;
};
template <class T, class Plan>
LayerReference layer_reference(const LayerProblem<T, Plan> &p, const ParametricSpan<LD> &a,
                               const std::vector<T> &in) {
  return {
      pm::act(a, widened(p.w), batch_of(widened(in), a.source(), p.batch)),
      pm::act(magnitude(a), widened(p.w, true), batch_of(widened(in, true), a.source(), p.batch))};
}

// Forward (L_w φ) or transpose (L_wᵀ g): every output sums the m terms
// μ w φ of its row, each rounded twice, so |error| ≤ γ_{m+1} Σ|μ w φ|.
template <class T> Comparison compare_span_layer(const SpanProblem<T> &p, bool transposed) {
  const ParametricSpan<LD> a = transposed ? transpose(p.reference) : p.reference;
  const std::vector<T> &in = transposed ? p.g : p.phi;
  std::vector<T> out(a.target() * p.batch);
  if (transposed)
    span_transpose<T>(p.plan, p.w, in, p.batch, out);
  else
    span_forward<T>(p.plan, p.w, in, p.batch, out);

  const auto [ref, mass] = layer_reference(p, a, in);
  const Measure<LD> m = pushforward(a.span.t, Measure<LD>(a.apex(), LD(1)));
  std::vector<LD> bound(out.size());
  for (Index b = 0; b < p.batch; ++b)
    for (Index y = 0; y < a.target(); ++y)
      bound[b * a.target() + y] = pm::gamma(m[y] + 1, combined_roundoff<T>()) * mass(y, b);
  Comparison c;
  c.add(transposed ? "transpose" : "forward", out, ref.data, bound);
  return c;
}

// Gradient: parameter p sums q_p B terms μ φ g (q_p edges of p), so
// |error| ≤ γ_{q_p B + 1} Σ_b π_!^{|μ|}(|s*φ_b| |t*g_b|).
template <class T> Comparison compare_span_gradient(const SpanProblem<T> &p) {
  const ParametricSpan<LD> &a = p.reference;
  std::vector<T> out(a.parameters());
  span_parameter_gradient<T>(p.plan, p.phi, p.g, p.batch, out);

  const auto [ref, mass] = batch_gradient(a, p.phi, p.g, p.batch);
  const Measure<LD> q = pushforward(a.pi, Measure<LD>(a.apex(), LD(1)));
  std::vector<LD> bound(out.size());
  for (Index k = 0; k < out.size(); ++k)
    bound[k] = pm::gamma(q[k] * p.batch + 1, combined_roundoff<T>()) * mass[k];
  Comparison c;
  c.add("gradient", out, ref, bound);
  return c;
}

// ---- The graph kernel -----------------------------------------------------

// A problem: the graph span (graph_conv<T>, whose μ is the kernel's
// coefficient c(u, v) in T) in long double, the kernel's plan and the graph.
template <class T> struct GraphProblem : LayerProblem<T, GraphPlan<T>> { GraphConvSpec spec; };

template <class T>
GraphProblem<T> graph_problem(std::string repro, const GraphConvSpec &spec, Index batch,
                              std::uint32_t seed) {
  return {{layer_problem(std::move(repro), graph_conv<T>(spec), graph_plan<T>(spec), batch, seed)},
          spec};
}

// Degrees of the graph with its self loops: into (forward) or out of
// (transpose) every node.
inline std::vector<Index> degrees(const GraphConvSpec &s, bool into) {
  std::vector<Index> deg(s.nodes, 0);
  for (const auto &[u, v] : s.all_edges()) ++deg[into ? v : u];
  return deg;
}

// Forward: output (v, c_out) sums deg(v) · C_in terms c W φ; each passes
// through at most deg(v) roundings in the aggregation (c φ, then the sum
// over the edges) and C_in + 1 in the product (W H, then the sum over the
// channels), so |error| ≤ γ_{deg(v) + C_in + 1} Σ|c W φ|. The transpose is
// the same with C_out and the degree out of u.
template <class T> Comparison compare_graph_layer(const GraphProblem<T> &p, bool transposed) {
  const ParametricSpan<LD> a = transposed ? transpose(p.reference) : p.reference;
  const std::vector<T> &in = transposed ? p.g : p.phi;
  std::vector<T> out(a.target() * p.batch);
  if (transposed)
    graph_transpose<T>(p.plan, p.w, in, p.batch, out);
  else
    graph_forward<T>(p.plan, p.w, in, p.batch, out);
  const auto [ref, mass] = layer_reference(p, a, in);
  const std::vector<Index> deg = degrees(p.spec, !transposed);
  const Index channels = transposed ? p.spec.out_channels : p.spec.in_channels;
  const Index per_node = transposed ? p.spec.in_channels : p.spec.out_channels;
  std::vector<LD> bound(out.size());
  for (Index b = 0; b < p.batch; ++b)
    for (Index y = 0; y < a.target(); ++y)
      bound[b * a.target() + y] =
          pm::gamma(LD(deg[y / per_node] + channels + 1), combined_roundoff<T>()) * mass(y, b);
  Comparison c;
  c.add(transposed ? "transpose" : "forward", out, ref.data, bound);
  return c;
}

// Gradient: W(c_in, c_out) sums every (edge into v, sample) term c φ g; each
// passes through at most deg(v) roundings in H and 1 + nodes · batch in the
// product, so |error| ≤ γ_{max deg + nodes · batch + 1} Σ|c φ g|.
template <class T> Comparison compare_graph_gradient(const GraphProblem<T> &p) {
  const ParametricSpan<LD> &a = p.reference;
  std::vector<T> out(a.parameters());
  graph_weight_gradient<T>(p.plan, p.phi, p.g, p.batch, out);
  const auto [ref, mass] = batch_gradient(a, p.phi, p.g, p.batch);
  Index max_deg = 0;
  for (Index d : degrees(p.spec, true)) max_deg = std::max(max_deg, d);
  std::vector<LD> bound(out.size());
  for (Index k = 0; k < out.size(); ++k)
    bound[k] =
        pm::gamma(LD(max_deg + p.spec.nodes * p.batch + 1), combined_roundoff<T>()) * mass[k];
  Comparison c;
  c.add("gradient", out, ref, bound);
  return c;
}

} // namespace pm::kernels
