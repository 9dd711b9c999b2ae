// The backward passes from what a forward pass kept: the dense forward sweep
// that also writes σ'(y), and the graph forward pass that also keeps the
// aggregation H, give the outputs of the plain forward passes bit for bit;
// the dense dual sweep at the kept slopes and the graph weight gradient from
// the kept H give the bits of the passes that recompute them (dense_dual at
// y, graph_weight_gradient from φ). The differential laws of those passes
// (property_tests/kernels.cpp, property_tests/kernels_graph.cpp) therefore
// hold for the kept forms too. Each case is drawn from a one-line description
// that a failure prints.
#include "pm/kernels.hpp"

#include <cstring>

#include "pm/kernels/check_cases.hpp"
#include "support/graph_case.hpp"
#include "support/law.hpp"

using namespace pm;
using namespace pm::kernels;

namespace {

template <class T> bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// 1 to 5 channel blocks of 0 to 12 channels, batches of 1 to 8 in pieces of
// 1, 2, 3 or 128, every σ (the identity, whose slope is 1 and whose cases
// are trivial, less often).
DenseCase dense_case() {
  DenseCase c;
  c.dims = *rc::gen::nonEmpty(
      rc::gen::resize(5, rc::gen::container<std::vector<Index>>(rc::gen::inRange<Index>(0, 13))));
  c.c.batch = *rc::gen::inRange<Index>(1, 9);
  c.c.piece = *rc::gen::element<Index>(1, 2, 3, 128);
  c.c.sigma = *rc::gen::weightedElement<Activation>(
      {{1, Activation::identity}, {3, Activation::tanh}, {3, Activation::sigmoid}});
  c.c.seed = *rc::gen::arbitrary<std::uint32_t>();
  return c;
}

enum class Mutant { none, slope_of_identity, aggregation_skipped };

// Dense: the forward with and without the slope, the dual at y and at the
// slope. The mutant's slope is the identity's (all ones).
template <class T> void check_dense(Mutant mutant) {
  const DenseCase dc = dense_case();
  const MachineProblem<T> p = problem<T>(dc);
  const DenseMachineShape shape = shape_of(dc);
  const Index states = shape.state_size();
  std::vector<T> y(states), z(states), yk(states), zk(states), slope(states);
  dense_forward<T>(shape, dc.c.sigma, p.w, p.a, p.b, y, z);
  dense_forward<T>(shape, dc.c.sigma, p.w, p.a, p.b, yk, zk, slope);
  if (mutant == Mutant::slope_of_identity) std::fill(slope.begin(), slope.end(), T(1));
  std::vector<T> yb(states), zb(states), ybk(states), zbk(states);
  dense_dual<T>(shape, dc.c.sigma, p.w, y, p.gy, p.gz, yb, zb);
  dense_dual<T>(shape, p.w, slope, p.gy, p.gz, ybk, zbk);
  RC_LOG() << p.repro << "\n";
  pm_test::classify(dc.c.sigma != Activation::identity && shape.channels() > 0);
  RC_ASSERT(same_bits(y, yk));
  RC_ASSERT(same_bits(z, zk));
  RC_ASSERT(same_bits(yb, ybk));
  RC_ASSERT(same_bits(zb, zbk));
}

// Graph: the forward with and without H, the gradient from φ and from H. The
// mutant gives φ itself as H.
template <class T> void check_graph(Mutant mutant) {
  const pm_test::GraphCase c = *pm_test::graph_cases(pm::kernels::case_ranges::graph_sizes);
  const GraphProblem<T> p = graph_problem<T>(pm_test::with_endpoints(c));
  const Index outs = p.plan.nodes * p.plan.out_channels * p.batch;
  std::vector<T> out(outs), outk(outs), h(p.phi.size()), dw(p.w.size()), dwk(p.w.size());
  graph_forward<T>(p.plan, p.w, p.phi, p.batch, out);
  graph_forward<T>(p.plan, p.w, p.phi, p.batch, outk, h);
  if (mutant == Mutant::aggregation_skipped) h = p.phi;
  graph_weight_gradient<T>(p.plan, p.phi, p.g, p.batch, dw);
  graph_weight_gradient_from_aggregate<T>(p.plan, h, p.g, p.batch, dwk);
  RC_LOG() << p.repro << "\n";
  pm_test::classify(p.plan.edges() > 0);
  RC_ASSERT(same_bits(out, outk));
  RC_ASSERT(same_bits(dw, dwk));
}

} // namespace

PM_LAW("KERNEL-DENSE-DUAL",
       "the dual sweep at the slopes the forward kept has the bits of the one at y",
       (check_dense<float>(Mutant::none), check_dense<double>(Mutant::none)),
       check_dense<float>(Mutant::slope_of_identity))

PM_LAW("KERNEL-GRAPH",
       "the weight gradient from the aggregation the forward kept has the bits of the one from phi",
       (check_graph<float>(Mutant::none), check_graph<double>(Mutant::none)),
       check_graph<float>(Mutant::aggregation_skipped))

TEST_CASE("KERNEL-DENSE-DUAL: a slope of the wrong size is rejected with the argument named") {
  const DenseMachineShape s{{2, 3}, 4};
  std::vector<float> w(25), st(20), bad(19);
  CHECK_THROWS_WITH(dense_forward<float>(s, Activation::tanh, w, st, st, st, st, bad),
                    "dense_forward: slope has 19 entries, expected 20");
  CHECK_THROWS_WITH(dense_dual<float>(s, w, bad, st, st, st, st),
                    "dense_dual: slope has 19 entries, expected 20");
}
