// The backward passes from what a forward pass kept: the dense and sequence
// forward sweeps that also write σ'(y), and the graph forward pass that also
// keeps the aggregation H, give the outputs of the plain forward passes bit
// for bit; the dual sweeps at the kept slopes and the graph weight gradient
// from the kept H give the bits of the passes that recompute them (dense_dual
// and sequence_dual at y, graph_weight_gradient from φ). The differential
// laws of those passes (property_tests/kernels.cpp,
// property_tests/kernels_graph.cpp) therefore hold for the kept forms too.
// Each case is drawn from a one-line description that a failure prints.
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

// Batches of 1 to 8 in pieces of 1, 2, 3 or 128, every σ (the identity,
// whose slope is 1 and whose cases are trivial, less often).
CaseCommon common_case() {
  CaseCommon c;
  c.batch = *rc::gen::inRange<Index>(1, 9);
  c.piece = *rc::gen::element<Index>(1, 2, 3, 128);
  c.sigma = *rc::gen::weightedElement<Activation>(
      {{1, Activation::identity}, {3, Activation::tanh}, {3, Activation::sigmoid}});
  c.seed = *rc::gen::arbitrary<std::uint32_t>();
  return c;
}

// 1 to `blocks` channel blocks of `least` to `most` channels.
std::vector<Index> blocks_case(int blocks, Index least, Index most) {
  return *rc::gen::nonEmpty(rc::gen::resize(
      blocks, rc::gen::container<std::vector<Index>>(rc::gen::inRange<Index>(least, most + 1))));
}

// 1 to 5 channel blocks of 0 to 12 channels.
DenseCase dense_case() { return {blocks_case(5, 0, 12), common_case()}; }

// The sequence machines on the product path (fewer positions than the
// direct path takes): 1 to 4 blocks of 1 to 5 channels; lines of 1 to 12
// positions, padding 0 to 3; 2-D grids of 1 to 5 × 1 to 5, padding 0 to 2;
// lags 0 to 6 and time blocks 1 to 5.
ConvCase conv_case() {
  ConvCase c;
  c.dims = blocks_case(4, 1, 5);
  c.length = *rc::gen::inRange<Index>(1, 13);
  c.lo = *rc::gen::inRange<Index>(0, 4);
  c.hi = *rc::gen::inRange<Index>(0, 4);
  c.c = common_case();
  return c;
}
Conv2Case conv2_case() {
  Conv2Case c;
  c.dims = blocks_case(3, 1, 5);
  c.extents = {*rc::gen::inRange<Index>(1, 6), *rc::gen::inRange<Index>(1, 6)};
  for (int j = 0; j < 4; ++j) c.pad.push_back(*rc::gen::inRange<Index>(0, 3));
  c.c = common_case();
  return c;
}
RecurCase recur_case() {
  RecurCase c;
  c.dims = blocks_case(3, 1, 5);
  c.length = *rc::gen::inRange<Index>(1, 13);
  c.max_lag = *rc::gen::inRange<Index>(0, 7);
  c.timeblock = *rc::gen::inRange<Index>(1, 6);
  c.c = common_case();
  return c;
}

enum class Mutant { none, slope_of_identity, slope_sample_major, aggregation_skipped };

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

// A sequence machine: the forward with and without the slope, the dual at y
// and at the slope. The mutants' slope is the identity's, or the kept one
// in the samples' order instead of the sweep's (each piece time-major).
template <class T, class Case> void check_sequence(const Case &c, Mutant mutant) {
  const MachineProblem<T> p = problem<T>(c);
  const SequencePlan plan = plan_of(c);
  const Index states = plan.state_size();
  std::vector<T> y(states), z(states), yk(states), zk(states), slope(states);
  sequence_forward<T>(plan, c.c.sigma, p.w, p.a, p.b, y, z);
  sequence_forward<T>(plan, c.c.sigma, p.w, p.a, p.b, yk, zk, slope);
  if (mutant == Mutant::slope_of_identity) std::fill(slope.begin(), slope.end(), T(1));
  if (mutant == Mutant::slope_sample_major) {
    std::vector<T> batch(states);
    for (Index b0 = 0; b0 < plan.batch; b0 += plan.batch_piece)
      pm::kernels::detail::from_time_major(slope.data() + b0 * plan.n * plan.length, batch.data(),
                                           plan.n, plan.length, b0,
                                           std::min(plan.batch_piece, plan.batch - b0), false);
    slope = batch;
  }
  std::vector<T> yb(states), zb(states), ybk(states), zbk(states);
  sequence_dual<T>(plan, c.c.sigma, p.w, y, p.gy, p.gz, yb, zb);
  sequence_dual<T>(plan, p.w, slope, p.gy, p.gz, ybk, zbk);
  RC_LOG() << p.repro << "\n";
  pm_test::classify(c.c.sigma != Activation::identity && plan.n > 0);
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

PM_LAW("KERNEL-CONV", "the dual sweep at the slopes the forward kept has the bits of the one at y",
       (check_sequence<float>(conv_case(), Mutant::none),
        check_sequence<double>(conv_case(), Mutant::none)),
       check_sequence<float>(conv_case(), Mutant::slope_of_identity))

PM_LAW("KERNEL-CONV2D",
       "the dual sweep at the slopes the forward kept has the bits of the one at y",
       (check_sequence<float>(conv2_case(), Mutant::none),
        check_sequence<double>(conv2_case(), Mutant::none)),
       check_sequence<float>(conv2_case(), Mutant::slope_of_identity))

PM_LAW("KERNEL-RECUR", "the dual sweep at the slopes the forward kept has the bits of the one at y",
       (check_sequence<float>(recur_case(), Mutant::none),
        check_sequence<double>(recur_case(), Mutant::none)),
       check_sequence<float>(recur_case(), Mutant::slope_sample_major))

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

TEST_CASE("KERNEL-CONV: a kept slope of the wrong size, or on the direct path, is rejected") {
  const SequencePlan p = plan(ConvMachineShape{{2, 3}, 4, 2, 1, 1});
  std::vector<float> w(3 * 25), st(40), bad(39);
  CHECK(keeps_slope(p));
  CHECK_THROWS_WITH(sequence_forward<float>(p, Activation::tanh, w, st, st, st, st, bad),
                    "sequence_forward: slope has 39 entries, expected 40");
  CHECK_THROWS_WITH(sequence_dual<float>(p, w, bad, st, st, st, st),
                    "sequence_dual: slope has 39 entries, expected 40");
  const SequencePlan direct = plan(ConvMachineShape{{2, 3}, direct_min_positions, 1, 1, 1});
  REQUIRE(direct_wanted(direct));
  CHECK_FALSE(keeps_slope(direct));
  std::vector<float> ds(direct.state_size());
  CHECK_THROWS_WITH(sequence_dual<float>(direct, w, ds, ds, ds, ds, ds),
                    "sequence_dual: a slope is kept on the product path only; this plan takes the "
                    "direct path");
}
