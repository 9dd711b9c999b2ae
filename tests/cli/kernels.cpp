// pmach eval --kernels: the fast path gives the exact reference's values on
// inputs where both are exact. With σ = identity and small integers as
// weights, inputs and cotangents, every partial sum of the kernels and of the
// double reference is an integer far below 2^53, so float64 arithmetic is
// exact (docs/tolerances.md, "Integer probes") and the kernels' results must
// equal those of --precision exact (the reference over ℚ, rounded once) bit
// for bit, whatever order the kernels sum in.
#include <catch2/catch.hpp>

#include "cli/support/pmach_run.hpp"
#include "pm/io/npy.hpp"

namespace fs = std::filesystem;
using pm_test::Run;

namespace {

const fs::path work = fs::temp_directory_path() / "pm_cli_kernels";
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
