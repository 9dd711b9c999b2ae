// Differential law of the graph kernel (src/pm/kernels/graph_conv.hpp): for
// random graphs (repeated edges, self loops or not, sum, mean and symmetric
// normalisation, isolated nodes), the layer L_W φ, its transpose and the
// weight gradient summed over the batch, in float and double, agree with
// pm::act, pm::transpose and pm::parameter_gradient run in long double on the
// graph span of the same graph (graph_conv<T>, whose μ is the kernel's
// coefficient c(u, v) in T), within the forward error bound of
// docs/performance.md ("The graph kernel"). Each case is drawn from a
// one-line description that a failure prints; a case whose outputs are
// mostly below their tolerance is discarded as too weak.
#include "pm/kernels/graph_conv.hpp"

#include <cstdint>
#include <random>
#include <sstream>

#include "pm/category/batch.hpp"
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

enum class Mutant { none, forward_by_source, coefficient_dropped };

template <class T> struct Problem {
  std::string repro;
  ParametricSpan<LD> reference; // the graph span, μ rounded to T, in long double
  kernels::GraphPlan<T> plan;
  GraphConvSpec spec;
  Index batch;
  std::vector<T> w, phi, g;
};

template <class T> Problem<T> graph_problem(GraphCase c, Mutant mutant = Mutant::none) {
  c = pm_test::with_endpoints(c);
  const std::string repro = pm_test::graph_repro(c, pm_test::type_name(T()));
  const ParametricSpan<T> a = graph_conv<T>(c.spec);
  kernels::GraphPlan<T> plan = kernels::graph_plan<T>(c.spec);
  if (mutant == Mutant::forward_by_source) {
    plan.into_start = plan.out_start;
    plan.into = plan.out;
  }
  if (mutant == Mutant::coefficient_dropped)
    for (auto *rows : {&plan.into, &plan.out})
      for (auto &e : *rows) e.c = T(1);
  std::mt19937 d(c.seed ^ 0x9e3779b9u);
  const Index n = c.spec.nodes, ci = c.spec.in_channels, co = c.spec.out_channels;
  std::vector<T> w = pm_test::draw<T>(d, ci * co, T(1));
  std::vector<T> phi = pm_test::draw<T>(d, n * ci * c.batch, T(2)),
                 gv = pm_test::draw<T>(d, n * co * c.batch, T(1));
  ParametricSpan<LD> ref{
      Span<LD>{a.span.s, a.span.t, Measure<LD>(a.span.mu.begin(), a.span.mu.end())}, a.pi};
  return Problem<T>{repro,   std::move(ref), std::move(plan), c.spec,
                    c.batch, std::move(w),   std::move(phi),  std::move(gv)};
}

// Degrees of the graph with its self loops: into (forward) or out of
// (transpose) every node.
std::vector<Index> degrees(const GraphConvSpec &s, bool into) {
  std::vector<Index> deg(s.nodes, 0);
  for (const auto &[u, v] : s.all_edges()) ++deg[into ? v : u];
  return deg;
}

// Forward: output (v, c_out) sums deg(v) · C_in terms c W φ; each passes
// through at most deg(v) roundings in the aggregation (c φ, then the sum
// over the edges) and C_in + 1 in the product (W H, then the sum over the
// channels), so |error| ≤ γ_{deg(v) + C_in + 1} Σ|c W φ|. The transpose is
// the same with C_out and the degree out of u.
template <class T> void check_layer(const Problem<T> &p, bool transposed) {
  const ParametricSpan<LD> a = transposed ? transpose(p.reference) : p.reference;
  const std::vector<T> &in = transposed ? p.g : p.phi;
  std::vector<T> out(a.target() * p.batch);
  if (transposed)
    kernels::graph_transpose<T>(p.plan, p.w, in, p.batch, out);
  else
    kernels::graph_forward<T>(p.plan, p.w, in, p.batch, out);
  const Batch<LD> ref = act(a, widened(p.w), batch_of(widened(in), a.source(), p.batch));
  const Batch<LD> mass =
      act(absolute(a), widened(p.w, true), batch_of(widened(in, true), a.source(), p.batch));
  const std::vector<Index> deg = degrees(p.spec, !transposed);
  const Index channels = transposed ? p.spec.out_channels : p.spec.in_channels;
  const Index per_node = transposed ? p.spec.in_channels : p.spec.out_channels;
  std::vector<LD> bound(out.size());
  for (Index b = 0; b < p.batch; ++b)
    for (Index y = 0; y < a.target(); ++y)
      bound[b * a.target() + y] =
          pm::gamma(LD(deg[y / per_node] + channels + 1), combined_roundoff<T>()) * mass(y, b);
  pm_test::require_informative(
      pm_test::compare(p.repro, transposed ? "transpose" : "forward", out, ref.data, bound),
      out.size(), p.repro);
}

