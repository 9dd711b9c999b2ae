#pragma once
// The difference of two parametric spans X ← E → Y (with π : E → P) up to
// isomorphism of their apexes: two spans are the same layer exactly when
// their coefficient tensors c(y, x, p) = Σ μ over parallel edges agree
// (spec/validator.md, CONF-SPAN-DIFF), so a permutation of the edges,
// parallel edges split or merged, or different `ranges` producing the same
// edges are no difference. Differences are reported in the multi-index
// coordinates of the shaped spaces, e.g.
//   target (1, 2, 3) <- source (0, 4, 7) via parameter (1, 0, 2, 2): intended 1, implemented 0
// the first N of them with the count of all, and, when one simple pattern
// explains every difference, that pattern in one line: an axis shifted (a
// padding offset), an axis sheared by a kernel axis (a dilation), a kernel
// axis reversed, a scale factor, or a block of one axis missing (a channel
// group).
#include <array>
#include <functional>
#include <set>
#include <sstream>

#include "pm/validate/patterns.hpp"
#include "pm/validate/recover.hpp"

namespace pm {

struct SpaceShapes {
  Shape source, target, parameters;
  // Optional axis names ("c", "y", "x"), printed as c=1; empty: positions only.
  std::vector<std::string> source_axes, target_axes, parameter_axes;
};

struct SpanDiffOptions {
  std::size_t max_differences = 10;                    // differences listed (all are counted)
  std::size_t max_pattern_work = std::size_t{1} << 26; // coefficient visits for the pattern search
  const std::vector<Index> *outputs = nullptr; // all differing outputs, when a, b hold only some
};

struct CoefficientDifference {
  std::vector<Index> target, source, parameter;
  Rational intended, implemented;
};

struct SpanDiff {
  std::size_t count = 0;                          // differing coefficients
  std::size_t compared = 0;                       // coefficients non-zero in either span
  std::vector<CoefficientDifference> differences; // the first max_differences, (y, x, p) order
  std::string pattern;                            // one line, or empty
  std::vector<std::string> source_axes, target_axes, parameter_axes;

