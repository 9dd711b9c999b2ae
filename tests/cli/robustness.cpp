// The guarantees of docs/formats.md §5, each planted as a user or an attacker
// would meet it, on the built pmach binary: nothing lost (all-or-nothing
// outputs, write errors seen, links refused, a killed run leaves one whole
// set), every cost bounded before it is paid (run under a memory and CPU
// limit, so that a regression fails instead of swapping the machine), no
// silent misread, no silent non-finite result. PMACH_EXECUTABLE is set by
// src/cli/CMakeLists.txt.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "pm/io/machine_format.hpp"
#include "pm/io/npy.hpp"
#include "pm/io/output.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;

namespace {

const pm_test::ScratchDir scratch("pm_robustness_test");
const fs::path &work = scratch.path;

struct Run {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// pmach under a limit of address space (MiB), CPU time (s) and wall time
// (s), and optionally of file size (KiB), with its outputs captured; a
// limit hit shows as a code other than 0..2 (killed: -1).
Run pmach(const std::string &args, int mem_mib = 1024, int cpu_s = 20,
          const std::string &stdout_to = "", long fsize_kib = -1) {
  const std::string out = stdout_to.empty() ? (work / "out.txt").string() : stdout_to;
  const std::string limits =
      "ulimit -v " + std::to_string(mem_mib * 1024) + " && ulimit -t " + std::to_string(cpu_s) +
      (fsize_kib >= 0 ? " && ulimit -f " + std::to_string(fsize_kib * 2) : ""); // 512-byte blocks
  const std::string cmd = "cd " + work.string() + " && " + limits + " && exec timeout -s KILL " +
                          std::to_string(3 * cpu_s) + " " + PMACH_EXECUTABLE + " " + args + " > " +
                          out + " 2> " + (work / "err.txt").string();
  const int status = std::system(("sh -c '" + cmd + "'").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          stdout_to.empty() ? slurp(work / "out.txt") : "", slurp(work / "err.txt")};
}

// Bad input: exit 2, one line on stderr containing `part`.
void expect_refused(const Run &r, const std::string &part) {
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(part) != std::string::npos);
}

std::string file(const std::string &name, const std::string &text) {
  fs::create_directories(work);
  std::ofstream(work / name, std::ios::binary) << text;
  return name;
}

std::string npy(const std::string &name, const std::vector<std::size_t> &shape,
                const std::vector<double> &data) {
  fs::create_directories(work);
  pm::io::write_npy((work / name).string(), shape, data);
  return name;
}

const std::string head = R"("pmach": 1, "kind": "machine", )";

// A graded machine on two points, level 1 → level 2, weight w.
std::string two_level_machine() {
  return file("two.json", "{" + head +
                              R"("space": {"shape": [2]}, "grading": {"levels": [1, 2]},
                                 "parameters": {"shape": [1]},
                                 "edges": {"list": [[0, 1, 0]]}, "sigma": "identity"})");
}

std::map<std::string, std::string> folder(const fs::path &dir) {
  std::map<std::string, std::string> files;
  for (const auto &e : fs::directory_iterator(dir))
    files[e.path().filename().string()] = slurp(e.path());
  return files;
}

} // namespace

