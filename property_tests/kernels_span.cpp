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
using pm_test::GraphCase;

namespace {

using kernels::SpanCase;

enum class Mutant {
  none,
  rows_by_source,
  transpose_rows_by_target,
  gradient_without_mu,
  mu_in_float
};

template <class T> using Problem = kernels::SpanProblem<T>;

template <class T>
Problem<T> problem(std::string repro, const ParametricSpan<T> &a, Index batch, std::uint32_t seed,
                   Mutant mutant) {
  Problem<T> p = kernels::span_problem(std::move(repro), a, batch, seed);
  kernels::SpanPlan<T> &plan = p.plan;
  if (mutant == Mutant::rows_by_source) plan.by_target = plan.by_source;
  if (mutant == Mutant::transpose_rows_by_target) plan.by_source = plan.by_target;
  if (mutant == Mutant::gradient_without_mu)
    for (auto &e : plan.by_parameter.entries) e.mu = T(1);
  if (mutant == Mutant::mu_in_float) // a loss of precision that the bound must see
    for (auto *rows : {&plan.by_target, &plan.by_source, &plan.by_parameter})
      for (auto &e : rows->entries) e.mu = T(float(e.mu));
  return p;
}

template <class T> Problem<T> span_problem(const SpanCase &c, Mutant mutant = Mutant::none) {
  return problem<T>(kernels::describe<T>(c), kernels::random_span<T>(c), c.batch, c.seed, mutant);
}

template <class T> Problem<T> graph_case_problem(GraphCase c) {
  c = pm_test::with_endpoints(c);
  return problem<T>(kernels::describe<T>(c), graph_conv<T>(c.spec), c.batch, c.seed, Mutant::none);
}

template <class T> void check_layer(const Problem<T> &p, bool transposed) {
  pm_test::verdict(kernels::compare_span_layer(p, transposed), p.repro);
}
template <class T> void check_gradient(const Problem<T> &p) {
  pm_test::verdict(kernels::compare_span_gradient(p), p.repro);
}

template <class T> void check_all(const Problem<T> &p) {
  check_layer(p, false);
  check_layer(p, true);
  check_gradient(p);
}

} // namespace

namespace rc {
// The sizes of pm::kernels::case_ranges::span_sizes. (RapidCheck's ranges
// grow with the case size, so early cases are small.)
inline Gen<Index> set_size(Index max) {
  using Sizes = kernels::case_ranges::SpanSizes;
  return gen::weightedOneOf<Index>(
      {{Sizes::empty_weight, gen::just<Index>(0)}, {Sizes::set_weight, pm_test::in({1, max})}});
}
template <> struct Arbitrary<SpanCase> {
  static Gen<SpanCase> arbitrary() {
    return gen::exec([] {
      constexpr auto sizes = kernels::case_ranges::span_sizes;
      SpanCase c;
      c.source = *set_size(sizes.max_set);
      c.target =
          *gen::weightedOneOf<Index>({{1, gen::just(c.source)}, {1, set_size(sizes.max_set)}});
      c.parameters = *set_size(sizes.max_parameters);
      c.apex = *set_size(sizes.max_apex);
      c.batch = *pm_test::in(sizes.batch);
      c.seed = *gen::arbitrary<std::uint32_t>();
      return c;
    });
  }
};
template <> struct Arbitrary<GraphCase> {
  static Gen<GraphCase> arbitrary() { return pm_test::graph_cases({8, 20, 3, {1, 5}}); }
};
} // namespace rc

TEST_CASE("KERNEL-SPAN: the span kernel agrees with the reference layer, transpose and gradient") {
  rc::prop("span float", [](const SpanCase &c) { check_all(span_problem<float>(c)); });
  rc::prop("span double", [](const SpanCase &c) { check_all(span_problem<double>(c)); });
  rc::prop("graph float", [](const GraphCase &c) { check_all(graph_case_problem<float>(c)); });
  rc::prop("graph double", [](const GraphCase &c) { check_all(graph_case_problem<double>(c)); });
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
