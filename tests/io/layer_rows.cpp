// A constructor's layer (pm::io::described_layer): held by its rule at any
// size, its edge list listed beside it only up to max_listed_edges, and a
// reader that needs the list told so in one line.
#include <catch2/catch.hpp>

#include "pm/io/layer_format.hpp"
#include "pm/io/model_writer.hpp"
#include "pm/io/npy.hpp"
#include "pm/io/torch_layout.hpp"
#include "pm/layers.hpp"
#include "tests/support/scratch.hpp"

using namespace pm;
using pm_test::ScratchDir;

TEST_CASE("described_layer lists small layers and holds large ones by their rule") {
  const ConvSpec small{{5, 5}, 2, 3, {3, 3}, {1, 1}, {1, 1}, {}, {}, 1};
  const auto d =
      io::described_layer("small", small.input_shape(), small.output_shape(),
                          small.parameter_shape(), true, std::make_shared<const ConvRows>(small));
  CHECK(d.span_held);
  CHECK_FALSE(d.bias);
  // Per axis the taps in range sum to 2 + 3 + 3 + 3 + 2 = 13 over the five
  // outputs, so 13² taps, each with 2 input and 3 output channels.
  CHECK(d.span.apex() == 13 * 13 * 2 * 3);
  CHECK(&*io::rows_of(d) == &*d.rows);
  // 64 → 64 channels on 56×56, 3×3: up to 56² · 64 · 576 edges > 2²².
  const ConvSpec big{{56, 56}, 64, 64, {3, 3}, {1, 1}, {1, 1}, {}, {}, 1};
  const auto b =
      io::described_layer("conv 64", big.input_shape(), big.output_shape(), big.parameter_shape(),
                          true, std::make_shared<const ConvRows>(big));
  CHECK_FALSE(b.span_held);
  CHECK(b.span.apex() == 0);
  CHECK_THROWS_WITH(io::edges_of(b, "save"),
                    Catch::Contains("save: conv 64 has up to 115605504 edges, expected at most "
                                    "4194304 to list them"));
  // Its rows are there at any size: the centre output's row has 9 · 64 taps.
  std::vector<RowEdge> row;
  b.rows->row(Shape({56, 56, 64}).flat({28, 28, 5}), row);
  CHECK(row.size() == 9 * 64);
}

TEST_CASE("a rule with a bias in PyTorch's layout: weights then one bias per channel") {
  const ConvSpec c{{3}, 1, 2, {2}, {}, {}, {}, {}, 1};
  auto torch = std::make_shared<const io::RelayoutRows>(
      std::make_shared<const ConvRows>(c), c.input_shape(), c.output_shape(), c.parameter_shape(),
      io::channel_first(1), io::channel_first(1), std::vector<Index>{2, 1, 0});
  CHECK(torch->parameter_shape().extents() == std::vector<Index>{2, 1, 2}); // Conv1d (O, C, k)
  const auto d =
      io::described_layer("conv", torch->source_shape(), torch->target_shape(), Shape({6}), true,
                          std::make_shared<const BiasRows>(torch, torch->target_shape(), 0));
  CHECK(d.bias);
  // Output (o = 1, position 0) = W(1, 0, 0) x(0) + W(1, 0, 1) x(1) + b(1):
  // parameters 2 and 3 of the weight, 4 + 1 of the bias; the bias point is
  // source 3.
  std::vector<RowEdge> row;
  d.rows->row(Shape({2, 2}).flat({1, 0}), row);
  REQUIRE(row.size() == 3);
  CHECK((row[0].source == 0 && row[0].parameter == 2));
  CHECK((row[1].source == 1 && row[1].parameter == 3));
  CHECK((row[2].source == 3 && row[2].parameter == 5));
  // The relayout and the bias keep the rule's int64 rows, edge for edge.
  REQUIRE(d.rows->integer_rows());
  std::vector<IntegerEdge> integer;
  d.rows->integer_row(Shape({2, 2}).flat({1, 0}), integer);
  REQUIRE(integer.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(integer[i].source == row[i].source);
    CHECK(integer[i].parameter == row[i].parameter);
    CHECK(Rational(integer[i].weight) == row[i].weight);
  }
}