TEST_CASE("nothing lost: a run replaces the whole set of outputs, or nothing") {
  fs::remove_all(work);
  const std::string m = two_level_machine();
  npy("y0.npy", {2}, {1, 2});
  npy("w.npy", {1}, {3});
  npy("bad_ybar.npy", {5}, {1, 2, 3, 4, 5});
  REQUIRE(pmach("eval " + m + " --y0 y0.npy --w w.npy --ybar y0.npy --out out").code == 0);
  const auto first = folder(work / "out");
  CHECK(first.count("grad_w.npy") == 1);
  CHECK(first.count(pm::io::run_manifest) == 1);

  // A run that fails on a bad --ybar leaves the previous run as it was.
  npy("y0b.npy", {2}, {5, 6});
  expect_refused(pmach("eval " + m + " --y0 y0b.npy --w w.npy --ybar bad_ybar.npy --out out"),
                 "bad_ybar.npy: npy field 'shape'");
  CHECK(folder(work / "out") == first);

  // A run without --ybar replaces the set: no stale gradient survives.
  REQUIRE(pmach("eval " + m + " --y0 y0b.npy --w w.npy --out out/").code == 0);
  const auto second = folder(work / "out");
  CHECK(second.count("grad_w.npy") == 0);
  CHECK(second.count("y.npy") == 1);
  CHECK(pm::io::read_npy((work / "out" / "y.npy").string()).data ==
        std::vector<double>{5, 6 + 3 * 5});

  // --out with a missing parent is not created, nor is anything else.
  expect_refused(pmach("eval " + m + " --y0 y0.npy --w w.npy --out missing/deeper/out"),
                 "expected an existing directory");
  CHECK_FALSE(fs::exists(work / "missing"));
  // Bad input creates no output folder.
  expect_refused(pmach("eval " + m + " --y0 bad_ybar.npy --w w.npy --out fresh"), "bad_ybar.npy");
  CHECK_FALSE(fs::exists(work / "fresh"));

  // Links are not followed: one inside out/, and out/ itself.
  fs::create_symlink("/dev/full", work / "out" / "z.npy.link");
  expect_refused(pmach("eval " + m + " --y0 y0.npy --w w.npy --out out"),
                 "which is not a regular file");
  fs::remove(work / "out" / "z.npy.link");
  fs::create_symlink(work / "out", work / "alias");
  expect_refused(pmach("eval " + m + " --y0 y0.npy --w w.npy --out alias"), "is not a folder");
  // A folder of other files is not replaced.
  fs::create_directories(work / "mine");
  file("mine/notes.txt", "keep me");
  expect_refused(pmach("eval " + m + " --y0 y0.npy --w w.npy --out mine"),
                 "refusing to replace a folder of other files");
  CHECK(slurp(work / "mine" / "notes.txt") == "keep me");
  CHECK(folder(work / "out") == second);
}

TEST_CASE("nothing lost: write errors are seen, and the previous file survives them") {
  fs::remove_all(work);
  const std::string m = two_level_machine();
  npy("w.npy", {1}, {3});
  // A large run under a file-size limit of 64 KiB: refused, old set intact.
  npy("small.npy", {1, 2}, {1, 2});
  REQUIRE(pmach("eval " + m + " --y0 small.npy --w w.npy --out out").code == 0);
  const auto before = folder(work / "out");
  npy("big.npy", {20000, 2}, std::vector<double>(40000, 1.0));
  const Run r = pmach("eval " + m + " --y0 big.npy --w w.npy --out out", 1024, 20, "", 64);
  expect_refused(r, "write error");
  CHECK(folder(work / "out") == before);

  // dot --out through a link to /dev/full is refused; dot and check to a
  // full standard output exit 2.
  fs::create_symlink("/dev/full", work / "full.dot");
  expect_refused(pmach("dot " + m + " --out full.dot"), "is not a regular file");
  expect_refused(pmach("dot " + m, 1024, 20, "/dev/full"), "standard output: write error");
  expect_refused(pmach("check " + m + " --cases 2", 1024, 20, "/dev/full"),
                 "standard output: write error");
  // A failed write of a single file leaves the previous one whole.
  REQUIRE(pmach("dot " + m + " --out m.dot").code == 0);
  const std::string dot = slurp(work / "m.dot");
  CHECK(dot.rfind("digraph machine", 0) == 0);
  CHECK_THROWS_WITH(pm::io::write_file_atomically("/dev/full", "x"),
                    Catch::Contains("not a regular file"));
  CHECK(slurp(work / "m.dot") == dot);
}

