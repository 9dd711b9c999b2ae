// Intent from the command line: pmach make, check --same-as, lints, honest
// --against rows, and the probe round trip, with every fault class of
// examples/data/faults/ planted and caught, the differing coefficients
// printed, and the correct versions passing. The "framework" of the probe
// round trip is the hand-written conv2d of tests/validate/support/.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "cli/support/pmach_run.hpp"
#include "pm/io/batch_npy.hpp"
#include "pm/io/json_field.hpp"
#include "tests/support/scratch.hpp"
#include "validate/support/hand_conv.hpp"

namespace fs = std::filesystem;
using pm_test::count;
using pm_test::Fault;
using pm_test::Run;

namespace {

const std::string data = PMACH_DATA_DIR;
const std::string faults = data + "/faults";
const pm_test::ScratchDir scratch("pm_cli_intent");
const fs::path &work = scratch.path;
const pm_test::Pmach pmach{work};

// examples/data/faults/conv2d.json as a ConvSpec (see make_faults.py).
const pm::ConvSpec intended{{5, 6}, 2, 4, {2, 3}, {1, 2}, {1, 2}, {1, 1}, {1, 2}, 2};
const std::string make_intended = "make conv --in 2 --out 4 --size 5 6 --kernel 2 3 --padding 1 2 "
                                  "--dilation 1 2 --groups 2";

std::string made(const std::string &args, const std::string &name) {
  const std::string file = (work / name).string();
  const Run r = pmach(args + " --file " + file);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return file;
}

} // namespace

TEST_CASE("pmach check MODEL.json: says what its laws check, and refuses --cases 0") {
  const Run r = pmach("check " + faults + "/conv2d.json --cases 2");
  CHECK(r.code == 0);
  CHECK(r.out.find("hold by construction for any span read from a file") != std::string::npos);
  CHECK(r.out.find("--same-as") != std::string::npos);
  pm_test::expect_input_error(pmach("check " + faults + "/conv2d.json --cases 0"),
                              "--cases: is 0, expected at least 1");
  pm_test::expect_input_error(pmach("check --cases 0"), "--cases: is 0");
}

TEST_CASE("pmach make: the constructor's file equals the hand-written intended one") {
  const std::string file = made(make_intended, "made.json");
  const Run r = pmach("check " + file + " --cases 2 --json --same-as " + faults + "/conv2d.json");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("the spans agree on all 560 non-zero coefficients") != std::string::npos);
  // Every constructor writes a file that checks.
  for (const char *args :
       {"make dense --in 3 --out 2 --bias", "make pool --channels 2 --size 4 5 --kernel 2 2",
        "make time-conv --length 5 --in 2 --out 3 --lag 2",
        "make conv --in 1 --out 2 --size 6 --kernel 3 --transpose",
        "make dense-machine --dims 2 3 --sigma tanh",
        "make conv-machine --dims 1 2 --sigma relu --size 4 --padding 1 1",
        "make recur-machine --dims 1 2 --sigma relu --length 4 --lag 1 --timeblock 2"}) {
    INFO(args);
    const std::string f = made(args, "any.json");
    CHECK(pmach("check " + f + " --cases 2").code == 0);
  }
  pm_test::expect_input_error(pmach("make conv --in 2 --out 4 --size 5 6 --kernel 2"),
                              "--kernel: has 1 values, expected 2");
  pm_test::expect_input_error(pmach("make cnov"), "unknown constructor 'cnov'");
}

