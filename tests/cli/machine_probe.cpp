// Probe samples of a machine: `pmach probe MACHINE.json --out DIR`, a
// framework run on them, and `pmach check MACHINE.json --against DIR`. The
// "framework" is the reference solver of a machine file run sample by
// sample, as another framework would: of examples/data/faults/machine.json
// (correct), or of machine_level_typo.json (a level typo that zeroes the
// weights of two edges), whose linear part must be recovered from its
// outputs and diffed with the intended one, coefficient by coefficient.
#include <catch2/catch.hpp>

#include <map>

#include "cli/support/pmach_run.hpp"
#include "pm/io/batch_npy.hpp"
#include "pm/io/machine_format.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;
using pm_test::Run;

namespace {

const std::string faults = std::string(PMACH_DATA_DIR) + "/faults";
const pm_test::ScratchDir scratch("pm_cli_machine_probe");
const fs::path &work = scratch.path;
const pm_test::Pmach pmach{work};

// Runs the machine of `model` on the probes of `dir`, one sample at a time,
// and writes its outputs in `dtype`; `backward` adds the backward pass.
void run_framework(const fs::path &dir, const std::string &model, pm::io::Dtype dtype,
                   bool backward) {
  using pm::Index;
  const auto d = std::get<pm::io::MachineDescription>(pm::io::read_model(model));
  const pm::GradedSpanMachine<double> m = pm::io::make_machine<double>(d);
  auto read = [&](const char *f, const pm::Shape &s) {
    return pm::io::batch_from_npy<double>(pm::io::read_npy((dir / f).string()), s, f);
  };
  const auto w = read("w.npy", d.parameters), y0 = read("y0.npy", d.space),
             z0 = read("z0.npy", d.space), gy = read("gy.npy", d.space),
             gz = read("gz.npy", d.space);
  std::map<std::string, std::vector<double>> out;
  for (Index b = 0; b < w.cols; ++b) {
    auto col = [&](const pm::Batch<double> &v) {
      return pm::Batch<double>::from_columns(v.rows, {v.column(b)});
    };
    const pm::MachineState<double> x = pm::forward(m, w.column(b), col(y0), col(z0));
    const pm::Gradients<double> g = pm::backward(m, w.column(b), x, col(gy), col(gz));
    for (const auto &[name, v] :
         {std::pair{"y", &x.y.data}, std::pair{"z", &x.z.data}, std::pair{"grad_y0", &g.y0.data},
          std::pair{"grad_z0", &g.z0.data}, std::pair{"grad_w", &g.w}})
      out[name].insert(out[name].end(), v->begin(), v->end());
  }
  auto shape = [&](const pm::Shape &s) {
    std::vector<std::size_t> e{w.cols};
    e.insert(e.end(), s.extents().begin(), s.extents().end());
    return e;
  };
  for (const auto &[name, v] : out) {
    if (!backward && name.rfind("grad_", 0) == 0) continue;
    pm::io::write_npy((dir / (name + ".npy")).string(),
                      shape(name == "grad_w" ? d.parameters : d.space), v, dtype);
  }
}

Run round_trip(const std::string &name, const std::string &framework_model,
               pm::io::Dtype dtype = pm::io::Dtype::float64, bool backward = true) {
  const fs::path dir = work / name;
  fs::remove_all(dir);
  const Run p = pmach("probe " + faults + "/machine.json --cases 5 --out " + dir.string());
  INFO(p.err);
  REQUIRE(p.code == 0);
  // 5 cases of two samples, and the basis probes of 16 parameters on 4 points.
  CHECK(p.out.find("wrote 74 probe samples") != std::string::npos);
  run_framework(dir, framework_model, dtype, backward);
  return pmach("check " + faults + "/machine.json --cases 2 --json --against " + dir.string());
}

std::map<std::string, std::pair<std::string, std::string>> rows(const Run &r) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  const pm::io::Json report = pm::io::Json::parse(r.out);
  for (const auto &x : report["results"])
    if (x["subject"] == "graded machine as intended")
      out[x["law"].get<std::string>()] = {x["status"].get<std::string>(),
                                          x["detail"].get<std::string>()};
  return out;
}

} // namespace

TEST_CASE("pmach probe MACHINE: the correct framework passes, in float64 and float32") {
  for (const auto dtype : {pm::io::Dtype::float64, pm::io::Dtype::float32}) {
    const Run r = round_trip("ok", faults + "/machine.json", dtype);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    auto rs = rows(r);
    CHECK(rs["CONF-MACHINE forward"].first == "passed");
    CHECK(rs["CONF-MACHINE backward"].first == "passed");
    CHECK(rs["CONF-RECOVER"].first == "passed");
    CHECK(rs["CONF-RECOVER"].second.find("16 calls of forward") != std::string::npos);
    CHECK(rs["CONF-SPAN-DIFF"].first == "passed");
    CHECK(rs["CONF-SPAN-DIFF"].second.find("the spans agree on all 5 non-zero coefficients") !=
          std::string::npos);
  }
}

TEST_CASE("pmach probe MACHINE: a level typo is recovered from the outputs and diffed") {
  const Run r = round_trip("typo", faults + "/machine_level_typo.json");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  auto rs = rows(r);
  CHECK(rs["CONF-MACHINE forward"].first == "failed");
  CHECK(rs["CONF-MACHINE forward"].second.find("theirs") != std::string::npos);
  CHECK(rs["CONF-RECOVER"].first == "passed");
  const auto &[status, detail] = rs["CONF-SPAN-DIFF"];
  CHECK(status == "failed");
  CHECK(detail.find("2 of ") != std::string::npos);
  CHECK(detail.find("target (2) <- source (0) via parameter (2, 0): intended 1, implemented 0") !=
        std::string::npos);
}

TEST_CASE("pmach probe MACHINE: without backward files, the backward row is not applicable") {
  const Run r = round_trip("forward_only", faults + "/machine.json", pm::io::Dtype::float64, false);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  auto rs = rows(r);
  CHECK(rs["CONF-MACHINE backward"].first == "not applicable");
  CHECK(rs["CONF-SPAN-DIFF"].first == "passed");
}

TEST_CASE("pmach probe MACHINE: outputs absent or of other probes are caught") {
  const fs::path dir = work / "absent";
  fs::remove_all(dir);
  REQUIRE(pmach("probe " + faults + "/machine.json --out " + dir.string()).code == 0);
  const std::string check = "check " + faults + "/machine.json --cases 2 --against " + dir.string();
  const Run none = pmach(check);
  CHECK(none.code == 1);
  CHECK(none.out.find("no output tensor was compared") != std::string::npos);
  // The outputs of the probes of another seed: bad input.
  run_framework(dir, faults + "/machine.json", pm::io::Dtype::float64, true);
  fs::remove_all(work / "s7");
  REQUIRE(
      pmach("probe " + faults + "/machine.json --seed 7 --out " + (work / "s7").string()).code ==
      0);
  fs::copy_file(work / "s7" / "probe.json", dir / "probe.json",
                fs::copy_options::overwrite_existing);
  pm_test::expect_input_error(pmach(check), "no probe sample has the inputs");
  pm_test::expect_input_error(
      pmach("probe " + faults + "/conv2d.json --cases 3 --out " + (work / "layer").string()),
      "--cases is for machines");
}
