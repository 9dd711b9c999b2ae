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
// threads and the result is the same bits for any thread count.
#include <boost/multiprecision/cpp_int.hpp>
#include <random>

#include "pm/category/span_rows.hpp"
#include "pm/numeric/uniform.hpp"

namespace pm {

namespace validation {

// What the probes' magnitudes are sized by, from one pass over the rows.
struct RowsProfile {
  Index fan = 0;           // the largest fan-in of the three maps (max_row, max_column, max use)
  Rational max_weight = 0; // max |μ|
  Rational scale = 1;      // L: the lcm of the denominators, or 0 when above max_scale
  bool exact = true;       // the weights are held exactly (SpanRows::exact)

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
  out.fan = std::max({r.max_row(), r.max_column(), r.max_parameter_use(), Index{1}});
  out.exact = r.exact();
  cpp_int lcm = 1;
  std::vector<RowEdge> row;
  for (Index y = 0; y < r.target(); ++y) {
    row.clear();
    r.row(y, row);
    for (const RowEdge &e : row) {
      const Rational a = abs(e.weight);
      if (a > out.max_weight) out.max_weight = a;
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

// k probes, point-major (value of probe j at point i is at i·k + j), with
// integer entries uniform in [−r, r]; x over the span's source (with a
// bias, its last point • takes 1 in every probe).
struct Probes {
  std::size_t k = 0;
  long long r = 0;
  std::vector<long long> w, x, g;

  long long at(const std::vector<long long> &v, Index i, std::size_t j) const {
    return v[i * k + j];
  }
};

inline Probes make_probes(const SpanRows &rows, std::size_t k, long long r, bool bias,
                          std::uint64_t seed) {
  Probes p{k, r, {}, {}, {}};
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
  return p;
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

// Every edge read once for all k probes. `adjoints` false: the forward only;
// `magnitudes` false: no sums of |terms| (an exact comparison reads none).
template <class Acc>
SpecValues<Acc> evaluate(const SpanRows &rows, const Probes &pr, const Rational &scale,
                         bool adjoints, bool magnitudes = true) {
  const std::size_t k = pr.k;
  const Index ny = rows.target(), nx = rows.source(), np = rows.parameters();
  SpecValues<Acc> v;
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
  // 4096 -> 4096) one thread does it all rather than multiply the memory.
  // (Read by the pragma alone: unused in a build without OpenMP.)
  [[maybe_unused]] const bool copies_small = !adjoints || (nx + np) * k <= (Index{1} << 24);
#pragma omp parallel if (ny * k > 4096 && copies_small)
  {
    std::vector<RowEdge> row;
    std::vector<Acc> x, xa, p, pa;
    if (adjoints) {
      x.assign(nx * k, Acc(0));
      xa.assign(m * nx * k, Acc(0));
      p.assign(np * k, Acc(0));
      pa.assign(m * np * k, Acc(0));
    }
#pragma omp for schedule(static)
    for (long long yy = 0; yy < (long long)ny; ++yy) {
      const Index y = Index(yy);
      row.clear();
      rows.row(y, row);
      for (const RowEdge &e : row) {
        const Acc a = scaled_weight<Acc>(e.weight, scale);
        const Acc aa = magnitude_of(a);
        for (std::size_t j = 0; j < k; ++j) {
          const Acc wv = Acc(pr.at(pr.w, e.parameter, j)), xv = Acc(pr.at(pr.x, e.source, j)),
                    gv = Acc(pr.at(pr.g, y, j));
          const Acc t = a * wv * xv;
          v.y[y * k + j] += t;
          if (m) v.y_abs[y * k + j] += magnitude_of(t);
          if (!adjoints) continue;
          x[e.source * k + j] += a * wv * gv;
          p[e.parameter * k + j] += a * xv * gv;
          if (!m) continue;
          xa[e.source * k + j] += aa * magnitude_of(Acc(wv * gv));
          pa[e.parameter * k + j] += aa * magnitude_of(Acc(xv * gv));
        }
      }
    }
    if (adjoints) {
#pragma omp critical
      {
        for (std::size_t i = 0; i < x.size(); ++i) v.x[i] += x[i];
        for (std::size_t i = 0; i < p.size(); ++i) v.p[i] += p[i];
        for (std::size_t i = 0; i < xa.size(); ++i) v.x_abs[i] += xa[i];
        for (std::size_t i = 0; i < pa.size(); ++i) v.p_abs[i] += pa[i];
      }
    }
  }
  return v;
}

} // namespace validation

} // namespace pm
