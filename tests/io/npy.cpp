// The .npy reader and writer: round trips, files built byte by byte here
// (independently of the writer), and every kind of malformed file.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>

#include "pm/io/npy.hpp"
#include "tests/support/scratch.hpp"

using pm::io::Dtype;

namespace {

// A .npy file as NumPy writes it: magic, version, header length, the dict
// padded with spaces to a 64-byte boundary and ended by '\n', then the data.
std::string hand_built(const std::string &dict, const std::string &data, unsigned major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  const std::size_t n = header.size();
  out += char(n & 0xff);
  out += char((n >> 8) & 0xff);
  if (major == 2) out += std::string(2, '\0');
  return out + header + data;
}

// The little-endian bytes of a float or double, written independently of
// the library (memcpy of the host representation, x86 being little-endian).
template <class T> std::string le(T v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  return std::string(reinterpret_cast<const char *>(bytes), sizeof(T));
}
std::string le_double(double v) { return le(v); }
std::string le_float(float v) { return le(v); }

std::string error_of(const std::string &bytes) {
  try {
    pm::io::parse_npy(bytes, "x.npy");
  } catch (const pm::Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("npy: reads a hand-built float64 file in C order") {
  const std::string data = le_double(1.5) + le_double(-2.0) + le_double(0.25) + le_double(3.0) +
                           le_double(1e300) + le_double(-0.0);
  const auto a = pm::io::parse_npy(
      hand_built("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", data), "h.npy");
  CHECK(a.shape == std::vector<std::size_t>{2, 3});
  CHECK(a.dtype == Dtype::float64);
  CHECK(a.data == std::vector<double>{1.5, -2.0, 0.25, 3.0, 1e300, -0.0});
  CHECK(std::signbit(a.data[5]));
}

TEST_CASE("npy: reads float32, version 2.0, scalars, empty arrays and key order") {
  const auto f =
      pm::io::parse_npy(hand_built("{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}",
                                   le_float(0.1f) + le_float(-7.f) + le_float(65504.f), 2),
                        "f.npy");
  CHECK(f.dtype == Dtype::float32);
  CHECK(f.shape == std::vector<std::size_t>{3});
  CHECK(f.data == std::vector<double>{double(0.1f), -7.0, 65504.0});

  const auto s = pm::io::parse_npy(
      hand_built("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", le_double(4.0)), "s");
  CHECK(s.shape.empty());
  CHECK(s.data == std::vector<double>{4.0});

  const auto e = pm::io::parse_npy(
      hand_built("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", ""), "e");
  CHECK(e.shape == std::vector<std::size_t>{0, 5});
  CHECK(e.data.empty());
}

TEST_CASE("npy: the writer produces exactly NumPy's bytes") {
  const std::string expected = hand_built(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", le_double(1) + le_double(2));
  CHECK(pm::io::format_npy({2, 1}, {1, 2}) == expected);
  const std::string expected1 =
      hand_built("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", le_float(0.5f));
  CHECK(pm::io::format_npy({1}, {0.5}, Dtype::float32) == expected1);
  CHECK(pm::io::format_npy({}, {3.0}).size() % 64 == 8);
}

TEST_CASE("npy: files round-trip bit for bit") {
  const pm_test::ScratchDir dir("pm_io_npy");
  const std::string path = (dir.path / "roundtrip.npy").string();
  const std::vector<double> values{0.1, -1e-310, 1e308, -0.0, 3.0, 1.0 / 3.0};
  pm::io::write_npy(path, {3, 1, 2}, values);
  const auto a = pm::io::read_npy(path);
  CHECK(a.shape == std::vector<std::size_t>{3, 1, 2});
  REQUIRE(a.data.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    CHECK(std::memcmp(&a.data[i], &values[i], sizeof(double)) == 0);

  pm::io::write_npy(path, {6}, values, Dtype::float32);
  const auto f = pm::io::read_npy(path, pm::io::Finite::allow); // 1e308 overflows to inf
  CHECK(f.dtype == Dtype::float32);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(f.data[i] == double(float(values[i])));
  std::filesystem::remove(path);
}

TEST_CASE("npy: malformed files are rejected with one line naming file and field") {
  const std::string ok_dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  const std::string two = le_double(1) + le_double(2);
  auto has = [](const std::string &msg, const std::string &part) {
    return msg.find(part) != std::string::npos && msg.find('\n') == std::string::npos &&
           msg.rfind("x.npy", 0) == 0;
  };
  CHECK(has(error_of("\x93NUMPX" + hand_built(ok_dict, two).substr(6)), "'magic'"));
  CHECK(has(error_of(""), "'magic'"));
  std::string v3 = hand_built(ok_dict, two);
  v3[6] = 3;
  CHECK(has(error_of(v3), "'version'"));
  CHECK(has(error_of(hand_built(ok_dict, two).substr(0, 9)), "'magic'"));
  CHECK(has(error_of(hand_built(ok_dict, two).substr(0, 30)), "'header'"));
  CHECK(has(error_of(hand_built(ok_dict, two.substr(0, 12))), "'data'"));
  CHECK(has(error_of(hand_built(ok_dict, two + "x")), "'data'"));
  CHECK(has(error_of(hand_built("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", two)),
            "'descr'"));
  CHECK(has(error_of(hand_built("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", two)),
            "'descr'"));
  CHECK(has(error_of(hand_built("{'descr': '<f8', 'fortran_order': 1, 'shape': (2,), }", two)),
            "'fortran_order'"));
  CHECK(has(error_of(hand_built("{'descr': '<f8', 'shape': (2,), }", two)), "'fortran_order'"));
  CHECK(
      has(error_of(hand_built("{'descr': '<f8', 'fortran_order': False, 'shape': (2,-1), }", two)),
          "'shape'"));
  CHECK(has(error_of(hand_built("{'descr': '<f8', 'fortran_order': False, 'shape': (2, }", two)),
            "'shape'"));
  CHECK(has(error_of(hand_built("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
                                "'shape': (2,), }",
                                two)),
            "'descr'"));
  // Sizes that would exhaust memory are refused before allocating.
  CHECK(has(error_of(hand_built("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (100000, 100000, 100000), }",
                                two)),
            "'shape'"));
  CHECK(has(error_of(hand_built("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (99999999999999999999999,), }",
                                two)),
            "'shape'"));
  CHECK(has(error_of(hand_built(ok_dict, le_double(1) +
                                             le_double(std::numeric_limits<double>::quiet_NaN()))),
            "element 1 is not finite"));
  CHECK_NOTHROW(pm::io::parse_npy(hand_built(ok_dict, le_double(1) + le_double(INFINITY)), "x",
                                  pm::io::Finite::allow));
  CHECK_THROWS_AS(pm::io::read_npy("/nonexistent/pm_missing.npy"), pm::Error);
}