TEST_CASE("pmach make graph: the graph convolution of an edge list, normalised") {
  // 5 nodes; with self loops node 1 has in-degree 2 (0 -> 1 and its loop),
  // node 3 in-degree 2 (1 -> 3 and its loop).
  const std::string graph = "make graph --nodes 5 --edges 0 1 1 2 2 0 3 4 1 3 --in 2 --out 3 "
                            "--self-loops --norm mean";
  const std::string file = made(graph, "graph.json");
  const pm::io::Json j = pm::io::read_json(file);
  CHECK(j["source"]["shape"] == pm::io::Json::array({5, 2}));
  CHECK(j["target"]["shape"] == pm::io::Json::array({5, 3}));
  CHECK(j["parameters"]["shape"] == pm::io::Json::array({2, 3}));
  const auto &edges = j["edges"]["list"];
  CHECK(edges.size() == 10 * 2 * 3); // (5 edges + 5 loops) × c_in × c_out
  CHECK(pmach("check " + file + " --cases 2").code == 0);
  // The same graph with its edges in another order is the same layer; with
  // the edge 1 -> 3 missing it is not, and node 3's coefficients say so
  // (mean: 1/2 with the edge, 1 without).
  const Run same =
      pmach("check " + file + " --cases 2 --same-as " +
            made("make graph --nodes 5 --edges 1 3 3 4 2 0 1 2 0 1 --in 2 --out 3 --self-loops "
                 "--norm mean",
                 "graph_permuted.json"));
  CHECK(same.code == 0);
  const Run missing = pmach(
      "check " + file + " --cases 2 --same-as " +
      made("make graph --nodes 5 --edges 0 1 1 2 2 0 3 4 --in 2 --out 3 --self-loops --norm mean",
           "graph_missing.json"));
  INFO(missing.out);
  CHECK(missing.code == 1);
  CHECK(missing.out.find("target (3, 0) <- source (1, 0) via parameter (0, 0): intended 1/2, "
                         "implemented 0") != std::string::npos);
  CHECK(missing.out.find("target (3, 0) <- source (3, 0) via parameter (0, 0): intended 1/2, "
                         "implemented 1") != std::string::npos);
  // Symmetric normalisation takes any degrees: 1/sqrt(2) is written as the
  // rational value of its nearest double (docs/formats.md §2.2).
  CHECK(made("make graph --nodes 2 --edges 0 1 --in 1 --out 1 --norm symmetric", "sym.json") != "");
  CHECK(made("make graph --nodes 5 --edges 0 1 1 2 --in 1 --out 1 --self-loops --norm symmetric",
             "sym2.json") != "");
  pm_test::expect_input_error(pmach("make graph --nodes 2 --edges 0 1 1 --in 1 --out 1"),
                              "expected pairs u v");
  pm_test::expect_input_error(pmach("make graph --nodes 2 --edges 0 2 --in 1 --out 1"),
                              "edge 0 is (0, 2), expected node indices < 2");
}

TEST_CASE("pmach make conv --layout torch: channel first, parameters (out, in/groups, kernel)") {
  const std::string file = made(make_intended + " --layout torch", "torch.json");
  const pm::io::Json j = pm::io::read_json(file);
  CHECK(j["source"]["shape"] == pm::io::Json::array({2, 5, 6}));
  CHECK(j["target"]["shape"] == pm::io::Json::array({4, 6, 6}));
  CHECK(j["parameters"]["shape"] == pm::io::Json::array({4, 1, 2, 3}));
  // Not the same spaces as the pm layout, so --same-as says so.
  const Run r = pmach("check " + file + " --cases 2 --same-as " + faults + "/conv2d.json");
  CHECK(r.code == 1);
  CHECK(r.out.find("the source spaces differ: (2, 5, 6)") != std::string::npos);
}

TEST_CASE("pmach check --same-as: each planted fault is caught with its coefficients") {
  const std::map<std::string, std::string> pattern{
      {"conv2d_wrong_dilation", "source axis 1 moves by -1 per step of parameter axis 1"},
      {"conv2d_wrong_padding", "is shifted by"},
      {"conv2d_reversed_kernel", "a kernel flipped on one axis: parameter axis 0 reversed"},
      {"conv2d_missing_group", "intended coefficients the implementation lacks: exactly those"}};
  for (const auto &[file, p] : pattern) {
    const Run r = pmach("check " + faults + "/conv2d.json --cases 2 --same-as " + faults + "/" +
                        file + ".json");
    INFO(file << "\n" << r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("CONF-SPAN-DIFF on ") != std::string::npos);
    CHECK(r.out.find(p) != std::string::npos);
    CHECK(r.out.find(": intended 1, implemented 0") != std::string::npos);
    CHECK(r.out.find("  target (") != std::string::npos);
  }
}