  bool same() const { return count == 0; }
};

namespace validation {

using Key = std::tuple<Index, Index, Index>; // (y, x, p), flat

// A candidate explanation: coordinate `axis` of space `space` (0 target,
// 1 source, 2 parameter) becomes `alpha`·(parameter coordinate `q`) + `beta`
// more, or is reversed.
struct Explanation {
  std::string what;
  bool reverse = false;
  int space = 0;
  Index axis = 0, q = 0;
  long long alpha = 0, beta = 0;
};

// The image of a key under an explanation; nothing when outside the spaces.
inline std::optional<Key> explain(const Explanation &e, const Key &k, const SpaceShapes &sh) {
  const Shape *spaces[] = {&sh.target, &sh.source, &sh.parameters};
  const Index flat[] = {std::get<0>(k), std::get<1>(k), std::get<2>(k)};
  std::vector<Index> m[3];
  for (int s = 0; s < 3; ++s) m[s] = spaces[s]->multi(flat[s]);
  const long long extent = (long long)spaces[e.space]->extents()[e.axis];
  long long v = (long long)m[e.space][e.axis];
  // A shift alone reads no parameter coordinate: a span without parameters
  // has none (its parameter space has rank 0).
  v = e.reverse ? extent - 1 - v : v + (e.alpha ? e.alpha * (long long)m[2][e.q] : 0) + e.beta;
  if (v < 0 || v >= extent) return std::nullopt;
  m[e.space][e.axis] = Index(v);
  return Key{sh.target.flat(m[0]), sh.source.flat(m[1]), sh.parameters.flat(m[2])};
}

inline std::vector<Explanation> explanations(const SpaceShapes &sh) {
  std::vector<Explanation> out;
  const Shape *spaces[] = {&sh.target, &sh.source, &sh.parameters};
  const char *names[] = {"target", "source", "parameter"};
  // A kernel axis reversed.
  for (Index j = 0; j < sh.parameters.rank(); ++j)
    out.push_back({"parameter axis " + std::to_string(j) + " is reversed (a flipped kernel?)", true,
                   2, j, 0, 0, 0});
  // One axis of the source or target shifted by β, optionally by α per step
  // of a parameter axis (a dilation changes the step of the kernel). The
  // source comes first: a shifted source reads as the user's mistake.
  for (int s : {1, 0})
    for (Index j = 0; j < spaces[s]->rank(); ++j) {
      const std::string axis = std::string(names[s]) + " axis " + std::to_string(j);
      for (long long beta = -3; beta <= 3; ++beta)
        if (beta != 0)
          out.push_back({axis + " is shifted by " + std::to_string(beta) +
                             " (a shift on this axis, or a padding offset)",
                         false, s, j, 0, 0, beta});
      for (Index q = 0; q < sh.parameters.rank(); ++q)
        for (long long alpha : {-2LL, -1LL, 1LL, 2LL})
          for (long long beta = -3; beta <= 3; ++beta)
            out.push_back({axis + " moves by " + std::to_string(alpha) +
                               " per step of parameter axis " + std::to_string(q) +
                               (beta ? " and by " + std::to_string(beta) : std::string()) +
                               " (a wrong dilation?)",
                           false, s, j, q, alpha, beta});
    }
  return out;
}

inline std::string index_range(const std::set<Index> &v) {
  if (v.size() > 1 && *v.rbegin() - *v.begin() + 1 == v.size())
    return std::to_string(*v.begin()) + ".." + std::to_string(*v.rbegin());
  std::string s;
  for (Index i : v) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return "{" + s + "}";
}

// One line explaining every difference, or "".
inline std::string find_pattern(const CoefficientMap &a, const CoefficientMap &b,
                                const std::vector<Key> &diff, const SpaceShapes &sh,
                                const SpanDiffOptions &opt) {
  if (diff.empty()) return "";
  // The faults users make, in their words, first (patterns.hpp).
  if (a.size() + b.size() <= opt.max_pattern_work >> 8)
    if (auto s = user_pattern(a, b, diff, {sh.target, sh.source, sh.parameters, opt.outputs});
        !s.empty())
      return "every difference is explained by one pattern: " + s;
  bool all_missing = true, all_extra = true;
  for (const Key &k : diff) {
    all_missing = all_missing && !b.count(k);
    all_extra = all_extra && !a.count(k);
  }
  // A constant factor.
  if (!all_missing && !all_extra && a.size() == b.size()) {
    std::optional<Rational> factor;
    bool scaled = true;
    for (const auto &[k, v] : a) {
      const auto it = b.find(k);
      if (it == b.end()) {
        scaled = false;
        break;
      }
      const Rational f = it->second / v;
      if (factor && *factor != f) {
        scaled = false;
        break;
      }
      factor = f;
    }
    if (scaled && factor) {
      std::ostringstream os;
      os << "implemented = " << *factor << " × intended on every coefficient";
      return os.str();
    }
  }
  if (all_missing || all_extra) {
    // A block of one axis: every intended (or implemented) coefficient with
    // that coordinate in the block differs, and no other.
    const CoefficientMap &whole = all_missing ? a : b;
    const Shape *spaces[] = {&sh.target, &sh.source, &sh.parameters};
    const char *names[] = {"target", "source", "parameter"};
    std::string best;
    std::size_t best_size = ~std::size_t{0};
    for (int s = 0; s < 3; ++s)
      for (Index j = 0; j < spaces[s]->rank(); ++j) {
        auto coord = [&](const Key &k) {
          const Index f = s == 0 ? std::get<0>(k) : s == 1 ? std::get<1>(k) : std::get<2>(k);
          return spaces[s]->multi(f)[j];
        };
        std::set<Index> values;
        for (const Key &k : diff) values.insert(coord(k));
        // With the rows of some outputs only, a block of the source or the
        // parameters cannot be told from what those rows happen to share;
        // a block of the target holds every output that differs.
        if (opt.outputs && s != 0) continue;
        if (opt.outputs)
          for (Index y : *opt.outputs) values.insert(sh.target.multi(y)[j]);
        if (values.size() >= spaces[s]->extents()[j]) continue;
        std::size_t in_block = 0;
        for (const auto &kv : whole) in_block += values.count(coord(kv.first));
        if (in_block == diff.size() && values.size() < best_size) {
          best_size = values.size();
          best =
              std::string(names[s]) + " axis " + std::to_string(j) + " at " + index_range(values);
        }
      }
    const std::string n = std::to_string(diff.size());
    if (all_missing)
      return "all " + n + " differences are intended coefficients the implementation lacks" +
             (best.empty() ? std::string()
                           : ": exactly those with " + best +
                                 " (a missing block: a channel group, or weights cleaned away by a "
                                 "level typo?)");
    return "all " + n + " differences are coefficients the intention lacks" +
           (best.empty() ? std::string() : ": exactly those with " + best);
  }
  // A map of indices carrying the intended coefficients onto the implemented
  // ones; implemented coefficients outside its image are allowed only at the
  // borders (their intended counterparts fall outside the spaces).
  const auto cands = explanations(sh);
  if (cands.size() * (a.size() + b.size()) > opt.max_pattern_work) return "";
  std::string best;
  std::size_t best_extra = diff.size();
  for (const Explanation &e : cands) {
    CoefficientMap image;
    for (const auto &[k, v] : a)
      if (const auto m = explain(e, k, sh)) image[*m] += v;
    if (image.empty() || 2 * image.size() < a.size()) continue;
    bool agree = true;
    for (const auto &[k, v] : image) {
      const auto it = b.find(k);
      if (it == b.end() || it->second != v) {
        agree = false;
        break;
      }
    }
    if (!agree) continue;
    const std::size_t extra = b.size() - image.size();
    if (extra < best_extra) {
      best_extra = extra;
      best =
          e.what + (extra ? ", apart from " + std::to_string(extra) + " coefficients at the borders"
                          : std::string());
    }
  }
  return best.empty() ? "" : "every difference is explained by one pattern: " + best;
}

} // namespace validation

inline SpanDiff span_diff(const ParametricSpan<Rational> &intended,
                          const ParametricSpan<Rational> &implemented, const SpaceShapes &shapes,
                          const SpanDiffOptions &opt = {}) {
  using namespace validation;
  auto require_sizes = [&](const ParametricSpan<Rational> &a, const char *which) {
    require(a.source() == shapes.source.size() && a.target() == shapes.target.size() &&
                a.parameters() == shapes.parameters.size(),
            "span_diff: the ", which, " span is ", a.source(), " → ", a.target(), " with ",
            a.parameters(), " parameters, expected ", shapes.source.size(), " → ",
            shapes.target.size(), " with ", shapes.parameters.size(), " (the shapes given)");
  };
  require_sizes(intended, "intended");
  require_sizes(implemented, "implemented");
  const CoefficientMap a = coefficients(intended), b = coefficients(implemented);
  SpanDiff d;
  d.source_axes = shapes.source_axes;
  d.target_axes = shapes.target_axes;
  d.parameter_axes = shapes.parameter_axes;
  std::vector<Key> diff;
  auto differ = [&](const Key &k, const Rational &x, const Rational &y) {
    ++d.count;
    diff.push_back(k);
    if (d.differences.size() < opt.max_differences)
      d.differences.push_back({shapes.target.multi(std::get<0>(k)),
                               shapes.source.multi(std::get<1>(k)),
                               shapes.parameters.multi(std::get<2>(k)), x, y});
  };
  // Merge the two sorted maps in (y, x, p) order.
  auto ia = a.begin(), ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    ++d.compared;
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      differ(ia->first, ia->second, Rational(0));
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      differ(ib->first, Rational(0), ib->second);
      ++ib;
    } else {
      if (ia->second != ib->second) differ(ia->first, ia->second, ib->second);
      ++ia, ++ib;
    }
  }
  d.pattern = find_pattern(a, b, diff, shapes, opt);
  return d;
}

