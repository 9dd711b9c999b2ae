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
#include <set>
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

// Limits of a JSON document, checked while it is parsed, so that the tree
// built stays a small multiple of the file's size: nesting depth, values
// (numbers, strings, …) and arrays or objects. Larger edge lists belong in
// .npy or CSV files.
inline constexpr std::size_t json_max_depth = 64;
inline constexpr std::size_t json_max_values = std::size_t{1} << 23;
inline constexpr std::size_t json_max_containers = std::size_t{1} << 21;
// Longest number text read exactly, and the largest decimal exponent.
inline constexpr std::size_t max_number_text = 200;
inline constexpr long max_decimal_exponent = 400;

namespace detail {
inline bool is_integer_text(std::string_view s) {
  const std::size_t start = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  return s.size() > start && s.size() - start <= 30 &&
         s.find_first_not_of("0123456789", start) == std::string::npos;
}

// Decimal digits by hand: cpp_int's own parser rejects "+5" and reads a
// leading 0 as octal ("010" would be 8).
inline boost::multiprecision::cpp_int digits_value(std::string_view t) {
  boost::multiprecision::cpp_int v = 0;
  for (char c : t)
    if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
  return v;
}

// [sign] digits [. digits] [e|E [sign] digits], read exactly: "0.1" is 1/10.
inline std::optional<Rational> decimal_from_text(std::string_view s) {
  if (s.empty() || s.size() > max_number_text) return std::nullopt;
  std::size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  const bool negative = s[0] == '-';
  std::string digits;
  long exponent = 0;
  bool any = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, any = true) digits += s[i];
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, any = true) {
      digits += s[i];
      --exponent;
    }
  if (!any) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool minus = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    long e = 0;
    bool any_e = false;
    // Saturated rather than refused here: a zero with any exponent is 0.
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, any_e = true)
      e = std::min(e * 10 + (s[i] - '0'), 10 * max_decimal_exponent);
    if (!any_e) return std::nullopt;
    exponent += minus ? -e : e;
  }
  if (i != s.size()) return std::nullopt;
  const boost::multiprecision::cpp_int m = digits_value(digits);
  if (m == 0) return Rational(0);
  // The exponent counts only when the value is not zero (0e999999 is 0).
  if (exponent > max_decimal_exponent || exponent < -max_decimal_exponent - long(digits.size()))
    return std::nullopt;
  const boost::multiprecision::cpp_int p =
      boost::multiprecision::pow(boost::multiprecision::cpp_int(10),
                                 static_cast<unsigned>(exponent < 0 ? -exponent : exponent));
  const Rational r = exponent < 0 ? Rational(m, p) : Rational(m * p);
  return negative ? Rational(-r) : r;
}
} // namespace detail

// A number written as text: an integer or "p/q" (exact, at most 30 digits
// each, q ≠ 0), or a decimal such as 0.1, 1e-3 or a long integer, read
// exactly (0.1 is 1/10; at most 200 characters, exponent within ±400).
// Nothing when the text is none of these.
inline std::optional<Rational> rational_from_text(std::string_view s) {
  auto integer = [](std::string_view t) {
    const boost::multiprecision::cpp_int v = detail::digits_value(t);
    return t[0] == '-' ? boost::multiprecision::cpp_int(-v) : v;
  };
  const auto slash = s.find('/');
  if (slash != std::string::npos) {
    const std::string_view p = s.substr(0, slash), q = s.substr(slash + 1);
    if (!detail::is_integer_text(p) || !detail::is_integer_text(q) ||
        q.find_first_not_of("0+-") == std::string::npos)
      return std::nullopt;
    // The two-argument constructor rejects a negative denominator.
    const boost::multiprecision::cpp_int num = integer(p), den = integer(q);
    return den < 0 ? Rational(-num, -den) : Rational(num, den);
  }
  if (detail::is_integer_text(s)) return Rational(integer(s));
  return detail::decimal_from_text(s);
}

namespace detail {
// A JSON number that no double holds exactly (0.1, 1e-400) or an integer
// beyond 64 bits is kept as its text behind this prefix, so that it is read
// exactly where a rational is expected and reported as written elsewhere.
inline constexpr std::string_view exact_number_tag = "\x01pmach-number:";

inline bool is_exact_number(const nlohmann::json &v) {
  return v.is_string() && v.get_ref<const std::string &>().rfind(exact_number_tag, 0) == 0;
}
} // namespace detail

