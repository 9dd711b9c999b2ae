// The format additions of docs/formats.md §2.5–2.7 as a user meets them:
// the examples (a bias, a named conv in PyTorch's layout, a graph from its
// edge list with channels, a sequence) pass `pmach check`, `eval` and `dot`;
// their values equal hand computations of the layers they name (not the
// reader's own output); named layers equal `pmach make`'s; and each new
// field's bad input is one line naming the file, the field and what was
// expected, exit code 2.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli/support/pmach_run.hpp"
#include "pm/io/npy.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

const std::string data = PMACH_DATA_DIR;
const pm_test::ScratchDir scratch("pm_cli_format_test");
const fs::path &work = scratch.path;
const pm_test::Pmach pmach{work};
using pm_test::expect_input_error;
using pm_test::Run;

std::string write(const std::string &name, const std::string &text) {
  fs::create_directories(work);
  const fs::path p = work / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string npy(const std::string &name, const std::vector<std::size_t> &shape,
                const std::vector<double> &values) {
  fs::create_directories(work);
  const std::string p = (work / name).string();
  pm::io::write_npy(p, shape, values);
  return p;
}

// Runs `pmach eval` and returns the named output.
pm::io::NpyArray eval(const std::string &model, const std::string &options, const char *output) {
  const fs::path out = work / "out";
  fs::remove_all(out);
  const Run r = pmach("eval " + model + " " + options + " --out " + out.string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  return pm::io::read_npy((out / output).string());
}

} // namespace

TEST_CASE("format examples: check, eval and dot accept them") {
  for (const char *f : {"dense_bias", "conv2d_torch", "graph_channels", "sequence"}) {
    const std::string model = data + "/" + f + ".json";
    INFO(model);
    const Run c = pmach("check " + model + " --cases 5");
    INFO(c.out);
    CHECK(c.code == 0);
    CHECK(c.out.find("PSPAN-ADJOINT") != std::string::npos);
    const Run d = pmach("dot " + model);
    CHECK(d.code == 0);
    CHECK(d.out.rfind("digraph layer {", 0) == 0);
    CHECK(d.out.find(" -> ") != std::string::npos);
  }
  // eval of each is below, against a hand computation of its layer.
}

TEST_CASE("bias: y = W x + b, and grad_y0 has the source's shape") {
  // dense_bias.json: W(out, in) = [[1, 2, 3], [4, 5, 6]], then b = (10, 20).
  const std::string w = npy("w.npy", {8}, {1, 2, 3, 4, 5, 6, 10, 20});
  const std::string x = npy("x.npy", {2, 3}, {1, 0, -1, 0, 1, 0});
  const std::string ybar = npy("ybar.npy", {2, 2}, {1, 1, 0, 1});
  const std::string model = data + "/dense_bias.json --y0 " + x + " --w " + w;
  const pm::io::NpyArray y = eval(model, "", "y.npy");
  CHECK(y.shape == std::vector<std::size_t>{2, 2});
  CHECK(y.data == std::vector<double>{1 - 3 + 10, 4 - 6 + 20, 2 + 10, 5 + 20});
  const pm::io::NpyArray gx = eval(model, "--ybar " + ybar, "grad_y0.npy");
  CHECK(gx.shape == std::vector<std::size_t>{2, 3});
  CHECK(gx.data == std::vector<double>{5, 7, 9, 4, 5, 6});
  // ∂/∂b is Σ_batch ȳ: (1, 2).
  const pm::io::NpyArray gw = eval(model, "--ybar " + ybar, "grad_w.npy");
  CHECK(gw.data[6] == 1);
  CHECK(gw.data[7] == 2);
}

TEST_CASE("conv in PyTorch's layout: the weight W(O, C/groups, kh, kw) is the parameter array") {
  // conv2d_torch.json: Conv2d(2, 4, 3, padding=1, groups=2) on 5 × 6, bias.
  // One centre tap of output channel 1 (group 0, input channel 0) and one
  // corner tap (0, 2) of output channel 3 (group 1, input channel 1); the
  // bias of channel 2. PyTorch: y[o, i, j] = b[o] + Σ W[o, c, a, b'] x[g·1 + c, i + a - 1, j + b' -
  // 1].
  std::vector<double> w(4 * 1 * 3 * 3 + 4, 0.0);
  w[((1 * 1 + 0) * 3 + 1) * 3 + 1] = 2; // W[1, 0, 1, 1]
  w[((3 * 1 + 0) * 3 + 0) * 3 + 2] = 1; // W[3, 0, 0, 2]
  w[36 + 2] = 5;                        // b[2]
  std::vector<double> x(2 * 5 * 6);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = double(k % 7) - 3;
  const pm::io::NpyArray y =
      eval(data + "/conv2d_torch.json",
           "--y0 " + npy("xc.npy", {2, 5, 6}, x) + " --w " + npy("wc.npy", {40}, w), "y.npy");
  REQUIRE(y.shape == std::vector<std::size_t>{4, 5, 6});
  auto X = [&](int c, int i, int j) {
    return i < 0 || i >= 5 || j < 0 || j >= 6 ? 0.0 : x[(c * 5 + i) * 6 + j];
  };
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j) {
      const double expected[4] = {0, 2 * X(0, i, j), 5, X(1, i - 1, j + 1)};
      for (int o = 0; o < 4; ++o) CHECK(y.data[(o * 5 + i) * 6 + j] == expected[o]);
    }
}

