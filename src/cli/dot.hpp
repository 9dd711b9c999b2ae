#pragma once
// pmach dot: a layer or machine as a Graphviz graph. Nodes are the points of
// the spaces (labelled by their multi-index); a layer draws the source and the
// target as two clusters, a machine draws one rank per level of its grading,
// so that shortcuts between non-adjacent levels stand out. Edges are coloured
// by their parameter and labelled by their weight when it is not 1; a
// machine shows only the edges that survive cleaning.
#include <iostream>
#include <map>
#include <ostream>

#include "args.hpp"
#include "pm/io/bounds.hpp"
#include "pm/io/machine_format.hpp"
#include "pm/io/output.hpp"

namespace pmach {

inline const char *dot_help =
    "usage: pmach dot MODEL.json [--out FILE.dot]\n"
    "\n"
    "Writes the layer's span or the machine's graded span as Graphviz DOT (to\n"
    "standard output unless --out is given): one node per point, levels of a\n"
    "machine's grading as ranks, edges coloured by parameter and labelled by\n"
    "their weight when it is not 1. Render with e.g. `dot -Tsvg`.\n"
    "Models of more than 32768 points and edges are drawn in summary: one node\n"
    "per space (layer) or per group of levels (machine, at most 64 groups),\n"
    "one edge per pair of nodes labelled by its number of edges.\n";

namespace detail {

inline std::string point_label(const pm::Shape &shape, pm::Index i) {
  std::ostringstream os;
  os << "(";
  const auto m = shape.multi(i);
  for (std::size_t k = 0; k < m.size(); ++k) os << (k ? "," : "") << m[k];
  os << ")";
  return os.str();
}

inline const char *palette(pm::Index p) {
  static const char *colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return colours[p % 10];
}

// A weight as written, or rounded when its exact form is long (a double
// such as 1e-300 is a rational of hundreds of digits).
inline std::string weight_label(const pm::Rational &mu) {
  std::ostringstream exact;
  exact << mu;
  if (exact.str().size() <= 24) return exact.str();
  std::ostringstream approx;
  approx.precision(6);
  approx << "~" << mu.convert_to<double>();
  return approx.str();
}

// The edge e from node <from><s(e)> to node <to><t(e)>.
inline void edge(std::ostream &os, char from, char to, const pm::ParametricSpan<pm::Rational> &a,
                 pm::Index e) {
  os << "  " << from << a.span.s(e) << " -> " << to << a.span.t(e) << " [color=\""
     << palette(a.pi(e)) << "\", tooltip=\"pi=" << a.pi(e) << "\"";
  if (a.span.mu[e] != 1) os << ", label=\"" << weight_label(a.span.mu[e]) << "\"";
  os << "];\n";
}

inline std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

} // namespace detail

// The summary of a large model: nodes are groups of points, edges are
// counted between groups; at most max_groups² edges whatever the model.
inline constexpr pm::Index max_groups = 64;

inline void write_summary(std::ostream &os, const std::string &kind, const std::string &name,
                          const std::vector<std::string> &groups,
                          const std::vector<pm::Index> &points,
                          const std::map<std::pair<pm::Index, pm::Index>, pm::Index> &edges) {
  os << "digraph " << kind << " {\n  label=" << quoted(name + " (summary)")
     << ";\n  rankdir=LR;\n  node [shape=box, fontsize=9];\n";
  for (std::size_t g = 0; g < groups.size(); ++g)
    os << "  g" << g << " [label=\"" << groups[g] << "\\n" << points[g] << " points\"];\n";
  for (const auto &[pair, n] : edges)
    os << "  g" << pair.first << " -> g" << pair.second << " [label=\"" << n << " edges\"];\n";
  os << "}\n";
}

inline bool too_large_to_draw(pm::Index points, pm::Index edges) {
  return points + edges > pm::io::max_dot_items;
}

inline void write_layer_summary(std::ostream &os, const pm::io::LayerDescription &d) {
  write_summary(os, "layer", d.name, {"source", "target"}, {d.source.size(), d.target.size()},
                {{{0, 1}, d.span.apex()}});
}

inline void write_machine_summary(std::ostream &os, const pm::io::MachineDescription &d,
                                  const pm::GradedSpanMachine<pm::Rational> &m) {
  const pm::Index levels = m.levels(), per = (levels + max_groups - 1) / max_groups;
  const pm::Index groups = (levels + per - 1) / per;
  std::vector<std::string> names;
  std::vector<pm::Index> points(groups, 0);
  for (pm::Index g = 0; g < groups; ++g) {
    const pm::Index lo = g * per + 1, hi = std::min(levels, lo + per - 1);
    names.push_back(lo == hi ? "level " + std::to_string(lo)
                             : "levels " + std::to_string(lo) + "-" + std::to_string(hi));
  }
  for (pm::Index k = 0; k < levels; ++k) points[k / per] += m.members(k).size();
  std::map<std::pair<pm::Index, pm::Index>, pm::Index> edges;
  for (pm::Index k = 0; k < levels; ++k)
    for (pm::Index e : m.edges_into(k))
      ++edges[{(m.grading()(m.span().span.s(e)) - 1) / per, k / per}];
  write_summary(os, "machine", d.name, names, points, edges);
}

inline void write_dot(std::ostream &os, const pm::io::ModelDescription &model) {
  using namespace detail;
  if (const auto *d = std::get_if<pm::io::LayerDescription>(&model)) {
    if (too_large_to_draw(d->source.size() + d->target.size(), d->span.apex()))
      return write_layer_summary(os, *d);
    os << "digraph layer {\n  label=" << quoted(d->name)
       << ";\n  rankdir=LR;\n  node [shape=circle, fontsize=9];\n";
    os << "  subgraph cluster_source {\n    label=\"source\";\n";
    for (pm::Index i = 0; i < d->source.size(); ++i)
      os << "    x" << i << " [label=\"" << point_label(d->source, i) << "\"];\n";
    os << "  }\n  subgraph cluster_target {\n    label=\"target\";\n";
    for (pm::Index i = 0; i < d->target.size(); ++i)
      os << "    y" << i << " [label=\"" << point_label(d->target, i) << "\"];\n";
    os << "  }\n";
    for (pm::Index e = 0; e < d->span.apex(); ++e) edge(os, 'x', 'y', d->span, e);
    os << "}\n";
    return;
  }
  const auto &d = std::get<pm::io::MachineDescription>(model);
  const pm::GradedSpanMachine<pm::Rational> m = pm::io::make_machine<pm::Rational>(d);
  if (too_large_to_draw(d.space.size(), m.span().apex())) return write_machine_summary(os, d, m);
  os << "digraph machine {\n  label=" << quoted(d.name)
     << ";\n  rankdir=LR;\n  node [shape=circle, fontsize=9];\n";
  for (pm::Index k = 0; k < m.levels(); ++k) {
    os << "  subgraph level" << k + 1 << " {\n    rank=same;\n";
    for (pm::Index i : m.members(k))
      os << "    n" << i << " [label=\"" << point_label(d.space, i) << "\", tooltip=\"level "
         << k + 1 << "\"];\n";
    os << "  }\n";
  }
  for (pm::Index k = 0; k < m.levels(); ++k)
    for (pm::Index e : m.edges_into(k)) edge(os, 'n', 'n', m.span(), e);
  os << "}\n";
}

inline int run_dot(const Args &args) {
  pm::require(args.positional.size() == 1, "dot: expected one MODEL.json, found ",
              args.positional.size(), " arguments");
  const auto model = pm::io::read_model(args.positional[0]);
  std::ostringstream os; // bounded: see too_large_to_draw
  write_dot(os, model);
  if (args.has("out"))
    pm::io::write_file_atomically(args.get("out"), os.str());
  else
    std::cout << os.str();
  return 0;
}

} // namespace pmach
