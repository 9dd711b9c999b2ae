// Differential law of the span kernel (src/pm/kernels/span_kernel.hpp): for
// random parametric spans (empty apex, empty fibres, repeated edges) and
// graph spans (sum, mean and symmetric normalisation, self loops or not), the
// layer L_w φ, its transpose and the parameter gradient summed over the batch,
// in float and double, agree with pm::act, pm::transpose and
// pm::parameter_gradient run in long double on the same span, within the
// forward error bound γ_{n+1} Σ|terms| of docs/tolerances.md ("The span
// kernel"). Each case is drawn from a one-line description that a failure
// prints; a case whose outputs are mostly below their tolerance is discarded
// as too weak.
#include "pm/kernels/span_kernel.hpp"

#include <cstdint>
#include <random>
#include <sstream>

#include "pm/category/batch.hpp"
#include "pm/layers/graph_conv.hpp"
#include "support/compare.hpp"
#include "support/graph_case.hpp"
#include "support/kernel_check.hpp"
#include "support/law.hpp"

using namespace pm;
using LD = long double;
using pm_test::absolute;
using pm_test::batch_gradient;
using pm_test::batch_of;
using pm_test::combined_roundoff;
using pm_test::GraphCase;
using pm_test::widened;

namespace {

// A random parametric span: the legs and μ drawn from `seed`; an edge is a
// copy of an earlier one a quarter of the time (repeated edges). A leg into
// an empty set forces the apex to be empty.
struct SpanCase {
  Index source = 1, target = 1, parameters = 1, apex = 0, batch = 1;
  std::uint32_t seed = 0;
};

template <class T> ParametricSpan<T> random_span(const SpanCase &c) {
  std::mt19937 g(c.seed);
  const Index apex = c.source && c.target && c.parameters ? c.apex : 0;
  ParametricSpan<T> a;
  a.span.s.codomain = c.source;
  a.span.t.codomain = c.target;
  a.pi.codomain = c.parameters;
  a.span.mu = pm_test::draw<T>(g, apex, T(1));
  for (Index e = 0; e < apex; ++e) {
    if (e > 0 && g() % 4 == 0) {
      const Index f = g() % e;
      a.span.s.images.push_back(a.span.s(f));
      a.span.t.images.push_back(a.span.t(f));
      a.pi.images.push_back(a.pi(f));
      a.span.mu[e] = a.span.mu[f];
      continue;
    }
    a.span.s.images.push_back(g() % c.source);
    a.span.t.images.push_back(g() % c.target);
    a.pi.images.push_back(g() % c.parameters);
  }
  return a;
}

template <class T> ParametricSpan<LD> in_long_double(const ParametricSpan<T> &a) {
  return ParametricSpan<LD>{
      Span<LD>{a.span.s, a.span.t, Measure<LD>(a.span.mu.begin(), a.span.mu.end())}, a.pi};
}

enum class Mutant {
  none,
  rows_by_source,
  transpose_rows_by_target,
  gradient_without_mu,
  mu_in_float
};

// A problem: the span in T and the same span in long double, the kernel's
// plan, and data w, φ (on the source) and g (on the target).
template <class T> struct Problem {
  std::string repro;
  ParametricSpan<LD> reference;
  kernels::SpanPlan<T> plan;
  Index batch;
  std::vector<T> w, phi, g;
};

template <class T>
Problem<T> problem(std::string repro, const ParametricSpan<T> &a, Index batch, std::uint32_t seed,
                   Mutant mutant) {
  kernels::SpanPlan<T> plan = kernels::span_plan(a);
  if (mutant == Mutant::rows_by_source) plan.by_target = plan.by_source;
  if (mutant == Mutant::transpose_rows_by_target) plan.by_source = plan.by_target;
  if (mutant == Mutant::gradient_without_mu)
    for (auto &e : plan.by_parameter.entries) e.mu = T(1);
  if (mutant == Mutant::mu_in_float) // a loss of precision that the bound must see
    for (auto *rows : {&plan.by_target, &plan.by_source, &plan.by_parameter})
      for (auto &e : rows->entries) e.mu = T(float(e.mu));
  std::mt19937 g(seed ^ 0x9e3779b9u);
  std::vector<T> w = pm_test::draw<T>(g, a.parameters(), T(1));
  std::vector<T> phi = pm_test::draw<T>(g, a.source() * batch, T(2)),
                 gv = pm_test::draw<T>(g, a.target() * batch, T(1));
  return Problem<T>{std::move(repro), in_long_double(a), std::move(plan), batch,
                    std::move(w),     std::move(phi),    std::move(gv)};
}

template <class T> Problem<T> span_problem(const SpanCase &c, Mutant mutant = Mutant::none) {
  std::ostringstream os;
  os << "span<" << pm_test::type_name(T()) << "> source=" << c.source << " target=" << c.target
     << " parameters=" << c.parameters << " apex=" << c.apex << " batch=" << c.batch
     << " seed=" << c.seed;
  return problem<T>(os.str(), random_span<T>(c), c.batch, c.seed, mutant);
}

template <class T> Problem<T> graph_problem(GraphCase c) {
  c = pm_test::with_endpoints(c);
  const std::string repro = pm_test::graph_repro(c, pm_test::type_name(T()));
  return problem<T>(repro, graph_conv<T>(c.spec), c.batch, c.seed, Mutant::none);
}

// Forward (L_w φ) or transpose (L_wᵀ g): every output sums the m terms
// μ w φ of its row, each rounded twice, so |error| ≤ γ_{m+1} Σ|μ w φ|.
template <class T> void check_layer(const Problem<T> &p, bool transposed) {
  const ParametricSpan<LD> a = transposed ? transpose(p.reference) : p.reference;
  const std::vector<T> &in = transposed ? p.g : p.phi;
  std::vector<T> out(a.target() * p.batch);
  if (transposed)
    kernels::span_transpose<T>(p.plan, p.w, in, p.batch, out);
  else
    kernels::span_forward<T>(p.plan, p.w, in, p.batch, out);

  const Function<LD> w = widened(p.w);
  const Batch<LD> ref = act(a, w, batch_of(widened(in), a.source(), p.batch));
  const Batch<LD> mass =
      act(absolute(a), widened(p.w, true), batch_of(widened(in, true), a.source(), p.batch));
  const Measure<LD> m = pushforward(a.span.t, Measure<LD>(a.apex(), LD(1)));
  std::vector<LD> bound(out.size());
  for (Index b = 0; b < p.batch; ++b)
    for (Index y = 0; y < a.target(); ++y)
      bound[b * a.target() + y] = pm::gamma(m[y] + 1, combined_roundoff<T>()) * mass(y, b);
  pm_test::require_informative(
      pm_test::compare(p.repro, transposed ? "transpose" : "forward", out, ref.data, bound),
      out.size(), p.repro);
}

// Gradient: parameter p sums q_p B terms μ φ g (q_p edges of p), so
// |error| ≤ γ_{q_p B + 1} Σ_b π_!^{|μ|}(|s*φ_b| |t*g_b|).
template <class T> void check_gradient(const Problem<T> &p) {
  const ParametricSpan<LD> &a = p.reference;
  std::vector<T> out(a.parameters());
  kernels::span_parameter_gradient<T>(p.plan, p.phi, p.g, p.batch, out);

  const auto [ref, mass] = batch_gradient(a, p.phi, p.g, p.batch);
  const Measure<LD> q = pushforward(a.pi, Measure<LD>(a.apex(), LD(1)));
  std::vector<LD> bound(out.size());
  for (Index k = 0; k < out.size(); ++k)
    bound[k] = pm::gamma(q[k] * p.batch + 1, combined_roundoff<T>()) * mass[k];
  pm_test::require_informative(pm_test::compare(p.repro, "gradient", out, ref, bound), out.size(),
                               p.repro);
}

template <class T> void check_all(const Problem<T> &p) {
  check_layer(p, false);
  check_layer(p, true);
  check_gradient(p);
}

} // namespace