TEST_CASE("pmach check --same-as: a level typo that zeroes weights in a machine") {
  const Run ok =
      pmach("check " + faults + "/machine.json --cases 2 --same-as " + faults + "/machine.json");
  CHECK(ok.code == 0);
  const Run r = pmach("check " + faults + "/machine.json --cases 2 --same-as " + faults +
                      "/machine_level_typo.json");
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(r.out.find("point (2) has level 2 in") != std::string::npos);
  CHECK(r.out.find("target (2) <- source (0) via parameter (2, 0): intended 1, implemented 0") !=
        std::string::npos);
}

TEST_CASE("pmach check --same-as: the differing coefficients are the row's counterexample") {
  const Run r = pmach("check " + faults + "/machine.json --cases 2 --json --same-as " + faults +
                      "/machine_level_typo.json");
  INFO(r.out);
  CHECK(r.code == 1);
  std::map<std::string, pm::io::Json> rows; // CONF-SPAN-DIFF by the end of its subject
  const pm::io::Json report = pm::io::Json::parse(r.out);
  for (const auto &row : report["results"]) {
    const std::string subject = row["subject"];
    if (row["law"] == "CONF-SPAN-DIFF") rows[subject.substr(subject.rfind(" ("))] = row;
  }
  REQUIRE(rows.size() == 2);
  CHECK(rows[" (spans)"]["status"] == "passed"); // the typo is in the grading
  CHECK(!rows[" (spans)"].contains("counterexample"));
  const pm::io::Json &c = rows[" (cleaned)"]["counterexample"];
  REQUIRE(c["tensors"].size() == 1);
  const pm::io::Json &d = c["tensors"][0];
  CHECK(d["name"] == "implemented − intended");
  // Target (4) × source (4) × parameters (4, 4).
  CHECK(d["shape"] == pm::io::Json::array({4, 4, 4, 4}));
  CHECK(d["axes"] == pm::io::Json::array({"t0", "s0", "p0", "p1"}));
  // The two weights into point 2 that cleaning removes (intended 1,
  // implemented 0): target 2 <- source 0 via (2, 0), flat ((2·4 + 0)·16 + 8),
  // and target 2 <- source 1 via (2, 1), flat ((2·4 + 1)·16 + 9).
  CHECK(d["indices"] == pm::io::Json::array({136, 153}));
  CHECK(d["values"] == pm::io::Json::array({"-1", "-1"}));
  CHECK(c["scalars"]["differences"] == "2");
  // The table lists the differences in its detail, not a second time.
  const Run text = pmach("check " + faults + "/machine.json --cases 2 --same-as " + faults +
                         "/machine_level_typo.json");
  CHECK(text.out.find("implemented − intended") == std::string::npos);
}

TEST_CASE("pmach check --same-as: a permuted edge list is no difference") {
  pm::io::Json j = pm::io::read_json(made(make_intended, "made.json"));
  auto &list = j["edges"]["list"];
  std::reverse(list.begin(), list.end());
  const fs::path file = work / "permuted.json";
  std::ofstream(file) << j.dump();
  const Run r = pmach("check " + file.string() + " --cases 2 --same-as " + faults + "/conv2d.json");
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE("pmach check: lints are warning rows with counts, and fail nothing") {
  const Run r = pmach("check " + faults + "/conv2d_wrong_padding.json --cases 2");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("LINT dropped edges on conv2d, padding offset -3 on h (warning): 472 of 864 "
                   "candidate edges") != std::string::npos);
  CHECK(r.out.find(", 1 warning") != std::string::npos);
  const Run m = pmach("check " + faults + "/machine_level_typo.json --cases 2");
  CHECK(m.out.find("LINT cleaned parameters") != std::string::npos);
  CHECK(m.out.find("does not raise the grade (a level typo?)") != std::string::npos);
  // A seed machine cleans its full weight tensors by construction: counted,
  // not a warning, and no level typo suggested.
  const Run seed = pmach("check " + data + "/dense_machine.json --cases 2 --law 'LINT*' --json");
  INFO(seed.out);
  CHECK(seed.code == 0);
  CHECK(seed.out.find("level typo") == std::string::npos);
  const auto rows = nlohmann::json::parse(seed.out)["results"];
  bool found = false;
  for (const auto &row : rows)
    if (row["law"] == "LINT cleaned parameters") {
      found = true;
      CHECK(row["status"] == "passed");
      CHECK(row["detail"].get<std::string>().find("as the seed machine's construction") !=
            std::string::npos);
    }
  CHECK(found);
}

