#pragma once
// NumPy .npy files (format versions 1.0 and 2.0), the exchange format for
// arrays: inputs, parameters, outputs and cotangents. Only what the reference
// semantics needs is accepted: little-endian float32 or float64, in C or Fortran
// order (held in C order).
// The layout is: the magic "\x93NUMPY", major and minor version bytes, the
// header length (uint16 for 1.0, uint32 for 2.0, little-endian), a Python
// dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n' so that the data starts at a multiple
// of 64 bytes, then the elements in row-major order.
//
// Every malformed file raises pm::Error with one line naming the file, the
// field at fault and what was expected; sizes are checked before anything is
// allocated, so that no file can exhaust memory.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "pm/category/error.hpp"
#include "pm/io/file.hpp"
#include "pm/io/printable.hpp"

namespace pm::io {

enum class Dtype { float32, float64 };

inline std::size_t item_size(Dtype d) { return d == Dtype::float32 ? 4 : 8; }
inline const char *descr(Dtype d) { return d == Dtype::float32 ? "<f4" : "<f8"; }

// An array read from or written to a .npy file. The data are held as double
// whatever the file's dtype: float32 → double is exact.
struct NpyArray {
  std::vector<std::size_t> shape;
  std::vector<double> data; // row-major
  Dtype dtype = Dtype::float64;

  std::size_t size() const { return data.size(); }
};

// The largest array accepted: 2^27 elements (1 GiB as double). A header
// announcing more is rejected before any allocation.
inline constexpr std::size_t npy_max_elements = std::size_t{1} << 27;
// Headers longer than this are rejected (NumPy's own limit is 10000 bytes).
inline constexpr std::size_t npy_max_header = 65536;

// Whether NaN and ±Inf are accepted as data.
enum class Finite { require, allow };

namespace detail {

// A cursor over the header dict literal; every failure names file and field.
class NpyHeaderParser {
public:
  NpyHeaderParser(std::string_view text, const std::string &file) : s_(text), file_(file) {}