namespace rc {
// Sets of size 1 to 6, and empty one time in ten; a square span (source =
// target) half of the time; an empty apex one time in ten; batches from 1.
// (RapidCheck's ranges grow with the case size, so early cases are small.)
inline Gen<Index> set_size(Index max) {
  return gen::weightedOneOf<Index>(
      {{1, gen::just<Index>(0)}, {9, gen::inRange<Index>(1, max + 1)}});
}
template <> struct Arbitrary<SpanCase> {
  static Gen<SpanCase> arbitrary() {
    return gen::exec([] {
      SpanCase c;
      c.source = *set_size(6);
      c.target = *gen::weightedOneOf<Index>({{1, gen::just(c.source)}, {1, set_size(6)}});
      c.parameters = *set_size(5);
      c.apex = *set_size(40);
      c.batch = *gen::inRange<Index>(1, 6);
      c.seed = *gen::arbitrary<std::uint32_t>();
      return c;
    });
  }
};
template <> struct Arbitrary<GraphCase> {
  static Gen<GraphCase> arbitrary() { return pm_test::graph_cases(8, 20, 3); }
};
} // namespace rc

TEST_CASE("KERNEL-SPAN: the span kernel agrees with the reference layer, transpose and gradient") {
  rc::prop("span float", [](const SpanCase &c) { check_all(span_problem<float>(c)); });
  rc::prop("span double", [](const SpanCase &c) { check_all(span_problem<double>(c)); });
  rc::prop("graph float", [](const GraphCase &c) { check_all(graph_problem<float>(c)); });
  rc::prop("graph double", [](const GraphCase &c) { check_all(graph_problem<double>(c)); });
}