// Gradient: W(c_in, c_out) sums every (edge into v, sample) term c φ g; each
// passes through at most deg(v) roundings in H and 1 + nodes · batch in the
// product, so |error| ≤ γ_{max deg + nodes · batch + 1} Σ|c φ g|.
template <class T> void check_gradient(const Problem<T> &p) {
  const ParametricSpan<LD> &a = p.reference;
  std::vector<T> out(a.parameters());
  kernels::graph_weight_gradient<T>(p.plan, p.phi, p.g, p.batch, out);
  const auto [ref, mass] = batch_gradient(a, p.phi, p.g, p.batch);
  Index max_deg = 0;
  for (Index d : degrees(p.spec, true)) max_deg = std::max(max_deg, d);
  std::vector<LD> bound(out.size());
  for (Index k = 0; k < out.size(); ++k)
    bound[k] =
        pm::gamma(LD(max_deg + p.spec.nodes * p.batch + 1), combined_roundoff<T>()) * mass[k];
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
// 1 to 12 nodes, up to 40 edges (so isolated nodes occur), 1 to 5 channels
// each way, batches from 1.
template <> struct Arbitrary<GraphCase> {
  static Gen<GraphCase> arbitrary() { return pm_test::graph_cases(12, 40, 5); }
};
} // namespace rc

TEST_CASE("KERNEL-GRAPH: the graph kernel agrees with the graph span, its transpose and gradient") {
  rc::prop("graph float", [](const GraphCase &c) { check_all(graph_problem<float>(c)); });
  rc::prop("graph double", [](const GraphCase &c) { check_all(graph_problem<double>(c)); });
}

TEST_CASE("KERNEL-GRAPH: bad buffers are rejected with the argument named") {
  GraphConvSpec s;
  s.nodes = 3;
  s.edges = {{0, 1}, {1, 2}};
  s.in_channels = 2;
  s.out_channels = 1;
  const kernels::GraphPlan<double> p = kernels::graph_plan<double>(s);
  std::vector<double> w(2), phi(6), out(3), bad(5);
  CHECK_THROWS_WITH(kernels::graph_forward<double>(p, w, bad, 1, out),
                    "graph_forward: phi has 5 entries, expected 3 nodes × 2 channels × 1");
  CHECK_THROWS_WITH(kernels::graph_transpose<double>(p, bad, out, 1, phi),
                    "graph_transpose: W has 5 entries, expected 2");
  CHECK_THROWS_WITH(kernels::graph_weight_gradient<double>(p, phi, out, 1, bad),
                    "graph_weight_gradient: dW has 5 entries, expected 2");
}

TEST_CASE("KERNEL-GRAPH mutant: the forward aggregates the edges out of a node") {
  CHECK(pm_test::rejects([](const GraphCase &c) {
    check_layer(graph_problem<double>(c, Mutant::forward_by_source), false);
  }));
}

TEST_CASE("KERNEL-GRAPH mutant: the normalisation coefficient dropped") {
  CHECK(pm_test::rejects([](const GraphCase &c) {
    check_all(graph_problem<double>(c, Mutant::coefficient_dropped));
  }));
}