TEST_CASE("named layers are the constructors of pmach make, in either layout") {
  const std::string made = (work / "made.json").string();
  fs::create_directories(work);
  for (const char *layout : {"pm", "torch"}) {
    INFO(layout);
    REQUIRE(pmach(std::string("make conv --in 2 --out 4 --size 5 6 --kernel 3 3 --padding 1 1 "
                              "--stride 2 1 --dilation 1 2 --groups 2 --layout ") +
                  layout + " --file " + made)
                .code == 0);
    const std::string named =
        write("named.json", std::string(R"({"pmach": 1, "kind": "layer", "layer": "conv", "in": 2,
          "out": 4, "size": [5, 6], "kernel": [3, 3], "padding": [1, 1], "stride": [2, 1],
          "dilation": [1, 2], "groups": 2, "layout": ")") +
                                layout + "\"}");
    const Run r = pmach("check " + named + " --cases 2 --same-as " + made);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("CONF-SPAN-DIFF") != std::string::npos);
  }
  // The transposed convolution: "in" and "out" are its own channels.
  REQUIRE(pmach("make conv --in 2 --out 3 --size 6 --kernel 3 --stride 2 --transpose --layout "
                "torch --file " +
                made)
              .code == 0);
  const std::string transposed =
      write("transposed.json", R"({"pmach": 1, "kind": "layer", "layer": "conv", "in": 2,
        "out": 3, "size": [6], "kernel": [3], "stride": [2], "transpose": true, "layout": "torch"})");
  CHECK(pmach("check " + transposed + " --cases 2 --same-as " + made).code == 0);
  // Layers with a bias compare too: the named dense in PyTorch's layout is
  // dense_bias.json, W(out, in) then b.
  const std::string dense_bias = write("named_dense_bias.json", R"({"pmach": 1, "kind": "layer",
    "layer": "dense", "in": 3, "out": 2, "layout": "torch", "bias": true})");
  CHECK(pmach("check " + dense_bias + " --cases 2 --same-as " + data + "/dense_bias.json").code ==
        0);
  CHECK(pmach("check " + data + "/conv2d_torch.json --cases 2 --same-as " + data +
              "/conv2d_torch.json")
            .code == 0);
  // A wrong layout is caught by the same comparison.
  const std::string pm_layout =
      write("pm_layout.json", R"({"pmach": 1, "kind": "layer", "layer": "conv", "in": 2,
        "out": 3, "size": [6], "kernel": [3], "stride": [2], "transpose": true})");
  CHECK(pmach("check " + pm_layout + " --cases 2 --same-as " + made).code == 1);
}

TEST_CASE("graph from its edge list: (L φ)(v, o) = b(o) + mean over u→v of Σ_c W(c, o) φ(u, c)") {
  // graph_channels.json: 5 nodes, the edges below plus self loops, mean.
  const std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {0, 2},
                                                  {3, 1}, {0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}};
  std::vector<double> w(2 * 3 + 3), x(5 * 2);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = double(k) - 4;
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = double(k * k % 5) - 2;
  const pm::io::NpyArray y =
      eval(data + "/graph_channels.json",
           "--y0 " + npy("xg.npy", {5, 2}, x) + " --w " + npy("wg.npy", {9}, w), "y.npy");
  REQUIRE(y.shape == std::vector<std::size_t>{5, 3});
  for (int v = 0; v < 5; ++v) {
    int deg = 0;
    for (const auto &[a, b] : edges) deg += b == v;
    for (int o = 0; o < 3; ++o) {
      double sum = 0;
      for (const auto &[u, t] : edges)
        if (t == v)
          for (int c = 0; c < 2; ++c) sum += w[c * 3 + o] * x[u * 2 + c];
      CHECK(std::abs(y.data[v * 3 + o] - (w[6 + o] + sum / deg)) <= 1e-14 * (1 + std::abs(sum)));
    }
  }
}

