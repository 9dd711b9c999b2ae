#pragma once
// The skeleton of every pmach dot picture: columns (the source and target of
// a layer, the levels of a machine) drawn left to right. A column is one
// node, a table with one row per point or block, so that the rows keep index
// order from top to bottom (Graphviz would reorder separate nodes to shorten
// edges); edges join rows through ports, "c<column>:<row>".
#include <ostream>
#include <string>
#include <vector>

#include "dot_style.hpp"

namespace pmach::dot {

struct Row {
  std::string port, label, tooltip;
};

struct Column {
  std::string title;
  std::vector<Row> rows;
};

// The end of an edge at row `port` of column c, leaving or entering on the side.
inline std::string end(std::size_t c, const std::string &port, bool out) {
  return numbered("c", c) + ":" + port + (out ? ":e" : ":w");
}

// Text for an HTML-like label: markup characters escaped, line breaks as <BR/>.
inline std::string html(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '&'    ? "&amp;"
           : c == '<'  ? "&lt;"
           : c == '>'  ? "&gt;"
           : c == '"'  ? "&quot;"
           : c == '\n' ? "<BR/>"
                       : std::string(1, c);
  return out;
}

inline void open_graph(std::ostream &os, const std::string &kind, const std::string &title) {
  os << "digraph " << kind << " {\n  label=" << quoted(title)
     << ";\n  labelloc=t;\n  rankdir=LR;\n  ranksep=1;\n"
     << "  node [shape=plaintext, fontsize=9];\n  edge [fontsize=8, arrowsize=0.5];\n";
}

inline void write_columns(std::ostream &os, const std::vector<Column> &columns) {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    os << "  c" << c << " [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" "
       << "CELLPADDING=\"2\">\n    <TR><TD BORDER=\"0\"><B>" << html(columns[c].title)
       << "</B></TD></TR>\n";
    for (const Row &r : columns[c].rows) {
      os << "    <TR><TD PORT=\"" << r.port << "\"";
      if (!r.tooltip.empty()) os << " TOOLTIP=\"" << html(r.tooltip) << "\"";
      os << ">" << html(r.label) << "</TD></TR>\n";
    }
    os << "  </TABLE>>];\n";
    // Columns left to right even where no edge joins them.
    if (c > 0) os << "  c" << c - 1 << " -> c" << c << " [style=invis];\n";
  }
}

// The attributes of an edge, or of a bundle of edges, of the given fate.
inline std::string edge_style(Fate fate, const char *colour) {
  switch (fate) {
  case Fate::kept:
    return std::string("color=\"") + colour + "\"";
  case Fate::cleaned:
    return std::string("color=\"") + colour + "\", style=dashed";
  case Fate::offender:
    // Backwards in the grading: it must not pull the columns out of order.
    return std::string("color=\"") + offender_colour + "\", fontcolor=\"" + offender_colour +
           "\", style=dashed, penwidth=2, constraint=false";
  }
  return "";
}

} // namespace pmach::dot
