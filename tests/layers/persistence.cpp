// Saving and loading a seed machine's parameters (src/pm/train/checkpoint.hpp):
// the loaded machine reproduces outputs bit for bit, and damaged or
// mismatched files are refused with a clear error.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "pm/numeric/uniform.hpp"
#include "pm/train/checkpoint.hpp"
#include "pm/train/init.hpp"
#include "tests/support/scratch.hpp"

using namespace pm;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {
const pm_test::ScratchDir scratch_dir("pm_test_layers_persistence");

fs::path scratch(const std::string &name) { return scratch_dir.path / name; }

bool same_bits(const Batch<double> &a, const Batch<double> &b) {
  return a.rows == b.rows && a.cols == b.cols &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(double)) == 0;
}

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void spit(const fs::path &p, const std::string &s) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}
} // namespace

TEST_CASE("save and load: every seed machine reproduces its outputs bit for bit") {
  const std::vector<SeedMachine<double>> machines{
      DenseMachine<double>({2, 4, 7, 1}, Sigma<double>::tanh()),
      ConvMachine<double>({2, 1, 3, 1}, Sigma<double>::sigmoid(), {1, 3, 2, 0}, {6, 9}),
      RecurMachine<double>({1, 4, 4}, Sigma<double>::softplus(), 6, 5, 32)};
  std::mt19937_64 rng(5);
  for (const auto &m : machines) {
    INFO(m.description().kind);
    const Function<double> w = glorot_uniform(m.parameter_shape(), rng);
    Batch<double> x(m.positions() * 1, 3);
    Normal<double> n;
    for (double &v : x.data) v = n(rng);
    const fs::path path = scratch(m.description().kind + ".json");
    save_machine(path.string(), m, w, "saved");
    const LoadedMachine loaded = load_machine(path.string());
    CHECK(loaded.machine.description() == m.description());
    CHECK(loaded.weights == w);
    CHECK(same_bits(loaded.machine(loaded.weights, x), m(w, x)));
  }
}

TEST_CASE("load: truncated, mismatched and missing files are refused") {
  const DenseMachine<double> m({2, 3}, Sigma<double>::tanh());
  const Function<double> w(m.parameters(), 0.25);
  const fs::path path = scratch("bad.json"), npy = scratch("bad.W.npy");
  save_machine(path.string(), m, w);
  const std::string header = slurp(path), data = slurp(npy);

  SECTION("a truncated .npy") {
    spit(npy, data.substr(0, data.size() - 3));
    CHECK_THROWS_WITH(load_machine(path.string()), Contains("bad.W.npy"));
  }
  SECTION("weights of another machine") {
    spit(npy, io::format_npy({4, 4}, std::vector<double>(16, 1.0)));
    CHECK_THROWS_WITH(load_machine(path.string()), Contains("bad.W.npy") && Contains("shape"));
  }
  SECTION("a header whose dims no longer match the weights") {
    io::Json j = io::Json::parse(header);
    j["dims"] = {3, 3};
    spit(path, j.dump());
    CHECK_THROWS_WITH(load_machine(path.string()), Contains("bad.W.npy") && Contains("shape"));
  }
  SECTION("a truncated header") {
    spit(path, header.substr(0, header.size() / 2));
    CHECK_THROWS_WITH(load_machine(path.string()), Contains("bad.json"));
  }
  SECTION("a missing weights file") {
    fs::remove(npy);
    CHECK_THROWS_WITH(load_machine(path.string()), Contains("bad.W.npy"));
  }
  SECTION("saving a σ that has no name, or to a path that is not .json") {
    const DenseMachine<double> p({1, 1}, Sigma<double>::polynomial({0, 1}));
    CHECK_THROWS_WITH(save_machine(scratch("p.json").string(), p, Function<double>(4)),
                      Contains("sigma 'polynomial'"));
    CHECK_THROWS_WITH(save_machine(scratch("p.txt").string(), m, w), Contains("ending in .json"));
  }
}
