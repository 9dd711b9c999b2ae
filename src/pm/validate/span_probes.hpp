#pragma once
// The specification's side of CONF-EQUAL: a span given by its rows
// (pm::SpanRows) evaluated exactly on integer probes, k probes at once, in
// one pass over the rows: the forward Σ μ w(π) x(s) into each target, the
// transpose Σ μ w(π) g(t) into each source and the parameter gradient
// Σ μ x(s) g(t) into each parameter, with the sums of the terms' absolute
// values beside them (what a floating bound reads). Weights are scaled by
// the common denominator L of the rows, so that a span whose weights are
// integers or fractions with a small L is evaluated in int64 within the
// bound of docs/tolerances.md ("Exact probes"); otherwise in Rational.
// Exact sums do not depend on their order, so the rows are split over
// threads and the result is the same bits for any thread count. A rule that
// gives its rows with machine-integer weights (SpanRows::integer_rows) is
// read through them, with no Rational per edge.
#include <algorithm>
#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <random>

#include "pm/category/span_rows.hpp"
#include "pm/numeric/uniform.hpp"

namespace pm {

namespace validation {

// What the probes' magnitudes are sized by, from one pass over the rows.
struct RowsProfile {
  Index fan = 0; // the largest fan-in of the three maps (max_row, max_column, max use)
  // Each map's: the forward's (max_row), the transpose's (max_column), the
  // gradient's (a parameter's uses).
  std::array<Index, 3> fans{};
  Rational max_weight = 0;    // max |μ|
  Rational min_weight = 1;    // min(1, |μ| over the non-zero weights); 1 for integer rows
  bool unit_fractions = true; // every non-zero |μ| an integer or 1/m (a divisor, 1/deg)
  Rational scale = 1;         // L: the lcm of the denominators, or 0 when above max_scale
  bool exact = true;          // the weights are held exactly (SpanRows::exact)

  // A power of two: fractions p/L are exact in binary floating point.
  bool dyadic() const {
    if (scale == 0) return false;
    const auto d = numerator(scale);
    return d > 0 && (d & (d - 1)) == 0;
  }
};

inline constexpr long long max_scale = 1LL << 30;

inline RowsProfile profile(const SpanRows &r) {
  using boost::multiprecision::cpp_int;
  RowsProfile out;
  out.fans = {std::max(r.max_row(), Index{1}), std::max(r.max_column(), Index{1}),
              std::max(r.max_parameter_use(), Index{1})};
  out.fan = *std::max_element(out.fans.begin(), out.fans.end());
  out.exact = r.exact();
  if (r.integer_rows()) {
    unsigned long long most = 0;
#pragma omp parallel reduction(max : most)
    {
      std::vector<IntegerEdge> row;
#pragma omp for schedule(static)
      for (long long y = 0; y < (long long)r.target(); ++y) {
        row.clear();
        r.integer_row(Index(y), row);
        for (const IntegerEdge &e : row)
          most = std::max(most, e.weight < 0 ? 0ULL - (unsigned long long)e.weight
                                             : (unsigned long long)e.weight);
      }
    }
    out.max_weight = Rational(boost::multiprecision::cpp_int(most));
    return out;
  }
  cpp_int lcm = 1;
  std::vector<RowEdge> row;
  for (Index y = 0; y < r.target(); ++y) {
    row.clear();
    r.row(y, row);
    for (const RowEdge &e : row) {
      const Rational a = abs(e.weight);
      if (a > out.max_weight) out.max_weight = a;
      if (a == 0) continue;
      out.min_weight = std::min(a, out.min_weight);
      out.unit_fractions = out.unit_fractions && (numerator(a) == 1 || denominator(a) == 1);
      if (lcm == 0) continue;
      const cpp_int d = denominator(e.weight);
      if (d != 1 && lcm % d != 0) {
        lcm = boost::multiprecision::lcm(lcm, d);
        if (lcm > max_scale) lcm = 0;
      }
    }
  }
  out.scale = Rational(lcm);
  return out;
}

// Probes per pass over the rows: all k while a pass's probes, the
// specification's values and the implementation's outputs (8 bytes a value
// at most, for the three maps) fit in 2^28 bytes; else fewer, down to one
// (Linear 4096 -> 4096 has 1.7·10^7 parameters: 0.4 GB a probe).
inline std::size_t probes_per_pass(Index nx, Index ny, Index np, std::size_t k) {
  const double per_probe = 3 * 8 * double(nx + ny + np);
  return std::clamp<std::size_t>(std::size_t(std::ldexp(1.0, 28) / per_probe), 1, k);
}

// k probes, point-major (value of probe j at point i is at i·k + j), with
// integer entries uniform in [−r, r]; x over the span's source (with a
// bias, its last point • takes 1 in every probe). Drawn into `p`, whose
// vectors a pass reuses: fresh ones of a Linear 4096 -> 4096's size cost
// more in page faults than the pass's arithmetic.
struct Probes {
  std::size_t k = 0;
  long long r = 0;
  std::vector<long long> w, x, g;

