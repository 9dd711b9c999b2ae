// pmach eval --kernels and pmach check --kernels. The fast path gives the exact reference's values
// on inputs where both are exact. With σ = identity and small integers as weights, inputs and
// cotangents, every partial sum of the kernels and of the double reference is an integer far below
// 2^53, so float64 arithmetic is exact (docs/tolerances.md, "Integer probes") and the kernels'
// results must equal those of --precision exact (the reference over ℚ, rounded once) bit for bit,
// whatever order the kernels sum in.
#include <catch2/catch.hpp>

#include "cli/support/pmach_run.hpp"
#include "pm/io/npy.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;
using pm_test::Run;

namespace {

const pm_test::ScratchDir scratch("pm_cli_kernels");
const fs::path &work = scratch.path;
const pm_test::Pmach pmach{work};

// Small integers in −2..2, a different sequence per salt.
std::vector<double> ints(std::size_t n, std::size_t salt) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = double(int((i * 7 + salt * 3 + 1) % 5) - 2);
  return v;
}

std::size_t product(const std::vector<std::size_t> &shape) {
  std::size_t n = 1;
  for (std::size_t e : shape) n *= e;
  return n;
}

// Makes the model with `make`, evaluates it exactly and with the kernels on
// the same integer inputs, and requires every output file to be the same.
void same_as_exact(const std::string &name, const std::string &make,
                   std::vector<std::size_t> space_in, std::vector<std::size_t> space_out,
                   std::vector<std::size_t> parameters, bool machine) {
  const fs::path dir = work / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string model = (dir / "model.json").string();
  REQUIRE(pmach("make " + make + " --file " + model).code == 0);
  std::vector<std::size_t> in{2}, out{2};
  in.insert(in.end(), space_in.begin(), space_in.end());
  out.insert(out.end(), space_out.begin(), space_out.end());
  pm::io::write_npy((dir / "w.npy").string(), parameters, ints(product(parameters), 1));
  pm::io::write_npy((dir / "y0.npy").string(), in, ints(product(in), 2));
  pm::io::write_npy((dir / "ybar.npy").string(), out, ints(product(out), 3));
  std::string args = "eval " + model + " --w " + (dir / "w.npy").string() + " --y0 " +
                     (dir / "y0.npy").string() + " --ybar " + (dir / "ybar.npy").string();
  if (machine) args += " --zbar " + (dir / "ybar.npy").string();
  const Run exact = pmach(args + " --precision exact --out " + (dir / "exact").string());
  INFO(exact.err);
  REQUIRE(exact.code == 0);
  const Run fast = pmach(args + " --kernels --out " + (dir / "fast").string());
  INFO(fast.err);
  REQUIRE(fast.code == 0);
  std::vector<std::string> files{"y.npy", "grad_y0.npy", "grad_w.npy"};
  if (machine) files.insert(files.end(), {"z.npy", "grad_z0.npy"});
  std::size_t nonzero = 0;
  for (const std::string &f : files) {
    INFO(name << ": " << f);
    const pm::io::NpyArray a = pm::io::read_npy((dir / "exact" / f).string()),
                           b = pm::io::read_npy((dir / "fast" / f).string());
    CHECK(a.shape == b.shape);
    CHECK(a.data == b.data);
    for (double x : a.data) nonzero += x != 0;
  }
  CHECK(nonzero > 0); // the comparison is not of zeros only
}

} // namespace

TEST_CASE("pmach eval --kernels: the dense machine kernel equals the exact reference") {
  // dims [2, 3, 2]: 7 channels, W 7 × 7.
  same_as_exact("dense_machine", "dense-machine --dims 2 3 2 --sigma identity", {7}, {7}, {7, 7},
                true);
}

TEST_CASE("pmach eval --kernels: the convolution machine kernel equals the exact reference") {
  // dims [1, 2] on 5 positions, pad (1, 2): kernel 4, W (4, 3, 3).
  same_as_exact("conv_machine", "conv-machine --dims 1 2 --sigma identity --size 5 --padding 1 2",
                {5, 3}, {5, 3}, {4, 3, 3}, true);
}

