#pragma once
// Comma-separated tables of numbers, for explicit edge lists. One record per
// line, fields separated by commas, optional spaces around fields; blank
// lines and lines starting with '#' are skipped; a first line that does not
// start with a digit, sign or '.' is a header naming the columns. A UTF-8
// byte-order mark at the start is skipped. The fields are views into the
// text, one flat list for the whole table, so that memory stays a small
// multiple of the file's size; records and fields per record are bounded.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pm/io/json_field.hpp"

namespace pm::io {

// Fields per record (an edge list needs at most four).
inline constexpr std::size_t csv_max_fields = 16;

struct CsvTable {
  std::unique_ptr<const std::string> text; // the file; the fields below point into it
  std::vector<std::string_view> header;    // empty when the file has none
  std::vector<std::string_view> cells;     // the fields of every record, in order
  std::vector<std::size_t> starts;         // record r is cells[starts[r], starts[r + 1])
  std::vector<std::size_t> lines;          // the line number of each record

  std::size_t size() const { return lines.size(); }
  std::span<const std::string_view> row(std::size_t r) const {
    return std::span<const std::string_view>(cells).subspan(starts[r], starts[r + 1] - starts[r]);
  }
};

// `max_rows` bounds the records, checked as they are read.
inline CsvTable parse_csv(std::string text_in, const std::string &file,
                          std::size_t max_rows = std::size_t{1} << 22) {
  CsvTable t;
  t.text = std::make_unique<const std::string>(std::move(text_in));
  std::string_view text = *t.text;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  t.starts.push_back(0);
  std::size_t line_no = 0, pos = 0;
  std::vector<std::string_view> fields;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    fields.clear();
    std::size_t start = 0;
    while (true) {
      require(fields.size() < csv_max_fields, file, ": line ", line_no, ": expected at most ",
              csv_max_fields, " fields");
      const std::size_t comma = std::min(line.find(',', start), line.size());
      std::string_view f = line.substr(start, comma - start);
      const std::size_t a = f.find_first_not_of(" \t"), b = f.find_last_not_of(" \t");
      fields.push_back(a == std::string_view::npos ? std::string_view() : f.substr(a, b - a + 1));
      if (comma == line.size()) break;
      start = comma + 1;
    }
    const char c = line[first];
    const bool numeric = (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
    if (!numeric && t.lines.empty() && t.header.empty()) {
      t.header = fields;
      continue;
    }
    require(t.lines.size() < max_rows, file, ": line ", line_no, ": expected at most ", max_rows,
            " records");
    t.cells.insert(t.cells.end(), fields.begin(), fields.end());
    t.starts.push_back(t.cells.size());
    t.lines.push_back(line_no);
  }
  return t;
}

inline CsvTable read_csv(const std::string &path, std::size_t max_rows) {
  return parse_csv(read_file(path, json_max_bytes, "a CSV file"), path, max_rows);
}

} // namespace pm::io
