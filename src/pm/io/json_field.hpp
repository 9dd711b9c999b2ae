#pragma once
// Reading a JSON document field by field. A Field is a value together with
// the file it came from and its JSON pointer (RFC 6901, e.g. /edges/s/0), so
// that every error is one line: "<file>: <pointer>: expected <what>, found
// <what was there>". Unknown keys are errors too: a misspelt field must not
// be silently ignored.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "pm/category/error.hpp"
#include "pm/category/scalar.hpp"
#include "pm/io/file.hpp"
#include "pm/io/printable.hpp"

namespace pm::io {

using Json = nlohmann::json;

// JSON files larger than this are refused before reading (64 MiB).
inline constexpr std::size_t json_max_bytes = std::size_t{64} << 20;

namespace detail {
inline bool is_integer_text(const std::string &s) {
  const std::size_t start = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  return s.size() > start && s.size() - start <= 30 &&
         s.find_first_not_of("0123456789", start) == std::string::npos;
}
} // namespace detail

// A number written as text: an integer or "p/q" (exact, at most 30 digits
// each, q ≠ 0), or a finite decimal such as 0.25 or 1e-3 (read as the nearest
// double, then exactly). Nothing when the text is none of these.
inline std::optional<Rational> rational_from_text(const std::string &s) {
  // Decimal digits by hand: cpp_int's own parser rejects "+5" and reads a
  // leading 0 as octal ("010" would be 8).
  auto integer = [](const std::string &t) {
    boost::multiprecision::cpp_int v = 0;
    for (char c : t)
      if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
    return t[0] == '-' ? boost::multiprecision::cpp_int(-v) : v;
  };
  const auto slash = s.find('/');
  if (slash != std::string::npos) {
    const std::string p = s.substr(0, slash), q = s.substr(slash + 1);
    if (!detail::is_integer_text(p) || !detail::is_integer_text(q) ||
        q.find_first_not_of("0+-") == std::string::npos)
      return std::nullopt;
    // The two-argument constructor rejects a negative denominator.
    const boost::multiprecision::cpp_int num = integer(p), den = integer(q);
    return den < 0 ? Rational(-num, -den) : Rational(num, den);
  }
  if (detail::is_integer_text(s)) return integer(s);
  if (s.empty() || s.size() > 64 || s.find_first_not_of("0123456789+-.eE") != std::string::npos)
    return std::nullopt;
  char *end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(d)) return std::nullopt;
  return Rational(d);
}

class Field {
public:
  Field(const Json &value, std::string file, std::string pointer = "")
      : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

  const Json &json() const { return *value_; }
  const std::string &file() const { return file_; }
  std::string pointer() const { return pointer_.empty() ? "/" : pointer_; }

  [[noreturn]] void fail(const std::string &expected) const {
    std::string found = value_->type_name();
    if (value_->is_primitive())
      found = printable(value_->dump(-1, ' ', true, Json::error_handler_t::replace), 40);
    pm::detail::fail(file_, ": ", pointer(), ": expected ", expected, ", found ", found);
  }

  bool has(const std::string &key) const { return value_->is_object() && value_->contains(key); }

  Field at(const std::string &key) const {
    if (!value_->is_object()) fail("an object with the field '" + key + "'");
    const auto it = value_->find(key);
    if (it == value_->end())
      pm::detail::fail(file_, ": ", pointer(), ": expected the field '", key, "'");
    return Field(*it, file_, pointer_ + "/" + escape(key));
  }
  std::optional<Field> find(const std::string &key) const {
    if (!has(key)) return std::nullopt;
    return at(key);
  }

  // Rejects keys other than the listed ones (and requires an object).
  void allow_only(std::initializer_list<const char *> keys) const {
    if (!value_->is_object()) fail("an object");
    for (const auto &item : value_->items())
      if (std::none_of(keys.begin(), keys.end(), [&](const char *k) { return item.key() == k; })) {
        std::string list;
        for (const char *k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
        pm::detail::fail(file_, ": ", pointer_, "/", escape(item.key()),
                         ": unknown field, expected one of ", list);
      }
  }

  std::size_t size() const {
    if (!value_->is_array()) fail("an array");
    return value_->size();
  }
  Field operator[](std::size_t i) const {
    if (!value_->is_array() || i >= value_->size())
      fail("an array with an element " + std::to_string(i));
    return Field((*value_)[i], file_, pointer_ + "/" + std::to_string(i));
  }

  std::string as_string() const {
    if (!value_->is_string()) fail("a string");
    return value_->get<std::string>();
  }
  bool as_bool() const {
    if (!value_->is_boolean()) fail("true or false");
    return value_->get<bool>();
  }
  long long as_int(long long lo, long long hi) const {
    const std::string want =
        "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (value_->is_number_unsigned()) {
      const auto v = value_->get<unsigned long long>();
      if (v > static_cast<unsigned long long>(hi) || static_cast<long long>(v) < lo) fail(want);
      return static_cast<long long>(v);
    }
    if (!value_->is_number_integer()) fail(want);
    const auto v = value_->get<long long>();
    if (v < lo || v > hi) fail(want);
    return v;
  }
  std::size_t as_size(std::size_t lo, std::size_t hi) const {
    return static_cast<std::size_t>(as_int(static_cast<long long>(lo), static_cast<long long>(hi)));
  }
  // A finite number: a JSON number (read exactly: a double is a dyadic
  // rational) or a string "p/q" for rationals that no double represents.
  Rational as_rational() const {
    if (value_->is_number_integer()) return Rational(as_int(-(1LL << 62), 1LL << 62));
    if (value_->is_number_float()) {
      const double d = value_->get<double>();
      if (!std::isfinite(d)) fail("a finite number");
      return Rational(d);
    }
    if (value_->is_string())
      if (auto r = rational_from_text(value_->get<std::string>())) return *r;
    fail("a number or a rational \"p/q\"");
  }

  // A path named by this string field, resolved against the file's directory.
  std::string as_path() const {
    const std::string p = as_string();
    if (p.empty() || printable(p, p.size()) != p)
      fail("a non-empty file name of printable ASCII characters");
    const std::filesystem::path rel(p);
    const std::string path =
        rel.is_absolute() ? p : (std::filesystem::path(file_).parent_path() / rel).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      fail("the name of an existing regular file (" + printable(path, 200) + " is not)");
    return path;
  }

private:
  // RFC 6901 escaping, then printable() for control characters.
  static std::string escape(const std::string &key) {
    std::string out;
    for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return printable(out);
  }
  const Json *value_;
  std::string file_;
  std::string pointer_;
};

// Parses JSON text; a syntax error becomes one line with the byte offset.
inline Json parse_json(std::string_view text, const std::string &file) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error &e) {
    std::string what = e.what();
    const auto colon = what.find("; last read");
    const auto start = what.find("syntax error");
    if (start != std::string::npos)
      what = what.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    pm::detail::fail(file, ": JSON ", printable(what, 200), " at byte ", e.byte);
  } catch (const Json::exception &e) { // e.g. a number too large for a double
    std::string what = e.what();
    const auto bracket = what.find("] ");
    pm::detail::fail(
        file, ": JSON error: ",
        printable(bracket == std::string::npos ? what : what.substr(bracket + 2), 200));
  }
}

inline Json read_json(const std::string &path) {
  return parse_json(read_file(path, json_max_bytes, "a JSON file"), path);
}

} // namespace pm::io
