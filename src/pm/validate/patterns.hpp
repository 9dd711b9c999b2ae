#pragma once
// The fault classes users make, named in their words when one explains
// every difference between an intended coefficient map a and an implemented
// one b (spec/validator.md, CONF-SPAN-DIFF and CONF-EQUAL): a flipped kernel
// (kernel axes reversed), a transposed weight (two parameter axes swapped),
// groups wired to the wrong group (blocks of the channel axis permuted
// cyclically), a wrong divisor at the borders (border outputs' weights
// scaled), an off-by-one at one border only (the first or last coordinate of
// an axis missing), a single wrong coefficient, a stride on the wrong axis
// (a source axis stepping by another stride per output step). Each test maps every
// coefficient of a and asks for b exactly, so a pattern is named only when
// it explains all the differences; find_pattern (span_diff.hpp) tries these
// first, then its shifts and dilations.
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "pm/category/finite_set.hpp"
#include "pm/category/scalar.hpp"

namespace pm::validation {

using CoefficientKey = std::tuple<Index, Index, Index>; // (y, x, p), flat
using Coefficients = std::map<CoefficientKey, Rational>;

struct PatternSpaces {
  const Shape &target, &source, &parameters;
  // Every output that differs, when a and b hold the rows of only some of
  // them (a localisation follows two): a claim about the differing outputs
  // must hold for all of these, not only for the rows seen.
  const std::vector<Index> *outputs = nullptr;
};

// Whether every differing output satisfies `claim` (those of the
// differences when the caller gave no list).
template <class Claim>
bool every_output(const std::vector<CoefficientKey> &diff, const PatternSpaces &sp, Claim &&claim) {
  if (sp.outputs) return std::all_of(sp.outputs->begin(), sp.outputs->end(), claim);
  return std::all_of(diff.begin(), diff.end(),
                     [&](const CoefficientKey &k) { return claim(std::get<0>(k)); });
}

// b == the image of a under f, a bijection of the index spaces (so that
// coefficients neither merge nor vanish): every mapped coefficient of a is
// b's, and there are as many. Stops at the first that is not.
template <class F> bool image_is(const Coefficients &a, const Coefficients &b, F &&f) {
  if (a.size() != b.size()) return false;
  for (const auto &[k, v] : a) {
    CoefficientKey m = k;
    f(m);
    const auto it = b.find(m);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

inline std::string axes_text(const std::vector<Index> &axes) {
  std::string s;
  for (Index j : axes) s += (s.empty() ? "" : " and ") + std::to_string(j);
  return s;
}

// Parameter axes reversed: a kernel flipped (a convolution where a
// cross-correlation is meant, or the reverse).
inline std::string flipped_kernel(const Coefficients &a, const Coefficients &b,
                                  const PatternSpaces &sp) {
  const Index rank = sp.parameters.rank();
  if (rank == 0 || rank > 6) return "";
  for (unsigned mask = 1; mask < (1u << rank); ++mask) {
    std::vector<Index> axes;
    bool useful = true;
    for (Index j = 0; j < rank; ++j)
      if (mask >> j & 1) {
        axes.push_back(j);
        useful = useful && sp.parameters.extents()[j] > 1;
      }
    if (!useful) continue;
    const bool explains = image_is(a, b, [&](CoefficientKey &k) {
      std::vector<Index> m = sp.parameters.multi(std::get<2>(k));
      for (Index j : axes) m[j] = sp.parameters.extents()[j] - 1 - m[j];
      std::get<2>(k) = sp.parameters.flat(m);
    });
    if (explains && axes.size() == 1)
      return "a kernel flipped on one axis: parameter axis " + axes_text(axes) +
             " reversed (the kernel read backwards along it)";
    if (explains)
      return "a flipped kernel: parameter axes " + axes_text(axes) +
             " reversed (a convolution where a cross-correlation is intended, or the reverse)";
  }
  return "";
}

// Two parameter axes of equal extent swapped: a weight read transposed.
inline std::string transposed_weight(const Coefficients &a, const Coefficients &b,
                                     const PatternSpaces &sp) {
  const auto &e = sp.parameters.extents();
  for (Index i = 0; i < e.size(); ++i)
    for (Index j = i + 1; j < e.size(); ++j) {
      if (e[i] != e[j] || e[i] < 2) continue;
      const bool explains = image_is(a, b, [&](CoefficientKey &k) {
        std::vector<Index> m = sp.parameters.multi(std::get<2>(k));
        std::swap(m[i], m[j]);
        std::get<2>(k) = sp.parameters.flat(m);
      });
      if (explains)
        return "a transposed weight: parameter axes " + std::to_string(i) + " and " +
               std::to_string(j) + " swapped (w read as wᵀ)";
    }
  return "";
}

// Whether each output reads, on source axis j, within one block of
// `block` coordinates: the blocks are groups (a spatial axis, whose rows
// read a window across blocks, has none).
inline bool one_block_per_output(const Coefficients &a, const PatternSpaces &sp, Index j,
                                 Index block) {
  std::map<Index, Index> of_output;
  for (const auto &kv : a) {
    const Index g = sp.source.multi(std::get<1>(kv.first))[j] / block;
    if (of_output.emplace(std::get<0>(kv.first), g).first->second != g) return false;
  }
  return true;
}

// Blocks of B coordinates of a source axis read from the block δ further
// on, cyclically: a grouped layer whose groups are wired to the wrong group.
inline std::string wrong_group(const Coefficients &a, const Coefficients &b,
                               const PatternSpaces &sp) {
  const auto &e = sp.source.extents();
  for (Index j = e.size(); j-- > 0;) {
    const Index c = e[j];
    // The largest blocks first: two groups swapped are also eight blocks of
    // one moved by four, and the user wrote two groups.
    for (Index block = c / 2; block >= 1; --block) {
      if (c % block != 0 || !one_block_per_output(a, sp, j, block)) continue;
      const Index blocks = c / block;
      for (Index delta = 1; delta < blocks; ++delta) {
        const bool explains = image_is(a, b, [&](CoefficientKey &k) {
          std::vector<Index> m = sp.source.multi(std::get<1>(k));
          m[j] = ((m[j] / block + delta) % blocks) * block + m[j] % block;
          std::get<1>(k) = sp.source.flat(m);
        });
        if (explains)
          return "groups wired to the wrong group: on source axis " + std::to_string(j) + " (" +
                 std::to_string(blocks) + " groups of " + std::to_string(block) +
                 "), group g reads group g + " + std::to_string(delta) + " mod " +
                 std::to_string(blocks);
      }
    }
  }
  return "";
}

// Every differing output's coefficients are its intended ones times one
// factor, and those outputs lie on a border of the target: a wrong divisor
// at the borders (an average counting the padding, or not).
inline std::string wrong_border_divisor(const Coefficients &a, const Coefficients &b,
                                        const std::vector<CoefficientKey> &diff,
                                        const PatternSpaces &sp) {
  std::set<Index> outputs;
  for (const auto &k : diff) outputs.insert(std::get<0>(k));
  std::set<Rational> factors;
  for (Index y : outputs) {
    std::optional<Rational> f;
    std::size_t na = 0, nb = 0;
    for (auto it = a.lower_bound({y, 0, 0}); it != a.end() && std::get<0>(it->first) == y; ++it) {
      ++na;
      const auto jt = b.find(it->first);
      if (jt == b.end()) return "";
      const Rational r = jt->second / it->second;
      if (f && *f != r) return "";
      f = r;
    }
    for (auto it = b.lower_bound({y, 0, 0}); it != b.end() && std::get<0>(it->first) == y; ++it)
      ++nb;
    if (!f || na != nb || *f == 1) return "";
    factors.insert(*f);
  }
  // On a border: some axis of rank > 0 at its first or last coordinate.
  const bool borders = every_output(diff, sp, [&](Index y) {
    const std::vector<Index> m = sp.target.multi(y);
    for (Index j = 0; j < m.size(); ++j)
      if (sp.target.extents()[j] > 2 && (m[j] == 0 || m[j] + 1 == sp.target.extents()[j]))
        return true;
    return false;
  });
  if (!borders) return "";
  std::ostringstream os;
  os << "a wrong divisor at the borders: the differing outputs lie on a border, each with all "
        "its weights scaled by ";
  std::size_t n = 0;
  for (const Rational &f : factors)
    if (n++ < 4) os << (n > 1 ? ", " : "") << f;
  if (factors.size() > 4) os << ", …";
  return os.str();
}

// The differences are all intended coefficients with coordinate 0 (or the
// last) of one source or target axis, and every such coefficient: an
// off-by-one at one border only.
inline std::string one_border(const Coefficients &a, const Coefficients &b,
                              const std::vector<CoefficientKey> &diff, const PatternSpaces &sp) {
  for (const auto &k : diff)
    if (b.count(k)) return ""; // not all missing
  const Shape *spaces[] = {&sp.target, &sp.source};
  const char *names[] = {"target", "source"};
  for (int s = 0; s < 2; ++s)
    for (Index j = 0; j < spaces[s]->rank(); ++j) {
      const Index extent = spaces[s]->extents()[j];
      if (extent < 3) continue;
      for (const Index edge : {Index{0}, extent - 1}) {
        auto at = [&](const CoefficientKey &k) {
          return spaces[s]->multi(s == 0 ? std::get<0>(k) : std::get<1>(k))[j] == edge;
        };
        std::size_t in_edge = 0;
        bool inside = true;
        for (const auto &k : diff) inside = inside && at(k);
        // A target border holds for every differing output, not only for
        // the rows seen (two outputs of a missing group can share one).
        if (s == 0 && inside)
          inside = every_output(diff, sp, [&](Index y) { return sp.target.multi(y)[j] == edge; });
        if (!inside) continue;
        for (const auto &kv : a) in_edge += at(kv.first);
        if (in_edge == diff.size())
          return std::string("an off-by-one at one border only: every coefficient with ") +
                 names[s] + " axis " + std::to_string(j) + " at " + std::to_string(edge) +
                 (edge == 0 ? " (its first)" : " (its last)") + " is missing";
      }
    }
  return "";
}

// The stride of source axis j per step of target axis j that the intended
// coefficients show: the s in 1..4 for which x_j - s y_j is best told by one
// parameter axis q (a kernel axis: one offset per kernel index), counting
// the distinct pairs (p_q, x_j - s y_j), fewest over q; 0 when two s tie.
// By a parameter axis, so that neither a window cut by the border nor
// outputs of different channels (which share no parameter) tie two s.
inline long long intended_stride(const Coefficients &a, const PatternSpaces &sp, Index j) {
  std::vector<std::vector<Index>> p;
  std::vector<long long> x, y;
  for (const auto &kv : a) {
    p.push_back(sp.parameters.multi(std::get<2>(kv.first)));
    x.push_back((long long)sp.source.multi(std::get<1>(kv.first))[j]);
    y.push_back((long long)sp.target.multi(std::get<0>(kv.first))[j]);
  }
  long long best = 0;
  std::size_t fewest = ~std::size_t{0};
  for (long long s = 1; s <= 4; ++s) {
    std::size_t least = ~std::size_t{0};
    for (Index q = 0; q < sp.parameters.rank(); ++q) {
      std::set<std::pair<Index, long long>> pairs;
      for (std::size_t t = 0; t < p.size(); ++t) pairs.emplace(p[t][q], x[t] - s * y[t]);
      least = std::min(least, pairs.size());
    }
    if (least < fewest)
      fewest = least, best = s;
    else if (least == fewest)
      best = 0;
  }
  return best;
}

// Source axes that move by δ_j more per step of the target axis of the same
// index than intended (x_j -> x_j + δ_j y_j, |δ_j| <= 2): a wrong stride, or
// the strides of two axes swapped. Implemented coefficients carried outside
// the source are read from the padding (none). An axis can be said to move
// only where the outputs seen take two coordinates on it, and only when some
// coefficient that moved on it lands on one of the implementation's: a
// whole row carried outside the source (a missing group's) is no stride.
inline std::string wrong_stride(const Coefficients &a, const Coefficients &b,
                                const PatternSpaces &sp) {
  const Index rank = sp.source.rank();
  if (rank == 0 || rank > 4 || rank != sp.target.rank() || a.empty() || b.empty()) return "";
  struct Term {
    std::vector<Index> y, x;
    Index p;
    const Rational *value;
  };
  std::vector<Term> terms;
  std::vector<std::set<Index>> seen(rank);
  for (const auto &[k, v] : a) {
    terms.push_back(
        {sp.target.multi(std::get<0>(k)), sp.source.multi(std::get<1>(k)), std::get<2>(k), &v});
    for (Index j = 0; j < rank; ++j) seen[j].insert(terms.back().y[j]);
  }
  std::vector<Index> axes;
  for (Index j = 0; j < rank; ++j)
    if (sp.source.extents()[j] > 1 && seen[j].size() > 1) axes.push_back(j);
  std::size_t candidates = 1;
  for (std::size_t t = 0; t < axes.size(); ++t) candidates *= 5;
  std::vector<long long> delta(rank, 0);
  std::vector<Index> moved(rank);
  for (std::size_t code = 1; code < candidates; ++code) {
    std::size_t c = code;
    for (Index j : axes) delta[j] = (long long)(c % 5) - 2, c /= 5;
    std::size_t matched = 0;
    std::vector<bool> witnessed(rank, false);
    bool explains = true;
    for (const Term &t : terms) {
      bool inside = true;
      for (Index j = 0; j < rank && inside; ++j) {
        const long long m = (long long)t.x[j] + delta[j] * (long long)t.y[j];
        inside = m >= 0 && m < (long long)sp.source.extents()[j];
        moved[j] = Index(m);
      }
      if (!inside) continue;
      const auto it = b.find({sp.target.flat(t.y), sp.source.flat(moved), t.p});
      if (it == b.end() || it->second != *t.value) {
        explains = false;
        break;
      }
      ++matched;
      for (Index j : axes) witnessed[j] = witnessed[j] || (delta[j] != 0 && t.y[j] != 0);
    }
    if (!explains || matched != b.size()) continue;
    std::ostringstream os;
    std::multiset<long long> intended, implemented;
    std::vector<Index> changed;
    bool strides_known = true;
    for (Index j : axes) {
      if (delta[j] == 0) continue;
      if (!witnessed[j]) {
        explains = false;
        break;
      }
      const long long s = intended_stride(a, sp, j);
      os << (changed.empty() ? "" : ", and ") << "source axis " << j;
      if (s > 0 && s + delta[j] > 0) {
        os << " steps by " << s + delta[j] << " per step of target axis " << j << ", not " << s;
        intended.insert(s), implemented.insert(s + delta[j]);
      } else {
        os << " moves by " << delta[j] << " more per step of target axis " << j;
        strides_known = false;
      }
      changed.push_back(j);
    }
    if (!explains) continue;
    if (changed.size() > 1 && strides_known && intended == implemented)
      return "a stride on the wrong axis: " + os.str() + " (the strides of source axes " +
             axes_text(changed) + " swapped)";
    return "a wrong stride: " + os.str();
  }
  return "";
}

// The first user-level pattern that explains every difference, or "".
inline std::string user_pattern(const Coefficients &a, const Coefficients &b,
                                const std::vector<CoefficientKey> &diff, const PatternSpaces &sp) {
  if (diff.empty()) return "";
  if (diff.size() == 1) return "a single wrong coefficient";
  for (auto f : {flipped_kernel, transposed_weight, wrong_group})
    if (auto s = f(a, b, sp); !s.empty()) return s;
  if (auto s = wrong_border_divisor(a, b, diff, sp); !s.empty()) return s;
  if (auto s = one_border(a, b, diff, sp); !s.empty()) return s;
  return wrong_stride(a, b, sp);
}

} // namespace pm::validation
