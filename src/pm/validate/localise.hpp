#pragma once
// Where an implementation differs from its specification, without
// recovering its span (spec/validator.md, CONF-EQUAL): from a probe on which
// some outputs differ, a few of those outputs are followed to their
// differing coefficients c(y, x, p).
//  - With the adjoints: the transpose at cotangent e_y is row y of L_w, so
//    two calls (two random w) give the sources at which output y differs,
//    and the gradient at (e_x, e_y) gives c(y, x, ·) over the parameters:
//    2 + d calls per output with d differing sources, or 4 + ⌈log₂ d⌉ when
//    each parameter meets one differing source in the row, as in a conv or
//    a dense layer (Localiser::by_bits). The transpose at e_y
//    is linear in w, so w takes values up to r² (r the probes' bound, sized
//    for products of two values), and a differing source is missed with
//    probability ≤ (1/(2r² + 1))² (a shifted kernel differs at hundreds of
//    sources: with the probes' own w, of 147 values in float32, one in 73
//    cancelled). The adjoints are trusted only when
//    the differences they find account for the forward's difference on the
//    probe; otherwise
//  - forward only: the probes' support is halved on the source axis, then
//    on the parameter axis, all followed outputs answering each call at
//    once, O(d·log(|X||P|)) calls; a leaf (x, p) is read off apply(e_p, e_x).
// Each restricted probe misses a difference with probability ≤ 2/s, like
// CONF-EQUAL's own probes.
#include <random>
#include <set>

#include "pm/numeric/uniform.hpp"
#include "pm/validate/layer.hpp"
#include "pm/validate/patterns.hpp"
#include "pm/validate/span_diff.hpp"
#include "pm/validate/span_probes.hpp"

