#pragma once
// Comma-separated tables of numbers, for explicit edge lists. One record per
// line, fields separated by commas, optional spaces around fields; blank
// lines and lines starting with '#' are skipped; a first line that does not
// start with a digit, sign or '.' is a header naming the columns.
#include <string>
#include <vector>

#include "pm/io/json_field.hpp"

namespace pm::io {

struct CsvTable {
  std::vector<std::string> header;            // empty when the file has none
  std::vector<std::vector<std::string>> rows; // the fields of each record
  std::vector<std::size_t> lines;             // the line number of each record
};

inline CsvTable parse_csv(std::string_view text, const std::string &file) {
  CsvTable t;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = std::min(line.find(',', start), line.size());
      std::string_view f = line.substr(start, comma - start);
      const std::size_t a = f.find_first_not_of(" \t"), b = f.find_last_not_of(" \t");
      fields.emplace_back(a == std::string_view::npos ? "" : f.substr(a, b - a + 1));
      if (comma == line.size()) break;
      start = comma + 1;
    }
    const char c = line[first];
    const bool numeric = (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
    if (!numeric && t.rows.empty() && t.header.empty()) {
      t.header = std::move(fields);
      continue;
    }
    require(t.rows.size() < (std::size_t{1} << 24), file, ": line ", line_no,
            ": expected at most 2^24 records");
    t.rows.push_back(std::move(fields));
    t.lines.push_back(line_no);
  }
  return t;
}

inline CsvTable read_csv(const std::string &path) {
  return parse_csv(read_file(path, json_max_bytes, "a CSV file"), path);
}

} // namespace pm::io
