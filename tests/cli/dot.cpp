// pmach dot as a user sees it: every example rendered by Graphviz within a
// bounded picture, labels as short decimals, rows in index order, one colour
// per parameter with a legend, offenders red and cleaned edges dashed, and
// the summary form chosen above a size or forced. Needs Graphviz's `dot`
// (package graphviz, scripts/install-deps.sh --tests).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "cli/support/pmach_run.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

const std::string data = PMACH_DATA_DIR;
const pm_test::ScratchDir scratch("pm_cli_dot_test");
const fs::path &work = scratch.path;
const pm_test::Pmach pmach{work};
using pm_test::count;
using pm_test::expect_input_error;
using pm_test::Run;
using pm_test::slurp;

// The bound of docs/dot.md on a rendered picture, in pixels at 96 dpi.
constexpr double max_pixels = 4000;

struct Pixels {
  double width = 0, height = 0;
};

// Renders a DOT file with Graphviz and reads the picture's size off the SVG
// (points, 72 per inch: 4/3 pixel each).
Pixels render(const fs::path &dot_file) {
  const fs::path svg = fs::path(dot_file).replace_extension(".svg");
  const std::string cmd = "dot -Tsvg " + dot_file.string() + " -o " + svg.string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::smatch m;
  const std::string text = slurp(svg);
  REQUIRE(
      std::regex_search(text, m, std::regex(R"(<svg width="([0-9.]+)pt" height="([0-9.]+)pt")")));
  return {std::stod(m[1]) * 4 / 3, std::stod(m[2]) * 4 / 3};
}

// The labels of the edges and rows of a DOT file (not the graph's title,
// which is the model's name as written).
std::vector<std::string> labels(const std::string &dot) {
  std::vector<std::string> out;
  const std::regex edge(R"re( -> .*label="([^"]*)")re"), row(R"re(<TD[^>]*>([^<]*)</TD>)re");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), edge); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), row); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The sum of the numbers n of the labels "n edges" (a summary's bundles).
std::size_t bundled(const std::string &dot) {
  std::size_t n = 0;
  const std::regex bundle(R"re(label="([0-9]+) edges")re");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), bundle); it != std::sregex_iterator();
       ++it)
    n += std::stoul((*it)[1]);
  return n;
}

Run dot_of(const std::string &model, const std::string &name, const std::string &options = "") {
  const Run r = pmach("dot " + model + " " + options + " --out " + (work / name).string());
  INFO(model << ": " << r.err);
  CHECK(r.code == 0);
  return {r.code, slurp(work / name), r.err};
}

// a, the number n, then b; appended (GCC 12 warns, wrongly, on
// "literal" + std::string temporaries).
std::string numbered(std::string a, std::size_t n, const std::string &b) {
  a += std::to_string(n);
  return a += b;
}

std::string file(const std::string &name, const std::string &text) {
  fs::create_directories(work);
  std::ofstream(work / name) << text;
  return (work / name).string();
}

} // namespace

