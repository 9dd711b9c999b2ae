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

// An error message made safe for a terminal and kept to one line: control
// characters (C0, DEL and C1, e.g. an ESC in a file name) and bytes that are
// not UTF-8 are escaped as \xNN, other UTF-8 text (≥, ²) is kept, and a very
// long word (a path) is shortened in its middle.
inline std::string message_line(std::string_view s, std::size_t max_word = 160) {
  std::string out;
  auto escape = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80         ? 1
                      : (c >> 5) == 6  ? 2
                      : (c >> 4) == 14 ? 3
                      : (c >> 3) == 30 ? 4
                                       : 0;
    bool valid = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; valid && k < len; ++k)
      valid = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    const bool c1 = len == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
    if (!valid || c1 || c < 0x20 || c == 0x7f) {
      if (c == '\n')
        out += ' ';
      else if (c1) {
        escape(c);
        escape(static_cast<unsigned char>(s[i + 1]));
        ++i;
      } else
        escape(c);
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  // Shorten each run of non-space characters longer than max_word.
  std::string shortened;
  for (std::size_t i = 0; i < out.size();) {
    const std::size_t end = std::min(out.find(' ', i), out.size());
    std::string_view word = std::string_view(out).substr(i, end - i);
    if (word.size() > max_word) {
      // Cut on UTF-8 character boundaries.
      std::size_t head = max_word / 3, tail = word.size() - (max_word - head);
      while (head > 0 && (static_cast<unsigned char>(word[head]) >> 6) == 2) --head;
      while (tail < word.size() && (static_cast<unsigned char>(word[tail]) >> 6) == 2) ++tail;
      shortened.append(word.substr(0, head)).append("...").append(word.substr(tail));
    } else {
      shortened.append(word);
    }
    if (end < out.size()) shortened += ' ';
    i = end + 1;
  }
  return shortened;
}

} // namespace pm::io