TEST_CASE("nothing lost: a run killed midway leaves the old set or the new one") {
  fs::remove_all(work);
  const std::string m = two_level_machine();
  npy("w.npy", {1}, {3});
  npy("a.npy", {1, 2}, {1, 1});
  const std::size_t n = 100000;
  npy("b.npy", {n, 2}, std::vector<double>(2 * n, 2.0));
  REQUIRE(pmach("eval " + m + " --y0 a.npy --w w.npy --out out").code == 0);
  const auto old_set = folder(work / "out");
  REQUIRE(pmach("eval " + m + " --y0 b.npy --w w.npy --out new").code == 0);
  const auto new_set = folder(work / "new");
  // Kill points spread over the length of one uninterrupted run (the time
  // only places the kills; nothing is asserted about it).
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(pmach("eval " + m + " --y0 b.npy --w w.npy --out timed").code == 0);
  const auto length = std::chrono::steady_clock::now() - start;
  int killed_midway = 0;
  const int rounds = 20;
  for (int k = 0; k < rounds; ++k) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      if (::chdir(work.c_str()) != 0) ::_exit(127);
      ::execl(PMACH_EXECUTABLE, "pmach", "eval", m.c_str(), "--y0", "b.npy", "--w", "w.npy",
              "--out", "out", static_cast<char *>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(length * k / (rounds - 4));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    killed_midway += WIFSIGNALED(status) ? 1 : 0;
    const auto now = folder(work / "out");
    INFO("killed at " << k << "/" << rounds - 4 << " of a run");
    CHECK((now == old_set || now == new_set));
    if (now == new_set) {
      // Back to the old set for the next round.
      fs::remove_all(work / "out");
      REQUIRE(pmach("eval " + m + " --y0 a.npy --w w.npy --out out").code == 0);
    }
  }
  // Which rounds were cut short depends on the machine's speed; the
  // property above is checked in every round.
  WARN("runs killed before they ended: " << killed_midway << " of " << rounds);
}

TEST_CASE("costs bounded: levels, zero-extent spaces, parameters, products, bit growth") {
  fs::remove_all(work);
  // One point at level 2^30: the levels are renumbered, not allocated.
  const std::string lv = file("levels.json", "{" + head + R"("space": {"shape": [1]},
      "grading": {"levels": [1073741824]}, "edges": {"list": []}, "sigma": "identity"})");
  npy("one.npy", {1}, {1});
  CHECK(pmach("eval " + lv + " --y0 one.npy --out lv", 256, 5).code == 0);
  CHECK(pmach("check " + lv + " --cases 5", 256, 5).code <= 1);
  // 2^26 points of distinct levels would be 2^26 levels: the space bound.
  // A zero-extent space: 2^24 + 1 samples of nothing are refused.
  const std::string zero = file("zero.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [0]}, "target": {"shape": [8]}, "edges": {"list": []}})");
  npy("zero_y0.npy", {(std::size_t{1} << 24) + 1, 0}, {});
  expect_refused(pmach("eval " + zero + " --y0 zero_y0.npy --out z", 512, 5),
                 "samples, expected at most 16777216 per batch");
  npy("zero_y0b.npy", {std::size_t{1} << 27, 0}, {});
  expect_refused(pmach("eval " + zero + " --y0 zero_y0b.npy --out z", 512, 5), "per batch");
  fs::create_directories(work / "against");
  fs::copy_file(work / "zero_y0b.npy", work / "against" / "x.npy");
  expect_refused(pmach("check " + zero + " --against against --cases 1", 512, 5), "per batch");
  // Exact evaluation bounds the parameters too.
  const std::string wide = file("wide.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [1]}, "target": {"shape": [1]}, "parameters": {"shape": [1048577]},
      "edges": {"list": [[0, 0, 0]]}})");
  npy("wide_w.npy", {1048577}, std::vector<double>(1048577, 1.0));
  expect_refused(
      pmach("eval " + wide + " --y0 one.npy --w wide_w.npy --out x --precision exact", 1024, 10),
      "use --precision double");
  // Backward costs samples × parameters: 2^15 samples × 2^20 parameters.
  const std::string dense = file("dense.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [1]}, "target": {"shape": [1]}, "parameters": {"shape": [1048576]},
      "edges": {"list": [[0, 0, 0]]}})");
  npy("dense_w.npy", {1048576}, std::vector<double>(1048576, 1.0));
  npy("batch.npy", {32768, 1}, std::vector<double>(32768, 1.0));
  expect_refused(
      pmach("eval " + dense + " --y0 batch.npy --ybar batch.npy --w dense_w.npy --out x", 1024, 10),
      "(points + edges + parameters + levels) steps, expected at most");
  // check on a 150-byte recurrent machine with pad 2^22 − 1.
  const std::string recur = file("recur.json", "{" + head + R"("machine": "RecurMachine",
      "dims": [1], "sigma": "identity", "length": 1, "pad": 4194303, "timeblock": 1})");
  expect_refused(pmach("check " + recur, 1024, 10), "use fewer --cases");
  // Exact rationals squared level after level: refused, saying how to go on.
  std::string dims = "1";
  for (int k = 1; k < 14; ++k) dims += ", 1";
  const std::string square = file("square.json", "{" + head + R"("machine": "DenseMachine",
      "dims": [)" + dims + R"(], "sigma": {"polynomial": [0, 0, 1]}})");
  npy("square_w.npy", {14, 14}, std::vector<double>(14 * 14, 1.0));
  npy("square_y0.npy", {14}, std::vector<double>(14, 1.0));
  expect_refused(
      pmach("eval " + square + " --y0 square_y0.npy --w square_w.npy --out sq --precision exact",
            512, 10),
      "bits or more over 14 levels");
  CHECK(pmach("eval " + square + " --y0 square_y0.npy --w square_w.npy --out sq", 512, 10).code ==
        2); // in double the squares overflow: refused as non-finite, below
  // The exact check of such a machine falls back to double, and says so.
  const Run c = pmach("check " + square + " --cases 3", 512, 20);
  CHECK(c.code <= 1);
  CHECK(c.out.find("bits over 14 levels") != std::string::npos);
}