  [[noreturn]] void fail(const std::string &field, const std::string &expected) const {
    pm::detail::fail(file_, ": npy header field '", field, "': expected ", expected,
                     " at header offset ", pos_);
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, const std::string &field) {
    if (!accept(c)) fail(field, std::string("'") + c + "'");
  }
  std::string quoted(const std::string &field) {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail(field, "a quoted string");
    const char q = s_[pos_++];
    const std::size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) fail(field, "a closing quote");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean(const std::string &field) {
    skip_space();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(field, "True or False");
  }
  std::size_t integer(const std::string &field) {
    skip_space();
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
      fail(field, "a non-negative integer");
    std::size_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const std::size_t digit = std::size_t(s_[pos_] - '0');
      if (v > (npy_max_elements - digit) / 10) fail(field, "an extent of at most 2^27");
      v = v * 10 + digit;
      ++pos_;
    }
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_; // Python 2 long suffix
    return v;
  }
  std::vector<std::size_t> tuple(const std::string &field) {
    expect('(', field);
    std::vector<std::size_t> out;
    while (!accept(')')) {
      if (out.size() >= 32) fail(field, "at most 32 dimensions");
      out.push_back(integer(field));
      if (!accept(',')) {
        expect(')', field);
        break;
      }
    }
    return out;
  }
  bool at_end() {
    skip_space();
    return pos_ == s_.size();
  }

private:
  std::string_view s_;
  const std::string &file_;
  std::size_t pos_ = 0;
};

inline std::uint64_t load_le(const unsigned char *p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}
inline void store_le(std::string &out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

} // namespace detail

// Parses the bytes of a .npy file; `file` names it in error messages.
inline NpyArray parse_npy(std::string_view bytes, const std::string &file,
                          Finite finite = Finite::require) {
  const auto *u = reinterpret_cast<const unsigned char *>(bytes.data());
  require(bytes.size() >= 10 && bytes.substr(0, 6) == std::string_view("\x93NUMPY", 6), file,
          ": npy field 'magic': expected the bytes \\x93NUMPY at offset 0");
  const unsigned major = u[6], minor = u[7];
  require((major == 1 || major == 2) && minor == 0, file, ": npy field 'version': is ", major, ".",
          minor, ", expected 1.0 or 2.0");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  require(bytes.size() >= 8 + len_bytes, file, ": npy field 'header_len': expected ", len_bytes,
          " bytes, file is truncated");
  const std::size_t header_len = detail::load_le(u + 8, len_bytes);
  const std::size_t data_offset = 8 + len_bytes + header_len;
  require(header_len <= npy_max_header, file, ": npy field 'header_len': is ", header_len,
          ", expected at most ", npy_max_header);
  require(bytes.size() >= data_offset, file, ": npy field 'header': expected ", header_len,
          " bytes, file is truncated");
  std::string_view header = bytes.substr(8 + len_bytes, header_len);
  while (!header.empty() &&
         (header.back() == '\n' || header.back() == ' ' || header.back() == '\0'))
    header.remove_suffix(1);

  detail::NpyHeaderParser p(header, file);
  bool have_descr = false, have_order = false, have_shape = false, fortran = false;
  NpyArray a;
  p.expect('{', "header");
  while (!p.accept('}')) {
    const std::string key = p.quoted("header key");
    p.expect(':', key);
    if (key == "descr" && !have_descr) {
      const std::string d = p.quoted("descr");
      if (d == "<f8")
        a.dtype = Dtype::float64;
      else if (d == "<f4")
        a.dtype = Dtype::float32;
      else
        p.fail("descr",
               "'<f4' or '<f8' (little-endian float32/float64), found '" + printable(d) + "'");
      have_descr = true;
    } else if (key == "fortran_order" && !have_order) {
      fortran = p.boolean("fortran_order");
      have_order = true;
    } else if (key == "shape" && !have_shape) {
      a.shape = p.tuple("shape");
      have_shape = true;
    } else {
      p.fail(printable(key), "one of 'descr', 'fortran_order', 'shape', each once");
    }
    if (!p.accept(',')) {
      p.expect('}', "header");
      break;
    }
  }
  if (!p.at_end()) p.fail("header", "nothing after the closing '}'");
  if (!have_descr) p.fail("descr", "the key to be present");
  if (!have_order) p.fail("fortran_order", "the key to be present");
  if (!have_shape) p.fail("shape", "the key to be present");

  std::size_t count = 1;
  for (std::size_t e : a.shape) {
    require(e == 0 || count <= npy_max_elements / e, file, ": npy field 'shape': expected at most ",
            npy_max_elements, " elements in total");
    count *= e;
  }
  const std::size_t item = item_size(a.dtype);
  const std::size_t data_bytes = bytes.size() - data_offset;
  require(data_bytes == count * item, file, ": npy field 'data': expected ", count * item,
          " bytes for shape and dtype, found ", data_bytes);
  a.data.resize(count);
  const unsigned char *d = u + data_offset;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t bits = detail::load_le(d + i * item, item);
    const double v = a.dtype == Dtype::float64
                         ? std::bit_cast<double>(bits)
                         : double(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    require(finite == Finite::allow || std::isfinite(v), file, ": npy field 'data': element ", i,
            " is not finite, expected a finite number");
    a.data[i] = v;
  }
  // Fortran order (column-major, as NumPy writes a transposed array): the
  // element with multi-index m is at Σ m_j Π_{l<j} n_l; held row-major here.
  if (fortran && a.shape.size() > 1) {
    std::vector<double> c(count);
    std::vector<std::size_t> m(a.shape.size(), 0);
    for (std::size_t i = 0; i < count; ++i) {
      std::size_t f = 0;
      for (std::size_t j = a.shape.size(); j-- > 0;) f = f * a.shape[j] + m[j];
      c[i] = a.data[f];
      for (std::size_t j = a.shape.size(); j-- > 0 && ++m[j] == a.shape[j];) m[j] = 0;
    }
    a.data = std::move(c);
  }
  return a;
}

// The bytes of a .npy file holding `data` with `shape`. Version 1.0 is used
// unless the header needs 2.0. float32 rounds each element to nearest.
inline std::string format_npy(const std::vector<std::size_t> &shape,
                              const std::vector<double> &data, Dtype dtype = Dtype::float64) {
  std::size_t count = 1;
  for (std::size_t e : shape) {
    require(e == 0 || count <= npy_max_elements / e, "write_npy: shape has more than ",
            npy_max_elements, " elements");
    count *= e;
  }
  require(count == data.size(), "write_npy: data has ", data.size(),
          " elements, expected the product of the shape, ", count);
  std::string dict =
      std::string("{'descr': '") + descr(dtype) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "") +
            (i + 1 < shape.size() ? " " : "");
  dict += "), }";
  const unsigned major = dict.size() + 1 + 10 < 65536 ? 1 : 2;
  const std::size_t prefix = major == 1 ? 10 : 12;
  const std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  std::string out("\x93NUMPY", 6);
  out.push_back(char(major));
  out.push_back(0);
  detail::store_le(out, dict.size(), major == 1 ? 2 : 4);
  out += dict;
  out.reserve(out.size() + count * item_size(dtype));
  for (double v : data) {
    if (dtype == Dtype::float64)
      detail::store_le(out, std::bit_cast<std::uint64_t>(v), 8);
    else
      detail::store_le(out, std::bit_cast<std::uint32_t>(float(v)), 4);
  }
  return out;
}

inline NpyArray read_npy(const std::string &path, Finite finite = Finite::require) {
  return parse_npy(read_file(path, npy_max_elements * 8 + npy_max_header + 16, "a .npy file"), path,
                   finite);
}

inline void write_npy(const std::string &path, const std::vector<std::size_t> &shape,
                      const std::vector<double> &data, Dtype dtype = Dtype::float64) {
  const std::string bytes = format_npy(shape, data, dtype);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  require(bool(out), path, ": cannot open the file for writing");
  out.write(bytes.data(), std::streamsize(bytes.size()));
  require(bool(out), path, ": write error");
}

} // namespace pm::io