TEST_CASE("sequence: the composite at w1 ⊗ w2 is the second layer after the first") {
  // sequence.json: dense 4 -> 3 in PyTorch's layout with a bias (15
  // parameters: W1(3, 4), then b1), then dense.json (W2(2, 3), 6 parameters).
  std::vector<double> w1(15), w2 = {0.5, -1, 2, 0.25, 0, -0.75}, w;
  for (std::size_t k = 0; k < w1.size(); ++k) w1[k] = double(k % 5) - 2;
  for (double a : w1)
    for (double b : w2) w.push_back(a * b);
  const std::vector<double> x = {1, -2, 3, 0.5};
  const pm::io::NpyArray y =
      eval(data + "/sequence.json",
           "--y0 " + npy("xs.npy", {4}, x) + " --w " + npy("ws.npy", {15, 2, 3}, w), "y.npy");
  double h[3];
  for (int o = 0; o < 3; ++o) {
    h[o] = w1[12 + o];
    for (int i = 0; i < 4; ++i) h[o] += w1[o * 4 + i] * x[i];
  }
  REQUIRE(y.shape == std::vector<std::size_t>{2});
  for (int o = 0; o < 2; ++o)
    CHECK(y.data[o] == w2[o * 3] * h[0] + w2[o * 3 + 1] * h[1] + w2[o * 3 + 2] * h[2]);
}

