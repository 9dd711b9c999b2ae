#pragma once
// The summary form of pmach dot, for models too large to draw point by
// point: a node per block of points and one edge per pair of blocks and fate,
// labelled by its number of edges. A layer's spaces are cut along their first
// axis when it is short (the channels of PyTorch's layout), a machine's
// levels into runs of consecutive indices (or whole levels, or groups of
// levels); at most max_groups blocks per column and per machine, whatever the
// model, so the output is bounded.
#include <map>
#include <tuple>

#include "dot_graph.hpp"
#include "pm/io/layer_format.hpp"
#include "pm/io/machine_format.hpp"

namespace pmach::dot {

inline constexpr pm::Index max_blocks_per_axis = 16;
inline constexpr pm::Index max_groups = 16;

// The blocks of points: columns of blocks, the column of each block, and the
// block of each point.
struct Blocks {
  std::vector<Column> columns;
  std::vector<std::size_t> column_of;
  std::vector<pm::Index> of;

  // A block in `column`, the next column to be pushed.
  pm::Index add(Column &column, std::string label) {
    column.rows.push_back({numbered("g", column_of.size()), std::move(label), ""});
    column_of.push_back(columns.size());
    return column_of.size() - 1;
  }
};

inline std::string points(pm::Index n) {
  return std::to_string(n) + (n == 1 ? " point" : " points");
}

// One column for a layer's space: cut along axis 0 when it is short.
inline void add_space(Blocks &b, const pm::Shape &shape, const std::string &title,
                      std::vector<pm::Index> &of) {
  Column column{title + " " + extents(shape), {}};
  of.assign(shape.size(), 0);
  const bool cut = shape.rank() >= 2 && shape.extents()[0] <= max_blocks_per_axis;
  if (!cut) {
    const pm::Index g = b.add(column, points(shape.size()));
    std::fill(of.begin(), of.end(), g);
  } else {
    const pm::Index per = shape.size() / shape.extents()[0];
    std::string rest;
    for (pm::Index k = 1; k < shape.rank(); ++k) rest += ",·";
    for (pm::Index c = 0; c < shape.extents()[0]; ++c) {
      const pm::Index g = b.add(column, numbered("(", c) + rest + ")\n" + points(per));
      std::fill(of.begin() + c * per, of.begin() + (c + 1) * per, g);
    }
  }
  b.columns.push_back(std::move(column));
}

// A machine's levels: runs of consecutive indices when there are at most
// max_groups, else one block per level, else groups of consecutive levels.
inline Blocks machine_blocks(const pm::Shape &space, const pm::Grading &d) {
  Blocks b;
  b.of.assign(d.size(), 0);
  const auto members = d.members();
  std::vector<std::vector<std::vector<pm::Index>>> runs(d.levels());
  pm::Index total = 0;
  for (pm::Index k = 0; k < d.levels(); ++k)
    for (std::size_t j = 0; j < members[k].size(); ++j) {
      if (j == 0 || members[k][j] != members[k][j - 1] + 1) {
        runs[k].emplace_back();
        ++total;
      }
      runs[k].back().push_back(members[k][j]);
    }
  const pm::Index per = total <= max_groups ? 1 : (d.levels() + max_groups - 1) / max_groups;
  for (pm::Index lo = 0; lo < d.levels(); lo += per) {
    const pm::Index hi = std::min(d.levels(), lo + per);
    Column column{hi == lo + 1 ? numbered("level ", lo + 1)
                               : numbered("levels ", lo + 1) + numbered("-", hi),
                  {}};
    if (total <= max_groups) {
      for (const auto &run : runs[lo]) {
        const std::string from = multi_index(space, run.front()),
                          to = multi_index(space, run.back());
        const pm::Index g =
            b.add(column, (run.size() == 1 ? from : from + " … " + to) + "\n" + points(run.size()));
        for (pm::Index i : run) b.of[i] = g;
      }
    } else {
      pm::Index n = 0;
      for (pm::Index k = lo; k < hi; ++k) n += members[k].size();
      const pm::Index g = b.add(column, points(n));
      for (pm::Index k = lo; k < hi; ++k)
        for (pm::Index i : members[k]) b.of[i] = g;
    }
    b.columns.push_back(std::move(column));
  }
  return b;
}

// Edges counted per (source block, target block, fate).
inline void write_bundles(std::ostream &os, const pm::ParametricSpan<pm::Rational> &a,
                          const std::vector<Fate> &fate, const Blocks &b,
                          const std::vector<pm::Index> &from, const std::vector<pm::Index> &to) {
  std::map<std::tuple<pm::Index, pm::Index, Fate>, pm::Index> bundles;
  for (pm::Index e = 0; e < a.apex(); ++e)
    if (a.span.s(e) < from.size()) // a bias point (source |X|) has no block to draw from
      ++bundles[{from[a.span.s(e)], to[a.span.t(e)], fate[e]}];
  for (const auto &[key, n] : bundles) {
    const auto &[g, h, f] = key;
    const std::string what = f == Fate::kept      ? " edges"
                             : f == Fate::cleaned ? " dropped"
                                                  : " not raising";
    os << "  " << end(b.column_of[g], numbered("g", g), true) << " -> "
       << end(b.column_of[h], numbered("g", h), false) << " [label=\"" << n << what << "\", "
       << edge_style(f, "#000000") << "];\n";
  }
}

inline bool any(const std::vector<Fate> &fates, Fate f) {
  return std::find(fates.begin(), fates.end(), f) != fates.end();
}

inline std::string summary_title(const std::string &name, pm::Index points, pm::Index edges) {
  return name + (name.empty() ? "" : "\n") + numbered("summary of ", points) +
         numbered(" points and ", edges) + " edges";
}

inline void write_layer_summary(std::ostream &os, const pm::io::LayerDescription &d,
                                const std::vector<Fate> &fate) {
  open_graph(os, "layer", summary_title(d.name, d.source.size() + d.target.size(), d.span.apex()));
  Blocks b;
  std::vector<pm::Index> from, to;
  add_space(b, d.source, "source", from);
  add_space(b, d.target, "target", to);
  write_columns(os, b.columns);
  write_bundles(os, d.span, fate, b, from, to);
  Parameters(d.parameters, d.has_parameters)
      .legend(os, true, any(fate, Fate::cleaned), any(fate, Fate::offender));
  os << "}\n";
}

inline void write_machine_summary(std::ostream &os, const pm::io::MachineDescription &d,
                                  const pm::ParametricSpan<pm::Rational> &a,
                                  const pm::Grading &grading, const std::vector<Fate> &fate) {
  open_graph(os, "machine", summary_title(d.name, d.space.size(), a.apex()));
  const Blocks b = machine_blocks(d.space, grading);
  write_columns(os, b.columns);
  write_bundles(os, a, fate, b, b.of, b.of);
  Parameters(d.parameters, d.has_parameters)
      .legend(os, true, any(fate, Fate::cleaned), any(fate, Fate::offender));
  os << "}\n";
}

} // namespace pmach::dot