TEST_CASE("costs bounded: parsing memory, --cases, dot output") {
  fs::remove_all(work);
  // 64 MiB of nesting, and of empty arrays, under a 512 MiB limit.
  file("deep.json", std::string(std::size_t{64} << 20, '['));
  expect_refused(pmach("check deep.json", 512, 10), "levels of nesting");
  std::string many = "[";
  for (std::size_t i = 0; i < (std::size_t{21} << 20); ++i) many += "[],";
  file("many.json", many + "[]]");
  expect_refused(pmach("check many.json", 512, 10), "arrays and objects");
  // 64 MiB of CSV records: refused at the edge bound, within the limit.
  const std::string csv_layer = file("csv.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [1]}, "target": {"shape": [1]}, "edges": {"csv": "e.csv"}})");
  std::string rows;
  while (rows.size() < (std::size_t{64} << 20) - 8) rows += "0,0\n";
  file("e.csv", rows);
  expect_refused(pmach("check " + csv_layer, 768, 20), "expected at most 4194304 records");
  // --cases has an upper bound; --seed takes every 64-bit value.
  expect_refused(pmach("check --cases 100001"), "--cases: is 100001, expected at most 100000");
  const std::string m = two_level_machine();
  const Run s = pmach("check " + m + " --cases 2 --seed 18446744073709551615");
  CHECK(s.code == 0);
  CHECK(s.out.find("18446744073709551615") != std::string::npos);
  expect_refused(pmach("check --seed 18446744073709551616"), "--seed: is 18446744073709551616");
  // dot of a 230-byte layer with 2^22 edges: a bounded summary.
  const std::string big = file("big.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [2048]}, "target": {"shape": [2048]},
      "edges": {"ranges": [2048, 2048], "s": {"matrix": [[1, 0]]}, "t": {"matrix": [[0, 1]]}}})");
  const Run d = pmach("dot " + big, 1024, 20);
  CHECK(d.code == 0);
  CHECK(d.out.size() < 4096);
  CHECK(d.out.find("4194304 edges") != std::string::npos);
}