TEST_CASE("pmach dot: every example renders within the bound, with decimal labels") {
  REQUIRE(std::system("dot -V > /dev/null 2>&1") == 0); // Graphviz is needed, not optional
  fs::remove_all(work);
  std::vector<std::string> models;
  for (const auto &entry : fs::recursive_directory_iterator(data))
    if (entry.path().extension() == ".json") models.push_back(entry.path().string());
  // The 3×9×9 convolution (PyTorch's layout) whose point-by-point picture
  // was 23744 px tall, and a convolutional machine.
  REQUIRE(pmach("make conv --in 3 --out 4 --size 9 9 --kernel 3 3 --layout torch --file " +
                (work / "conv2d_3x9x9.json").string())
              .code == 0);
  REQUIRE(pmach("make conv-machine --dims 2 3 3 --sigma relu --size 6 6 --padding 1 1 1 1 "
                "--file " +
                (work / "conv_machine.json").string())
              .code == 0);
  models.push_back((work / "conv2d_3x9x9.json").string());
  models.push_back((work / "conv_machine.json").string());
  CHECK(models.size() >= 17);
  std::size_t summaries = 0, checked_labels = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string name = numbered("m", i, ".dot");
    const Run r = dot_of(models[i], name);
    summaries += r.out.find("summary of ") != std::string::npos;
    for (const std::string &l : labels(r.out)) {
      INFO(models[i] << ": label " << l);
      CHECK(l.find('/') == std::string::npos); // never 6004799503160661/18014398509481984
      CHECK(l.size() <= 80);
      ++checked_labels;
    }
    const Pixels p = render(work / name);
    INFO(models[i] << ": " << p.width << " x " << p.height << " px");
    CHECK(p.width <= max_pixels);
    CHECK(p.height <= max_pixels);
    if (models[i].find("conv2d_3x9x9") != std::string::npos) {
      WARN("3x9x9 conv2d: " << p.width << " x " << p.height << " px");
      CHECK(r.out.find("summary of 439 points and 5292 edges") != std::string::npos);
    }
  }
  CHECK(checked_labels > 100);
  CHECK(summaries >= 3); // both forms are rendered
  CHECK(summaries < models.size());
}

TEST_CASE("pmach dot: weights as short decimals") {
  const std::string layer = file("third.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [2]}, "target": {"shape": [1]},
      "edges": {"list": [[0, 0, "1/3"], [1, 0, "-5/2"], [1, 0, "1e-300"]]}})");
  const Run r = dot_of(layer, "third.dot");
  CHECK(count(r.out, "label=\"0.333\"") == 1);
  CHECK(count(r.out, "label=\"-2.5\"") == 1);
  CHECK(count(r.out, "label=\"1e-300\"") == 1);
}

TEST_CASE("pmach dot: rows in index order, one colour per parameter, and a legend") {
  // 2×3 source, edges listed out of index order, three parameters.
  const std::string layer = file("order.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [2, 3]}, "target": {"shape": [2]}, "parameters": {"shape": [3]},
      "edges": {"list": [[5, 1, 2], [0, 0, 0], [3, 1, 1], [2, 0, 1], [4, 0, 0]]}})");
  const Run r = dot_of(layer, "order.dot");
  std::vector<int> ports;
  const std::regex port(R"re(PORT="x([0-9]+)")re");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), port);
       it != std::sregex_iterator(); ++it)
    ports.push_back(std::stoi((*it)[1]));
  CHECK(ports == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(r.out.find(">(1,2)</TD>") != std::string::npos); // multi-index of point 5
  // Edge colour by its parameter: distinct per parameter, each in the legend.
  std::map<std::string, std::set<std::string>> colour_of; // parameter → colours
  const std::regex edge(R"re(-> c1:y[0-9]+:w \[color="([^"]+)", tooltip="edge ([0-9]+)")re");
  const char *pi_of_edge[] = {"2", "0", "1", "1", "0"};
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), edge);
       it != std::sregex_iterator(); ++it)
    colour_of[pi_of_edge[std::stoi((*it)[2])]].insert((*it)[1]);
  REQUIRE(colour_of.size() == 3);
  std::set<std::string> all;
  for (const auto &[p, colours] : colour_of) {
    CHECK(colours.size() == 1);
    all.insert(*colours.begin());
    CHECK(r.out.find("<TD BGCOLOR=\"" + *colours.begin() + "\">   </TD><TD>w(" + p + ")</TD>") !=
          std::string::npos);
  }
  CHECK(all.size() == 3);
  // Ten parameters outrun the nine colours: edges are labelled instead.
  const std::string many = file("many.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [10]}, "target": {"shape": [1]}, "parameters": {"shape": [10]},
      "edges": {"ranges": [10], "s": {"matrix": [[1]]}, "t": {"matrix": [[0]]},
                "pi": {"matrix": [[1]]}}})");
  const Run m = dot_of(many, "many.dot");
  CHECK(count(m.out, "color=\"#000000\"") == 10);
  for (int p = 0; p < 10; ++p) CHECK(count(m.out, numbered("label=\"w(", p, ")\"")) == 1);
  CHECK(m.out.find("edge label w(index): its parameter") != std::string::npos);
  // A bias: its point • is the source's last row, where its edges start (no
  // dangling port).
  const Run b = dot_of(data + "/dense_bias.json", "dense_bias.dot", "--full");
  CHECK(b.out.find("<TD PORT=\"x3\">• = 1 (bias)</TD>") != std::string::npos);
  CHECK(count(b.out, "c0:x3:e -> ") == 2);
}