  long long at(const std::vector<long long> &v, Index i, std::size_t j) const {
    return v[i * k + j];
  }
};

inline void make_probes(Probes &p, const SpanRows &rows, std::size_t k, long long r, bool bias,
                        std::uint64_t seed) {
  p.k = k;
  p.r = r;
  std::mt19937_64 rng(seed);
  UniformInt<long long> v(-r, r);
  auto fill = [&](std::vector<long long> &out, Index n) {
    out.resize(n * k);
    for (long long &e : out) e = v(rng);
  };
  fill(p.w, rows.parameters());
  fill(p.x, rows.source());
  fill(p.g, rows.target());
  if (bias && rows.source() > 0)
    for (std::size_t j = 0; j < k; ++j) p.x[(rows.source() - 1) * k + j] = 1;
}

// The three maps on the probes, exactly: values·L (L the profile's scale,
// or 1 in Rational), with the sums of |terms|·L beside them.
template <class Acc> struct SpecValues { std::vector<Acc> y, x, p, y_abs, x_abs, p_abs; };

template <class Acc> Acc scaled_weight(const Rational &mu, const Rational &scale) {
  if constexpr (std::is_same_v<Acc, Rational>)
    return mu;
  else if (scale == 1)
    return numerator(mu).template convert_to<Acc>();
  else
    return numerator(Rational(mu * scale)).template convert_to<Acc>();
}

template <class Acc> Acc magnitude_of(const Acc &a) { return a < 0 ? Acc(-a) : a; }

// Every edge read once for all k probes, into `v` (whose vectors a pass
// reuses). `adjoints` false: the forward only; `magnitudes` false: no sums
// of |terms| (an exact comparison reads none).
template <class Acc>
void evaluate(SpecValues<Acc> &v, const SpanRows &rows, const Probes &pr, const Rational &scale,
              bool adjoints, bool magnitudes = true) {
  const std::size_t k = pr.k;
  const Index ny = rows.target(), nx = rows.source(), np = rows.parameters();
  const Index m = magnitudes ? 1 : 0;
  v.y.assign(ny * k, Acc(0));
  v.y_abs.assign(m * ny * k, Acc(0));
  if (adjoints) {
    v.x.assign(nx * k, Acc(0));
    v.x_abs.assign(m * nx * k, Acc(0));
    v.p.assign(np * k, Acc(0));
    v.p_abs.assign(m * np * k, Acc(0));
  }
  // Exact sums: any split over threads gives the same values. Each thread
  // scatters the adjoints into its own copy, so above 2^24 values (a Linear
  // 4096 -> 4096) one thread does it all, into the result itself, rather
  // than multiply the memory.
  const bool threads = ny * k > 4096 && (!adjoints || (nx + np) * k <= (Index{1} << 24));
  bool integers = false;
  if constexpr (std::is_same_v<Acc, long long>) integers = scale == 1 && rows.integer_rows();
#pragma omp parallel if (threads)
  {
    std::vector<RowEdge> row;
    std::vector<IntegerEdge> integer_row;
    std::vector<Acc> own_x, own_xa, own_p, own_pa;
    if (adjoints && threads) {
      own_x.assign(nx * k, Acc(0));
      own_xa.assign(m * nx * k, Acc(0));
      own_p.assign(np * k, Acc(0));
      own_pa.assign(m * np * k, Acc(0));
    }
    std::vector<Acc> &x = threads ? own_x : v.x, &xa = threads ? own_xa : v.x_abs,
                     &p = threads ? own_p : v.p, &pa = threads ? own_pa : v.p_abs;
    // One edge (s, π, μ·L) of row y, for the k probes.
    auto edge = [&](Index y, Index source, Index parameter, const Acc &a) {
      const long long *wv = &pr.w[parameter * k], *xv = &pr.x[source * k], *gv = &pr.g[y * k];
      Acc *fy = &v.y[y * k];
      for (std::size_t j = 0; j < k; ++j) fy[j] += a * Acc(wv[j]) * Acc(xv[j]);
      if (m)
        for (std::size_t j = 0; j < k; ++j)
          v.y_abs[y * k + j] += magnitude_of(Acc(a * Acc(wv[j]) * Acc(xv[j])));
      if (!adjoints) return;
      Acc *tx = &x[source * k], *tp = &p[parameter * k];
      for (std::size_t j = 0; j < k; ++j) tx[j] += a * Acc(wv[j]) * Acc(gv[j]);
      for (std::size_t j = 0; j < k; ++j) tp[j] += a * Acc(xv[j]) * Acc(gv[j]);
      if (!m) return;
      const Acc aa = magnitude_of(a);
      for (std::size_t j = 0; j < k; ++j) {
        xa[source * k + j] += aa * magnitude_of(Acc(Acc(wv[j]) * Acc(gv[j])));
        pa[parameter * k + j] += aa * magnitude_of(Acc(Acc(xv[j]) * Acc(gv[j])));
      }
    };
#pragma omp for schedule(static)
    for (long long yy = 0; yy < (long long)ny; ++yy) {
      const Index y = Index(yy);
      if (integers) {
        integer_row.clear();
        rows.integer_row(y, integer_row);
        for (const IntegerEdge &e : integer_row) edge(y, e.source, e.parameter, Acc(e.weight));
      } else {
        row.clear();
        rows.row(y, row);
        for (const RowEdge &e : row)
          edge(y, e.source, e.parameter, scaled_weight<Acc>(e.weight, scale));
      }
    }
    if (adjoints && threads) {
#pragma omp critical
      {
        for (std::size_t i = 0; i < x.size(); ++i) v.x[i] += x[i];
        for (std::size_t i = 0; i < p.size(); ++i) v.p[i] += p[i];
        for (std::size_t i = 0; i < xa.size(); ++i) v.x_abs[i] += xa[i];
        for (std::size_t i = 0; i < pa.size(); ++i) v.p_abs[i] += pa[i];
      }
    }
  }
}

} // namespace validation

} // namespace pm
