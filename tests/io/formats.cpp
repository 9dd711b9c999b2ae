// The JSON formats: the example files of docs/formats.md read into the spans
// they describe (edges enumerated here independently, from the formulas of
// the layers), and malformed files answered with one line naming the file,
// the JSON pointer of the field and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "pm/io/machine_format.hpp"
#include "tests/support/scratch.hpp"

using pm::Index;
using pm::Rational;

namespace {

const std::filesystem::path data_dir = std::filesystem::path(PM_SOURCE_DIR) / "examples" / "data";

struct Edge {
  Index s, t, pi;
  Rational mu;
  friend bool operator==(const Edge &, const Edge &) = default;
};

std::vector<Edge> edges_of(const pm::ParametricSpan<Rational> &a) {
  std::vector<Edge> out;
  for (Index e = 0; e < a.apex(); ++e)
    out.push_back({a.span.s(e), a.span.t(e), a.pi(e), a.span.mu[e]});
  return out;
}

const pm_test::ScratchDir scratch("pm_io_formats");

const std::filesystem::path &temp_dir() { return scratch.path; }

std::string write_file(const std::string &name, const std::string &text) {
  const auto p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string error_of(const std::string &json_text) {
  const std::string path = write_file("bad.json", json_text);
  try {
    pm::io::read_layer(path);
  } catch (const pm::Error &e) {
    const std::string msg = e.what();
    // One line, starting with the file name.
    if (msg.find('\n') != std::string::npos || msg.rfind(path, 0) != 0) return "BAD FORM: " + msg;
    return msg.substr(path.size());
  }
  return "no error";
}

const std::string head = R"("pmach": 1, "kind": "layer", )";

} // namespace

TEST_CASE("formats: dense.json is the span of a matrix W[y][x]") {
  const auto d = pm::io::read_layer((data_dir / "dense.json").string());
  CHECK(d.name == "dense 3 -> 2");
  CHECK(d.source.extents() == std::vector<Index>{3});
  CHECK(d.target.extents() == std::vector<Index>{2});
  REQUIRE(d.has_parameters);
  std::vector<Edge> expected;
  for (Index y = 0; y < 2; ++y)
    for (Index x = 0; x < 3; ++x) expected.push_back({x, y, y * 3 + x, Rational(1)});
  CHECK(edges_of(d.span) == expected);
  REQUIRE(d.weights);
  CHECK(*d.weights == std::vector<double>{0.5, -1, 2, 0.25, 0, -0.75});
  // (L_w φ)(y) = Σ_x W[y][x] φ(x), by hand: W φ for φ = (1, 2, 3).
  const auto a = pm::io::with_scalar<double>(d.span);
  CHECK(pm::act(a, *d.weights, std::vector<double>{1.0, 2.0, 3.0}) ==
        std::vector<double>{4.5, -2.0});
}

TEST_CASE("formats: conv1d.json drops the sources outside the padded input") {
  const auto d = pm::io::read_layer((data_dir / "conv1d.json").string());
  std::vector<Edge> expected;
  for (Index y = 0; y < 4; ++y)
    for (Index o = 0; o < 3; ++o)
      for (Index k = 0; k < 3; ++k)
        for (Index c = 0; c < 2; ++c) {
          const long long pos = 2 * static_cast<long long>(y) + static_cast<long long>(k) - 1;
          if (pos < 0 || pos >= 8) continue;
          expected.push_back({Index(pos) * 2 + c, y * 3 + o, (k * 3 + o) * 2 + c, Rational(1)});
        }
  CHECK(expected.size() == 4 * 3 * 3 * 2 - 3 * 2); // only y = 0, k = 0 falls outside
  CHECK(edges_of(d.span) == expected);
  CHECK_FALSE(d.weights);
}

TEST_CASE("formats: avgpool.json and graph.json carry exact rational measures") {
  const auto pool = pm::io::read_layer((data_dir / "avgpool.json").string());
  CHECK_FALSE(pool.has_parameters);
  CHECK(pool.span.parameters() == 1);
  std::vector<Edge> expected;
  for (Index y = 0; y < 3; ++y)
    for (Index k = 0; k < 2; ++k) expected.push_back({2 * y + k, y, 0, Rational(1, 2)});
  CHECK(edges_of(pool.span) == expected);

  const auto g = pm::io::read_layer((data_dir / "graph.json").string());
  REQUIRE(g.span.apex() == 12);
  // Every vertex of the 4-cycle receives from itself and its two neighbours.
  for (Index v = 0; v < 4; ++v) {
    std::vector<Index> from;
    for (Index e = 0; e < 12; ++e)
      if (g.span.span.t(e) == v) from.push_back(g.span.span.s(e));
    std::sort(from.begin(), from.end());
    std::vector<Index> want{v, (v + 1) % 4, (v + 3) % 4};
    std::sort(want.begin(), want.end());
    CHECK(from == want);
  }
  for (const Rational &m : g.span.span.mu) CHECK(m == Rational(1, 3));
}

TEST_CASE("formats: inline, .npy and CSV edge lists agree") {
  const std::string spaces =
      R"("source": {"shape": [3]}, "target": {"shape": [2]}, "parameters": {"shape": [2]}, )";
  const auto inline_list = pm::io::read_layer(write_file(
      "list.json", "{" + head + spaces +
                       R"("edges": {"list": [[0, 1, 1, "-3/4"], [2, 0, 0, 2], [2, 0, 0, 0.5]]}})"));
  pm::io::write_npy((temp_dir() / "edges.npy").string(), {3, 4},
                    {0, 1, 1, -0.75, 2, 0, 0, 2, 2, 0, 0, 0.5});
  const auto npy = pm::io::read_layer(
      write_file("npy.json", "{" + head + spaces + R"("edges": {"npy": "edges.npy"}})"));
  write_file("edges.csv", "0, 1, 1, -3/4\n2,0,0,2\r\n\n2,0,0,0.5\n");
  const auto csv = pm::io::read_layer(
      write_file("csv.json", "{" + head + spaces + R"("edges": {"csv": "edges.csv"}})"));
  const std::vector<Edge> expected{
      {0, 1, 1, Rational(-3, 4)}, {2, 0, 0, Rational(2)}, {2, 0, 0, Rational(1, 2)}};
  CHECK(edges_of(inline_list.span) == expected);
  CHECK(edges_of(npy.span) == expected);
  CHECK(edges_of(csv.span) == expected);
}

TEST_CASE("formats: gradings by levels and by lexicographic blocks") {
  const std::string text = "{" + head + R"("source": {"shape": [4, 3]}, "target": {"shape": [2]},
      "edges": {"list": []},
      "grading": {"source": {"blocks": [{"axis": 0, "size": 2}, {"axis": 1, "dims": [1, 2]}]},
                  "target": {"levels": [3, 1]}}})";
  const auto d = pm::io::read_layer(write_file("graded.json", text));
  REQUIRE(d.source_grading);
  CHECK(d.source_grading->levels() == 4);
  // (time block, channel block) lexicographic: point (i, c) has level
  // 2 * (i / 2) + (c == 0 ? 1 : 2).
  for (Index i = 0; i < 4; ++i)
    for (Index c = 0; c < 3; ++c)
      CHECK((*d.source_grading)(i * 3 + c) == 2 * (i / 2) + (c == 0 ? 1 : 2));
  CHECK(d.target_grading->grades() == std::vector<Index>{3, 1});
}

