// The pmach command, run as a user runs it: exit codes, the conformance
// table, a planted error caught with its counterexample, eval outputs equal
// to the C++ API's, DOT output, and bad input answered by one line and exit
// code 2. PMACH_EXECUTABLE and PMACH_DATA_DIR are set by src/cli/CMakeLists.txt.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/support/pmach_run.hpp"
#include "pm/io/batch_npy.hpp"
#include "pm/io/machine_format.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

const std::string data = PMACH_DATA_DIR;
const pm_test::ScratchDir scratch("pm_cli_test");
const fs::path &work = scratch.path;

const pm_test::Pmach pmach{work};
using pm_test::count;
using pm_test::expect_input_error;
using pm_test::Run;
using pm_test::slurp;

} // namespace

TEST_CASE("pmach check: the conformance table of the catalogue") {
  const Run r = pmach("check --cases 4 --seed 9");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.rfind("law ", 0) == 0);
  for (const char *subject :
       {"dense+bias", "conv2d (exact)", "graph conv mean", "average pool 2d", "DenseMachine tanh",
        "ConvMachine 2d tanh", "RecurMachine relu (exact)"})
    CHECK(r.out.find(subject) != std::string::npos);
  CHECK(r.out.find(" 0 failed, 0 too weak") != std::string::npos);

  const Run j = pmach("check --cases 2 --json");
  CHECK(j.code == 0);
  const auto report = nlohmann::json::parse(j.out);
  CHECK(report["passed"] == true);
  CHECK(report["results"].size() > 100);
  CHECK(report["results"][1]["seed"] == 1);
  // Durations: each row's and the check's (their sum).
  CHECK(report["results"][1]["seconds"].is_number());
  CHECK(report["seconds"].get<double>() >= report["results"][1]["seconds"].get<double>());
}

TEST_CASE("pmach check --progress: each step and row named on stderr, the report alone on stdout") {
  // Not a terminal: nothing on stderr without the flag.
  const Run quiet = pmach("check --cases 2 --law PSPAN-ADJOINT");
  CHECK(quiet.code == 0);
  CHECK(quiet.err.empty());
  const Run r = pmach("check --cases 2 --law PSPAN-ADJOINT --progress");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.rfind("law ", 0) == 0);
  CHECK(r.out.find("pmach check:") == std::string::npos);
  // One line per catalogue entry as it starts, numbered k/N from 1 to N,
  // and one per row as it finishes, named by its step, with its status.
  const std::size_t lines = count(r.err, "\n"), rows = count(r.err, " s)\n");
  const std::size_t steps = lines - rows;
  REQUIRE(steps > 10);
  CHECK(rows > 10);
  CHECK(count(r.err, "pmach check: ") == lines);
  CHECK(r.err.rfind("pmach check: 1/" + std::to_string(steps) + " ", 0) == 0);
  CHECK(r.err.find("pmach check: " + std::to_string(steps) + "/" + std::to_string(steps) + " ") !=
        std::string::npos);
  CHECK(count(r.err, ": PSPAN-ADJOINT on ") == rows);
  CHECK(count(r.err, " passed (") == rows);

  const Run k = pmach("check " + data + "/dense.json --cases 2 --kernels --progress");
  INFO(k.err);
  CHECK(k.code == 0);
  const std::string laws = "pmach check: the laws on " + data + "/dense.json";
  CHECK(k.err.rfind(laws + "\n" + laws + ": WF-SIZES on ", 0) == 0);
  CHECK(k.err.find("\npmach check: the kernels (--kernels)\npmach check: the kernels (--kernels): "
                   "KERNEL-") != std::string::npos);
}

TEST_CASE("pmach check: a layer file with a planted error is rejected with its counterexample") {
  const Run r = pmach("check " + data + "/planted_grading_error.json --cases 10");
  CHECK(r.code == 1);
  CHECK(r.out.find("WF-GRADING") != std::string::npos);
  CHECK(
      r.out.find("edge 3 (s = 1 of grade 2, t = 0 of grade 2, pi = 2) does not raise the grade") !=
      std::string::npos);
  // The example layers themselves pass.
  for (const char *f : {"dense", "conv1d", "avgpool", "graph", "graded_machine", "recur_machine"})
    CHECK(pmach("check " + data + "/" + f + ".json --cases 10").code == 0);
}

TEST_CASE("pmach check --against: per tensor, the error against the derived bound") {
  const Run ok =
      pmach("check " + data + "/dense.json --cases 5 --against " + data + "/samples_dense");
  CHECK(ok.code == 0);
  CHECK(count(ok.out, "SAMPLE ") == 3);
  const Run bad =
      pmach("check " + data + "/dense.json --cases 5 --against " + data + "/samples_dense_wrong");
  INFO(bad.out);
  CHECK(bad.code == 1);
  CHECK(bad.out.find("SAMPLE grad_w on dense 3 -> 2 (failed): element 0") != std::string::npos);
  CHECK(bad.out.find("SAMPLE grad_x") != std::string::npos);
}

