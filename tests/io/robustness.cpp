// The guarantees of docs/formats.md §5 at the level of src/pm/io/: the
// all-or-nothing writers, the message sanitizer, exact reading of numbers,
// the JSON and CSV limits. tests/cli/robustness.cpp plants the same classes
// on the pmach binary.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pm/io/bounds.hpp"
#include "pm/io/csv.hpp"
#include "pm/io/json_field.hpp"
#include "pm/io/output.hpp"
#include "pm/io/printable.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;
using pm::Rational;

namespace {
const pm_test::ScratchDir scratch("pm_io_robustness_test");
const fs::path &work = scratch.path;

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const fs::path &dir) {
  return std::size_t(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}
} // namespace

TEST_CASE("write_file_atomically: replaces the file whole, refuses links, leaves no temporary") {
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string f = (work / "a.txt").string();
  pm::io::write_file_atomically(f, "first");
  pm::io::write_file_atomically(f, "second");
  CHECK(slurp(f) == "second");
  CHECK(entries(work) == 1);
  fs::create_symlink(f, work / "link.txt");
  CHECK_THROWS_WITH(pm::io::write_file_atomically((work / "link.txt").string(), "x"),
                    Catch::Contains("refusing to replace it"));
  CHECK(slurp(f) == "second");
  CHECK_THROWS_WITH(pm::io::write_file_atomically((work / "no" / "b.txt").string(), "x"),
                    Catch::Contains("expected an existing directory"));
}

TEST_CASE("RunOutput: the set of one run replaces the folder as a whole") {
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path dir = work / "run";
  pm::io::RunOutput first(dir.string() + "/");
  first.add("y.npy", "1");
  first.add("grad.npy", "2");
  CHECK(!fs::exists(dir)); // nothing before commit
  first.commit();
  CHECK(slurp(dir / "y.npy") == "1");
  CHECK(fs::exists(dir / pm::io::run_manifest));
  pm::io::RunOutput second(dir.string());
  second.add("y.npy", "3");
  second.commit();
  CHECK(slurp(dir / "y.npy") == "3");
  CHECK(!fs::exists(dir / "grad.npy"));
  CHECK(entries(work) == 1); // no staging folder left
  // A file the manifest does not list is not deleted.
  std::ofstream(dir / "mine.txt") << "keep";
  pm::io::RunOutput third(dir.string());
  third.add("y.npy", "4");
  CHECK_THROWS_WITH(third.commit(), Catch::Contains("does not list"));
  CHECK(slurp(dir / "mine.txt") == "keep");
  CHECK(slurp(dir / "y.npy") == "3");
  CHECK(entries(work) == 1);
}

TEST_CASE("message_line: control characters escaped, UTF-8 kept, long words shortened") {
  CHECK(pm::io::message_line("a\x1b[31mb: ≥ 1\n") == "a\\x1b[31mb: ≥ 1 ");
  CHECK(pm::io::message_line("\xc2\x9b and \xff") == "\\xc2\\x9b and \\xff");
  const std::string m = pm::io::message_line(std::string(1000, 'p') + ": cannot open");
  CHECK(m.size() < 200);
  CHECK(m.find("...") != std::string::npos);
  CHECK(m.find(": cannot open") != std::string::npos);
}

TEST_CASE("numbers as text are read exactly or refused") {
  // .value(): a refusal must fail the check, not read an empty optional.
  auto read = [](const char *text) { return pm::io::rational_from_text(text).value(); };
  CHECK(read("0.1") == Rational(1, 10));
  CHECK(read("-2.5e-3") == Rational(-1, 400));
  CHECK(read("1E2") == Rational(100));
  CHECK(read("0e999999") == Rational(0));
  CHECK(read("-0.0e-99999999999999999999") == Rational(0));
  CHECK(read("9007199254740993") == Rational(9007199254740993LL));
  for (const char *bad :
       {"abc", "1e", ".", "1.2.3", "1e401", "1e99999999999999999999", "0x10", "inf", "nan", ""})
    CHECK_FALSE(pm::io::rational_from_text(bad).has_value());
  CHECK_FALSE(pm::io::rational_from_text(std::string(201, '1')).has_value());
}

