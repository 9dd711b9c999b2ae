#pragma once
// Random cases for the laws, and their shrinking. A case is a list of named
// slots (w, φ, g, …), each a vector of small integer codes; the scalar of a
// code k is k/6 over exact scalars (k ∈ −12..12) and k/997 over floating
// ones (k ∈ −997..997, so that rounding really happens). Codes are drawn from
// a generator seeded by the run's seed and the law ID, so a run is
// reproducible from its seed. A failing case is shrunk deterministically:
// each code is set to 0, or else halved towards 0, while the law still fails.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <type_traits>

#include "pm/category/function.hpp"
#include "pm/category/map.hpp"
#include "pm/io/batch_npy.hpp"
#include "pm/numeric/rounding.hpp"
#include "pm/numeric/uniform.hpp"
#include "pm/validate/report.hpp"

namespace pm {

// The shapes of a subject's spaces (empty: unknown), so that a
// counterexample is shown in multi-index coordinates; a machine's states
// live on `source`.
struct CaseShapes {
  std::vector<std::size_t> source, target, parameters;
};

// Which rows to compute, by law and subject (pmach check --law, --subject);
// empty: every row.
using RowSelection = std::function<bool(const std::string &law, const std::string &subject)>;

struct ValidateOptions {
  std::size_t cases = 100;
  std::uint64_t seed = 1;
  CaseShapes shapes = {};
  RowSelection select = {};
  // The implementation's unit roundoff when it computes in a narrower type
  // than its scalars (a float32 module checked through doubles): the laws'
  // bounds γ_n take it. 0: the scalars' own.
  double unit_roundoff = 0;
  // With unit_roundoff: the most terms the implementation sums in that type
  // into one of its outputs (the specification's largest fan-in, fan-out or
  // parameter use, + 2: docs/tolerances.md, "Validator"), while the laws'
  // own sums of its outputs run in the scalars. The bound then composes
  // γ_narrow_terms at unit_roundoff with γ_n at the scalars' unit roundoff,
  // instead of taking all n terms at unit_roundoff (n·u ≥ 1 for the pairing
  // laws of a float32 Linear 256: no bound at all). 0: γ_n at unit_roundoff.
  std::size_t narrow_terms = 0;
  // The values that one law's cases may pass through the subject in all
  // (validation::CaseCost): a law whose `cases` would pass more runs fewer,
  // never fewer than validation::min_scaled_cases, and its row says so.
  // Unset: every case in pm::validate and validate_machine (the laws of a
  // specification, whose size pmach check bounds instead), and
  // validation::implementation_value_budget in check_layer and check_machine
  // (an implementation's calls cost what they cost: 100 cases of a Linear
  // 2048 through PyTorch took 101 s). validation::no_value_budget: every case.
  std::optional<std::size_t> value_budget = {};