namespace validation {
inline std::string multi_index(const std::vector<Index> &m, const std::vector<std::string> &axes) {
  std::string s = "(";
  for (std::size_t j = 0; j < m.size(); ++j) {
    if (j) s += ", ";
    if (axes.size() == m.size()) s += axes[j] + "=";
    s += std::to_string(m[j]);
  }
  return s + ")";
}
} // namespace validation

inline std::string to_text(const CoefficientDifference &c, const SpanDiff &d) {
  using validation::multi_index;
  std::ostringstream os;
  os << "target " << multi_index(c.target, d.target_axes) << " <- source "
     << multi_index(c.source, d.source_axes) << " via parameter "
     << multi_index(c.parameter, d.parameter_axes) << ": intended " << c.intended
     << ", implemented " << c.implemented;
  return os.str();
}

// One line when the spans agree; else the count, the pattern and the first
// differences, one per line.
inline std::string to_text(const SpanDiff &d) {
  std::ostringstream os;
  if (d.same()) {
    if (d.compared == 0)
      os << "both spans are zero: no coefficient to compare";
    else
      os << "the spans agree on all " << d.compared << " non-zero coefficients";
    return os.str();
  }
  os << d.count << " of " << d.compared << " coefficients differ";
  if (!d.pattern.empty()) os << "; " << d.pattern;
  for (const auto &c : d.differences) os << "\n  " << to_text(c, d);
  if (d.count > d.differences.size())
    os << "\n  ... and " << d.count - d.differences.size() << " more";
  return os.str();
}

} // namespace pm