TEST_CASE("json reader: duplicate keys, nesting and inexact numbers") {
  CHECK_THROWS_WITH(pm::io::parse_json(R"({"a": {"b": 1, "b": 2}})", "f.json"),
                    Catch::Contains("f.json: JSON key 'b' appears twice"));
  CHECK_NOTHROW(pm::io::parse_json(R"([{"b": 1}, {"b": 2}])", "f.json"));
  CHECK_THROWS_WITH(pm::io::parse_json(std::string(65, '[') + std::string(65, ']'), "f.json"),
                    Catch::Contains("at most 64 levels of nesting"));
  CHECK_NOTHROW(pm::io::parse_json(std::string(64, '[') + std::string(64, ']'), "f.json"));
  const pm::io::Json j = pm::io::parse_json(R"([0.5, 0.1, 18446744073709551616, 1e-400])", "f");
  const pm::io::Field f(j, "f");
  CHECK(j[0].is_number_float()); // a double that is exact stays one
  CHECK(f[0].as_rational() == Rational(1, 2));
  CHECK(f[1].as_rational() == Rational(1, 10));
  CHECK(f[2].as_rational() == Rational(boost::multiprecision::cpp_int("18446744073709551616")));
  CHECK(f[3].as_rational() ==
        Rational(1, boost::multiprecision::pow(boost::multiprecision::cpp_int(10), 400)));
  CHECK_THROWS_WITH(f[2].as_int(0, 10), Catch::Contains("found 18446744073709551616"));
  CHECK_THROWS_WITH(f[1].as_string(), Catch::Contains("expected a string, found 0.1"));
  CHECK_THROWS_WITH(pm::io::parse_json("[1e-4000]", "f"),
                    Catch::Contains("cannot be read exactly"));
  CHECK_THROWS_WITH(pm::io::parse_json("[1e400]", "f"), Catch::Contains("number overflow"));
}

TEST_CASE("csv reader: a byte-order mark is skipped, records are bounded") {
  const pm::io::CsvTable t = pm::io::parse_csv("\xEF\xBB\xBF"
                                               "0, 1\n# c\n2,3,1/2\n",
                                               "t.csv");
  REQUIRE(t.size() == 2);
  CHECK(t.header.empty());
  CHECK(t.row(0)[0] == "0");
  CHECK(t.row(1)[2] == "1/2");
  CHECK(t.lines == std::vector<std::size_t>{1, 3});
  CHECK_THROWS_WITH(pm::io::parse_csv("0\n1\n2\n", "t.csv", 2),
                    Catch::Contains("t.csv: line 3: expected at most 2 records"));
  CHECK_THROWS_WITH(pm::io::parse_csv(std::string(40, ',') + "\n", "t.csv"),
                    Catch::Contains("expected at most 16 fields"));
}

TEST_CASE("bounds: batches of zero-extent spaces and products of sizes") {
  CHECK_NOTHROW(pm::io::require_batch(pm::io::max_batch, 0, "f"));
  CHECK_THROWS_WITH(pm::io::require_batch(pm::io::max_batch + 1, 0, "f"),
                    Catch::Contains("per batch"));
  const pm::io::ModelSize size{1, 1, 1, std::uint64_t{1} << 20, 0};
  CHECK_THROWS_WITH(pm::io::require_evaluation(size, std::uint64_t{1} << 15, false, "f"),
                    Catch::Contains("steps, expected at most 2147483648"));
  CHECK_NOTHROW(pm::io::require_evaluation(size, 1024, false, "f"));
  const pm::io::ModelSize wide{1, 1, 1, (std::uint64_t{1} << 20) + 1, 0};
  CHECK_THROWS_WITH(pm::io::require_evaluation(wide, 1, true, "f"),
                    Catch::Contains("use --precision double"));
}