TEST_CASE("KERNEL-SPAN: edge cases give exact zeros and batch 1 works") {
  // Empty apex: every output is an empty sum, exactly 0.
  const SpanCase empty{3, 4, 2, 0, 2, 7};
  const Problem<double> p = span_problem<double>(empty);
  std::vector<double> out(8, 1.0), back(6, 1.0), grad(2, 1.0);
  kernels::span_forward<double>(p.plan, p.w, p.phi, 2, out);
  kernels::span_transpose<double>(p.plan, p.w, p.g, 2, back);
  kernels::span_parameter_gradient<double>(p.plan, p.phi, p.g, 2, grad);
  CHECK(out == std::vector<double>(8, 0.0));
  CHECK(back == std::vector<double>(6, 0.0));
  CHECK(grad == std::vector<double>(2, 0.0));
  // Repeated edges add: the span 0 → 0 twice with μ = 1/2 and 3/2, one parameter.
  ParametricSpan<double> twice{Span<double>{FinMap(1, {0, 0}), FinMap(1, {0, 0}), {0.5, 1.5}},
                               FinMap(1, {0, 0})};
  const kernels::SpanPlan<double> plan = kernels::span_plan(twice);
  std::vector<double> y(1), dw(1);
  kernels::span_forward<double>(plan, std::vector<double>{3.0}, std::vector<double>{5.0}, 1, y);
  kernels::span_parameter_gradient<double>(plan, std::vector<double>{5.0}, std::vector<double>{7.0},
                                           1, dw);
  CHECK(y == std::vector<double>{30.0});  // (1/2 + 3/2)·3·5
  CHECK(dw == std::vector<double>{70.0}); // (1/2 + 3/2)·5·7
}

TEST_CASE("KERNEL-SPAN mutant: forward rows grouped by source instead of target") {
  CHECK(pm_test::rejects([](const SpanCase &c) {
    check_layer(span_problem<double>(c, Mutant::rows_by_source), false);
  }));
}

TEST_CASE("KERNEL-SPAN mutant: transpose rows grouped by target instead of source") {
  CHECK(pm_test::rejects([](const SpanCase &c) {
    check_layer(span_problem<double>(c, Mutant::transpose_rows_by_target), true);
  }));
}

TEST_CASE("KERNEL-SPAN mutant: the gradient drops the measure") {
  CHECK(pm_test::rejects([](const SpanCase &c) {
    check_gradient(span_problem<double>(c, Mutant::gradient_without_mu));
  }));
}

TEST_CASE("KERNEL-SPAN mutant: a double plan that keeps the measure in float") {
  CHECK(pm_test::rejects(
      [](const SpanCase &c) { check_all(span_problem<double>(c, Mutant::mu_in_float)); }));
}