TEST_CASE("pmach check --against: the bound rejects an error a few ulps too large") {
  // dense.json: y = W x with W = [[0.5, -1, 2], [0.25, 0, -0.75]]; for
  // x = (1, 2, 3) the exact y is (4.5, -2): a float64 file holding it passes,
  // one off by 2^-48 · |y| (far below float32, above float64 rounding) fails.
  const fs::path ok = work / "against_ok", bad = work / "against_bad";
  for (const auto &[dir, y0] : {std::pair{ok, 4.5}, std::pair{bad, 4.5 * (1 + 0x1p-48)}}) {
    fs::create_directories(dir);
    pm::io::write_npy((dir / "x.npy").string(), {1, 3}, {1, 2, 3});
    pm::io::write_npy((dir / "y.npy").string(), {1, 2}, {y0, -2});
  }
  const std::string model = "check " + data + "/dense.json --cases 2 --against ";
  CHECK(pmach(model + ok.string()).code == 0);
  const Run r = pmach(model + bad.string());
  CHECK(r.code == 1);
  CHECK(r.out.find("SAMPLE y on dense 3 -> 2 (failed): element 0") != std::string::npos);
}

TEST_CASE("pmach check --against: a machine's forward and backward samples") {
  const std::string model = data + "/dense_machine.json --cases 3 --against " + data;
  const Run ok = pmach("check " + model + "/samples_dense_machine");
  INFO(ok.out);
  CHECK(ok.code == 0);
  for (const char *t :
       {"SAMPLE y ", "SAMPLE z ", "SAMPLE grad_y0", "SAMPLE grad_z0", "SAMPLE grad_w"})
    CHECK(ok.out.find(t) != std::string::npos);
  // The sweep that forgets tanh' in the backward pass: forward rows pass,
  // every cotangent fails.
  const Run bad = pmach("check " + model + "/samples_dense_machine_wrong --json");
  CHECK(bad.code == 1);
  const auto report = nlohmann::json::parse(bad.out);
  std::map<std::string, std::string> status;
  for (const auto &r : report["results"]) status[r["law"]] = r["status"];
  CHECK(status["SAMPLE y"] == "passed");
  CHECK(status["SAMPLE z"] == "passed");
  CHECK(status["SAMPLE grad_y0"] == "failed");
  CHECK(status["SAMPLE grad_z0"] == "failed");
  CHECK(status["SAMPLE grad_w"] == "failed");
}