TEST_CASE("formats: malformed layer files are answered with the pointer of the field") {
  const std::string sp = R"("source": {"shape": [3]}, "target": {"shape": [2]}, )";
  const std::string affine =
      R"("ranges": [2, 3], "s": {"matrix": [[0, 1]]}, "t": {"matrix": [[1, 0]]})";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases{
      {"{", ": JSON syntax error"},
      {"[1]", ": /: expected a JSON object"},
      {R"({"pmach": 2, "kind": "layer"})", ": /pmach: expected an integer in [1, 1]"},
      {R"({"pmach": 1, "kind": "machine"})", ": /kind: expected \"layer\""},
      {"{" + head + sp + R"("edges": {"ranges": [2, 3]}})", ": /edges: expected the field 's'"},
      {"{" + head + sp + R"("edges": {)" + affine + R"(, "pi": {"matrix": []}}})",
       ": /edges/pi: unknown field"},
      {"{" + head + sp + R"("edge": {}})", ": /edge: unknown field"},
      {"{" + head + R"("source": {"shape": [3, -1]}, "target": {"shape": [2]}})",
       ": /source/shape/1: expected an integer in [0, "},
      {"{" + head + R"("source": {"shape": [65536, 65536]}, "target": {"shape": [2]}})",
       ": /source/shape: expected a space of at most"},
      {"{" + head + sp + R"("edges": {"ranges": [2, 3], "s": {"matrix": [[0, 1, 2]]},
         "t": {"matrix": [[1, 0]]}}})",
       ": /edges/s/matrix/0: expected a row of 2 integers"},
      {"{" + head + sp + R"("edges": {"ranges": [2, 3], "s": {"matrix": [[0, "x"]]},
         "t": {"matrix": [[1, 0]]}}})",
       ": /edges/s/matrix/0/1: expected an integer"},
      {"{" + head + sp + R"("edges": {"ranges": [4096, 4096, 4096], "s": {"matrix": [[0,0,0]]},
         "t": {"matrix": [[0,0,0]]}}})",
       ": /edges/ranges: expected ranges of at most"},
      {"{" + head + sp + R"("edges": {)" + affine + R"(, "mu": "1/0"}})",
       ": /edges/mu: expected a number or a rational"},
      {"{" + head + sp + R"("edges": {"list": [[0, 5]]}})",
       ": /edges/list/0, column 't': is 5, expected an integer index in [0, 2) of the target"},
      {"{" + head + sp + R"("edges": {"list": [[0]]}})",
       ": /edges/list/0: expected 2 or 3 columns"},
      {"{" + head + sp + R"("edges": {"list": [[0, 1, 1e999]]}})", ": JSON error: number overflow"},
      {"{" + head + sp + R"("edges": {"npy": "missing.npy"}})",
       ": /edges/npy: expected the name of an existing regular file"},
      {"{" + head + sp + R"("edges": {"list": []}, "weights": "w.npy"})",
       ": /weights: expected no weights"},
      {"{" + head + sp + R"("edges": {"list": []}, "grading": {"source": {"levels": [1, 2]},
         "target": {"levels": [1, 1]}}})",
       ": /grading/source/levels: expected an array of 3 levels"},
      {"{" + head + sp + R"("edges": {"list": []}, "grading": {"source": {"levels": [1, 0, 2]},
         "target": {"levels": [1, 1]}}})",
       ": /grading/source/levels/1: expected an integer in [1, "},
      {"{" + head + sp + R"("edges": {"list": []}, "grading": {"source": {"blocks":
         [{"axis": 0, "dims": [1, 1]}]}, "target": {"levels": [1, 1]}}})",
       ": /grading/source/blocks/0/dims: expected block sizes summing to the extent 3"},
  };
  for (const auto &c : cases) {
    INFO(c.text);
    const std::string msg = error_of(c.text);
    INFO(msg);
    CHECK(msg.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("formats: rationals as text are read exactly, whatever the sign and leading zeros") {
  // Found by fuzzing: the big-integer parser rejected "+5", read "010" as
  // octal and refused a negative denominator.
  CHECK(pm::io::rational_from_text("+5").value() == Rational(5));
  CHECK(pm::io::rational_from_text("010").value() == Rational(10));
  CHECK(pm::io::rational_from_text("1/-3").value() == Rational(-1, 3));
  CHECK(pm::io::rational_from_text("-007/+014").value() == Rational(-1, 2));
  CHECK(pm::io::rational_from_text("0.25").value() == Rational(1, 4));
  CHECK_FALSE(pm::io::rational_from_text("1/0"));
  CHECK_FALSE(pm::io::rational_from_text("1/-0"));
  CHECK_FALSE(pm::io::rational_from_text("0x10"));
  CHECK_FALSE(pm::io::rational_from_text("inf"));
  CHECK_FALSE(pm::io::rational_from_text(""));
}

TEST_CASE("formats: messages stay on one line whatever the file contains") {
  // Found by fuzzing: a key holding a newline was quoted verbatim.
  const std::string msg = error_of("{" + head + "\"sour\\nce\\u0001\": 1}");
  CHECK(msg.find("BAD FORM") == std::string::npos);
  CHECK(msg.find("unknown field") != std::string::npos);
  CHECK(error_of("{" + head + R"("source": {"shape": [1]}, "target": {"shape": [1]},
      "edges": {"npy": "a\nb.npy"}})")
            .find(": /edges/npy: expected a non-empty file name of printable ASCII") !=
        std::string::npos);
}

TEST_CASE("formats: seed machines by name, with their weights") {
  const std::string file = (data_dir / "dense_machine.json").string();
  const auto m = pm::io::parse_model(pm::io::read_json(file), file);
  REQUIRE(std::holds_alternative<pm::io::MachineDescription>(m));
  const auto &d = std::get<pm::io::MachineDescription>(m);
  REQUIRE(d.seed);
  CHECK(d.seed->kind == "DenseMachine");
  CHECK(d.seed->dims == std::vector<Index>{2, 3, 2});
  CHECK(d.sigma.name == "tanh");
  CHECK_FALSE(pm::io::is_rational_sigma(d.sigma));
  CHECK(d.parameters.extents() == std::vector<Index>{7, 7});
  REQUIRE(d.weights);
  // W(i, j) = ((3i + 5j) mod 7 − 3) / 4, as make_samples.py writes it.
  for (Index i = 0; i < 7; ++i)
    for (Index j = 0; j < 7; ++j)
      CHECK((*d.weights)[i * 7 + j] == double(long((3 * i + 5 * j) % 7) - 3) / 4);

  const auto r = pm::io::read_model((data_dir / "recur_machine.json").string());
  const auto &rd = std::get<pm::io::MachineDescription>(r);
  CHECK(rd.seed->positions == std::vector<Index>{8});
  CHECK(rd.seed->pad == std::vector<Index>{3});
  CHECK(rd.seed->timeblock == 2);
  CHECK(rd.space.extents() == std::vector<Index>{8, 5});
  CHECK(rd.parameters.extents() == std::vector<Index>{4, 5, 5});
  // (time block, channel block): 4 time blocks × 3 channel blocks.
  CHECK(rd.grading.levels() == 12);
  CHECK(rd.grading(7 * 5 + 4) == 12);
}

TEST_CASE("formats: a graded span machine given by its parts") {
  const auto m = pm::io::read_model((data_dir / "graded_machine.json").string());
  const auto &d = std::get<pm::io::MachineDescription>(m);
  CHECK_FALSE(d.seed);
  CHECK(d.grading.grades() == std::vector<Index>{1, 1, 2, 3});
  CHECK(d.sigma.name == "polynomial");
  CHECK(d.sigma.coefficients == std::vector<Rational>{0, 1, Rational(1, 2)});
  CHECK(d.span.apex() == 16);
  const auto gm = pm::io::make_machine<Rational>(d);
  // σ(y) = y + y²/2 at y = 2.
  CHECK(gm.sigma().value(Rational(2), 0, 0) == Rational(4));
}

TEST_CASE("formats: malformed machine files are answered with the pointer of the field") {
  const std::string head_m = R"({"pmach": 1, "kind": "machine", )";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases{
      {head_m + R"("machine": "LstmMachine", "dims": [1], "sigma": "tanh"})",
       ": /machine: expected \"DenseMachine\", \"ConvMachine\" or \"RecurMachine\""},
      {head_m + R"("machine": "DenseMachine", "dims": [1], "sigma": "gelu"})",
       ": /sigma: expected one of"},
      {head_m + R"("machine": "DenseMachine", "dims": [3000, 3000], "sigma": "tanh"})",
       ": /: the machine would have 3.6e+07 edges, expected at most"},
      {head_m + R"("machine": "ConvMachine", "dims": [1, 1], "sigma": "tanh", "spatial": [4],
         "pad": [[1, 1], [0, 0]]})",
       ": /pad: expected one [lo, hi] pair per spatial axis (1)"},
      {head_m + R"("machine": "ConvMachine", "dims": [1, 0], "sigma": "tanh", "spatial": [4],
         "pad": [[1, 1]]})",
       ": /: ConvMachine: dims[1] is 0, expected >= 1"},
      {head_m +
           R"("machine": "RecurMachine", "dims": [1], "sigma": "relu", "length": 4, "pad": 1})",
       ": /: expected the field 'timeblock'"},
      {head_m + R"("machine": "DenseMachine", "dims": [1], "sigma": "relu", "pad": 1})",
       ": /pad: unknown field"},
      {head_m +
           R"("space": {"shape": [2]}, "grading": {"levels": [1, 2]}, "edges": {"list": [[0, 1]]},
         "sigma": {"array": "nothere.npy"}})",
       ": /sigma/array: expected the name of an existing regular file"},
      {head_m +
           R"("space": {"shape": [2]}, "grading": {"levels": [1, 2]}, "edges": {"list": [[0, 1]]},
         "sigma": {"polynomial": []}})",
       ": /sigma/polynomial: expected an array of 1 to 64 coefficients"},
  };
  for (const auto &c : cases) {
    INFO(c.text);
    const std::string path = write_file("bad_machine.json", c.text);
    std::string msg = "no error";
    try {
      pm::io::read_model(path);
    } catch (const pm::Error &e) {
      msg = e.what();
    }
    INFO(msg);
    CHECK(msg.rfind(path, 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(c.expected) != std::string::npos);
  }
}
