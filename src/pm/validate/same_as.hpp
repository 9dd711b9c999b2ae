#pragma once
// Two model files compared as the layers they describe (`pmach check A.json
// --same-as B.json`): layers by span_diff of their parametric spans (so a
// permutation of edges, or different `ranges` producing the same edges, is
// no difference); machines by their graded spans: the spans as written, the
// gradings point by point, the cleaned spans (the linear parts the machine
// equation uses, where a level typo shows as zeroed weights) and σ.
#include "pm/io/machine_format.hpp"
#include "pm/validate/conformance.hpp"

namespace pm {

namespace validation {

using io::shape_text;

// A failing row when two shapes differ, else nothing.
inline std::optional<LawResult> shape_mismatch(const char *space, const Shape &a, const Shape &b,
                                               const std::string &fa, const std::string &fb,
                                               const std::string &subject) {
  if (a == b) return std::nullopt;
  return row("CONF-SPAN-DIFF", subject, Status::failed, 0, 0,
             std::string("the ") + space + " spaces differ: " + shape_text(a) + " in " + fa + ", " +
                 shape_text(b) + " in " + fb);
}

} // namespace validation

inline Report same_as(const io::LayerDescription &a, const io::LayerDescription &b,
                      const std::string &subject) {
  using namespace validation;
  Report rep;
  const std::pair<const char *, std::pair<const Shape *, const Shape *>> spaces[] = {
      {"source", {&a.source, &b.source}},
      {"target", {&a.target, &b.target}},
      {"parameter", {&a.parameters, &b.parameters}}};
  for (const auto &[name, s] : spaces)
    if (auto r = shape_mismatch(name, *s.first, *s.second, a.file, b.file, subject)) {
      rep.add(*r);
      return rep;
    }
  rep.add(span_diff_row(subject, io::edges_of(a, "--same-as"), io::edges_of(b, "--same-as"),
                        shapes_of(a)));
  return rep;
}

inline Report same_as(const io::MachineDescription &a, const io::MachineDescription &b,
                      const std::string &subject) {
  using namespace validation;
  Report rep;
  for (const auto &[name, s] : {std::pair{"state", std::pair{&a.space, &b.space}},
                                std::pair{"parameter", std::pair{&a.parameters, &b.parameters}}})
    if (auto r = shape_mismatch(name, *s.first, *s.second, a.file, b.file, subject)) {
      rep.add(*r);
      return rep;
    }
  const GradedSpanMachine<double> ma = io::make_machine<double>(a),
                                  mb = io::make_machine<double>(b);
  // The spans exactly: the seed constructors build them in double from
  // integer structure with weight 1, which converts back exactly.
  auto exact = [](const io::MachineDescription &d, const GradedSpanMachine<double> &m) {
    if (!d.seed) return d.span;
    ParametricSpan<Rational> q{Span<Rational>{m.span().span.s, m.span().span.t, {}}, m.span().pi};
    for (double mu : m.span().span.mu) q.span.mu.push_back(Rational(mu));
    return q;
  };
  const ParametricSpan<Rational> sa = exact(a, ma), sb = exact(b, mb);
  const SpaceShapes sh{a.space, a.space, a.parameters, {}, {}, {}};
  rep.add(span_diff_row(subject + " (spans)", sa, sb, sh));
  // Gradings, point by point.
  LawResult g = row("SAME-AS grading", subject, Status::passed, a.grading.size(), 0, "");
  std::size_t differ = 0;
  for (Index i = 0; i < a.grading.size(); ++i)
    if (a.grading(i) != b.grading(i)) {
      if (differ++ == 0)
        g.detail = "point " + shape_text(Shape(a.space.multi(i))) + " has level " +
                   std::to_string(a.grading(i)) + " in " + a.file + ", " +
                   std::to_string(b.grading(i)) + " in " + b.file;
    }
  if (differ) {
    g.status = Status::failed;
    g.detail = std::to_string(differ) + " of " + std::to_string(a.grading.size()) +
               " points differ in level; the first: " + g.detail;
  }
  rep.add(g);
  rep.add(span_diff_row(subject + " (cleaned)", cleaned_span(sa, a.grading),
                        cleaned_span(sb, b.grading), sh));
  const bool same_sigma = a.sigma.name == b.sigma.name &&
                          a.sigma.coefficients == b.sigma.coefficients &&
                          a.sigma.slopes == b.sigma.slopes;
  rep.add(row("SAME-AS sigma", subject, same_sigma ? Status::passed : Status::failed, 1, 0,
              same_sigma ? ""
                         : "sigma " + a.sigma.name + " in " + a.file + ", " + b.sigma.name +
                               " in " + b.file));
  return rep;
}

inline Report same_as(const io::ModelDescription &a, const io::ModelDescription &b) {
  const auto file = [](const auto &d) { return d.file; };
  const std::string fa = std::visit(file, a), fb = std::visit(file, b);
  const std::string subject = fa + " vs " + fb;
  if (const auto *la = std::get_if<io::LayerDescription>(&a)) {
    const auto *lb = std::get_if<io::LayerDescription>(&b);
    require(lb != nullptr, fb, ": field 'kind': expected \"layer\" like ", fa,
            ", found \"machine\"");
    return same_as(*la, *lb, subject);
  }
  const auto *mb = std::get_if<io::MachineDescription>(&b);
  require(mb != nullptr, fb, ": field 'kind': expected \"machine\" like ", fa, ", found \"layer\"");
  return same_as(std::get<io::MachineDescription>(a), *mb, subject);
}

} // namespace pm
