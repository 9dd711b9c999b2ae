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
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "pm/numeric/rounding.hpp"

// PM_LAW(ID, NAME, CALL_REF, CALL_MUT) declares the two test cases of a law:
// "ID: NAME" runs CALL_REF as a property (the reference must satisfy it, and
// its cases must be non-trivial often enough, see `classify`), and
// "ID mutant: NAME" requires the property with CALL_MUT to be rejected.
#define PM_LAW(ID, NAME, CALL_REF, CALL_MUT)                                                       \
  TEST_CASE(ID ": " NAME) {                                                                        \
    pm_test::census() = {};                                                                        \
    rc::prop(ID, [] { CALL_REF; });                                                                \
    pm_test::require_nontrivial_share(ID);                                                         \
  }                                                                                                \
  TEST_CASE(ID " mutant: " NAME) {                                                                 \
    REQUIRE(pm_test::rejects([] { CALL_MUT; }));                                                   \
  }

namespace pm_test {

// Every law marks each of its cases trivial or not (what is trivial is the
// law's to say: an empty composite, a machine whose weights are all invalid, a
// zero output). The counts are printed as the law's distribution, and at
// least `min_nontrivial_share` of the cases must be non-trivial, so that a
// generator drifting back to degenerate cases fails the suite.
struct Census {
  int cases = 0, nontrivial = 0;
};
inline Census &census() {
  static Census c;
  return c;
}
inline void classify(bool nontrivial) {
  ++census().cases;
  census().nontrivial += nontrivial ? 1 : 0;
  RC_TAG(nontrivial ? "non-trivial" : "trivial");
}
// A common notion of non-trivial: the compared output is not all zero.
template <class V> bool any_nonzero(const V &v) {
  for (const auto &x : v)
    if (x != decltype(x)(0)) return true;
  return false;
}
constexpr double min_nontrivial_share = 0.5;
inline void require_nontrivial_share(const char *id) {
  const Census c = census();
  std::printf("distribution %s: %d/%d non-trivial\n", id, c.nontrivial, c.cases);
  INFO(id << ": " << c.nontrivial << " of " << c.cases << " cases non-trivial");
  REQUIRE(c.cases > 0); // the law classifies its cases
  REQUIRE(c.nontrivial >= min_nontrivial_share * c.cases);
}

// A mutant is judged with the power the suite has: the number of cases of the
// law itself (RC_PARAMS max_success, 100 by default), from the configured
// seed, without shrinking. With PM_KILL_SEEDS=N the search instead runs from
// each of the seeds 1..N, prints the kill rate, and requires at least 99 % of
// the seeds to find a counterexample (`scripts/mutate.py --kill-rates`
// collects them into docs/traceability.md).
inline bool killed_once(const auto &property, const rc::detail::TestParams &params) {
  const auto result = rc::detail::checkTestable(property, rc::detail::TestMetadata{}, params);
  return result.template is<rc::detail::FailureResult>();
}

template <class Testable> bool rejects(const Testable &property) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.disableShrinking = true;
  const char *env = std::getenv("PM_KILL_SEEDS");
  const int seeds = env == nullptr ? 0 : std::atoi(env);
  if (seeds <= 0) return killed_once(property, params);
  int kills = 0;
  for (int s = 1; s <= seeds; ++s) {
    params.seed = static_cast<std::uint64_t>(s);
    kills += killed_once(property, params) ? 1 : 0;
  }
  std::printf("kill rate %s: %d/%d\n", Catch::getResultCapture().getCurrentTestName().c_str(),
              kills, seeds);
  return kills >= 0.99 * seeds;
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
