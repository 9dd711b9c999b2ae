#pragma once
// Text from an input file quoted in an error message: control characters
// and non-ASCII bytes are escaped (\n, \x0b, …) and long text is cut, so that
// every message stays one printable line.
#include <cstdio>
#include <string>
#include <string_view>

namespace pm::io {

inline std::string printable(std::string_view s, std::size_t max = 60) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max) return out + "...";
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c >= 0x20 && c < 0x7f)
      out += char(c);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

} // namespace pm::io