TEST_CASE("pmach check --against: one row per expected output, never silence") {
  const fs::path dir = work / "against_rows";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(data + "/samples_dense/x.npy", dir / "x.npy");
  std::ofstream(dir / "notes.txt") << "not a sample\n";
  const std::string cmd = "check " + data + "/dense.json --cases 2 --against " + dir.string();
  const Run none = pmach(cmd);
  INFO(none.out);
  CHECK(none.code == 1);
  CHECK(none.out.find("SAMPLES on dense 3 -> 2 (failed): no output tensor was compared") !=
        std::string::npos);
  CHECK(none.out.find("absent: y.npy is not in") != std::string::npos);
  CHECK(none.out.find("SAMPLE notes.txt on dense 3 -> 2 (warning): unknown file") !=
        std::string::npos);
  fs::copy_file(data + "/samples_dense/y.npy", dir / "y.npy");
  const Run one = pmach(cmd);
  CHECK(one.code == 0);
  CHECK(count(one.out, "not applicable") >= 2); // grad_x, grad_w absent
}

TEST_CASE("pmach check --against and --same-as: the file's laws only when --law asks") {
  const std::string file = data + "/dense.json";
  for (const std::string &with :
       {"--against " + data + "/samples_dense", "--same-as " + data + "/dense.json"}) {
    const Run intent = pmach("check " + file + " " + with);
    INFO(with << "\n" << intent.out);
    CHECK(intent.code == 0);
    CHECK(intent.out.find("are not run: --law 'PSPAN-*'") != std::string::npos);
    CHECK(intent.out.find("PSPAN-BILINEAR") == std::string::npos);
    CHECK(intent.out.find("WF-SIZES") != std::string::npos);
    const Run laws = pmach("check " + file + " " + with + " --law 'PSPAN-*' --cases 3");
    INFO(laws.out);
    CHECK(laws.code == 0);
    CHECK(count(laws.out, "PSPAN-BILINEAR") == 2); // exact and double
    CHECK(laws.out.find("hold by construction") != std::string::npos);
  }
}

