#pragma once
// Command-line arguments of pmach: a subcommand, positional arguments and
// options "--name value" or flags "--name". Every option must be declared by
// the subcommand; anything else is a usage error (exit code 2).
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pm/category/error.hpp"
#include "pm/io/printable.hpp"

namespace pmach {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options; // name (without --) → value
  std::set<std::string> flags;

  bool flag(const std::string &name) const { return flags.count(name) > 0; }
  bool has(const std::string &name) const { return options.count(name) > 0; }
  std::string get(const std::string &name, const std::string &fallback = "") const {
    const auto it = options.find(name);
    return it == options.end() ? fallback : it->second;
  }
  // A non-negative integer option, at most `max` (any unsigned 64-bit value
  // when `max` is 2^64 − 1).
  std::uint64_t number(const std::string &name, std::uint64_t fallback, std::uint64_t max) const {
    if (!has(name)) return fallback;
    const std::string v = get(name);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    pm::require(!v.empty() && v.find_first_not_of("0123456789") == std::string::npos, "--", name,
                ": is '", pm::io::printable(v), "', expected a non-negative integer");
    pm::require(ec == std::errc() && end == v.data() + v.size() && n <= max, "--", name, ": is ",
                pm::io::printable(v), ", expected at most ", max);
    return n;
  }
};

// Parses argv[first..]; `valued` and `flags` list the accepted option names.
inline Args parse_args(int argc, char **argv, int first, const std::set<std::string> &valued,
                       const std::set<std::string> &flags) {
  Args a;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      a.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    const auto eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
      pm::require(!inline_value, "option --", name, " takes no value");
      a.flags.insert(name);
    } else if (valued.count(name)) {
      if (!inline_value) {
        pm::require(i + 1 < argc, "option --", name, " expects a value");
        value = argv[++i];
      }
      pm::require(!a.has(name), "option --", name, " given twice");
      a.options[name] = value;
    } else {
      pm::detail::fail("unknown option --", name, " (see --help)");
    }
  }
  return a;
}

} // namespace pmach