TEST_CASE("a named layer is shown to admit, with the size it is built with, before it is built") {
  // Padding, stride, dilation, groups and a transposed conv: the edges
  // counted from the hyper-parameters are those of the built span.
  const std::vector<std::string> layers = {
      R"({"layer": "dense", "in": 3, "out": 5})",
      R"({"layer": "dense", "in": 3, "out": 5, "layout": "torch"})",
      R"({"layer": "conv", "in": 4, "out": 6, "size": [7, 5], "kernel": [3, 2], "stride": [2, 1],
          "dilation": [1, 2], "padding": [2, 1], "padding_hi": [0, 1], "groups": 2})",
      R"({"layer": "conv", "in": 2, "out": 3, "size": [6], "kernel": [3], "stride": [2],
          "padding": [1], "transpose": true})",
      R"({"layer": "graph", "nodes": 4, "edges": [[0, 1], [1, 2], [3, 0]], "c_in": 2, "c_out": 3,
          "self_loops": true})"};
  for (const std::string &text : layers) {
    INFO(text);
    const io::Json json = io::Json::parse(text);
    std::optional<io::LayerSize> seen;
    const io::NamedLayer named =
        io::read_named_layer(io::Field(json, "layer.json"), [&](const io::LayerSize &s) {
          CHECK_FALSE(seen);
          seen = s;
        });
    REQUIRE(seen);
    CHECK(seen->edges == double(materialise(*named.layer.rows).apex()));
    CHECK(seen->parameters == double(named.layer.parameters.size()));
    CHECK(seen->target_points == double(named.layer.target.size()));
    // A refusal by admit is the reader's answer.
    CHECK_THROWS_WITH(io::read_named_layer(io::Field(json, "layer.json"),
                                           [](const io::LayerSize &) { throw Error("refused"); }),
                      "refused");
  }
}

TEST_CASE("a named layer is its constructor's rule: listed when small, held by it at any size") {
  const io::Json head{{"pmach", 1}, {"kind", "layer"}, {"layer", "conv"}, {"layout", "torch"}};
  io::Json small = head;
  small.update({{"in", 2}, {"out", 3}, {"size", {5, 5}}, {"kernel", {3, 3}}, {"padding", {1, 1}}});
  const auto s = io::parse_layer(small, "small.json");
  CHECK(s.span_held);
  REQUIRE(s.rows);
  CHECK(s.span.apex() == 13 * 13 * 2 * 3);
  CHECK(materialise(*s.rows).apex() == s.span.apex());
  CHECK(s.named["layer"] == "conv");
  // ResNet-50's 64 -> 64 3×3 conv on 56×56: held by its rule alone.
  io::Json big = head;
  big.update(
      {{"in", 64}, {"out", 64}, {"size", {56, 56}}, {"kernel", {3, 3}}, {"padding", {1, 1}}});
  const auto b = io::parse_layer(big, "big.json");
  CHECK_FALSE(b.span_held);
  CHECK(b.source.extents() == std::vector<Index>{64, 56, 56});
  CHECK(b.parameters.extents() == std::vector<Index>{64, 64, 3, 3});
  std::vector<RowEdge> row;
  b.rows->row(b.target.flat({5, 28, 28}), row);
  CHECK(row.size() == 9 * 64);
  CHECK_THROWS_WITH(io::edges_of(b, "eval"), Catch::Contains("held by its rule"));
  // Its bias: one per channel after the weights, default weights for both.
  const ScratchDir dir("pm_named");
  const std::string w = (dir.path / "w.npy").string(), bias = (dir.path / "b.npy").string();
  io::write_npy(w, {64, 64, 3, 3}, std::vector<double>(64 * 64 * 9, 1.0));
  std::vector<double> bs(64);
  for (std::size_t c = 0; c < 64; ++c) bs[c] = double(c);
  io::write_npy(bias, {64}, bs);
  io::Json with_bias = big;
  with_bias["weights"] = w;
  with_bias["bias"] = {{"axes", {0}}, {"weights", bias}};
  const auto bb = io::parse_layer(with_bias, "bias.json");
  CHECK(bb.bias);
  CHECK(bb.parameters.size() == 64 * 64 * 9 + 64);
  REQUIRE(bb.weights);
  CHECK((*bb.weights)[64 * 64 * 9 + 7] == 7.0);
  CHECK(bb.named["bias"] == io::Json{{"axes", {0}}});
  CHECK(bb.named.find("weights") == bb.named.end());
  row.clear();
  bb.rows->row(bb.target.flat({7, 0, 0}), row);
  CHECK((row.back().source == bb.source.size() && row.back().parameter == 64 * 64 * 9 + 7));
}