TEST_CASE("pmach eval: outputs agree with the C++ API, bit for bit") {
  const fs::path out = work / "eval";
  fs::remove_all(out);
  const std::string y0 = data + "/dense_machine_y0.npy";
  const Run r = pmach("eval " + data + "/dense_machine.json --y0 " + y0 + " --ybar " + y0 +
                      " --out " + out.string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto model = pm::io::read_model(data + "/dense_machine.json");
  const auto &d = std::get<pm::io::MachineDescription>(model);
  const auto m = pm::io::make_machine<double>(d);
  const auto y0b = pm::io::batch_from_npy<double>(pm::io::read_npy(y0), d.space, y0);
  const pm::MachineState<double> x = pm::forward(m, *d.weights, y0b, pm::Batch<double>(7, 2));
  const pm::Gradients<double> g = pm::backward(m, *d.weights, x, y0b, pm::Batch<double>(7, 2));
  auto read = [&](const char *f) { return pm::io::read_npy((out / f).string()); };
  CHECK(read("y.npy").shape == std::vector<std::size_t>{2, 7});
  CHECK(read("y.npy").data == x.y.data);
  CHECK(read("z.npy").data == x.z.data);
  CHECK(read("grad_y0.npy").data == g.y0.data);
  CHECK(read("grad_z0.npy").data == g.z0.data);
  CHECK(read("grad_w.npy").shape == std::vector<std::size_t>{7, 7});
  CHECK(read("grad_w.npy").data == g.w);
}

TEST_CASE("pmach eval: exact precision over the rationals, and float precision in float32") {
  const fs::path out = work / "exact";
  fs::remove_all(out);
  const std::string y0 = data + "/graded_machine_y0.npy";
  const Run r = pmach("eval " + data + "/graded_machine.json --y0 " + y0 + " --zbar " + y0 +
                      " --out " + out.string() + " --precision exact --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["written"].size() == 5);
  const auto d =
      std::get<pm::io::MachineDescription>(pm::io::read_model(data + "/graded_machine.json"));
  const auto m = pm::io::make_machine<pm::Rational>(d);
  pm::Function<pm::Rational> w;
  for (double v : *d.weights) w.push_back(pm::Rational(v));
  const auto y0b = pm::io::batch_from_npy<pm::Rational>(pm::io::read_npy(y0), d.space, y0);
  const auto x = pm::forward(m, w, y0b, pm::Batch<pm::Rational>(4, 1));
  const auto z = pm::io::read_npy((out / "z.npy").string());
  CHECK(z.shape == std::vector<std::size_t>{4}); // a single sample: no batch axis
  for (std::size_t i = 0; i < 4; ++i) CHECK(z.data[i] == x.z(i, 0).convert_to<double>());

  const Run refused = pmach("eval " + data + "/dense_machine.json --y0 " + data +
                            "/dense_machine_y0.npy --out " + out.string() + " --precision exact");
  expect_input_error(refused, "--precision exact needs a sigma with rational values");

  const Run f = pmach("eval " + data + "/dense.json --y0 " + data + "/samples_dense/x.npy --out " +
                      (work / "float").string() + " --precision float");
  REQUIRE(f.code == 0);
  const auto y = pm::io::read_npy((work / "float" / "y.npy").string());
  CHECK(y.dtype == pm::io::Dtype::float32);
  CHECK(y.shape == std::vector<std::size_t>{2, 2});
}

TEST_CASE("pmach dot: levels as ranks") {
  const Run r = pmach("dot " + data + "/graded_machine.json");
  CHECK(r.code == 0);
  CHECK(r.out.rfind("digraph machine {", 0) == 0);
  CHECK(count(r.out, "<B>level ") == 3);
  // Cleaning keeps the edges that raise the level: from the two points of
  // level 1 to the two above, and from level 2 to level 3; the other 11 of
  // the 16 do not raise it and are drawn red.
  CHECK(count(r.out, "color=\"#000000\"") == 2 * 2 + 1);
  CHECK(count(r.out, "penwidth=2") == 16 - 5);
  const Run l = pmach("dot " + data + "/avgpool.json --out " + (work / "pool.dot").string());
  CHECK(l.code == 0);
  CHECK(count(slurp(work / "pool.dot"), "label=\"0.5\"") == 6);
}

TEST_CASE("pmach: --help on every subcommand, and bad input is one line with exit code 2") {
  for (const char *sub : {"check", "eval", "dot", "make", "probe"})
    for (const char *flag : {" --help", " -h", " model.json -h"}) { // -h as --help, anywhere
      const Run h = pmach(std::string(sub) + flag);
      INFO(sub << flag);
      CHECK(h.code == 0);
      CHECK(h.out.rfind(std::string("usage: pmach ") + sub, 0) == 0);
    }
  CHECK(pmach("--help").code == 0);
  expect_input_error(pmach(""), "expected a command");
  expect_input_error(pmach("frobnicate"), "unknown command 'frobnicate'");
  expect_input_error(pmach("check --cases"), "option --cases expects a value");
  expect_input_error(pmach("check --cases -3"),
                     "--cases: is '-3', expected a non-negative integer");
  expect_input_error(pmach("check --bogus"), "unknown option --bogus");
  expect_input_error(pmach("check /nonexistent/m.json"), "/nonexistent/m.json: cannot open");
  std::ofstream(work / "broken.json") << "{\"pmach\": 1, \"kind\": \"layer\",";
  expect_input_error(pmach("check " + (work / "broken.json").string()), "JSON syntax error");
  expect_input_error(pmach("eval " + data + "/dense.json --out " + work.string()),
                     "eval: expected --y0 FILE");
  // A truncated .npy and one holding NaN, as inputs.
  const std::string bytes = pm::io::format_npy({2, 3}, {1, 2, 3, 4, 5, 6});
  std::ofstream(work / "short.npy", std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  expect_input_error(pmach("eval " + data + "/dense.json --y0 " + (work / "short.npy").string() +
                           " --out " + work.string()),
                     "short.npy: npy field 'data': expected 48 bytes");
  pm::io::write_npy((work / "nan.npy").string(), {3}, {1, std::nan(""), 3});
  expect_input_error(pmach("eval " + data + "/dense.json --y0 " + (work / "nan.npy").string() +
                           " --out " + work.string()),
                     "nan.npy: npy field 'data': element 1 is not finite");
  // A wrong shape names what was expected.
  pm::io::write_npy((work / "wide.npy").string(), {2, 4}, std::vector<double>(8, 1.0));
  expect_input_error(pmach("eval " + data + "/dense.json --y0 " + (work / "wide.npy").string() +
                           " --out " + work.string()),
                     "wide.npy: npy field 'shape': expected (batch, 3)");
}
