// The counterexample of a report row: sparse, in multi-index coordinates in
// the text, whole in JSON, and carried into JUnit XML with the repro line.
#include <catch2/catch.hpp>
#include <chrono>

#include "pm/category/scalar.hpp"
#include "pm/validate/report.hpp"

using pm::Rational;

namespace {

pm::LawResult failing_row() {
  pm::LawResult r{"PSPAN-ADJOINT",
                  "conv <a&b>",
                  pm::Status::failed,
                  3,
                  true,
                  0,
                  0,
                  7,
                  "case 2 (seed 7), shrunk to g"};
  // g on (o, y) = (2, 3): two non-zero entries out of six.
  std::vector<Rational> g(6, Rational(0));
  g[1] = Rational(3, 4);
  g[5] = Rational(-1, 6);
  r.counterexample.tensors.push_back(pm::sparse_tensor("g", {2, 3}, g, {"o", "y"}));
  r.counterexample.scalars = {{"case", "2"}};
  r.repro = "pmach check m.json --law PSPAN-ADJOINT --subject 'conv <a&b>' --seed 7 --cases 3";
  return r;
}

} // namespace

TEST_CASE("a counterexample tensor lists only its non-zero entries, by multi-index") {
  const pm::LawResult row = failing_row();
  const auto &t = row.counterexample.tensors[0];
  CHECK(t.indices == std::vector<std::size_t>{1, 5});
  CHECK(t.values == std::vector<std::string>{"3/4", "-1/6"});
  CHECK(pm::to_text(t) == "  g, shape (2, 3), axes (o, y): 2 of 6 entries non-zero\n"
                          "    g[o=0, y=1] = 3/4\n"
                          "    g[o=1, y=2] = -1/6\n");
  // Axis names that do not fit the shape are dropped, not misapplied.
  CHECK(pm::sparse_tensor("v", {6}, std::vector<int>{0, 0, 0, 0, 0, 0}, {"a", "b"}).axes.empty());
  CHECK(pm::to_text(pm::sparse_tensor("v", {6}, std::vector<int>(6, 0))) ==
        "  v, shape (6): all 6 entries 0\n");
}

TEST_CASE("a long counterexample is cut after the first entries, with a count") {
  std::vector<double> v(20, 0.5);
  const std::string text = pm::to_text(pm::sparse_tensor("w", {4, 5}, v));
  CHECK(text.find("w[1, 2] = 0.5\n") != std::string::npos); // the 8th entry, flat 7
  CHECK(text.find("w[1, 3]") == std::string::npos);         // the 9th is not printed
  CHECK(text.find("    ... and 12 more\n") != std::string::npos);
}

TEST_CASE("the table prints the detail, the sparse counterexample and the repro line") {
  pm::Report rep;
  rep.results.push_back(failing_row());
  const std::string text = pm::to_text(rep);
  CHECK(text.find("PSPAN-ADJOINT on conv <a&b> (failed): case 2 (seed 7), shrunk to g\n"
                  "  g, shape (2, 3), axes (o, y): 2 of 6 entries non-zero\n") !=
        std::string::npos);
  CHECK(text.find("  repro: pmach check m.json --law PSPAN-ADJOINT") != std::string::npos);
  // A tensor the detail lists already is left out of the text, not of the JSON.
  rep.results[0].counterexample.tensors[0].in_text = false;
  CHECK(pm::to_text(rep).find("g, shape") == std::string::npos);
  const auto j = pm::to_json(rep);
  CHECK(j["schema_version"] == pm::report_schema_version);
  CHECK(j["results"][0]["counterexample"]["tensors"][0]["values"][1] == "-1/6");
  CHECK(j["results"][0]["counterexample"]["scalars"]["case"] == "2");
  CHECK(j["results"][0]["repro"] == rep.results[0].repro);
}

TEST_CASE("Report::add times each row from the one before; JSON carries the seconds") {
  pm::Report rep;
  rep.add({"WF-SIZES", "dense", pm::Status::passed, 1, true, 0, 0, 0, ""});
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) {
  }
  rep.add({"WF-GRADING", "dense", pm::Status::passed, 1, true, 0, 0, 0, ""});
  CHECK(rep.results[1].seconds >= 0.02);
  CHECK(rep.results[0].seconds >= 0);
  const auto j = pm::to_json(rep);
  CHECK(j["results"][1]["seconds"] == rep.results[1].seconds);
  CHECK(j["seconds"] == rep.results[0].seconds + rep.results[1].seconds);
}

TEST_CASE("Report::append: a row added after appended rows is timed from them, not before") {
  pm::Report rep;
  pm::Report inner;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) {
  }
  inner.add({"WF-SIZES", "dense", pm::Status::passed, 1, true, 0, 0, 0, ""});
  rep.append(inner);
  rep.add({"WF-GRADING", "dense", pm::Status::passed, 1, true, 0, 0, 0, ""});
  // The inner row's 20 ms are its own: the outer row does not count them
  // again (the report's total was counted twice before).
  CHECK(rep.results[0].seconds >= 0.02);
  CHECK(rep.results[1].seconds < rep.results[0].seconds);
}

TEST_CASE("a passing row has neither counterexample nor repro in JSON") {
  pm::Report rep;
  rep.results.push_back({"WF-SIZES", "dense", pm::Status::passed, 1, true, 0, 0, 0, ""});
  const auto j = pm::to_json(rep);
  CHECK(!j["results"][0].contains("counterexample"));
  CHECK(!j["results"][0].contains("repro"));
}

TEST_CASE("JUnit XML: counts, escaped names, the failure with its details") {
  pm::Report rep;
  rep.results.push_back(failing_row());
  rep.results.push_back({"PSPAN-GRADIENT", "conv", pm::Status::not_applicable, 0, true, 0, 0, 7,
                         "the layer has no parameters"});
  rep.results.push_back({"WF-SIZES", "conv", pm::Status::passed, 1, true, 0, 0, 0, ""});
  rep.results[0].seconds = 1.25;
  rep.results[2].seconds = 0.5;
  const std::string x = pm::to_junit(rep, "m.json");
  CHECK(x.find("<testsuite name=\"m.json\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" "
               "time=\"1.750\">") != std::string::npos);
  CHECK(x.find("classname=\"conv &lt;a&amp;b&gt;\" name=\"PSPAN-ADJOINT\" time=\"1.250\"") !=
        std::string::npos);
  CHECK(x.find("name=\"WF-SIZES\" time=\"0.500\"/>") != std::string::npos);
  CHECK(x.find("<failure type=\"failed\" message=\"case 2 (seed 7), shrunk to g\">") !=
        std::string::npos);
  CHECK(x.find("    g[o=1, y=2] = -1/6\n") != std::string::npos);
  CHECK(x.find("--subject &apos;conv &lt;a&amp;b&gt;&apos;") != std::string::npos);
  CHECK(x.find("<skipped message=\"the layer has no parameters\"/>") != std::string::npos);
  // Control characters have no place in XML 1.0.
  rep.results[0].detail = std::string("bad\x01") + "byte";
  CHECK(pm::to_junit(rep, "m.json").find("message=\"bad?byte\"") != std::string::npos);
}
