#pragma once
// Lints of a model file: things that are legal, and so pass every law, but
// that are often mistakes: a padding offset that drops most candidate edges,
// parameters no edge uses, parameters that cleaning zeroes (a level typo),
// edges of weight 0. Each is a row with status "warning" and its count when
// it finds something, and "passed" with the number of items examined when
// not, so that a lint is never silent.
#include "pm/io/machine_format.hpp"
#include "pm/machine/clean.hpp"
#include "pm/validate/report.hpp"

namespace pm {

namespace validation {

inline LawResult lint_row(const std::string &lint, const std::string &subject, std::size_t examined,
                          std::size_t flagged, const std::string &what) {
  LawResult r{"LINT " + lint, subject, Status::passed, examined, true, 0, 0, 0, "", false};
  if (flagged) {
    r.status = Status::warning;
    r.detail = std::to_string(flagged) + " of " + std::to_string(examined) + " " + what;
  }
  return r;
}

// Candidate edges of an "edges": {"ranges": …} object dropped because a leg
// falls outside its space, per leg; nothing for explicit edge lists (there an
// index out of range is an error of the reader).
inline std::vector<LawResult> dropped_edges(const io::Field &edges, const Shape &x, const Shape &y,
                                            const Shape &p, bool has_pi,
                                            const std::string &subject) {
  if (!edges.has("ranges")) return {};
  const Shape r = io::read_extents(edges.at("ranges"), io::max_edges, "ranges");
  const io::AffineMap s = io::read_affine(edges.at("s"), r.rank(), x.rank());
  const io::AffineMap t = io::read_affine(edges.at("t"), r.rank(), y.rank());
  const io::AffineMap pi =
      has_pi ? io::read_affine(edges.at("pi"), r.rank(), p.rank()) : io::AffineMap{};
  const Shape one_point;
  std::size_t out[3] = {0, 0, 0}, any = 0;
  for (Index e = 0; e < r.size(); ++e) {
    const std::vector<Index> i = r.multi(e);
    const bool bad[3] = {!s(i, x), !t(i, y), !pi(i, has_pi ? p : one_point)};
    for (int k = 0; k < 3; ++k) out[k] += bad[k];
    any += bad[0] || bad[1] || bad[2];
  }
  std::vector<LawResult> rows;
  rows.push_back(lint_row("dropped edges", subject, r.size(), any,
                          "candidate edges of 'ranges' are dropped by range checks (source leg " +
                              std::to_string(out[0]) + ", target leg " + std::to_string(out[1]) +
                              ", parameter leg " + std::to_string(out[2]) +
                              "): zero padding drops the taps that fall outside the input; "
                              "check the offsets if more are dropped than the borders explain"));
  return rows;
}

// by_construction: a seed machine, whose parameters are full weight tensors
// that cleaning restricts to the blocks that raise the grade (the seed's own
// construction): its cleaned parameters are counted, not warned about.
template <class S>
std::vector<LawResult> span_lints(const ParametricSpan<S> &a, bool has_pi,
                                  const std::optional<std::vector<bool>> &valid,
                                  const std::string &subject, bool by_construction = false) {
  std::vector<LawResult> rows;
  std::vector<bool> used(a.parameters(), false);
  std::size_t zero = 0;
  for (Index e = 0; e < a.apex(); ++e) {
    used[a.pi(e)] = true;
    zero += a.span.mu[e] == S(0);
  }
  if (has_pi)
    rows.push_back(lint_row("unused parameters", subject, a.parameters(),
                            std::count(used.begin(), used.end(), false),
                            "parameters are used by no edge"));
  if (valid) {
    const std::size_t cleaned = std::count(valid->begin(), valid->end(), false);
    LawResult r = lint_row("cleaned parameters", subject, a.parameters(), cleaned,
                           "parameters are zeroed by cleaning: an edge they label does not raise "
                           "the grade (a level typo?)");
    if (by_construction) {
      r.status = Status::passed;
      r.detail = std::to_string(cleaned) + " of " + std::to_string(a.parameters()) +
                 " parameters are zeroed by cleaning, as the seed machine's construction "
                 "cleans its full weight tensors to the blocks that raise the grade";
    }
    rows.push_back(std::move(r));
  }
  rows.push_back(lint_row("zero edges", subject, a.apex(), zero, "edges have weight 0"));
  return rows;
}

} // namespace validation

// The lints of a layer file; `json` is the file's JSON (already read once by
// the reader, which has checked every field used here).
inline Report lint_layer(const io::LayerDescription &d, const io::Json &json,
                         const std::string &subject) {
  using namespace validation;
  Report rep;
  // A layer held by its rule alone is a constructor's: no edge was written
  // by hand, so there is nothing to lint.
  if (!d.span_held) return rep;
  const io::Field root(json, d.file);
  // Only a layer given by affine maps has candidate edges to drop.
  if (const auto edges = root.find("edges"); edges && !d.bias)
    for (auto &r :
         dropped_edges(*edges, d.source, d.target, d.parameters, d.has_parameters, subject))
      rep.add(std::move(r));
  std::optional<std::vector<bool>> valid;
  if (d.source_grading) {
    std::vector<bool> v(d.span.parameters(), true);
    for (Index e = 0; e < d.span.apex(); ++e)
      if ((*d.source_grading)(d.span.span.s(e)) >= (*d.target_grading)(d.span.span.t(e)))
        v[d.span.pi(e)] = false;
    valid = v;
  }
  for (auto &r : span_lints(d.span, d.has_parameters, valid, subject)) rep.add(std::move(r));
  return rep;
}

inline Report lint_machine(const io::MachineDescription &d, const io::Json &json,
                           const std::string &subject) {
  using namespace validation;
  Report rep;
  const GradedSpanMachine<double> m = io::make_machine<double>(d);
  if (!d.seed) {
    const io::Field root(json, d.file);
    for (auto &r : dropped_edges(root.at("edges"), d.space, d.space, d.parameters,
                                 root.has("parameters"), subject))
      rep.add(std::move(r));
  }
  for (auto &r : span_lints(m.span(), true, valid_parameters(m.span(), m.grading()), subject,
                            d.seed.has_value()))
    rep.add(std::move(r));
  return rep;
}

} // namespace pm