TEST_CASE("no silent misread: keys, integers, decimals, CSV cells, names") {
  fs::remove_all(work);
  const std::string layer = R"("pmach": 1, "kind": "layer", "source": {"shape": [2]},
      "target": {"shape": [2]}, )";
  expect_refused(
      pmach("check " +
            file("dup.json", "{" + layer + R"("edges": {"list": [[0, 0]], "list": []}})")),
      "JSON key 'list' appears twice");
  // 2^64 + 1 as a measure is exact; as an index it is reported as written.
  npy("x.npy", {2}, {1, 0});
  const std::string big =
      file("big.json", "{" + layer + R"("edges": {"list": [[0, 0, 18446744073709551617]]}})");
  const auto d = std::get<pm::io::LayerDescription>(pm::io::read_model((work / big).string()));
  CHECK(d.span.span.mu[0] == pm::Rational(boost::multiprecision::cpp_int("18446744073709551617")));
  expect_refused(
      pmach("check " + file("bigidx.json",
                            "{" + layer + R"("edges": {"list": [[18446744073709551617, 0]]}})")),
      "found 18446744073709551617");
  // Decimals are exact, as JSON numbers and as strings, and in CSV.
  const auto dec = std::get<pm::io::LayerDescription>(pm::io::read_model(
      (work / file("dec.json", "{" + layer + R"("edges": {"list": [[0, 0, 0.1], [1, 1, "0.1"]]}})"))
          .string()));
  CHECK(dec.span.span.mu == std::vector<pm::Rational>{pm::Rational(1, 10), pm::Rational(1, 10)});
  CHECK(pm::io::rational_from_text("123456789012345678901234567890123").value() ==
        pm::Rational(boost::multiprecision::cpp_int("123456789012345678901234567890123")));
  CHECK_FALSE(pm::io::rational_from_text("1e999999999").has_value());
  // CSV: a byte-order mark keeps the first row; bad cells said as written.
  file("bom.csv", "\xEF\xBB\xBF"
                  "0,1,0.1\n1,0\n");
  const auto bom = std::get<pm::io::LayerDescription>(pm::io::read_model(
      (work / file("bom.json", "{" + layer + R"("edges": {"csv": "bom.csv"}})")).string()));
  CHECK(bom.span.apex() == 2);
  CHECK(bom.span.span.mu[0] == pm::Rational(1, 10));
  file("abc.csv", "0,abc\n");
  expect_refused(
      pmach("check " + file("abc.json", "{" + layer + R"("edges": {"csv": "abc.csv"}})")),
      "column 't': is 'abc', expected an integer index");
  file("plus.csv", "+0,1.5\n");
  expect_refused(
      pmach("check " + file("plus.json", "{" + layer + R"("edges": {"csv": "plus.csv"}})")),
      "column 't': is 1.5, expected an integer index");
  // An ESC in a file name is escaped; a long path is shortened.
  const Run esc = pmach("check $(printf \"a\\033[31mb.json\")");
  CHECK(esc.err.find('\033') == std::string::npos);
  CHECK(esc.err.find("\\x1b[31mb.json") != std::string::npos);
  const Run lng = pmach("check " + std::string(4000, 'p') + ".json");
  CHECK(lng.code == 2);
  CHECK(lng.err.size() < 400);
}

TEST_CASE("non-finite results are never written; a machine without parameters runs") {
  fs::remove_all(work);
  // y = 1e300 · z: finite in double, overflows in float32 and squared.
  const std::string m = file("m.json", "{" + head + R"("space": {"shape": [2]},
      "grading": {"levels": [1, 2]}, "parameters": {"shape": [1]},
      "edges": {"list": [[0, 1, 0, 1e300]]}, "sigma": {"polynomial": [0, 0, 1]}})");
  npy("y0.npy", {2}, {1, 0});
  npy("w.npy", {1}, {1});
  expect_refused(pmach("eval " + m + " --y0 y0.npy --w w.npy --out o"),
                 "o/z.npy: element 1 is inf in float64");
  CHECK_FALSE(fs::exists(work / "o"));
  expect_refused(pmach("eval " + m + " --y0 y0.npy --w w.npy --out o --precision exact"),
                 "is inf in float64");
  CHECK_FALSE(fs::exists(work / "o"));
  // By parts without "parameters": one parameter of weight 1, no --w needed.
  const std::string p = file("p.json", "{" + head + R"("space": {"shape": [2]},
      "grading": {"levels": [1, 2]}, "edges": {"list": [[0, 1]]}, "sigma": "identity"})");
  npy("y0b.npy", {2}, {2, 5});
  REQUIRE(pmach("eval " + p + " --y0 y0b.npy --out o").code == 0);
  CHECK(pm::io::read_npy((work / "o" / "y.npy").string()).data == std::vector<double>{2, 7});
}