namespace pm {

struct Localisation {
  std::vector<CoefficientDifference> differences; // found, (y, x, p) order
  std::size_t outputs_followed = 0, outputs_differing = 0;
  std::size_t calls = 0;
  bool complete = true; // every difference of the followed outputs found
  std::string missing;  // why not, when not
  std::string via;      // "transpose and gradient" or "forward"
  std::string pattern;
  // Non-empty when the difference is not bilinear, so that it has no
  // coefficients to find: what showed it.
  std::string not_bilinear;
};

namespace validation {

// Output y's coefficients c(y, x, p), summed over parallel edges.
inline std::map<std::pair<Index, Index>, Rational> row_coefficients(const SpanRows &rows, Index y) {
  std::vector<RowEdge> row;
  rows.row(y, row);
  std::map<std::pair<Index, Index>, Rational> c;
  for (const RowEdge &e : row) c[{e.source, e.parameter}] += e.weight;
  for (auto it = c.begin(); it != c.end();) it = it->second == 0 ? c.erase(it) : std::next(it);
  return c;
}

// The differing outputs to follow: the first, and with `two` a second from
// the middle on whose coordinates all differ from the first's where the
// target has room (else the middle one): rows that differ on every axis
// tell a stride from a shift and show two channel groups.
inline std::vector<Index> to_follow(const std::vector<Index> &differing, const Shape &target,
                                    bool two) {
  if (differing.size() < 2 || !two)
    return {differing.begin(), differing.begin() + std::min<std::size_t>(differing.size(), 1)};
  const std::vector<Index> first = target.multi(differing.front());
  const std::size_t n = differing.size(), middle = n / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const Index y = differing[(middle + i) % n];
    const std::vector<Index> m = target.multi(y);
    bool apart = y != differing.front();
    for (Index j = 0; j < m.size() && apart; ++j)
      apart = target.extents()[j] < 2 || m[j] != first[j];
    if (apart) return {differing.front(), y};
  }
  return {differing.front(), differing[middle]};
}

template <ForwardLayer L> class Localiser {
public:
  using S = typename L::scalar_type;
  Localiser(const L &impl, const SpanRows &rows, long long r, double tolerance, std::uint64_t seed,
            std::size_t max_calls)
      : impl_(impl), rows_(rows), nx_(impl.source_size()), np_(impl.parameter_size()),
        value_(-r, r), screen_(-r * r, r * r), tolerance_(tolerance), rng_(seed),
        max_calls_(max_calls) {}

  // The differences of the followed outputs ys, forward only.
  std::map<CoefficientKey, std::pair<Rational, Rational>> by_halves(const std::vector<Index> &ys) {
    for (Index y : ys) spec_[y] = row_coefficients(rows_, y);
    std::map<CoefficientKey, std::pair<Rational, Rational>> found;
    std::vector<std::pair<Index, std::vector<Index>>> sources; // x and the ys differing there
    halve(
        0, nx_, ys,
        [&](Index lo, Index hi, const std::vector<Index> &in) {
          return test(in, lo, hi, 0, np_, std::nullopt);
        },
        [&](Index x, const std::vector<Index> &in) {
          sources.push_back({x, in});
        });
    for (const auto &source : sources) {
      // A plain name, not a structured binding: clang 14 (the fuzzers'
      // compiler) cannot capture a binding in a lambda.
      const Index x = source.first;
      const std::vector<Index> &in = source.second;
      halve(
          0, np_, in,
          [&](Index lo, Index hi, const std::vector<Index> &at) {
            return test(at, x, x + 1, lo, hi, x);
          },
          [&](Index p, const std::vector<Index> &at) {
            if (!budget()) return;
            Function<S> e_p(np_, S(0)), e_x(nx_, S(0));
            e_p[p] = S(1);
            e_x[x] = S(1);
            const Function<S> out = impl_.apply(e_p, e_x);
            ++calls;
            for (Index y : at) {
              const auto it = spec_[y].find({x, p});
              const Rational want = it == spec_[y].end() ? Rational(0) : it->second;
              const Rational got = read(out[y]);
              if (got != want) found[{y, x, p}] = {want, got};
            }
          });
    }
    return found;
  }

  // The differences of the followed outputs ys through the adjoints: the
  // transpose at (w, e_y) for two random w for the differing sources, the
  // gradient at (x, e_y) for their coefficients (by_bits, else one source
  // at a time).
  std::map<CoefficientKey, std::pair<Rational, Rational>>
  by_adjoints(const std::vector<Index> &ys) requires Layer<L> {
    std::map<CoefficientKey, std::pair<Rational, Rational>> found;
    const Index ny = impl_.target_size();
    for (Index y : ys) {
      spec_[y] = row_coefficients(rows_, y);
      Function<S> e_y(ny, S(0));
      e_y[y] = S(1);
      std::vector<bool> differs(nx_, false);
      for (int screen = 0; screen < 2 && budget(); ++screen) {
        Function<S> w(np_);
        std::vector<long long> wv(np_);
        for (Index p = 0; p < np_; ++p) w[p] = S(wv[p] = screen_(rng_));
        const Function<S> t = impl_.apply_transpose(w, e_y);
        ++calls;
        require(t.size() == nx_, "apply_transpose returned ", t.size(), " values, expected ", nx_);
        // Only the sources of row y are read as rationals; any other
        // differs exactly when its value is not 0.
        std::map<Index, std::pair<Rational, Rational>> want; // x: value, Σ|terms|
        for (const auto &[xp, c] : spec_[y])
          if (xp.first < nx_) {
            want[xp.first].first += c * wv[xp.second];
            want[xp.first].second += abs(c * wv[xp.second]);
          }
        for (Index x = 0; x < nx_; ++x) {
          const auto it = want.find(x);
          differs[x] =
              differs[x] || (it == want.end() ? t[x] != S(0)
                                              : abs(to_rational(t[x]) - it->second.first) >
                                                    Rational(tolerance_) * it->second.second);
        }
      }
      std::vector<Index> xs;
      for (Index x = 0; x < nx_; ++x)
        if (differs[x]) xs.push_back(x);
      std::map<std::pair<Index, Index>, Rational> got;
      if (!by_bits(y, xs, got)) {
        got.clear();
        for (Index x : xs) {
          if (!budget()) break;
          Function<S> e_x(nx_, S(0));
          e_x[x] = S(1);
          const Function<S> g = gradient(e_x, y);
          for (Index p = 0; p < np_; ++p)
            if (g[p] != S(0)) got[{x, p}] = read(g[p]);
        }
      }
      // The differences at the differing sources: intended or implemented.
      std::map<std::pair<Index, Index>, std::pair<Rational, Rational>> both;
      for (const auto &[xp, c] : spec_[y])
        if (std::binary_search(xs.begin(), xs.end(), xp.first)) both[xp].first = c;
      for (const auto &[xp, c] : got) both[xp].second = c;
      for (const auto &[xp, ab] : both)
        if (ab.first != ab.second) found[{y, xp.first, xp.second}] = ab;
    }
    return found;
  }

  // Output y's implemented coefficients at the differing sources xs in
  // 2 + ⌈log₂ |xs|⌉ gradient calls instead of |xs|, when each parameter
  // meets one of them in the row (a conv's or a dense row does): the
  // gradient at (1 on xs, e_y) gives each parameter's coefficient a_p, at
  // (1 on the xs whose rank has bit b, e_y) a_p or 0, which spells the rank
  // of its source. A last call at random values on xs confirms what was
  // read (a wrong reading survives with probability ≤ 1/(2r² + 1)); false
  // when the shortcut does not apply, was refuted or ran out of calls.
  bool by_bits(Index y, const std::vector<Index> &xs,
               std::map<std::pair<Index, Index>, Rational> &got) requires Layer<L> {
    int bits = 0;
    while ((std::size_t{1} << bits) < xs.size()) ++bits;
    if (xs.size() <= std::size_t(bits) + 2) return false;
    if (!budget()) return false;
    // Only the parameters met by xs are read as rationals: a Linear
    // 4096 -> 4096 has 1.7·10^7 parameters and meets 4096 in a row.
    const Function<S> all = gradient(indicator(xs, [](Index) { return true; }), y);
    std::vector<Index> met;
    for (Index p = 0; p < np_; ++p)
      if (all[p] != S(0)) met.push_back(p);
    std::vector<Rational> a(met.size());
    std::vector<std::size_t> rank(met.size(), 0);
    for (std::size_t i = 0; i < met.size(); ++i) a[i] = read(all[met[i]]);
    for (int b = 0; b < bits; ++b) {
      if (!budget()) return false;
      const Function<S> part = gradient(indicator(xs, [&](Index i) { return (i >> b) & 1; }), y);
      std::size_t next = 0; // met is sorted: walk it beside p
      for (Index p = 0; p < np_; ++p) {
        const bool is_met = next < met.size() && met[next] == p;
        if (!is_met) {
          if (part[p] != S(0)) return false; // sources that cancel at p
          continue;
        }
        const Rational c = read(part[p]);
        if (c == a[next] && c != 0)
          rank[next] |= std::size_t{1} << b;
        else if (c != 0)
          return false; // two sources meet p: one call per source
        ++next;
      }
    }
    for (std::size_t i = 0; i < met.size(); ++i) {
      if (rank[i] >= xs.size()) return false;
      got[{xs[rank[i]], met[i]}] = a[i];
    }
    if (!budget()) return false;
    Function<S> v(nx_, S(0));
    std::vector<long long> vv(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) v[xs[i]] = S(vv[i] = screen_(rng_));
    const Function<S> check = gradient(v, y);
    std::map<Index, std::pair<Rational, Rational>> want; // p: value, Σ|terms|
    for (const auto &[xp, c] : got) {
      const auto i = std::lower_bound(xs.begin(), xs.end(), xp.first) - xs.begin();
      want[xp.second].first += c * vv[i];
      want[xp.second].second += abs(c * vv[i]);
    }
    for (Index p = 0; p < np_; ++p) {
      const auto it = want.find(p);
      if (it == want.end()) {
        if (check[p] != S(0)) return false;
      } else if (abs(to_rational(check[p]) - it->second.first) >
                 Rational(tolerance_) * it->second.second)
        return false;
    }
    return true;
  }

  // The source vector that is 1 at the xs[i] for which pick(i) holds.
  template <class Pick> Function<S> indicator(const std::vector<Index> &xs, Pick &&pick) const {
    Function<S> v(nx_, S(0));
    for (std::size_t i = 0; i < xs.size(); ++i)
      if (pick(Index(i))) v[xs[i]] = S(1);
    return v;
  }

  // The parameter gradient at (x, e_y): Σ_x' c(y, x', p) x(x') for every p.
  Function<S> gradient(const Function<S> &x, Index y) requires Layer<L> {
    Function<S> e_y(impl_.target_size(), S(0));
    e_y[y] = S(1);
    const Function<S> g = impl_.parameter_gradient(x, e_y);
    ++calls;
    require(g.size() == np_, "parameter_gradient returned ", g.size(), " values, expected ", np_);
    return g;
  }

  // Whether the differences `found` of the followed outputs ys account for
  // the forward's difference observed − specified on the probe (wv, xv),
  // within the comparison's tolerance of the terms' magnitudes.
  template <class Found>
  bool accounts(const Found &found, const std::vector<Index> &ys, const std::vector<long long> &wv,
                const std::vector<long long> &xv, const Function<S> &observed,
                const std::vector<Rational> &specified) const {
    for (Index y : ys) {
      Rational predicted = 0, size = 0;
      for (const auto &[xp, c] : spec_.at(y))
        if (xp.first < nx_) size += abs(c * wv[xp.second] * xv[xp.first]);
      for (auto it = found.lower_bound({y, 0, 0}); it != found.end() && std::get<0>(it->first) == y;
           ++it) {
        const Rational t = (it->second.second - it->second.first) * wv[std::get<2>(it->first)] *
                           xv[std::get<1>(it->first)];
        predicted += t;
        size += abs(t);
      }
      if (abs(to_rational(observed[y]) - specified[y] - predicted) > Rational(tolerance_) * size)
        return false;
    }
    return true;
  }

  // The intended coefficients of the followed outputs, flat (y, x, p).
  Coefficients intended() const {
    Coefficients a;
    for (const auto &[y, row] : spec_)
      for (const auto &[xp, c] : row)
        if (xp.first < nx_) a[{y, xp.first, xp.second}] = c;
    return a;
  }

  std::size_t calls = 0;
  bool complete = true;

private:
  // A coefficient as computed: exact, or (when the comparison has a
  // tolerance) the simplest rational within it of the rounded value.
  Rational read(const S &v) const {
    if (tolerance_ == 0) return to_rational(v);
    const double d = double(v);
    return simplest_rational(d, 4 * tolerance_ * std::abs(d)).value_or(to_rational(v));
  }

  bool budget() {
    if (calls < max_calls_) return true;
    complete = false;
    return false;
  }

  // Calls `leaf(i, ys)` for every i in [lo, hi) at which some of ys differ,
  // given that they differ somewhere in [lo, hi). A y that neither half
  // shows was missed by a probe (each misses with probability ≤ 2/s: one
  // in four measured at s = 7, a pooling's float32 r before inexact
  // comparisons took r ≥ 2^10), so both halves are asked again, up to 8
  // times. A miss in one half while the other
  // shows y is caught by the caller's accounting.
  template <class Test, class Leaf>
  void halve(Index lo, Index hi, const std::vector<Index> &ys, Test &&test, Leaf &&leaf) {
    if (ys.empty()) return;
    if (hi - lo == 1) return leaf(lo, ys);
    const Index mid = lo + (hi - lo) / 2;
    std::set<Index> left, right;
    for (int attempt = 0; attempt < 8; ++attempt) {
      if (!budget()) return;
      for (Index y : test(lo, mid, ys)) left.insert(y);
      if (!budget()) return;
      for (Index y : test(mid, hi, ys)) right.insert(y);
      if (std::all_of(ys.begin(), ys.end(),
                      [&](Index y) { return left.count(y) || right.count(y); }))
        break;
    }
    halve(lo, mid, {left.begin(), left.end()}, test, leaf);
    halve(mid, hi, {right.begin(), right.end()}, test, leaf);
  }

  // Which of ys differ on a probe supported on sources [xlo, xhi) and
  // parameters [plo, phi) (a single source gets the value 1).
  std::vector<Index> test(const std::vector<Index> &ys, Index xlo, Index xhi, Index plo, Index phi,
                          std::optional<Index> unit_source) {
    Function<S> w(np_, S(0)), x(nx_, S(0));
    std::vector<long long> wv(np_, 0), xv(nx_, 0);
    for (Index p = plo; p < phi; ++p) w[p] = S(wv[p] = value_(rng_));
    for (Index i = xlo; i < xhi; ++i) x[i] = S(xv[i] = unit_source ? 1 : value_(rng_));
    const Function<S> out = impl_.apply(w, x);
    ++calls;
    std::vector<Index> differ;
    for (Index y : ys) {
      Rational want = 0, size = 0;
      for (const auto &[xp, c] : spec_[y]) {
        const auto [xi, p] = xp;
        if (xi >= xlo && xi < xhi && p >= plo && p < phi) {
          want += c * wv[p] * xv[xi];
          size += abs(c * wv[p] * xv[xi]);
        }
      }
      const Rational got = to_rational(out[y]);
      if (abs(got - want) > Rational(tolerance_) * size) differ.push_back(y);
    }
    return differ;
  }

  const L &impl_;
  const SpanRows &rows_;
  Index nx_, np_;
  UniformInt<long long> value_, screen_;
  double tolerance_;
  std::mt19937_64 rng_;
  std::size_t max_calls_;
  std::map<Index, std::map<std::pair<Index, Index>, Rational>> spec_;
};

// Why the implementation is not bilinear, from four calls at the probe
// (w, x) whose output is `observed`, or "" when they do not show it: an
// output at x = 0 or at w = 0 (a bias, an added constant), or one that does
// not change sign with x or with w (a square). Negation is exact and keeps
// the magnitudes, so a bilinear implementation answers with the negated
// values, within `tolerance` relative to their size (0: the same values).
template <ForwardLayer L>
std::string not_bilinear(const L &impl, const SpaceShapes &sh, const std::vector<long long> &wv,
                         const std::vector<long long> &xv,
                         const Function<typename L::scalar_type> &observed, double tolerance) {
  using S = typename L::scalar_type;
  const Function<S> w(wv.begin(), wv.end()), x(xv.begin(), xv.end());
  Function<S> minus_w = w, minus_x = x;
  for (S &v : minus_w) v = -v;
  for (S &v : minus_x) v = -v;
  auto at = [&](Index i) {
    std::ostringstream os;
    os << "output (";
    const auto m = sh.target.multi(i);
    for (std::size_t j = 0; j < m.size(); ++j) os << (j ? ", " : "") << m[j];
    os << ")";
    return os.str();
  };
  const struct {
    Function<S> w, x;
    bool zero; // the output is 0, else the negated observed one
    const char *text;
  } cases[] = {
      {w, Function<S>(x.size(), S(0)), true,
       "with x = 0 the implementation's {at} is {v}, not 0: an affine term (a bias, an added "
       "constant?)"},
      {Function<S>(w.size(), S(0)), x, true,
       "with w = 0 the implementation's {at} is {v}, not 0: a term that does not depend on the "
       "weights"},
      {w, minus_x, false,
       "with -x for x the implementation's {at} is {v}, not {n}: a term of even degree in x (a "
       "square, a nonlinearity?)"},
      {minus_w, x, false,
       "with -w for w the implementation's {at} is {v}, not {n}: a term of even degree in w"}};
  for (const auto &c : cases) {
    const Function<S> y = impl.apply(c.w, c.x);
    require(y.size() == observed.size(), "apply(w, x) returned ", y.size(), " values, expected ",
            observed.size());
    for (Index i = 0; i < y.size(); ++i) {
      const S expected = c.zero ? S(0) : S(-observed[i]);
      const double err = to_double(magnitude(S(y[i] - expected)));
      const double size = to_double(magnitude(y[i])) + to_double(magnitude(expected));
      if (err > tolerance * size || (tolerance == 0 && y[i] != expected)) {
        std::string t = std::string("not bilinear, so not localised: ") + c.text;
        auto put = [&](const std::string &key, const std::string &value) {
          t.replace(t.find(key), key.size(), value);
        };
        put("{at}", at(i));
        put("{v}", show(to_double(y[i])));
        if (!c.zero) put("{n}", show(to_double(expected)));
        return t;
      }
    }
  }
  return "";
}

} // namespace validation

