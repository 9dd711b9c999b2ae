#pragma once
// Support for laws written as RapidCheck properties.
//
// Every law is checked twice: the reference implementation must satisfy it,
// and a deliberately wrong variant (a mutant) must be rejected by it, so that
// each property is shown able to fail. `rejects` runs a property without
// printing and reports whether RapidCheck found a counterexample. The seed and
// the number of cases come from RC_PARAMS (e.g. RC_PARAMS="seed=42
// max_success=500"); RapidCheck prints the seed it uses.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <cmath>
#include <limits>

#include "pm/numeric/rounding.hpp"

// PM_LAW(ID, NAME, CALL_REF, CALL_MUT) declares the two test cases of a law:
// "ID: NAME" runs CALL_REF as a property (the reference must satisfy it), and
// "ID mutant: NAME" requires the property with CALL_MUT to be rejected.
#define PM_LAW(ID, NAME, CALL_REF, CALL_MUT)                                                       \
  TEST_CASE(ID ": " NAME) {                                                                        \
    rc::prop(ID, [] { CALL_REF; });                                                                \
  }                                                                                                \
  TEST_CASE(ID " mutant: " NAME) {                                                                 \
    REQUIRE(pm_test::rejects([] { CALL_MUT; }));                                                   \
  }

namespace pm_test {

// A mutant must be caught reliably, not by luck of the seed: the search for a
// counterexample runs up to `mutant_cases` cases (it stops at the first
// failure) from the configured seed, without shrinking.
constexpr int mutant_cases = 5000;

template <class Testable> bool rejects(Testable &&property) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = mutant_cases;
  params.disableShrinking = true;
  const auto result = rc::detail::checkTestable(std::forward<Testable>(property),
                                                rc::detail::TestMetadata{}, params);
  return result.template is<rc::detail::FailureResult>();
}

// γ_n = n u / (1 − n u), u the unit roundoff of T (Higham, "Accuracy and
// Stability of Numerical Algorithms", §3.1): the relative error bound of a
// chain of n roundings. See docs/tolerances.md.
using pm::gamma;

// |a − b| ≤ γ_n (ma + mb), where ma and mb bound Σ|terms| of the computations
// that produced a and b (obtained by running them on absolute values).
template <class T> bool within_bound(T a, T b, T ma, T mb, std::size_t n) {
  return std::abs(a - b) <= gamma<T>(n) * (ma + mb);
}

} // namespace pm_test
