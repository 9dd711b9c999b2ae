// Bad input to the machine layer gets a pm::Error naming the object, the
// index or field at fault and what was expected.
#include <catch2/catch.hpp>

#include "pm/machine.hpp"

using Catch::Contains;
using pm::Batch;
using pm::Function;
using pm::Grading;
using pm::Index;
using Q = pm::Rational;

namespace {

// 0 → 1 → 2 with weights w0, w1 (parameters 0 and 1).
pm::ParametricSpan<Q> chain_span(Index n = 3) {
  return {pm::Span<Q>{pm::FinMap(n, {0, 1}), pm::FinMap(n, {1, 2}), {Q(1), Q(1)}},
          pm::FinMap(2, {0, 1})};
}
pm::GradedSpanMachine<Q> chain() {
  return {Grading(3, {1, 2, 3}), chain_span(), pm::Sigma<Q>::identity()};
}

} // namespace

TEST_CASE("Grading: a grade outside 1..D is rejected") {
  REQUIRE_THROWS_AS(Grading(2, {1, 0}), pm::Error);
  REQUIRE_THROWS_WITH(Grading(2, {1, 0}), Contains("grade of index 1 is 0, expected in 1..2"));
  REQUIRE_THROWS_WITH(Grading(2, {3, 1}), Contains("grade of index 0 is 3, expected in 1..2"));
}

TEST_CASE("GradedSpanMachine: a grading of the wrong length is rejected") {
  REQUIRE_THROWS_WITH(
      pm::GradedSpanMachine<Q>(Grading(2, {1, 2}), chain_span(), pm::Sigma<Q>::identity()),
      Contains("GradedSpanMachine: span source: grading has length 2, expected 3"));
}

TEST_CASE("GradedSpanMachine: a span incompatible with the grading is rejected") {
  // Source and target of different sizes: not an endomorphism of I.
  pm::ParametricSpan<Q> a = chain_span();
  a.span.s.codomain = 2;
  REQUIRE_THROWS_WITH(pm::GradedSpanMachine<Q>(Grading(3, {1, 2, 3}), a, pm::Sigma<Q>::identity()),
                      Contains("GradedSpanMachine: span source: grading has length 3, expected 2"));
  // A parameter leg pointing outside P.
  pm::ParametricSpan<Q> b = chain_span();
  b.pi.images[1] = 5;
  REQUIRE_THROWS_WITH(
      pm::GradedSpanMachine<Q>(Grading(3, {1, 2, 3}), b, pm::Sigma<Q>::identity()),
      Contains("GradedSpanMachine.span.pi: image of 1 is 5, expected < codomain size 2"));
}

TEST_CASE("forward: shape mismatches are rejected") {
  const auto m = chain();
  const Function<Q> w{Q(2), Q(3)};
  REQUIRE_THROWS_WITH(pm::forward(m, Function<Q>{Q(1)}, Batch<Q>(3, 1), Batch<Q>(3, 1)),
                      Contains("forward: parameters has length 1, expected 2"));
  REQUIRE_THROWS_WITH(pm::forward(m, w, Batch<Q>(2, 1), Batch<Q>(3, 1)),
                      Contains("forward: y0 has 2 rows, expected the machine size 3"));
  REQUIRE_THROWS_WITH(pm::forward(m, w, Batch<Q>(3, 2), Batch<Q>(3, 1)),
                      Contains("forward: z0 has 1 columns, expected 2"));
}

TEST_CASE("backward: shape mismatches are rejected") {
  const auto m = chain();
  const Function<Q> w{Q(2), Q(3)};
  const auto x = pm::forward(m, w, Batch<Q>(3, 2), Batch<Q>(3, 2));
  REQUIRE_THROWS_WITH(pm::backward(m, w, x, Batch<Q>(3, 1), Batch<Q>(3, 2)),
                      Contains("backward: gradient g_y has 1 columns, expected 2"));
  REQUIRE_THROWS_WITH(pm::backward(m, w, x, Batch<Q>(3, 2), Batch<Q>(4, 2)),
                      Contains("backward: gradient g_z has 4 rows, expected the machine size 3"));
}