namespace {

// Runs the hand-written conv2d (of `spec`) on the probe samples of `dir`, as
// a framework would, and writes its outputs; `forget_batch_sum` keeps only
// the last sample's weight gradient.
void run_framework(const fs::path &dir, Fault fault, pm::io::Dtype dtype, bool fortran,
                   bool forget_batch_sum, const pm::ConvSpec &spec = intended) {
  using pm::Index;
  const pm_test::HandConv2d<double> layer{spec, fault};
  const auto x = pm::io::batch_from_npy<double>(pm::io::read_npy((dir / "x.npy").string()),
                                                spec.input_shape(), "x");
  const auto w = pm::io::batch_from_npy<double>(pm::io::read_npy((dir / "w.npy").string()),
                                                spec.parameter_shape(), "w", x.cols);
  const auto g = pm::io::batch_from_npy<double>(pm::io::read_npy((dir / "g.npy").string()),
                                                spec.output_shape(), "g", x.cols);
  std::vector<double> y;
  pm::Function<double> gw(layer.parameter_size(), 0);
  for (Index b = 0; b < x.cols; ++b) {
    const auto yb = layer.apply(w.column(b), x.column(b));
    y.insert(y.end(), yb.begin(), yb.end());
    const auto gb = layer.gradient(x.column(b), g.column(b));
    if (forget_batch_sum)
      gw = gb;
    else
      gw = pm::add(gw, gb);
  }
  std::vector<std::size_t> shape{x.cols};
  const pm::Shape out = spec.output_shape();
  for (Index e : out.extents()) shape.push_back(e);
  std::string bytes;
  if (fortran) { // column-major: the first axis varies fastest
    const pm::Shape c(shape);
    std::vector<double> f(y.size());
    for (Index k = 0; k < y.size(); ++k) {
      const auto m = c.multi(k);
      Index at = 0;
      for (Index j = m.size(); j-- > 0;) at = at * shape[j] + m[j];
      f[at] = y[k];
    }
    bytes = pm::io::format_npy(shape, f, dtype);
    const auto at = bytes.find("'fortran_order': False");
    REQUIRE(at != std::string::npos);
    bytes.replace(at, 22, "'fortran_order': True ");
  } else {
    bytes = pm::io::format_npy(shape, y, dtype);
  }
  std::ofstream((dir / "y.npy").string(), std::ios::binary) << bytes;
  pm::io::write_npy((dir / "grad_w.npy").string(), spec.parameter_shape().extents(), gw, dtype);
}

Run probe_round_trip(const std::string &name, Fault fault,
                     pm::io::Dtype dtype = pm::io::Dtype::float64, bool fortran = false,
                     bool forget_batch_sum = false) {
  const fs::path dir = work / ("probe_" + name);
  fs::remove_all(dir);
  const Run p = pmach("probe " + faults + "/conv2d.json --out " + dir.string());
  INFO(p.err);
  REQUIRE(p.code == 0);
  // 24·60 + 1 + 16 basis probes and bilinearity cases, then CONF-EQUAL's.
  const pm::io::Json manifest = pm::io::read_json((dir / "probe.json").string());
  const long long equal = manifest["equal"].get<long long>();
  CHECK(equal > 0);
  CHECK(manifest["samples"].get<long long>() == 1457 + equal);
  CHECK(p.out.find("wrote " + std::to_string(1457 + equal) + " probe samples") !=
        std::string::npos);
  run_framework(dir, fault, dtype, fortran, forget_batch_sum);
  return pmach("check " + faults + "/conv2d.json --cases 2 --json --against " + dir.string());
}

std::map<std::string, std::pair<std::string, std::string>> rows(const Run &r) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  const pm::io::Json report = pm::io::Json::parse(r.out);
  for (const auto &x : report["results"])
    out[x["law"].get<std::string>() + " " + x["subject"].get<std::string>()] = {
        x["status"].get<std::string>(), x["detail"].get<std::string>()};
  return out;
}

} // namespace

TEST_CASE("pmach probe: the correct framework passes, in float32, and in float64 Fortran order") {
  // Two runs (each exact over ~1500 samples) cover both dtypes and both orders.
  for (const auto &[dtype, fortran] :
       {std::pair{pm::io::Dtype::float32, false}, std::pair{pm::io::Dtype::float64, true}}) {
    const Run r = probe_round_trip("ok", Fault::none, dtype, fortran);
    INFO(r.out);
    CHECK(r.code == 0);
    auto rs = rows(r);
    CHECK(rs["SAMPLE y conv2d as intended"].first == "passed");
    CHECK(rs["SAMPLE grad_w conv2d as intended"].first == "passed");
    CHECK(rs["CONF-RECOVER conv2d as intended"].first == "passed");
    CHECK(rs["CONF-EQUAL forward conv2d as intended"].first == "passed");
    // The files' adjoints are compared by the SAMPLE rows, and said so.
    CHECK(rs["CONF-EQUAL gradient conv2d as intended"].second.find(
              "the SAMPLE grad_x and grad_w rows compare the adjoints") != std::string::npos);
    CHECK(rs["CONF-SPAN-DIFF conv2d as intended"].first == "passed");
    CHECK(rs["CONF-SPAN-DIFF conv2d as intended"].second.find("the spans agree") !=
          std::string::npos);
  }
}

