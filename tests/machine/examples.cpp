// Small machines worked out by hand: the expected values below are computed
// on paper, not by the code under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "pm/machine.hpp"

using pm::Batch;
using pm::Function;
using pm::Grading;
using pm::Index;
using Q = pm::Rational;

namespace {

// The chain 0 → 1 → 2 with weights w0 (edge 0 → 1) and w1 (edge 1 → 2),
// plus a back edge 2 → 0 on parameter 2, which cleaning must remove.
pm::ParametricSpan<Q> chain_span() {
  return {pm::Span<Q>{pm::FinMap(3, {0, 1, 2}), pm::FinMap(3, {1, 2, 0}), {Q(1), Q(1), Q(1)}},
          pm::FinMap(3, {0, 1, 2})};
}
Batch<Q> column(const Function<Q> &v) { return Batch<Q>::from_columns(v.size(), {v}); }

} // namespace

TEST_CASE("graded span machine: the chain solved by hand") {
  const pm::GradedSpanMachine<Q> m(Grading(3, {1, 2, 3}), chain_span(), pm::Sigma<Q>::identity());
  const Function<Q> w{Q(2), Q(3), Q(5)};
  REQUIRE(pm::clean(m.span(), m.grading(), w) == Function<Q>{Q(2), Q(3), Q(0)});
  // The level plan visits each valid edge once, at the level of its target.
  REQUIRE(m.edges_into(0).empty());
  REQUIRE(m.edges_into(1) == std::vector<Index>{0});
  REQUIRE(m.edges_into(2) == std::vector<Index>{1});
  // y0 = (1, 0, 0): y = z = (1, 2, 6), the back edge ignored.
  const auto x = pm::forward(m, w, column({Q(1), Q(0), Q(0)}), Batch<Q>(3, 1));
  REQUIRE(x.y.column(0) == Function<Q>{Q(1), Q(2), Q(6)});
  REQUIRE(x.z.column(0) == Function<Q>{Q(1), Q(2), Q(6)});
  // ℓ = z_2 = w1 w0 y0_0: ∂ℓ/∂y0 = ∂ℓ/∂z0 = (6, 3, 1), ∂ℓ/∂w = (w1, w0, 0) y0_0 = (3, 2, 0).
  const auto g = pm::backward(m, w, x, Batch<Q>(3, 1), column({Q(0), Q(0), Q(1)}));
  REQUIRE(g.y0.column(0) == Function<Q>{Q(6), Q(3), Q(1)});
  REQUIRE(g.z0.column(0) == Function<Q>{Q(6), Q(3), Q(1)});
  REQUIRE(g.w == Function<Q>{Q(3), Q(2), Q(0)});
  REQUIRE(g.sigma.data.empty());
}

TEST_CASE("graded span machine: relu and an array sigma by hand") {
  const Function<Q> w{Q(2), Q(-1), Q(0)};
  // relu: y = (1, 2, −2), z = (1, 2, 0).
  const pm::GradedSpanMachine<Q> r(Grading(3, {1, 2, 3}), chain_span(), pm::Sigma<Q>::relu());
  const auto x = pm::forward(r, w, column({Q(1), Q(0), Q(0)}), Batch<Q>(3, 1));
  REQUIRE(x.y.column(0) == Function<Q>{Q(1), Q(2), Q(-2)});
  REQUIRE(x.z.column(0) == Function<Q>{Q(1), Q(2), Q(0)});
  // Array slopes s = (1, 1/2, 3): z = (1, 1, −3); ℓ = z_2 = s2 w1 s1 w0 s0 y0_0,
  // so ∂ℓ/∂s = (s2 w1 s1 w0, s2 w1 w0 s0, w1 s1 w0 s0) = (−3, −6, −1) = y ⊙ z̄.
  const pm::GradedSpanMachine<Q> a(Grading(3, {1, 2, 3}), chain_span(),
                                   pm::Sigma<Q>::array(column({Q(1), Q(1, 2), Q(3)})));
  const auto xa = pm::forward(a, w, column({Q(1), Q(0), Q(0)}), Batch<Q>(3, 1));
  REQUIRE(xa.z.column(0) == Function<Q>{Q(1), Q(1), Q(-3)});
  const auto g = pm::backward(a, w, xa, Batch<Q>(3, 1), column({Q(0), Q(0), Q(1)}));
  REQUIRE(g.sigma.column(0) == Function<Q>{Q(-3), Q(-6), Q(-1)});
}

TEST_CASE("graded span machine: a batch is solved column by column") {
  const pm::GradedSpanMachine<Q> m(Grading(3, {1, 2, 3}), chain_span(), pm::Sigma<Q>::identity());
  const Function<Q> w{Q(2), Q(3), Q(5)};
  Batch<Q> y0(3, 2);
  y0(0, 0) = Q(1);
  y0(1, 1) = Q(1);
  const auto x = pm::forward(m, w, y0, Batch<Q>(3, 2));
  REQUIRE(x.z.column(0) == Function<Q>{Q(1), Q(2), Q(6)});
  REQUIRE(x.z.column(1) == Function<Q>{Q(0), Q(1), Q(3)});
}

