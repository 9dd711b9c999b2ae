// Differential law of the graph kernel (src/pm/kernels/graph_conv.hpp): for
// random graphs (repeated edges, self loops or not, sum, mean and symmetric
// normalisation, isolated nodes), the layer L_W φ, its transpose and the
// weight gradient summed over the batch, in float and double, agree with
// pm::act, pm::transpose and pm::parameter_gradient run in long double on the
// graph span of the same graph (graph_conv<T>, whose μ is the kernel's
// coefficient c(u, v) in T), within the forward error bound of
// docs/performance.md ("The graph kernel"), decided by
// src/pm/kernels/reference_check.hpp. Each case is drawn from a one-line
// description that a failure prints; a case whose outputs are mostly below
// their tolerance is discarded as too weak.
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
using pm_test::GraphCase;

namespace {

enum class Mutant { none, forward_by_source, coefficient_dropped };

template <class T> using Problem = kernels::GraphProblem<T>;

template <class T> Problem<T> graph_case_problem(GraphCase c, Mutant mutant = Mutant::none) {
  Problem<T> p = kernels::graph_problem<T>(pm_test::with_endpoints(c));
  if (mutant == Mutant::forward_by_source) {
    p.plan.into_start = p.plan.out_start;
    p.plan.into = p.plan.out;
  }
  if (mutant == Mutant::coefficient_dropped)
    for (auto *rows : {&p.plan.into, &p.plan.out})
      for (auto &e : *rows) e.c = T(1);
  return p;
}

template <class T> void check_layer(const Problem<T> &p, bool transposed) {
  pm_test::verdict(kernels::compare_graph_layer(p, transposed), p.repro);
}
template <class T> void check_gradient(const Problem<T> &p) {
  pm_test::verdict(kernels::compare_graph_gradient(p), p.repro);
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
  static Gen<GraphCase> arbitrary() {
    return pm_test::graph_cases(kernels::case_ranges::graph_sizes);
  }
};
} // namespace rc

TEST_CASE("KERNEL-GRAPH: the graph kernel agrees with the graph span, its transpose and gradient") {
  rc::prop("graph float", [](const GraphCase &c) { check_all(graph_case_problem<float>(c)); });
  rc::prop("graph double", [](const GraphCase &c) { check_all(graph_case_problem<double>(c)); });
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
    check_layer(graph_case_problem<double>(c, Mutant::forward_by_source), false);
  }));
}

TEST_CASE("KERNEL-GRAPH mutant: the normalisation coefficient dropped") {
  CHECK(pm_test::rejects([](const GraphCase &c) {
    check_all(graph_case_problem<double>(c, Mutant::coefficient_dropped));
  }));
}