  bool selects(const std::string &law, const std::string &subject) const {
    return !select || select(law, subject);
  }
};

// Appends the row of `law` on `subject`: run() when opt selects it, else
// only its name, to Report::left_out, without running anything.
template <class Run>
void add_row(Report &rep, const ValidateOptions &opt, const std::string &law,
             const std::string &subject, Run &&run) {
  if (!opt.selects(law, subject)) {
    rep.left_out.emplace_back(law, subject);
    return;
  }
  rep.add(run());
  require(rep.results.back().law == law && rep.results.back().subject == subject, "the row of ",
          law, " on ", subject, " came back as ", rep.results.back().law, " on ",
          rep.results.back().subject);
}

namespace validation {

template <class S> constexpr bool is_exact = !std::is_floating_point_v<S>;

template <class S> int code_range() { return is_exact<S> ? 12 : 997; }
template <class S> S scalar_of(int code) { return S(code) / S(is_exact<S> ? 6 : 997); }

template <class S> S magnitude(const S &x) { return x < S(0) ? S(-x) : x; }
template <class S> Function<S> magnitude(Function<S> v) {
  for (S &x : v) x = magnitude(x);
  return v;
}

using io::to_double;

template <class S> std::string show(const S &x) {
  std::ostringstream os;
  if constexpr (std::is_floating_point_v<S>) os << std::setprecision(17);
  os << x;
  return os.str();
}
template <class S> std::string show(const Function<S> &v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + show(v[i]);
  return out + "]";
}

// The largest fibre of f: how many terms a sum along f adds at most.
inline std::size_t max_fibre(const FinMap &f) {
  std::vector<std::size_t> count(f.codomain, 0);
  std::size_t m = 0;
  for (Index i : f.images) m = std::max(m, ++count[i]);
  return m;
}

// Which space a slot lives on, for the shape of its counterexample tensor.
enum class On { flat, source, target, parameters };

struct Slot {
  std::string name;
  Index size;
  On on = On::flat;
};

// A slot's shape: its space's, when known and of the slot's size.
inline std::vector<std::size_t> slot_shape(const Slot &s, const CaseShapes &shapes) {
  const std::vector<std::size_t> *space = s.on == On::source       ? &shapes.source
                                          : s.on == On::target     ? &shapes.target
                                          : s.on == On::parameters ? &shapes.parameters
                                                                   : nullptr;
  if (space) {
    std::size_t n = 1;
    for (std::size_t e : *space) n *= e;
    if (n == s.size) return *space;
  }
  return {s.size};
}
using Codes = std::vector<std::vector<int>>;

// The verdict on one case.
struct Comparison {
  bool ok = true;
  bool vacuous = true; // both sides entirely zero
  // A component whose bound is not finite (the magnitudes of its sides
  // overflow the scalar type, or ∞ · 0 in them): it decides nothing, so the
  // law ends "too weak" rather than passed or failed.
  bool overflowed = false;
  double error = 0, bound = 0;
  std::string where;         // the worst component and its two sides
  Counterexample sides = {}; // the failing component and its two sides, as scalars
};

// The relative bound of a law's sides: γ_n at u (0: S's); with k > 0 terms
// summed at u by the subject and the n of the law's own sums at S's unit
// roundoff, the two relative errors composed, (1 + γ_k(u))(1 + γ_n) − 1, over
// 1 − γ_k(u), since the magnitudes were summed by the subject at u too.
template <class S> S law_gamma(std::size_t n, double u, std::size_t k) {
  if (!(u > 0)) return gamma<S>(n);
  if (k == 0) return S(gamma(double(n), u));
  const S gk = S(gamma(double(k), u)), gn = gamma<S>(n);
  if (!(gk < S(1))) return std::numeric_limits<S>::infinity(); // no bound (k·u ≥ 1/2)
  return ((S(1) + gk) * (S(1) + gn) - S(1)) / (S(1) - gk);
}

// Compares two sides componentwise: == over exact scalars, within
// γ (M_lhs + M_rhs) over floating ones (γ: law_gamma(n, u, k)), M the sides
// on absolute values.
template <class S>
Comparison compare(const Function<S> &l, const Function<S> &r, const Function<S> &ml,
                   const Function<S> &mr, std::size_t n, double u = 0, std::size_t k = 0) {
  Comparison c;
  require(l.size() == r.size(), "law sides have ", l.size(), " and ", r.size(),
          " components, expected the same number");
  double worst = -1;
  [[maybe_unused]] S g = S(0);
  if constexpr (!is_exact<S>) g = law_gamma<S>(n, u, k);
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (!(l[i] == S(0)) || !(r[i] == S(0))) c.vacuous = false;
    const double err = to_double(magnitude(S(l[i] - r[i])));
    double bound = 0;
    bool ok = l[i] == r[i];
    if constexpr (!is_exact<S>) {
      const S b = g * (ml[i] + mr[i]);
      bound = double(b);
      ok = std::abs(l[i] - r[i]) <= b; // false for NaN
      if (!std::isfinite(bound)) {
        c.overflowed = true;
        continue;
      }
    }
    const double ratio =
        ok ? (bound > 0 ? err / bound : 0) : std::numeric_limits<double>::infinity();
    if (ratio > worst) {
      worst = ratio;
      c.error = err;
      c.bound = bound;
      if (!ok) {
        c.where = "component " + std::to_string(i) + ": lhs = " + show(l[i]) +
                  ", rhs = " + show(r[i]) + (is_exact<S> ? "" : ", bound " + show(bound));
        c.sides.scalars = {
            {"component", std::to_string(i)}, {"lhs", show(l[i])}, {"rhs", show(r[i])}};
        if (!is_exact<S>) c.sides.scalars.push_back({"bound", show(bound)});
      }
    }
    c.ok = c.ok && ok;
  }
  return c;
}

// The budget of check_layer and check_machine (ValidateOptions::value_budget):
// the values one law's cases may pass through an implementation. A value
// costs 13-95 ns through PyTorch (pmach.check of a float32
// torch.nn.Linear(2048, 2048): 54-150 ms a call on 2 shared cores of an AMD
// EPYC, where the copies between C++, NumPy and torch and the cast to float32
// dominate; more a value at 4096), so a law spends at most 0.4-3 s beyond its
// min_scaled_cases: before, 100 cases of the three laws took 101-124 s of
// that Linear's check, now 10 s (docs/formats.md §3).
// A Linear 2048 runs every law at its minimum, a Linear 1024 3 to 7 cases;
// a layer of up to 2^15 values a call (a Linear 128 → 128, a conv 16 → 16 on
// 24 × 24) keeps all 100 default cases.
inline constexpr std::size_t implementation_value_budget = std::size_t{1} << 25;
// A budget no case exceeds: every case runs.
inline constexpr std::size_t no_value_budget = std::numeric_limits<std::size_t>::max();
// The cases a law runs however large its subject. Each case is drawn densely
// at random, so a fault the law sees at all (a term that is not bilinear, a
// transpose or gradient wrong at one coefficient) shows in almost every case;
// two leave a law a real comparison when one case compares only zeros (the
// too-weak rule still needs one of the two).
inline constexpr std::size_t min_scaled_cases = 2;

// What one case of a law costs against ValidateOptions::value_budget: its
// calls of the subject, each passing about `values` scalars in and out
// (parameters + source + target), and the subject's size in words for the
// row's note ("the layer's size (2048 → 2048 with 4194304 parameters)").
// No calls: not budgeted.
struct CaseCost {
  std::size_t calls = 0, values = 0;
  std::string size = {};