TEST_CASE("the named form written for a layer reads back as that layer") {
  // A transposed conv 4 -> 2 channels (stride 2, padding 1), in PyTorch's
  // layout: ConvTranspose1d(4, 2, 3, stride=2, padding=1).weight is (4, 2, 3).
  const ConvSpec c{{6}, 2, 4, {3}, {1}, {1}, {2}, {}, 1};
  const auto d = io::parse_layer(io::named_conv_json("t", c, true, true), "t.json");
  CHECK(d.source.extents() == std::vector<Index>{4, 3});
  CHECK(d.target.extents() == std::vector<Index>{2, 6});
  CHECK(d.parameters.extents() == std::vector<Index>{4, 2, 3});
  const io::ShapedRows torch =
      io::relayout({std::make_shared<const ConvTransposeRows>(c), c.output_shape(), c.input_shape(),
                    c.parameter_shape()},
                   io::channel_first(1), io::channel_first(1), io::conv_parameter_order(1));
  const auto a = materialise(*torch.rows);
  CHECK(a.span.s.images == d.span.span.s.images);
  CHECK(a.span.t.images == d.span.span.t.images);
  CHECK(a.pi.images == d.span.pi.images);
  // A graph with symmetric normalisation at degrees that are not squares:
  // the rule's weights, nearest doubles of 1/√(d_u d_v).
  GraphConvSpec g;
  g.nodes = 3;
  g.edges = {{0, 1}, {2, 1}, {1, 0}};
  g.norm = GraphNorm::symmetric;
  const auto gd = io::parse_layer(io::named_graph_json("g", g, false), "g.json");
  CHECK_FALSE(gd.rows->exact());
  CHECK(gd.span.apex() == 3);
}

TEST_CASE("a named conv's padding_mode: read, written back, and refused by name") {
  ConvSpec c{{5}, 1, 1, {3}, {1}, {1}, {}, {}, 1};
  c.padding_mode = PaddingMode::circular;
  const io::Json j = io::named_conv_json("c", c, false, false);
  CHECK(j["padding_mode"] == "circular");
  const auto d = io::parse_layer(j, "c.json");
  // Circular padding reads every tap inside: 5 outputs · 3 taps.
  CHECK(d.span.apex() == 15);
  io::Json bad = j;
  bad["padding_mode"] = "mirror";
  CHECK_THROWS_WITH(io::parse_layer(bad, "bad.json"),
                    Catch::Contains("bad.json: /padding_mode: expected \"zeros\", \"circular\", "
                                    "\"reflect\" or \"replicate\", found \"mirror\""));
  bad = io::named_conv_json("t", c, true, false);
  CHECK_THROWS_WITH(io::parse_layer(bad, "t.json"), Catch::Contains("pads with zeros only"));
}