TEST_CASE("pmach probe: each planted fault is recovered from the framework's outputs and diffed") {
  const std::map<Fault, std::string> pattern{
      {Fault::dilation, "source axis 1 moves by -1 per step of parameter axis 1"},
      {Fault::padding, "is shifted by"},
      {Fault::reversed, "a kernel flipped on one axis: parameter axis 0 reversed"},
      {Fault::missing_group, "intended coefficients the implementation lacks"}};
  for (const auto &[fault, p] : pattern) {
    const Run r = probe_round_trip("fault", fault);
    INFO(r.out);
    CHECK(r.code == 1);
    auto rs = rows(r);
    CHECK(rs["CONF-RECOVER conv2d as intended"].first == "passed");
    CHECK(rs["CONF-EQUAL forward conv2d as intended"].first == "failed");
    const auto &[status, detail] = rs["CONF-SPAN-DIFF conv2d as intended"];
    CHECK(status == "failed");
    CHECK(detail.find(p) != std::string::npos);
    CHECK(detail.find("intended 1, implemented 0") != std::string::npos);
  }
}

TEST_CASE("pmach probe: a backward that forgets the batch sum fails grad_w, forward passes") {
  const Run r = probe_round_trip("batch_sum", Fault::none, pm::io::Dtype::float64, false, true);
  INFO(r.out);
  CHECK(r.code == 1);
  auto rs = rows(r);
  CHECK(rs["CONF-SPAN-DIFF conv2d as intended"].first == "passed");
  CHECK(rs["SAMPLE grad_w conv2d as intended"].first == "failed");
  CHECK(rs["SAMPLE grad_w conv2d as intended"].second.find("theirs") != std::string::npos);
}

TEST_CASE("pmach make, probe and check --against at full size: a conv held by its rule") {
  // 16 -> 16 channels, 3×3, on 64×64: 9.4·10^6 edges, more than 2^22 to list,
  // so make writes the named layer and the check compares by CONF-EQUAL.
  const pm::ConvSpec big{{64, 64}, 16, 16, {3, 3}, {1, 1}, {1, 1}, {}, {}, 1};
  const std::string file =
      made("make conv --in 16 --out 16 --size 64 64 --kernel 3 3 --padding 1 1", "big_conv.json");
  const pm::io::Json j = pm::io::read_json(file);
  CHECK(j["layer"] == "conv");
  CHECK(j.find("edges") == j.end());
  // Alone, nothing compares the layer with anything: not passed.
  const Run alone = pmach("check " + file);
  INFO(alone.out);
  CHECK(alone.code == 1);
  CHECK(alone.out.find("held by its constructor's rule") != std::string::npos);
  CHECK(alone.out.find("not compared") != std::string::npos);
  pm_test::expect_input_error(pmach("dot " + file), "held by its rule");
  pm_test::expect_input_error(pmach("eval " + file + " --y0 x.npy --out o"), "held by its rule");
  const fs::path dir = work / "probe_big";
  fs::remove_all(dir);
  const Run p = pmach("probe " + file + " --out " + dir.string());
  INFO(p.err);
  REQUIRE(p.code == 0);
  const pm::io::Json manifest = pm::io::read_json((dir / "probe.json").string());
  CHECK(manifest["recovery"] == "none");
  CHECK(manifest["equal"].get<long long>() == manifest["samples"].get<long long>());
  for (const Fault fault : {Fault::none, Fault::flipped}) {
    run_framework(dir, fault, pm::io::Dtype::float32, false, false, big);
    const Run r = pmach("check " + file + " --json --against " + dir.string());
    INFO(r.out);
    auto rs = rows(r);
    const std::string subject = " conv 2d 16 -> 16";
    // The samples' exact reference comes from the rule: y and the summed
    // weight gradient are compared at full size too.
    const std::string verdict = fault == Fault::none ? "passed" : "failed";
    CHECK(r.code == (fault == Fault::none ? 0 : 1));
    CHECK(rs["CONF-EQUAL forward" + subject].first == verdict);
    CHECK(rs["SAMPLE y" + subject].first == verdict);
    CHECK(rs["SAMPLE grad_w" + subject].first == verdict);
  }
  // Samples that are not integers are not evaluated at this size: named as
  // not compared, and the check is not passed.
  const fs::path reals = work / "reals_big";
  fs::remove_all(reals);
  fs::create_directories(reals);
  pm::io::write_npy((reals / "x.npy").string(), big.input_shape().extents(),
                    std::vector<double>(big.input_shape().size(), 0.5));
  pm::io::write_npy((reals / "w.npy").string(), big.parameter_shape().extents(),
                    std::vector<double>(big.parameter_shape().size(), 1.0));
  pm::io::write_npy((reals / "y.npy").string(), big.output_shape().extents(),
                    std::vector<double>(big.output_shape().size(), 0.0));
  const Run r = pmach("check " + file + " --json --against " + reals.string());
  INFO(r.out);
  CHECK(r.code == 1);
  const auto [status, detail] = rows(r)["SAMPLE y conv 2d 16 -> 16"];
  CHECK(status == "too weak");
  CHECK(detail.find("evaluated exactly only when x, w and g are integers") != std::string::npos);
}