  std::size_t per_case() const { return calls * values; }
};

// The cases of opt.cases that a law of this cost runs under opt.value_budget.
inline std::size_t scaled_cases(const ValidateOptions &opt, const CaseCost &cost) {
  if (!opt.value_budget || cost.per_case() == 0) return opt.cases;
  return std::min(opt.cases, std::max(min_scaled_cases, *opt.value_budget / cost.per_case()));
}

// "2^25", or the number where it is no power of two.
inline std::string budget_text(std::size_t n) {
  return std::has_single_bit(n) ? "2^" + std::to_string(std::countr_zero(n)) : std::to_string(n);
}

// The note of a law that ran `ran` of opt.cases cases under its budget.
inline std::string scaled_note(std::size_t ran, const ValidateOptions &opt, const CaseCost &cost) {
  return "ran " + std::to_string(ran) + " of " + std::to_string(opt.cases) + " cases: scaled to " +
         cost.size + ": " + std::to_string(cost.calls) + (cost.calls == 1 ? " call" : " calls") +
         " a case of about " + std::to_string(cost.values) + " values each, budget " +
         budget_text(*opt.value_budget) + " values a law";
}

inline std::uint64_t fnv1a(const std::string &s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// The evaluations a failing case may spend on shrinking: at full size a case
// has 10^5 codes or more (a 64-channel conv on 56×56), and shrinking code by
// code would call the implementation for hours.
inline constexpr std::size_t max_shrink_evaluations = 2048;

// Runs `eval(codes) -> Comparison` on opt.cases random cases, or fewer when
// they would cost more than opt.value_budget (scaled_cases); shrinks the
// first failing one. `range` bounds the codes; slots of size 0 are allowed.
template <class Eval>
LawResult run_law(const std::string &law, const std::string &subject,
                  const std::vector<Slot> &slots, int range, bool exact, const ValidateOptions &opt,
                  const CaseCost &cost, Eval &&eval) {
  LawResult r{law, subject, Status::passed, 0, exact, 0, 0, opt.seed, ""};
  const std::size_t cases = scaled_cases(opt, cost);
  std::mt19937_64 rng(opt.seed ^ fnv1a(law));
  UniformInt<int> code(-range, range), zero(0, 7);
  std::size_t vacuous = 0, overflowed = 0;
  double worst = -1;
  auto safe_eval = [&](const Codes &c) {
    try {
      return eval(c);
    } catch (const std::exception &e) { // a layer that throws fails the law
      Comparison bad;
      bad.ok = false;
      bad.vacuous = false;
      bad.where = std::string("threw: ") + e.what();
      return bad;
    }
  };
  for (std::size_t k = 0; k < cases; ++k) {
    Codes c;
    for (const Slot &s : slots) {
      std::vector<int> v(s.size);
      for (int &x : v) x = zero(rng) == 0 ? 0 : code(rng);
      c.push_back(std::move(v));
    }
    const Comparison cmp = safe_eval(c);
    ++r.cases;
    if (cmp.vacuous) ++vacuous;
    if (cmp.overflowed) ++overflowed;
    const double ratio = cmp.bound > 0 ? cmp.error / cmp.bound : (cmp.error > 0 ? 1e300 : 0);
    if (ratio > worst) {
      worst = ratio;
      r.max_error = cmp.error;
      r.bound = cmp.bound;
    }
    if (!cmp.ok) {
      // Shrink while still failing, within max_shrink_evaluations: blocks of
      // each slot to 0 (the whole slot, then halves, quarters, …: a few
      // evaluations where most codes do not matter), then each code to 0,
      // else halved towards 0.
      Comparison last = cmp;
      std::size_t spent = 0;
      auto still_fails = [&](Comparison &t) {
        ++spent;
        t = safe_eval(c);
        return !t.ok;
      };
      for (auto &v : c)
        for (std::size_t b = v.size(); b >= 1 && spent < max_shrink_evaluations; b /= 2)
          for (std::size_t at = 0; at < v.size() && spent < max_shrink_evaluations; at += b) {
            const std::size_t end = std::min(v.size(), at + b);
            if (std::all_of(v.begin() + at, v.begin() + end, [](int x) { return x == 0; }))
              continue;
            const std::vector<int> old(v.begin() + at, v.begin() + end);
            std::fill(v.begin() + at, v.begin() + end, 0);
            Comparison t;
            if (still_fails(t))
              last = t;
            else
              std::copy(old.begin(), old.end(), v.begin() + at);
          }
      for (bool changed = true; changed && spent < max_shrink_evaluations;) {
        changed = false;
        for (auto &v : c)
          for (int &x : v)
            while (x != 0 && spent < max_shrink_evaluations) {
              const int old = x;
              x = 0;
              Comparison t;
              if (!still_fails(t)) {
                x = old / 2;
                if (x == 0 || !still_fails(t)) {
                  x = old;
                  break;
                }
              }
              last = t;
              changed = true;
            }
      }
      // The shrunk case as tensors on the slots' spaces, and the sides.
      std::ostringstream os;
      os << "case " << k << " (seed " << opt.seed << "), shrunk to ";
      r.counterexample.scalars = {{"case", std::to_string(k)}};
      for (std::size_t s = 0; s < slots.size(); ++s) {
        os << (s ? ", " : "") << slots[s].name;
        CounterexampleTensor t =
            sparse_tensor(slots[s].name, slot_shape(slots[s], opt.shapes), c[s]);
        for (std::size_t i = 0; i < t.indices.size(); ++i) {
          const int code = c[s][t.indices[i]];
          // k/997 names the double nearest to it, as the case's scalar is.
          t.values[i] = exact ? value_text(Rational(code, 6)) : std::to_string(code) + "/997";
        }
        r.counterexample.tensors.push_back(std::move(t));
      }
      for (const auto &sc : last.sides.scalars) r.counterexample.scalars.push_back(sc);
      os << "; " << last.where;
      if (spent >= max_shrink_evaluations)
        os << " (shrinking stopped after " << spent << " evaluations)";
      r.status = Status::failed;
      r.detail = os.str();
      return r;
    }
  }
  if (r.cases == 0) {
    // A law that ran no case decided nothing.
    r.status = Status::too_weak;
    r.detail = "no case was run";
  } else if (overflowed > 0) {
    // Too weak: a bound overflowed, so that a case was not decided.
    r.status = Status::too_weak;
    r.detail = std::to_string(overflowed) + " of " + std::to_string(r.cases) +
               " cases have a bound that overflows the scalar type (not finite): not decided";
  } else if (10 * vacuous > 9 * r.cases) {
    // Too weak: more than 90% of the cases compared only zeros, so the law
    // was hardly exercised (a layer that is identically zero, say).
    r.status = Status::too_weak;
    r.detail = std::to_string(vacuous) + " of " + std::to_string(r.cases) +
               " cases compared only zeros (outputs mostly zero)";
  }
  // A pass (or too weak) of fewer cases than asked for says so, also in the
  // text report's details (LawResult::cases_requested).
  if (cases < opt.cases) {
    r.detail += (r.detail.empty() ? "" : "; ") + scaled_note(r.cases, opt, cost);
    r.cases_requested = opt.cases;
  }
  return r;
}

} // namespace validation
} // namespace pm