TEST_CASE("Sigma: an array of the wrong shape is rejected") {
  REQUIRE_THROWS_WITH(pm::GradedSpanMachine<Q>(Grading(3, {1, 2, 3}), chain_span(),
                                               pm::Sigma<Q>::array(Batch<Q>(2, 1))),
                      Contains("GradedSpanMachine: array sigma has 2 rows, expected 3"));
  const pm::GradedSpanMachine<Q> m(Grading(3, {1, 2, 3}), chain_span(),
                                   pm::Sigma<Q>::array(Batch<Q>(3, 2)));
  REQUIRE_THROWS_WITH(
      pm::forward(m, Function<Q>{Q(1), Q(1)}, Batch<Q>(3, 3), Batch<Q>(3, 3)),
      Contains("forward: array sigma has 2 columns, expected 1 or the batch size 3"));
  REQUIRE_THROWS_WITH(
      pm::as_machine(m, Function<Q>{Q(1), Q(1)}, 2),
      Contains("as_machine: column 2, expected < the 2 columns of the array sigma"));
}

TEST_CASE("Sigma: transcendental functions are refused for exact scalars") {
  REQUIRE_THROWS_WITH(pm::Sigma<Q>::tanh().value(Q(0), 0, 0),
                      Contains("Sigma tanh: not available for exact scalars"));
  REQUIRE_THROWS_WITH(pm::Sigma<Q>::softplus().derivative(Q(0), 0, 0),
                      Contains("Sigma softplus: not available for exact scalars"));
}

TEST_CASE("resolvent: an iteration that does not settle within the depth is an error") {
  // f(x) = x / 2 is a machine (R_f = 2 id) but of no finite depth.
  pm::Matrix<Q> a(1, 1);
  a(0, 0) = Q(1, 2);
  const auto half = pm::linear_machine(a);
  REQUIRE_THROWS_WITH(pm::resolvent(half, Function<Q>{Q(1)}, 3),
                      Contains("did not settle within depth 3: coordinate 0 still changes"));
  // A machine of depth 3 does not settle in 2 steps either.
  const auto f = pm::as_machine(chain(), Function<Q>{Q(2), Q(3)});
  const Function<Q> x0{Q(1), Q(0), Q(0), Q(0), Q(0), Q(0)};
  REQUIRE_THROWS_AS(pm::resolvent(f, x0, 5), pm::Error);
  REQUIRE_NOTHROW(pm::resolvent(f, x0, 6));
}

TEST_CASE("solve and machines: singular systems and wrong sizes are rejected") {
  pm::Matrix<Q> one(1, 1);
  one(0, 0) = Q(1);
  REQUIRE_THROWS_WITH(pm::linear_resolvent(one, Function<Q>{Q(1)}),
                      Contains("solve: matrix is singular (no pivot in column 0)"));
  REQUIRE_THROWS_WITH(pm::linear_machine(pm::Matrix<Q>(1, 2)),
                      Contains("linear_machine: matrix is 1 x 2, expected square"));
  const auto id2 = pm::linear_machine(pm::Matrix<Q>::identity(2));
  REQUIRE_THROWS_WITH(id2(Function<Q>{Q(1)}),
                      Contains("Machine: argument has length 1, expected 2"));
  REQUIRE_THROWS_WITH(pm::sum(id2, pm::linear_machine(one)),
                      Contains("sum: machines have sizes 2 and 1, expected equal"));
}

TEST_CASE("depth checks: a grading of the wrong length is rejected") {
  REQUIRE_THROWS_WITH(pm::has_depth(pm::Matrix<Q>(2, 2), Grading(1, {1})),
                      Contains("has_depth: matrix rows: grading has length 1, expected 2"));
  REQUIRE_THROWS_WITH(
      pm::has_depth_randomized(pm::linear_machine(pm::Matrix<Q>(2, 2)), Grading(1, {1}), 1, 0),
      Contains("has_depth_randomized: machine: grading has length 1, expected 2"));
  REQUIRE_THROWS_WITH(pm::clean(chain_span(), Grading(3, {1, 2, 3}), Function<Q>{Q(1)}),
                      Contains("clean: parameters has length 1, expected 2"));
}
