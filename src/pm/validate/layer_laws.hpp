#pragma once
// The laws of spec/spans.md §6 as data the validator runs on any Layer:
// PSPAN-BILINEAR, PSPAN-ADJOINT, PSPAN-GRADIENT, and for layers that are
// parametric spans PSPAN-COMP. Before them, WF-SIZES checks that the three
// operations return vectors of the announced sizes. Each law evaluates its
// two sides; over floating scalars the sides are also evaluated on absolute
// values (with the layer's magnitude()) to get the bound γ_n (M_lhs + M_rhs)
// of docs/tolerances.md, with n from the layer's terms().
#include "pm/machine/grading.hpp"
#include "pm/validate/cases.hpp"
#include "pm/validate/layer.hpp"

namespace pm {
namespace validation {

template <Layer L> L magnitude_layer(const L &l) {
  if constexpr (HasMagnitude<L>)
    return l.magnitude();
  else
    return l;
}
template <Layer L> Index terms(const L &l) {
  if constexpr (HasTerms<L>)
    return l.terms();
  else
    return l.source_size() * l.parameter_size();
}

template <class S> Function<S> concat(Function<S> a, const Function<S> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Turns the codes of a case into scalars, slot by slot.
template <class S> std::vector<Function<S>> values(const Codes &c) {
  std::vector<Function<S>> v;
  for (const auto &slot : c) {
    Function<S> f;
    for (int k : slot) f.push_back(scalar_of<S>(k));
    v.push_back(std::move(f));
  }
  return v;
}

inline std::string sizes_text(Index x, Index y, Index p) {
  return std::to_string(x) + " → " + std::to_string(y) + " with " + std::to_string(p) +
         " parameters";
}

// A law given by `sides(layer, values) -> pair<Function, Function>`, which
// makes `calls` calls of the layer (twice as many over floating scalars:
// the sides again on absolute values), each passing about parameters +
// source + target values.
template <Layer L, class Sides>
LawResult run_sides(const std::string &law, const std::string &subject, const L &layer,
                    const std::vector<Slot> &slots, std::size_t n, std::size_t calls,
                    const ValidateOptions &opt, Sides &&sides) {
  using S = typename L::scalar_type;
  const L mag = magnitude_layer(layer);
  const Index x = layer.source_size(), y = layer.target_size(), p = layer.parameter_size();
  const CaseCost cost{calls * (is_exact<S> ? 1 : 2), x + y + p,
                      "the layer's size (" + sizes_text(x, y, p) + ")"};
  return run_law(law, subject, slots, code_range<S>(), is_exact<S>, opt, cost, [&](const Codes &c) {
    const auto v = values<S>(c);
    const auto [lhs, rhs] = sides(layer, v);
    if constexpr (is_exact<S>) {
      return compare<S>(lhs, rhs, {}, {}, n);
    } else {
      std::vector<Function<S>> a;
      for (const auto &x : v) a.push_back(magnitude(x));
      // Without magnitude() the layer runs on absolute inputs: its
      // internal weights keep their signs, so the sums are taken in
      // absolute value (Σ|terms| when those weights share one sign, as in
      // −L; a negative bound would fail a bilinear layer).
      const auto [ml, mr] = sides(mag, a);
      return compare<S>(lhs, rhs, magnitude(ml), magnitude(mr), n, opt.unit_roundoff,
                        opt.narrow_terms);
    }
  });
}

template <Layer L> LawResult check_sizes(const L &l, const std::string &subject) {
  using S = typename L::scalar_type;
  LawResult r{"WF-SIZES", subject, Status::passed, 1, true, 0, 0, 0, ""}; // no randomness
  const Index x = l.source_size(), y = l.target_size(), p = l.parameter_size();
  const Function<S> w(p, S(1)), phi(x, S(1)), g(y, S(1));
  auto expect = [&](const char *what, const auto &call, Index size) {
    if (r.status == Status::failed) return;
    try {
      const Function<S> out = call();
      if (out.size() == size) return;
      r.detail = std::string(what) + " returned " + std::to_string(out.size()) +
                 " values, expected " + std::to_string(size);
    } catch (const std::exception &e) {
      r.detail = std::string(what) + " threw: " + e.what();
    }
    r.status = Status::failed;
  };
  expect(
      "apply(w, φ)", [&] { return l.apply(w, phi); }, y);
  expect(
      "apply_transpose(w, g)", [&] { return l.apply_transpose(w, g); }, x);
  expect(
      "parameter_gradient(φ, g)", [&] { return l.parameter_gradient(phi, g); }, p);
  return r;
}

} // namespace validation

// Runs WF-SIZES and the layer laws; the laws are skipped (not applicable)
// when the sizes are wrong, since their sides would not even be comparable
// (so WF-SIZES, three calls, runs even when opt.select leaves its row out).
template <Layer L>
Report validate(const L &layer, const std::string &subject = "layer",
                const ValidateOptions &opt = {}) {
  using namespace validation;
  using S = typename L::scalar_type;
  using F = Function<S>;
  Report rep;
  const LawResult sizes = check_sizes(layer, subject);
  add_row(rep, opt, sizes.law, subject, [&] { return sizes; });
  const Index x = layer.source_size(), y = layer.target_size(), p = layer.parameter_size();
  const std::size_t e = terms(layer);
  const char *laws[] = {"PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT"};
  if (sizes.status == Status::failed) {
    for (const char *law : laws)
      add_row(rep, opt, law, subject, [&]() -> LawResult {
        return {law, subject, Status::not_applicable, 0, true, 0, 0, opt.seed, "WF-SIZES failed"};
      });
    return rep;
  }
  // L_w(αφ + βφ') = αL_wφ + βL_wφ' and L_{αw+βw'}φ = αL_wφ + βL_{w'}φ.
  add_row(rep, opt, laws[0], subject, [&] {
    return run_sides(laws[0], subject, layer,
                     {{"w", p, On::parameters},
                      {"w'", p, On::parameters},
                      {"φ", x, On::source},
                      {"φ'", x, On::source},
                      {"α β", 2}},
                     e + 6, 5, opt, [](const L &l, const std::vector<F> &v) {
                       const F &w = v[0], &w2 = v[1], &phi = v[2], &phi2 = v[3];
                       const S a = v[4][0], b = v[4][1];
                       const F lw = l.apply(w, phi);
                       return std::pair{concat(l.apply(w, add(scale(a, phi), scale(b, phi2))),
                                               l.apply(add(scale(a, w), scale(b, w2)), phi)),
                                        concat(add(scale(a, lw), scale(b, l.apply(w, phi2))),
                                               add(scale(a, lw), scale(b, l.apply(w2, phi))))};
                     });
  });
  const std::size_t n_pair = e + x + y + p + 4;
  // ⟨g, L_w φ⟩ = ⟨L_wᵀ g, φ⟩.
  add_row(rep, opt, laws[1], subject, [&] {
    return run_sides(laws[1], subject, layer,
                     {{"w", p, On::parameters}, {"φ", x, On::source}, {"g", y, On::target}}, n_pair,
                     2, opt, [](const L &l, const std::vector<F> &v) {
                       return std::pair{F{dot(v[2], l.apply(v[0], v[1]))},
                                        F{dot(l.apply_transpose(v[0], v[2]), v[1])}};
                     });
  });
  // ⟨g, L_w φ⟩ = ⟨w, ∇_w⟨g, L_w φ⟩⟩ (Euler's identity for a linear function of w).
  add_row(rep, opt, laws[2], subject, [&]() -> LawResult {
    if (p == 0)
      return {laws[2], subject,  Status::not_applicable,       0, true, 0,
              0,       opt.seed, "the layer has no parameters"};
    return run_sides(laws[2], subject, layer,
                     {{"w", p, On::parameters}, {"φ", x, On::source}, {"g", y, On::target}}, n_pair,
                     2, opt, [](const L &l, const std::vector<F> &v) {
                       return std::pair{F{dot(v[2], l.apply(v[0], v[1]))},
                                        F{dot(v[0], l.parameter_gradient(v[1], v[2]))}};
                     });
  });
  return rep;
}

// The apex of compose(transpose(a), a): Σ_y |t⁻¹(y)|², computed without
// building it, to decide whether PSPAN-COMP is affordable.
template <class S> std::size_t self_composite_apex(const ParametricSpan<S> &a) {
  std::vector<std::size_t> fibre(a.target(), 0);
  for (Index e = 0; e < a.apex(); ++e) ++fibre[a.span.t(e)];
  std::size_t total = 0;
  for (std::size_t f : fibre) total += f * f;
  return total;
}

inline constexpr std::size_t max_composite_apex = std::size_t{1} << 18;

namespace validation {

// PSPAN-COMP on the composite transpose(a) ∘ a : X → Y → X with parameters
// P × P, for a composition `comp(b, a)` (pm::compose, or a variant under test).
template <class S, class Compose>
LawResult composition_law(const ParametricSpan<S> &a, const std::string &subject,
                          const ValidateOptions &opt, Compose &&comp) {
  using F = Function<S>;
  const std::size_t ec = self_composite_apex(a);
  if (ec > max_composite_apex)
    return {"PSPAN-COMP",
            subject,
            Status::not_applicable,
            0,
            true,
            0,
            0,
            opt.seed,
            "the composite has " + std::to_string(ec) + " edges, more than " +
                std::to_string(max_composite_apex)};
  const ParametricSpan<S> b = transpose(a), ba = comp(b, a);
  const ParametricSpan<S> ma = SpanLayer<S>{a}.magnitude().span, mb = transpose(ma),
                          mba = comp(mb, ma);
  const std::size_t n = ec + 2 * a.apex() + 6;
  auto sides = [](const ParametricSpan<S> &x, const ParametricSpan<S> &xb,
                  const ParametricSpan<S> &xba, const std::vector<F> &v) {
    return std::pair{act(xba, tensor(v[0], v[1]), v[2]), act(xb, v[1], act(x, v[0], v[2]))};
  };
  return run_law("PSPAN-COMP", subject,
                 {{"w_a", a.parameters(), On::parameters},
                  {"w_b", a.parameters(), On::parameters},
                  {"φ", a.source(), On::source}},
                 code_range<S>(), is_exact<S>, opt, {}, [&](const Codes &c) {
                   const auto v = values<S>(c);
                   const auto [l, r] = sides(a, b, ba, v);
                   if constexpr (is_exact<S>)
                     return compare<S>(l, r, {}, {}, n);
                   else {
                     std::vector<F> m;
                     for (const F &x : v) m.push_back(magnitude(x));
                     const auto [ml, mr] = sides(ma, mb, mba, m);
                     return compare<S>(l, r, ml, mr, n);
                   }
                 });
}

} // namespace validation

// A parametric span: the layer laws on SpanLayer, then PSPAN-COMP.
template <class S>
Report validate(const ParametricSpan<S> &a, const std::string &subject = "span",
                const ValidateOptions &opt = {}) {
  a.validate(subject);
  Report rep = validate(SpanLayer<S>{a}, subject, opt);
  add_row(rep, opt, "PSPAN-COMP", subject, [&] {
    return validation::composition_law(
        a, subject, opt,
        [](const ParametricSpan<S> &y, const ParametricSpan<S> &x) { return compose(y, x); });
  });
  return rep;
}

// WF-GRADING: a layer between graded spaces must raise the grade, i.e. every
// edge of nonzero weight has d_X(s(e)) < d_Y(t(e)) (the rule of clean.hpp,
// with separate gradings of source and target). The counterexample is the
// first offending edge.
template <class S>
LawResult check_grading(const ParametricSpan<S> &a, const Grading &dx, const Grading &dy,
                        const std::string &subject) {
  LawResult r{"WF-GRADING", subject, Status::passed, a.apex(), true, 0, 0, 0, ""};
  dx.require_covers(a.source(), subject + ": source grading");
  dy.require_covers(a.target(), subject + ": target grading");
  for (Index e = 0; e < a.apex(); ++e) {
    const Index s = a.span.s(e), t = a.span.t(e);
    if (a.span.mu[e] == S(0) || dx(s) < dy(t)) continue;
    r.status = Status::failed;
    r.detail = "edge " + std::to_string(e) + " (s = " + std::to_string(s) + " of grade " +
               std::to_string(dx(s)) + ", t = " + std::to_string(t) + " of grade " +
               std::to_string(dy(t)) + ", pi = " + std::to_string(a.pi(e)) +
               ") does not raise the grade";
    return r;
  }
  return r;
}

} // namespace pm