// The line of the table for `law` on a subject containing `subject`.
std::string row_of(const std::string &table, const std::string &law, const std::string &subject) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(law + " ", 0) == 0 && line.find(subject) != std::string::npos) return line;
  return "";
}

TEST_CASE("check: an overflowing bound is too weak; causality and exact samples bounded") {
  fs::remove_all(work);
  // σ = y² over 16 levels: the squares overflow double, and so do the
  // bounds, so MACH-EQUATION (double) decides nothing (it failed with
  // -nan / -nan).
  std::string dims = "1";
  for (int k = 1; k < 16; ++k) dims += ", 1";
  const std::string square = file("square16.json", "{" + head + R"("machine": "DenseMachine",
      "dims": [)" + dims + R"(], "sigma": {"polynomial": [0, 0, 1]}})");
  const Run c = pmach("check " + square + " --cases 5", 512, 20);
  INFO(c.out << c.err);
  CHECK(c.code == 1);
  const std::string equation = row_of(c.out, "MACH-EQUATION", "(double)");
  CHECK(equation.find("too weak") != std::string::npos);
  CHECK(c.out.find("overflows the scalar type") != std::string::npos);
  CHECK(c.out.find("-nan") == std::string::npos);
  CHECK(c.out.find(", 0 failed,") != std::string::npos);
  // A measure beyond double, read exactly from CSV: drawn as 1e400 (it was
  // `inf`), and the laws in double are too weak, never failed.
  file("huge.csv", "s,t,pi,mu\n0,0,0,1e400\n");
  const std::string huge = file("huge.json", R"({"pmach": 1, "kind": "layer",
      "source": {"shape": [1]}, "target": {"shape": [1]}, "parameters": {"shape": [1]},
      "edges": {"csv": "huge.csv"}})");
  const Run drawn = pmach("dot " + huge, 512, 10);
  INFO(drawn.out << drawn.err);
  CHECK(drawn.code == 0);
  CHECK(drawn.out.find("1e400") != std::string::npos);
  CHECK(drawn.out.find("inf") == std::string::npos);
  const Run huge_check = pmach("check " + huge + " --cases 5", 512, 20);
  INFO(huge_check.out << huge_check.err);
  CHECK(huge_check.code == 1);
  CHECK(huge_check.out.find("too weak") != std::string::npos);
  CHECK(huge_check.out.find(", 0 failed,") != std::string::npos);
  CHECK(huge_check.out.find("nan") == std::string::npos);
  // The causality law runs a forward pass per level: O(levels²) per case,
  // refused before it runs for 4096 levels (it took 53 s per case).
  const std::string recur = file("recur4096.json", "{" + head + R"("machine": "RecurMachine",
      "dims": [1], "sigma": "relu", "length": 4096, "pad": 1, "timeblock": 1})");
  expect_refused(pmach("check " + recur + " --cases 1", 512, 10), "times levels + 1");
  // The exact reference of --against: 256 samples × (2^14 edges and
  // parameters) is refused before any rational is computed.
  const Run made = pmach("make dense --in 128 --out 128 --file dense128.json", 512, 10);
  REQUIRE(made.code == 0);
  fs::create_directories(work / "samples");
  npy("samples/x.npy", {256, 128}, std::vector<double>(256 * 128, 1.0));
  expect_refused(pmach("check dense128.json --against samples --cases 1", 512, 10),
                 "steps of the exact reference, expected at most 4194304");
  // An empty path is named with its option.
  npy("y0.npy", {16}, std::vector<double>(16, 1.0));
  expect_refused(pmach("eval " + square + " --y0 y0.npy --out \"\"", 512, 10),
                 "--out: is '', expected a path");
}
