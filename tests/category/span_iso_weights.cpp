// is_span_isomorphism compares the weights as well as the legs: on a hand
// example, two spans with the same legs and one weight changed are not
// isomorphic through the identity of their apex, and are with it once the
// weights agree. The law properties and tests/category/spans.cpp pass
// when this check ignores the weights (mutant iso-witness-weights).
#include <catch2/catch.hpp>

#include "pm/category/scalar.hpp"
#include "pm/category/span_iso.hpp"

using namespace pm;
using Q = Rational;

TEST_CASE("is_span_isomorphism: a changed weight is not an isomorphism") {
  // X = {0, 1}, Y = {0}; edges 0 → 0 and 1 → 0.
  const Span<Q> a{FinMap(2, {0, 1}), FinMap(1, {0, 0}), Measure<Q>{Q(1), Q(2)}};
  Span<Q> b = a;
  CHECK(is_span_isomorphism(a, b, identity_map(2)));
  b.mu[1] = Q(3);
  CHECK_FALSE(is_span_isomorphism(a, b, identity_map(2)));
  CHECK_FALSE(is_span_isomorphism(b, a, identity_map(2)));
}