TEST_CASE("pmach probe: samples that are not the probes are bad input") {
  const fs::path dir = work / "probe_tampered";
  fs::remove_all(dir);
  REQUIRE(pmach("probe " + faults + "/conv2d.json --out " + dir.string()).code == 0);
  run_framework(dir, Fault::none, pm::io::Dtype::float64, false, false);
  // The probes of another seed: same sizes, other random cases.
  fs::remove_all(work / "p7");
  const Run r = pmach("probe " + faults + "/conv2d.json --seed 7 --out " + (work / "p7").string());
  REQUIRE(r.code == 0);
  fs::copy_file(work / "p7" / "probe.json", dir / "probe.json",
                fs::copy_options::overwrite_existing);
  pm_test::expect_input_error(
      pmach("check " + faults + "/conv2d.json --cases 2 --against " + dir.string()),
      "is not the input recovery expects");
}

TEST_CASE(
    "CONF-SPAN-DIFF: pmach check --same-as on two different pooling files exits 1, no crash") {
  // Parameterless layers: their parameter space has rank 0, which the
  // pattern search once read past (SIGSEGV, exit 139).
  const std::string pool = R"({"pmach": 1, "kind": "layer", "source": {"shape": [6]},
    "target": {"shape": [3]}, "edges": {"ranges": [3, 2], "s": {"matrix": [[2, S]]},
    "t": {"matrix": [[1, 0]]}, "mu": "1/2"}})";
  auto write = [&](const std::string &name, const std::string &s) {
    std::string text = pool;
    text.replace(text.find("S]]"), 1, s);
    const std::string file = (work / name).string();
    std::ofstream(file) << text;
    return file;
  };
  const std::string a = write("pool_a.json", "1"), b = write("pool_b.json", "0");
  const Run r = pmach("check " + a + " --cases 2 --same-as " + b);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("6 of 6 coefficients differ") != std::string::npos);
  CHECK(r.out.find("target (0) <- source (1) via parameter (): intended 1/2, implemented 0") !=
        std::string::npos);
}

TEST_CASE("CONF-EQUAL: pmach probe writes few samples for a layer too large to recover") {
  // A 2 -> 3 conv on 6x6: recovery would take 54·72 + 17 = 3905 framework
  // calls; only CONF-EQUAL's probes are written.
  const std::string file =
      made("make conv --in 2 --out 3 --size 6 6 --kernel 3 3 --padding 1 1", "conv_2_3.json");
  const fs::path dir = work / "probe_few";
  fs::remove_all(dir);
  const Run p = pmach("probe " + file + " --out " + dir.string());
  INFO(p.out << p.err);
  REQUIRE(p.code == 0);
  const pm::io::Json manifest = pm::io::read_json((dir / "probe.json").string());
  CHECK(manifest["recovery"] == "none");
  CHECK(manifest["samples"] == manifest["equal"]);
  CHECK(manifest["samples"].get<long long>() <= 16);
}