TEST_CASE("pmach dot: offenders red, edges dropped by cleaning dashed") {
  // Edge 3 (1 → 0, grades 2 → 2) does not raise the grade; edge 2 shares its
  // parameter 2, so cleaning drops it too; edges 0 and 1 are kept.
  const Run r = dot_of(data + "/planted_grading_error.json", "planted.dot");
  const auto line = [&](int e) {
    const auto at = r.out.find(numbered("tooltip=\"edge ", e, "\""));
    REQUIRE(at != std::string::npos);
    return r.out.substr(r.out.rfind('\n', at), r.out.find('\n', at) - r.out.rfind('\n', at));
  };
  CHECK(line(3).find("color=\"#d62728\"") != std::string::npos);
  CHECK(line(3).find("style=dashed") != std::string::npos);
  CHECK(line(3).find("label=\"0.5\"") != std::string::npos);
  CHECK(line(2).find("style=dashed") != std::string::npos);
  CHECK(line(2).find("#d62728") == std::string::npos);
  for (int e : {0, 1}) CHECK(line(e).find("dashed") == std::string::npos);
  CHECK(count(r.out, "penwidth=2") == 1);
  CHECK(r.out.find("red dashed: does not raise the grading") != std::string::npos);
}

TEST_CASE("pmach dot: the summary above a size, forced either way, and bounded") {
  const Run small = dot_of(data + "/dense.json", "dense.dot");
  CHECK(small.out.find("summary of") == std::string::npos);
  const Run forced = dot_of(data + "/dense.json", "dense_summary.dot", "--summary");
  CHECK(forced.out.find("summary of 5 points and 6 edges") != std::string::npos);
  CHECK(forced.out.find("label=\"6 edges\"") != std::string::npos);
  // conv2d (5×6×2 → 6×6×4): above the size, cut along the first axis.
  const Run conv = dot_of(data + "/faults/conv2d.json", "conv.dot");
  CHECK(conv.out.find("summary of") != std::string::npos);
  CHECK(count(conv.out, "PORT=\"g") == 5 + 6);
  const Run full = dot_of(data + "/faults/conv2d.json", "conv_full.dot", "--full");
  CHECK(count(full.out, "PORT=\"x") == 5 * 6 * 2);
  // Drawn one by one, the edges are those the summary counts.
  CHECK(bundled(conv.out) > 100);
  CHECK(count(full.out, "tooltip=\"edge ") == bundled(conv.out));
  // A machine's summary: levels and blocks, with the offenders counted.
  const Run m = dot_of(data + "/graded_machine.json", "machine_summary.dot", "--summary");
  CHECK(count(m.out, "<B>level ") == 3);
  CHECK(m.out.find("not raising") != std::string::npos);
  // --full is refused where it would not be bounded; the summary is small.
  const std::string big = file("big.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [2048]}, "target": {"shape": [2048]},
      "edges": {"ranges": [2048, 2048], "s": {"matrix": [[1, 0]]}, "t": {"matrix": [[0, 1]]}}})");
  expect_input_error(pmach("dot " + big + " --full"),
                     "dot --full: the layer has 4096 points and 4194304 edges, expected at most "
                     "32768 in all; without --full it is drawn in summary");
  expect_input_error(pmach("dot " + big + " --full --summary"), "exclude each other");
  const Run s = pmach("dot " + big);
  CHECK(s.code == 0);
  CHECK(s.out.size() < 4096);
}
