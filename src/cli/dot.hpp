#pragma once
// pmach dot: a layer or machine as a Graphviz graph. Small models are drawn
// point by point: a layer's source and target as two columns, a machine's
// levels as columns left to right, so that shortcuts between non-adjacent
// levels stand out; nodes in index order, edges coloured by parameter with a
// legend, weights as short decimals. Every edge of the span is drawn: those
// that do not raise the grading in red, those that cleaning drops dashed.
// Larger models are drawn in summary (dot_summary.hpp).
#include <iostream>
#include <ostream>

#include "args.hpp"
#include "dot_summary.hpp"
#include "pm/io/bounds.hpp"
#include "pm/io/machine_format.hpp"
#include "pm/io/output.hpp"

namespace pmach {

namespace dot {

// Above these the point-by-point picture is larger than a screen can show
// (a column of 64 rows is about 1500 px tall, 16 columns about 3000 px wide)
// or its edges are too many to follow: the summary is drawn instead.
inline constexpr pm::Index max_full_points = 64;
inline constexpr pm::Index max_full_edges = 512;
// Edges labelled by their parameter (more parameters than colours) each take
// a line of height: fewer of them fit.
inline constexpr pm::Index max_full_labelled_edges = 64;
inline constexpr pm::Index max_full_columns = 16;

} // namespace dot

inline const char *dot_help =
    "usage: pmach dot MODEL.json [--out FILE.dot] [--summary | --full]\n"
    "\n"
    "Writes the layer's span or the machine's graded span as Graphviz DOT (to\n"
    "standard output unless --out is given); render it with `dot -Tsvg`.\n"
    "Point by point: one node per point, labelled by its multi-index and in\n"
    "index order; a layer's source and target, or a machine's levels, as columns;\n"
    "edges coloured by parameter with a legend (labelled by their parameter when\n"
    "there are more than 9), and by their weight when it is not 1. Edges that do\n"
    "not raise the grading are red, edges that cleaning drops are dashed.\n"
    "In summary: one row per block of points (a layer's spaces cut along a first\n"
    "axis of at most 16; a machine's levels cut into runs of consecutive indices,\n"
    "or whole levels, or groups of levels: at most 16 blocks), one edge per pair\n"
    "of blocks and kind, labelled by its number of edges.\n"
    "The summary is chosen above 64 points, 16 levels, or 512 edges (64 when\n"
    "labelled by parameter); --summary and --full force a form (--full up to\n"
    "32768 points and edges).\n"
    "\n"
    "Exit status: 0 written, 2 bad input or usage.\n";

namespace dot {

inline void edge(std::ostream &os, const std::string &from, const std::string &to,
                 const pm::ParametricSpan<pm::Rational> &a, const Parameters &p, Fate fate,
                 pm::Index e) {
  os << "  " << from << " -> " << to << " [" << edge_style(fate, p.colour(a.pi(e)))
     << ", tooltip=\"edge " << e << "\"";
  const std::string label = p.edge_label(a.pi(e), a.span.mu[e]);
  if (!label.empty()) os << ", label=" << quoted(label);
  os << "];\n";
}

inline Column points_column(const std::string &title, const pm::Shape &shape, const char *prefix,
                            const std::vector<pm::Index> &members, const pm::Grading *grading) {
  Column c{title, {}};
  for (pm::Index i : members)
    c.rows.push_back({numbered(prefix, i), multi_index(shape, i),
                      grading ? numbered("level ", (*grading)(i)) : ""});
  return c;
}

inline std::vector<pm::Index> all_points(pm::Index n) {
  std::vector<pm::Index> v(n);
  for (pm::Index i = 0; i < n; ++i) v[i] = i;
  return v;
}

inline void write_layer(std::ostream &os, const pm::io::LayerDescription &d,
                        const std::vector<Fate> &fate) {
  open_graph(os, "layer", d.name);
  const pm::Grading *gs = d.source_grading ? &*d.source_grading : nullptr;
  const pm::Grading *gt = d.target_grading ? &*d.target_grading : nullptr;
  Column source = points_column("source", d.source, "x", all_points(d.source.size()), gs);
  // A bias is the span's last source point •, set to 1: its edges start there.
  if (d.bias) source.rows.push_back({numbered("x", d.source.size()), "• = 1 (bias)", ""});
  write_columns(os,
                {source, points_column("target", d.target, "y", all_points(d.target.size()), gt)});
  const Parameters p(d.parameters, d.has_parameters);
  for (pm::Index e = 0; e < d.span.apex(); ++e)
    edge(os, end(0, numbered("x", d.span.span.s(e)), true),
         end(1, numbered("y", d.span.span.t(e)), false), d.span, p, fate[e], e);
  p.legend(os, false, any(fate, Fate::cleaned), any(fate, Fate::offender));
  os << "}\n";
}

inline void write_machine(std::ostream &os, const pm::io::MachineDescription &d,
                          const pm::ParametricSpan<pm::Rational> &a, const pm::Grading &grading,
                          const std::vector<Fate> &fate) {
  open_graph(os, "machine", d.name);
  std::vector<Column> columns;
  const auto members = grading.members();
  for (pm::Index k = 0; k < grading.levels(); ++k)
    columns.push_back(points_column(numbered("level ", k + 1), d.space, "n", members[k], nullptr));
  write_columns(os, columns);
  const Parameters p(d.parameters, d.has_parameters);
  for (pm::Index e = 0; e < a.apex(); ++e)
    edge(os, end(grading(a.span.s(e)) - 1, numbered("n", a.span.s(e)), true),
         end(grading(a.span.t(e)) - 1, numbered("n", a.span.t(e)), false), a, p, fate[e], e);
  p.legend(os, false, any(fate, Fate::cleaned), any(fate, Fate::offender));
  os << "}\n";
}

enum class Form { automatic, summary, full };

// Whether to draw point by point; --full is refused where its output would
// not be bounded.
inline bool full_form(Form form, pm::Index points, pm::Index edges, pm::Index columns,
                      const Parameters &p, const std::string &what) {
  if (form == Form::full)
    pm::require(points + edges <= pm::io::max_dot_items, "dot --full: the ", what, " has ", points,
                " points and ", edges, " edges, expected at most ", pm::io::max_dot_items,
                " in all; without --full it is drawn in summary");
  return form == Form::full ||
         (form == Form::automatic && points <= max_full_points &&
          edges <= (p.coloured() ? max_full_edges : max_full_labelled_edges) &&
          columns <= max_full_columns);
}

} // namespace dot

inline void write_dot(std::ostream &os, const pm::io::ModelDescription &model,
                      dot::Form form = dot::Form::automatic) {
  using namespace dot;
  if (const auto *d = std::get_if<pm::io::LayerDescription>(&model)) {
    pm::io::edges_of(*d, "dot"); // a layer held by its rule alone is refused in one line
    const std::vector<Fate> fate = fates(d->span, d->source_grading ? &*d->source_grading : nullptr,
                                         d->target_grading ? &*d->target_grading : nullptr);
    if (full_form(form, d->source.size() + d->target.size(), d->span.apex(), 2,
                  Parameters(d->parameters, d->has_parameters), "layer"))
      return write_layer(os, *d, fate);
    return write_layer_summary(os, *d, fate);
  }
  const auto &d = std::get<pm::io::MachineDescription>(model);
  // The span as the file gives it, before cleaning, so that what cleaning
  // drops can be shown.
  const pm::GradedSpanMachine<pm::Rational> m = pm::io::make_machine<pm::Rational>(d);
  const std::vector<Fate> fate = fates(m.span(), &m.grading(), &m.grading());
  if (full_form(form, d.space.size(), m.span().apex(), m.levels(),
                Parameters(d.parameters, d.has_parameters), "machine"))
    return write_machine(os, d, m.span(), m.grading(), fate);
  write_machine_summary(os, d, m.span(), m.grading(), fate);
}

inline int run_dot(const Args &args) {
  pm::require(args.positional.size() == 1, "dot: expected one MODEL.json, found ",
              args.positional.size(), " arguments");
  pm::require(!(args.flag("summary") && args.flag("full")),
              "dot: --summary and --full exclude each other");
  const dot::Form form = args.flag("summary") ? dot::Form::summary
                         : args.flag("full")  ? dot::Form::full
                                              : dot::Form::automatic;
  const auto model = pm::io::read_model(args.positional[0]);
  std::ostringstream os; // bounded: see dot::full_form and dot_summary.hpp
  write_dot(os, model, form);
  if (args.has("out"))
    pm::io::write_file_atomically(args.get("out"), os.str());
  else
    std::cout << os.str();
  return 0;
}

} // namespace pmach
