#pragma once
// pmach dot: a layer or machine as a Graphviz graph. Nodes are the points of
// the spaces (labelled by their multi-index); a layer draws the source and the
// target as two clusters, a machine draws one rank per level of its grading,
// so that shortcuts between non-adjacent levels stand out. Edges are coloured
// by their parameter and labelled by their weight when it is not 1; a
// machine shows only the edges that survive cleaning.
#include <iostream>
#include <ostream>

#include "args.hpp"
#include "pm/io/machine_format.hpp"

namespace pmach {

inline const char *dot_help =
    "usage: pmach dot MODEL.json [--out FILE.dot]\n"
    "\n"
    "Writes the layer's span or the machine's graded span as Graphviz DOT (to\n"
    "standard output unless --out is given): one node per point, levels of a\n"
    "machine's grading as ranks, edges coloured by parameter and labelled by\n"
    "their weight when it is not 1. Render with e.g. `dot -Tsvg`.\n";

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

// The edge e from node <from><s(e)> to node <to><t(e)>.
inline void edge(std::ostream &os, char from, char to, const pm::ParametricSpan<pm::Rational> &a,
                 pm::Index e) {
  os << "  " << from << a.span.s(e) << " -> " << to << a.span.t(e) << " [color=\""
     << palette(a.pi(e)) << "\", tooltip=\"pi=" << a.pi(e) << "\"";
  if (a.span.mu[e] != 1) os << ", label=\"" << a.span.mu[e] << "\"";
  os << "];\n";
}

inline std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

} // namespace detail

inline void write_dot(std::ostream &os, const pm::io::ModelDescription &model) {
  using namespace detail;
  if (const auto *d = std::get_if<pm::io::LayerDescription>(&model)) {
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
  if (!args.has("out")) {
    write_dot(std::cout, model);
    return 0;
  }
  std::ofstream out(args.get("out"));
  pm::require(bool(out), args.get("out"), ": cannot open the file for writing");
  write_dot(out, model);
  pm::require(bool(out), args.get("out"), ": write error");
  return 0;
}

} // namespace pmach