class Field {
public:
  Field(const Json &value, std::string file, std::string pointer = "")
      : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

  const Json &json() const { return *value_; }
  const std::string &file() const { return file_; }
  std::string pointer() const { return pointer_.empty() ? "/" : pointer_; }

  [[noreturn]] void fail(const std::string &expected) const {
    std::string found = value_->type_name();
    if (detail::is_exact_number(*value_))
      found = printable(value_->get<std::string>().substr(detail::exact_number_tag.size()), 40);
    else if (value_->is_primitive())
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
    if (!value_->is_string() || detail::is_exact_number(*value_)) fail("a string");
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
    if (value_->is_number_unsigned()) return Rational(value_->get<unsigned long long>());
    if (value_->is_number_integer()) return Rational(value_->get<long long>());
    if (value_->is_number_float()) return Rational(value_->get<double>()); // finite, exact
    if (detail::is_exact_number(*value_))
      if (auto r = rational_from_text(std::string_view(value_->get_ref<const std::string &>())
                                          .substr(detail::exact_number_tag.size())))
        return *r;
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

namespace detail {

// Builds the tree as nlohmann's own parser does, and refuses what it would
// let through: a key repeated in one object (the last would silently win),
// a number no double holds (kept exactly, see exact_number_tag) beyond
// max_number_text, and documents past the depth and size limits.
class CheckedJsonBuilder : public nlohmann::json_sax<Json> {
public:
  CheckedJsonBuilder(Json &root, const std::string &file) : dom_(root, true), file_(file) {}

  bool null() override { return value() && dom_.null(); }
  bool boolean(bool v) override { return value() && dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return value() && dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return value() && dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t &text) override {
    value();
    // An integer literal here is beyond 64 bits: kept as written even when
    // a double holds it (2^64), so that it is reported as written.
    const bool integer = text.find_first_of(".eE") == std::string::npos;
    if (!integer && std::isfinite(v) && rational_from_text(text) == Rational(v))
      return dom_.number_float(v, text);
    require(rational_from_text(text).has_value(), file_, ": JSON number ", printable(text, 40),
            ": expected at most ", max_number_text, " characters and an exponent within ±",
            max_decimal_exponent, " (it cannot be read exactly)");
    string_t tagged = std::string(exact_number_tag) + text;
    return dom_.string(tagged);
  }
  bool string(string_t &v) override { return value() && dom_.string(v); }
  bool binary(binary_t &v) override { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) override {
    open();
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(string_t &k) override {
    require(keys_.back().insert(k).second, file_, ": JSON key '", printable(k, 40),
            "' appears twice in one object, expected each key once");
    return dom_.key(k);
  }
  bool end_object() override {
    keys_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) override {
    open();
    return dom_.start_array(n);
  }
  bool end_array() override {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string &token,
                   const nlohmann::detail::exception &e) override {
    // Rethrown as what it is (the base class would lose the byte offset).
    if (const auto *p = dynamic_cast<const Json::parse_error *>(&e))
      return dom_.parse_error(position, token, *p);
    return dom_.parse_error(position, token, e);
  }

private:
  bool value() {
    require(++values_ <= json_max_values, file_, ": JSON document: expected at most ",
            json_max_values, " values (put large edge lists in .npy or CSV files)");
    return true;
  }
  void open() {
    value();
    require(++containers_ <= json_max_containers, file_, ": JSON document: expected at most ",
            json_max_containers, " arrays and objects (put large edge lists in .npy or CSV files)");
    require(++depth_ <= json_max_depth, file_, ": JSON document: expected at most ", json_max_depth,
            " levels of nesting");
  }
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  const std::string &file_;
  std::vector<std::set<std::string>> keys_;
  std::size_t depth_ = 0, values_ = 0, containers_ = 0;
};

} // namespace detail

// Parses JSON text; a syntax error becomes one line with the byte offset.
inline Json parse_json(std::string_view text, const std::string &file) {
  try {
    Json root;
    detail::CheckedJsonBuilder builder(root, file);
    Json::sax_parse(text.begin(), text.end(), &builder);
    return root;
  } catch (const Json::parse_error &e) {
    std::string what = e.what();
    const auto colon = what.find("; last read");
    const auto start = what.find("syntax error");
    if (start != std::string::npos)
      what = what.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    pm::detail::fail(file, ": JSON ", printable(what, 200), " at byte ", e.byte);
  } catch (const Json::exception &e) {
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