TEST_CASE("pmach eval --kernels: the recurrent machine kernel equals the exact reference") {
  // dims [1, 2], length 6, lags 0..2, time blocks of 2: W (3, 3, 3).
  same_as_exact("recur_machine",
                "recur-machine --dims 1 2 --sigma identity --length 6 --lag 2 --timeblock 2",
                {6, 3}, {6, 3}, {3, 3, 3}, true);
}

TEST_CASE("pmach eval --kernels: the span kernel of a layer equals the exact reference") {
  // A conv of 2 → 3 channels on 5 positions, kernel 3, padding 1: x (5, 2),
  // y (5, 3), parameters (3, 2, 3).
  same_as_exact("conv_layer", "conv --in 2 --out 3 --size 5 --kernel 3 --padding 1", {5, 2}, {5, 3},
                {3, 2, 3}, false);
}

TEST_CASE("pmach eval --kernels: refused with --precision exact") {
  const Run r = pmach("eval model.json --y0 y0.npy --out o --kernels --precision exact");
  CHECK(r.code == 2);
  CHECK(r.err.find("--kernels") != std::string::npos);
}

// pmach check --kernels: every kernel on generated cases, one row per law,
// kernel, pass and type, and one KERNEL-THREADS row per kernel and type.
TEST_CASE("pmach check --kernels: every kernel, pass and type has its row, all passed") {
  const Run r = pmach("check --kernels --cases 6 --seed 11");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  for (const char *type : {"(float)", "(double)"}) {
    for (const char *kernel : {"dense machine", "conv1d machine", "conv2d machine",
                               "conv3d machine", "recurrent machine"})
      for (const char *pass : {" forward ", " dual ", " gradient "})
        CHECK(pm_test::count(r.out, std::string(kernel) + pass + type) == 1);
    for (const char *kernel : {"span kernel", "graph kernel"})
      for (const char *pass : {" forward ", " transpose ", " gradient "})
        CHECK(pm_test::count(r.out, std::string(kernel) + pass + type) == 1);
  }
  for (const char *law : {"KERNEL-DENSE-FORWARD ", "KERNEL-DENSE-DUAL ", "KERNEL-DENSE-GRADIENT "})
    CHECK(pm_test::count(r.out, law) == 2);
  for (const char *law : {"KERNEL-CONV ", "KERNEL-CONV2D ", "KERNEL-CONV3D ", "KERNEL-RECUR ",
                          "KERNEL-SPAN ", "KERNEL-GRAPH "})
    CHECK(pm_test::count(r.out, law) == 6);
  CHECK(pm_test::count(r.out, "KERNEL-THREADS ") == 14);
  CHECK(r.out.find(" failed, 0 too weak") != std::string::npos);
  CHECK(pm_test::count(r.out, " 0 failed") == 1);
}

TEST_CASE("pmach check MODEL.json --kernels: the model's own kernel") {
  const fs::path dir = work / "check_model";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string conv = (dir / "conv2d.json").string(), layer = (dir / "layer.json").string(),
                    relu = (dir / "relu.json").string();
  REQUIRE(
      pmach("make conv-machine --dims 2 3 --sigma tanh --size 4 5 --padding 1 1 0 1 --file " + conv)
          .code == 0);
  REQUIRE(pmach("make conv --in 2 --out 3 --size 5 --kernel 3 --padding 1 --file " + layer).code ==
          0);
  REQUIRE(pmach("make dense-machine --dims 2 3 --sigma relu --file " + relu).code == 0);

  const Run c = pmach("check " + conv + " --kernels --cases 5");
  INFO(c.out << c.err);
  CHECK(c.code == 0);
  CHECK(pm_test::count(c.out, "KERNEL-CONV2D ") == 6);
  CHECK(pm_test::count(c.out, "KERNEL-THREADS ") == 2);

  const Run l = pmach("check " + layer + " --kernels --cases 5");
  INFO(l.out << l.err);
  CHECK(l.code == 0);
  CHECK(pm_test::count(l.out, "KERNEL-SPAN ") == 6);

  // σ = relu has no kernel: one row says so, and nothing fails.
  const Run n = pmach("check " + relu + " --kernels --cases 5");
  INFO(n.out << n.err);
  CHECK(n.code == 0);
  CHECK(n.out.find("sigma relu has no kernel") != std::string::npos);
  CHECK(pm_test::count(n.out, "KERNEL-DENSE-FORWARD ") == 0);
}
