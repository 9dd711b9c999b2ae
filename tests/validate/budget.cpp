// The value budget of check_layer and check_machine
// (ValidateOptions::value_budget): a layer or machine whose laws would pass
// more values through it than the budget runs fewer cases, at least
// min_scaled_cases, and its rows say so in every output; a small layer runs
// every case asked for; a large layer with a planted fault still fails
// within its scaled cases.
#include <catch2/catch.hpp>

#include "pm/layers.hpp"
#include "pm/validate/conformance.hpp"
#include "validate/support/conv_description.hpp"
#include "validate/support/hand_dense.hpp"
#include "validate/support/hand_machine.hpp"

using pm::Index;
using pm::Rational;
using pm::Status;

namespace {

using pm::validation::implementation_value_budget;
using pm::validation::min_scaled_cases;
using pm_test::result;

using Linear = pm_test::HandDense<double>;
using pm_test::dense_description;

// The cases a law of `calls` calls a case (its sides twice in double) runs
// on Linear{n, n} under the default budget, by the rule of docs/formats.md §3.
std::size_t expected_cases(std::size_t calls, Index n) {
  const std::size_t per_case = 2 * calls * (n + n + n * n);
  return std::min<std::size_t>(100,
                               std::max(min_scaled_cases, implementation_value_budget / per_case));
}

const char *const layer_laws[] = {"PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT"};

} // namespace

TEST_CASE("validator: check_layer runs a large layer's laws on a budget and its rows say so") {
  const Index n = 512; // 2^18 weights: a case of PSPAN-BILINEAR passes 10 · 263168 values
  const pm::Report rep = pm::check_layer(dense_description(n, n), Linear{n, n}, {100, 1}, "linear");
  INFO(pm::to_text(rep));
  REQUIRE(rep.passed());
  const std::string text = pm::to_text(rep);
  const nlohmann::json json = pm::to_json(rep);
  const std::string junit = pm::to_junit(rep, "budget");
  for (const char *law : layer_laws) {
    INFO(law);
    const pm::LawResult &r = result(rep, law);
    const std::size_t cases = expected_cases(std::string(law) == "PSPAN-BILINEAR" ? 5 : 2, n);
    CHECK(r.status == Status::passed);
    CHECK(r.cases == cases);
    CHECK(r.cases < 100);
    CHECK(r.cases >= min_scaled_cases);
    CHECK(r.cases_requested == 100);
    const std::string note = "ran " + std::to_string(cases) +
                             " of 100 cases: scaled to the layer's size (512 → 512 with "
                             "262144 parameters)";
    CHECK(r.detail.find(note) == 0);
    CHECK(r.detail.find("budget " + pm::validation::budget_text(implementation_value_budget) +
                        " values a law") != std::string::npos);
    // The note is printed under the table, and the JSON row never claims
    // more cases than ran.
    CHECK(text.find(std::string(law) + " on linear (passed): " + note) != std::string::npos);
    for (const auto &row : json["results"])
      if (row["law"] == law) {
        CHECK(row["cases"] == cases);
        CHECK(row["detail"] == r.detail);
      }
    CHECK(junit.find("name=\"" + std::string(law) + "\"") != std::string::npos);
    // (the apostrophe of "layer's" escaped)
    CHECK(junit.find("<system-out>" + std::string(law) + " on linear (passed): ran " +
                     std::to_string(cases) + " of 100 cases: scaled to the layer&apos;s size") !=
          std::string::npos);
  }
  // The comparison with the specification still runs at full size.
  CHECK(result(rep, "CONF-EQUAL forward").status == Status::passed);
}

TEST_CASE("validator: a small layer runs every case asked for, with no note") {
  const pm::Report rep = pm::check_layer(dense_description(8, 8), Linear{8, 8}, {100, 1}, "linear");
  INFO(pm::to_text(rep));
  CHECK(rep.passed());
  for (const char *law : layer_laws) {
    const pm::LawResult &r = result(rep, law);
    CHECK(r.status == Status::passed);
    CHECK(r.cases == 100);
    CHECK(r.cases_requested == 0);
    CHECK(r.detail.empty());
  }
  CHECK(pm::to_text(rep).find("scaled to") == std::string::npos);
  CHECK(pm::to_junit(rep, "budget").find("<system-out>") == std::string::npos);
}

TEST_CASE("validator: no_value_budget runs every case of a large layer") {
  pm::ValidateOptions opt{7, 1};
  opt.value_budget = pm::validation::no_value_budget;
  const pm::Report rep = pm::validate(Linear{256, 512}, "linear", opt);
  for (const char *law : layer_laws) {
    CHECK(result(rep, law).cases == 7);
    CHECK(result(rep, law).cases_requested == 0);
  }
}

TEST_CASE("PSPAN-ADJOINT mutant: a large layer's transpose wrong at one coefficient fails on a "
          "budget") {
  const Index n = 512;
  const pm::Report rep =
      pm::check_layer(dense_description(n, n), Linear{n, n, true}, {100, 1}, "linear");
  INFO(pm::to_text(rep));
  CHECK(!rep.passed());
  const pm::LawResult &r = result(rep, "PSPAN-ADJOINT");
  CHECK(r.status == Status::failed);
  CHECK(r.cases >= 1);
  CHECK(r.cases <= expected_cases(2, n));
  // Shrunk to the one wrong coefficient: w(0, 0) or w(0, 1), φ(0) and g(0).
  CHECK(r.detail.find("shrunk to w, φ, g") != std::string::npos);
  REQUIRE(!r.counterexample.tensors.empty());
  CHECK(r.counterexample.tensors[0].indices.size() <= 2);
  // The laws that hold pass on their scaled cases.
  CHECK(result(rep, "PSPAN-BILINEAR").status == Status::passed);
  CHECK(result(rep, "PSPAN-GRADIENT").status == Status::passed);
  CHECK(result(rep, "PSPAN-GRADIENT").cases == expected_cases(2, n));
}

TEST_CASE("validator: check_machine runs its laws and CONF-MACHINE on a budget and says so") {
  // A budget of 2^12 values makes this small machine (8 points, 64
  // parameters, exact) large for it: CONF-MACHINE's case alone counts
  // 16 · (64 + 8 · 8) = 2048 values.
  const auto spec = pm_test::dense_machine_spec({1, 1, 2, 2, 3, 3, 4, 4});
  pm::ValidateOptions opt{100, 1};
  opt.value_budget = std::size_t{1} << 12;
  const pm::Report rep = pm::check_machine(spec, pm_test::hand(spec), opt);
  INFO(pm::to_text(rep));
  CHECK(rep.passed());
  for (const char *law : {"MACH-CAUSALITY", "MACH-EQUATION", "MACH-BACKWARD", "MACH-PARAM-GRADIENT",
                          "CONF-MACHINE forward", "CONF-MACHINE backward"}) {
    INFO(law);
    const pm::LawResult &r = result(rep, law);
    CHECK(r.status == Status::passed);
    CHECK(r.cases >= min_scaled_cases);
    CHECK(r.cases < 100);
    CHECK(r.cases_requested == 100);
    CHECK(r.detail.find("ran " + std::to_string(r.cases) +
                        " of 100 cases: scaled to the machine's size (8 points, 64 parameters)") !=
          std::string::npos);
  }
  CHECK(result(rep, "CONF-MACHINE forward").cases == 2);
  // A backward that forgets the batch sum still fails on the budget.
  const pm::Report bad = pm::check_machine(spec, pm_test::hand(spec, true), opt);
  CHECK(result(bad, "CONF-MACHINE backward").status == Status::failed);
  CHECK(!bad.passed());
}