// The differences behind a forward probe (w, x) on which `differing`
// outputs of the implementation differ from the specification's `rows`:
// `observed` is the implementation's output on that probe and `specified`
// the specification's (exact). Up to `follow` outputs are followed.
template <ForwardLayer L>
Localisation localise(const L &impl, const SpanRows &rows, const SpaceShapes &sh,
                      const std::vector<long long> &wv, const std::vector<long long> &xv,
                      const Function<typename L::scalar_type> &observed,
                      const std::vector<Rational> &specified, const std::vector<Index> &differing,
                      long long r, double tolerance, std::uint64_t seed,
                      std::size_t max_calls = 16384) {
  using namespace validation;
  Localisation out;
  out.outputs_differing = differing.size();
  out.not_bilinear = not_bilinear(impl, sh, wv, xv, observed, tolerance);
  if (!out.not_bilinear.empty()) { // no coefficients to find
    out.calls = 4;
    out.complete = false;
    return out;
  }
  // The adjoints read a whole row per call; by halves costs O(d log) calls
  // per output, so fewer are followed.
  const std::vector<Index> ys = to_follow(differing, sh.target, Layer<L>);
  out.outputs_followed = ys.size();
  Localiser<L> loc(impl, rows, r, tolerance, seed, max_calls);
  std::map<CoefficientKey, std::pair<Rational, Rational>> found;
  bool accounted = false;
  if constexpr (Layer<L>) {
    found = loc.by_adjoints(ys);
    // The adjoints are the forward's only if their differences account for
    // the forward's on the probe.
    accounted = loc.complete && loc.accounts(found, ys, wv, xv, observed, specified);
    out.via = "transpose and gradient";
  }
  if (!accounted) {
    // By halves, in rounds of fresh probes until what was found accounts
    // for the probe: a difference missed in one round is found in another.
    found.clear();
    loc.complete = true;
    for (int round = 0; round < 3 && !accounted && loc.complete; ++round) {
      found.merge(loc.by_halves(ys));
      accounted = loc.accounts(found, ys, wv, xv, observed, specified);
    }
    out.via = "forward, by halves";
  }
  out.calls = loc.calls;
  out.complete = loc.complete && accounted;
  if (!loc.complete)
    out.missing = "the call budget ran out: some may be missing";
  else if (!accounted)
    out.missing = "some may be missing: those found do not account for the probe's difference";
  const Coefficients a = loc.intended();
  Coefficients b = a;
  std::vector<CoefficientKey> keys;
  for (const auto &[k, v] : found) {
    keys.push_back(k);
    if (v.second == 0)
      b.erase(k);
    else
      b[k] = v.second;
    const auto [y, x, p] = k;
    out.differences.push_back(
        {sh.target.multi(y), sh.source.multi(x), sh.parameters.multi(p), v.first, v.second});
  }
  // One wrong coefficient is a pattern only when one output differs.
  // A claim about the differing outputs (on a border, at one border) must
  // hold for all that differ on the probe, not only for those followed.
  SpanDiffOptions o;
  o.outputs = &differing;
  if (!keys.empty() && (keys.size() > 1 || out.outputs_differing == 1))
    out.pattern = find_pattern(a, b, keys, sh, o);
  return out;
}

inline std::string to_text(const Localisation &l, const SpaceShapes &sh, std::size_t max_listed) {
  if (!l.not_bilinear.empty()) return l.not_bilinear;
  std::ostringstream os;
  os << "localised via " << l.via << " (" << l.calls << " calls): " << l.differences.size()
     << " differing coefficients in the " << l.outputs_followed
     << (l.outputs_followed == 1 ? " output followed" : " outputs followed") << " ("
     << (l.complete ? "all of theirs" : l.missing) << ")"
     << " of the " << l.outputs_differing << " outputs that differ on the probe; so at least "
     << std::max(l.differences.size(), l.outputs_differing) << " coefficients differ in all";
  if (!l.pattern.empty()) os << "\n  " << l.pattern;
  SpanDiff d;
  d.source_axes = sh.source_axes;
  d.target_axes = sh.target_axes;
  d.parameter_axes = sh.parameter_axes;
  for (std::size_t i = 0; i < l.differences.size() && i < max_listed; ++i)
    os << "\n  " << to_text(l.differences[i], d);
  if (l.differences.size() > max_listed)
    os << "\n  ... and " << l.differences.size() - max_listed << " more";
  return os.str();
}

} // namespace pm