TEST_CASE("cleaning: the dense machine of the seed, dims [2, 4, 7, 1]") {
  // Dense: an edge x → y per pair, parameter x·N + y. Valid iff block(x) <
  // block(y): Σ_{i<j} d_i d_j = 8 + 14 + 2 + 28 + 4 + 7 = 63 parameters.
  const Grading d = Grading::from_blocks({2, 4, 7, 1});
  const Index n = d.size();
  pm::ParametricSpan<Q> a{pm::Span<Q>{pm::FinMap(n, {}), pm::FinMap(n, {}), {}},
                          pm::identity_map(n * n)};
  for (Index x = 0; x < n; ++x)
    for (Index y = 0; y < n; ++y) {
      a.span.s.images.push_back(x);
      a.span.t.images.push_back(y);
      a.span.mu.push_back(Q(1));
    }
  const std::vector<bool> valid = pm::valid_parameters(a, d);
  REQUIRE(std::count(valid.begin(), valid.end(), true) == 63);
  REQUIRE(valid[0 * n + 2]);  // block 1 → block 2
  REQUIRE(!valid[2 * n + 0]); // block 2 → block 1
  REQUIRE(!valid[2 * n + 3]); // within block 2
  // flip(clean(W)) = clean(flip(W)) for the reversed order.
  REQUIRE(pm::valid_parameters(pm::transpose(a), d.reversed()) == valid);
}

TEST_CASE("gradings: reversal, blocks and the state grading") {
  const Grading d = Grading::from_blocks({1, 2});
  REQUIRE(d.grades() == std::vector<Index>{1, 2, 2});
  REQUIRE(d.reversed().grades() == std::vector<Index>{2, 1, 1});
  REQUIRE(d.reversed().reversed() == d);
  REQUIRE(pm::state_grading(d).grades() == std::vector<Index>{1, 3, 3, 2, 4, 4});
  REQUIRE(d.members()[1] == std::vector<Index>{1, 2});
}

TEST_CASE("Sigma: values and derivatives at chosen points") {
  const auto p = pm::Sigma<Q>::polynomial({Q(1), Q(2), Q(3)}); // 1 + 2y + 3y²
  REQUIRE(p.value(Q(2), 0, 0) == Q(17));
  REQUIRE(p.derivative(Q(2), 0, 0) == Q(14));
  REQUIRE(pm::Sigma<Q>::relu().value(Q(-1), 0, 0) == Q(0));
  REQUIRE(pm::Sigma<Q>::relu().derivative(Q(0), 0, 0) == Q(0));
  REQUIRE(pm::Sigma<Q>::relu().derivative(Q(1, 3), 0, 0) == Q(1));
  // At 0 the values below are exact in binary floating point.
  REQUIRE(pm::Sigma<double>::tanh().value(0.0, 0, 0) == 0.0);
  REQUIRE(pm::Sigma<double>::tanh().derivative(0.0, 0, 0) == 1.0);
  REQUIRE(pm::Sigma<double>::sigmoid().value(0.0, 0, 0) == 0.5);
  REQUIRE(pm::Sigma<double>::sigmoid().derivative(0.0, 0, 0) == 0.25);
  REQUIRE(pm::Sigma<double>::softplus().derivative(0.0, 0, 0) == 0.5);
  // softplus does not overflow: log(1 + e^1000) = 1000 + log1p(e^−1000).
  REQUIRE(pm::Sigma<double>::softplus().value(1000.0, 0, 0) == 1000.0);
  REQUIRE(pm::Sigma<double>::softplus().value(-1000.0, 0, 0) == 0.0);
}

TEST_CASE("depth checks: exact and randomized on the chain") {
  const auto a = pm::matrix(pm::weighted_span(chain_span(), Function<Q>{Q(2), Q(3), Q(5)}));
  const Grading d(3, {1, 2, 3});
  REQUIRE(!pm::has_depth(a, d)); // the back edge 2 → 0
  const auto cleaned = pm::clean(chain_span(), d, Function<Q>{Q(2), Q(3), Q(5)});
  REQUIRE(pm::has_depth(chain_span(), cleaned, d));
  REQUIRE(!pm::has_depth(pm::transpose(pm::matrix(pm::weighted_span(chain_span(), cleaned))), d));
  const pm::GradedSpanMachine<Q> m(d, chain_span(), pm::Sigma<Q>::relu());
  REQUIRE(pm::has_depth_randomized(pm::as_machine(m, Function<Q>{Q(2), Q(3), Q(5)}),
                                   pm::state_grading(d), 4, 1));
  // A black box that reads its own level is caught.
  const pm::Machine<Q> loop{1, [](const Function<Q> &x) { return x; }, {}, {}};
  REQUIRE(!pm::has_depth_randomized(loop, Grading(1, {1}), 4, 1));
}