TEST_CASE("format additions: bad input is one line naming file, field and expectation") {
  const std::string head = R"({"pmach": 1, "kind": "layer", )";
  // Both commands read the file the same way (io::read_model); the input
  // refused only after building millions of edges (its layers, each within
  // its bound, and their composite; about 9 s) is run through `check` alone.
  auto bad = [&](const std::string &name, const std::string &body, const std::string &part,
                 bool costly = false) {
    const std::string f = write(name, body);
    INFO(body);
    expect_input_error(pmach("check " + f), part);
    if (!costly) expect_input_error(pmach("dot " + f), part);
  };
  bad("graph_node.json",
      head + R"("layer": "graph", "nodes": 5, "edges": [[0, 1], [0, 7]], "c_in": 1, "c_out": 1})",
      "graph_node.json: /edges/1/1: expected an integer in [0, 4], found 7");
  bad("graph_pair.json",
      head + R"("layer": "graph", "nodes": 5, "edges": [[0, 1, 2]], "c_in": 1, "c_out": 1})",
      "/edges/0: expected a pair [u, v]");
  bad("graph_big.json",
      head + R"("layer": "graph", "nodes": 4, "edges": [[0, 1], [1, 2]], "c_in": 8192,
        "c_out": 8192})",
      "graph_big.json: /: the layer would have 6.71089e+07 weights, expected at most 16777216");
  bad("graph_normname.json",
      head + R"("layer": "graph", "nodes": 2, "edges": [], "c_in": 1, "c_out": 1,
        "normalisation": "max"})",
      "/normalisation: expected \"sum\", \"mean\" or \"symmetric\", found \"max\"");
  bad("layout.json", head + R"("layer": "dense", "in": 2, "out": 2, "layout": "tf"})",
      "layout.json: /layout: expected \"pm\" or \"torch\", found \"tf\"");
  bad("kind.json", head + R"("layer": "lstm"})",
      "kind.json: /layer: expected \"dense\", \"conv\" or \"graph\"");
  bad("conv_big.json",
      head + R"("layer": "conv", "in": 64, "out": 64, "size": [512, 512], "kernel": [3, 3]})",
      "conv_big.json: /: the layer would have");
  bad("conv_kernel.json",
      head + R"("layer": "conv", "in": 1, "out": 1, "size": [2, 2], "kernel": [3, 1]})",
      "conv_kernel.json: /: ConvSpec: axis 0 has padded extent 2, expected at least the dilated "
      "kernel extent 3");
  bad("conv_axes.json",
      head + R"("layer": "conv", "in": 1, "out": 1, "size": [4, 4], "kernel": [3]})",
      "conv_axes.json: /kernel: expected an array of 2 integers (one per spatial axis)");
  bad("conv_nokernel.json", head + R"("layer": "conv", "in": 1, "out": 1, "size": [4]})",
      "conv_nokernel.json: /: expected the field 'kernel'");
  const std::string dense = R"("source": {"shape": [3]}, "target": {"shape": [2]},
    "parameters": {"shape": [2, 3]}, "edges": {"ranges": [2, 3], "s": {"matrix": [[0, 1]]},
    "t": {"matrix": [[1, 0]]}, "pi": {"matrix": [[1, 0], [0, 1]]}}, )";
  bad("bias_axis.json", head + dense + R"("bias": {"axes": [1]}})",
      "bias_axis.json: /bias/axes/0: expected an integer in [0, 0], found 1");
  bad("bias_big.json",
      head + R"("layer": "conv", "in": 1, "out": 4, "size": [1024, 1024], "kernel": [1, 1],
        "bias": {"axes": [0, 2]}})",
      "bias_big.json: /bias: expected true or {\"axes\": [a]} with one axis (a layer held by its "
      "rule");
  bad("bias_true.json", head + dense + R"("bias": true})",
      "bias_true.json: /bias: expected {\"axes\": [...]} (a layer given by its edges has no "
      "channel axis for true)");
  bad("bias_field.json", head + dense + R"("bias": {"axis": 0}})",
      "bias_field.json: /bias/axis: unknown field, expected one of axes, weights");
  bad("bias_noparams.json", head + R"("source": {"shape": [2]}, "target": {"shape": [2]},
        "edges": {"list": [[0, 0], [1, 1]]}, "bias": {"axes": [0]}})",
      "bias_noparams.json: /bias: expected no bias: a layer without 'parameters'");
  const std::string b2 = npy("b2.npy", {3}, {1, 2, 3});
  npy("dense_w.npy", {2, 3}, {1, 2, 3, 4, 5, 6});
  bad("bias_weights.json",
      head + dense + R"("weights": "dense_w.npy", "bias": {"axes": [0], "weights": "b2.npy"}})",
      "b2.npy: npy field 'shape': expected (2), the parameter shape of ");
  bad("bias_half.json", head + dense + R"("weights": "dense_w.npy", "bias": {"axes": [0]}})",
      "bias_half.json: /weights: expected default weights for both the layer ('weights') and its "
      "bias");

  const std::string seq = R"({"pmach": 1, "kind": "sequence", "layers": [)";
  bad("seq_shape.json",
      seq + R"({"layer": "dense", "in": 4, "out": 3}, {"layer": "dense", "in": 2, "out": 1}]})",
      "seq_shape.json: /layers/1: the source has shape (2), expected the target shape (3) of "
      "/layers/0");
  bad("seq_bias.json",
      seq + R"({"layer": "dense", "in": 4, "out": 3}, {"layer": "dense", "in": 3, "out": 1,
        "bias": true}]})",
      "seq_bias.json: /layers/1: expected no bias (a bias is allowed on the first layer");
  bad("seq_empty.json", seq + "]}",
      "seq_empty.json: /layers: expected an array of 1 to 256 layers");
  bad("seq_self.json", seq + R"("seq_self.json"]})", "expected at most 8 nested sequences");
  bad("seq_missing.json", seq + R"("nowhere.json"]})",
      "seq_missing.json: /layers/0: expected the name of an existing regular file");
  bad("seq_kind.json", seq + R"({"kind": "machine", "layer": "dense", "in": 1, "out": 1}]})",
      "seq_kind.json: /layers/0/kind: expected \"layer\", found \"machine\"");
  // Each layer and composite is within its own bound; together they are not.
  const std::string big =
      R"({"layer": "conv", "in": 1, "out": 1, "size": [4194304], "kernel": [1]})";
  bad("seq_work.json", seq + big + ", " + big + ", " + big + "]}",
      "seq_work.json: /layers/2: the layers so far have 2.09715e+07 edges with their composites, "
      "expected at most 1.67772e+07 in a sequence",
      true);
  bad("seq_big.json",
      seq + R"({"layer": "dense", "in": 2048, "out": 2048}, {"layer": "dense", "in": 2048,
        "out": 2048}]})",
      "seq_big.json: /layers/1: the composite would have 1.75922e+13 parameters");
}

TEST_CASE("format additions: a bias layer refuses probes and --against in one line") {
  const Run p = pmach("probe " + data + "/dense_bias.json --out " + (work / "probes").string());
  expect_input_error(p, "dense_bias.json: probes are written for layers without a bias");
  const Run a = pmach("check " + data + "/dense_bias.json --against " + data + "/samples_dense");
  expect_input_error(a, "dense_bias.json: --against compares layers without a bias");
}
