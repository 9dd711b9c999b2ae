#pragma once
// Span recovery: the parametric span a black-box layer implements. A bilinear
// layer L : S^P × S^X → S^Y is (L_w φ)(y) = Σ_{x,p} c(y, x, p) w(p) φ(x) for
// one coefficient tensor c, the sum of μ over the parallel edges of its span
// (spec/validator.md, CONF-RECOVER). Probing with basis vectors reads c off:
// apply(e_p, e_x)(y) = c(y, x, p). The recovered span has one edge per
// non-zero coefficient, in (y, x, p) row-major order, with μ = c.
//
// Cost. Forward only: |P|·|X| calls of apply, or |P|·⌈|X|/B⌉ calls of
// apply_batch (B = RecoverOptions::batch columns of the identity at a time).
// A full Layer may be read through its transpose (apply_transpose(e_p, e_y)
// is c(y, ·, p): |P|·|Y| calls) or its parameter gradient
// (parameter_gradient(e_x, e_y) is c(y, x, ·): |X|·|Y| calls); with
// Probe::cheapest the fewest calls win. The probes are then checked against
// bilinearity: apply(0, 0) = 0 and, on `checks` random integer cases,
// apply(w, φ) equals Σ c w φ of the recovered tensor — a layer that is not
// bilinear (an affine +1, a square) gives a counterexample instead of a span.
//
// Exactness. Over an exact scalar every value is exact. Over double a basis
// probe returns fl(Σ μ) over the parallel edges; with integer μ and partial
// sums below 2^53 this is exact (docs/tolerances.md, "Integer probes"). The
// random cases use integers in [−8, 8]; their outputs are exact while
// Σ |c| |w| |φ| ≤ 2^53 per output, which is then compared with ==. A
// non-integer coefficient from a double layer is read as the simplest
// rational within γ_m |c| (m the number of probes summed, at most |X|·|P|),
// and the row says the recovery is not exact; if no simple rational lies
// there the recovery is "too weak".
#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "pm/io/layer_format.hpp"
#include "pm/validate/layer.hpp"

namespace pm {

// Optional: the layer applied to every column of a batch at one w, so that a
// black box with a high cost per call is called about |P| times.
template <class L>
concept HasApplyBatch = ForwardLayer<L> &&
    requires(const L &l, const Function<typename L::scalar_type> &w,
             const Batch<typename L::scalar_type> &xs) {
  { l.apply_batch(w, xs) } -> std::convertible_to<Batch<typename L::scalar_type>>;
};

enum class Probe { forward, cheapest };

struct RecoverOptions {
  Probe probe = Probe::forward;
  Index batch = 256;                // identity columns per apply_batch call
  std::size_t max_calls = 1 << 20;  // refuse above (calls of the layer)
  std::size_t max_values = 1 << 26; // refuse above (values read: calls × output size)
  std::size_t checks = 16;          // random bilinearity cases after the probes
  std::uint64_t seed = 1;
  // The outputs' precision, when coarser than the scalar's (float32 samples
  // held as double): integers are exact below 1/u.
  double unit_roundoff = 0; // 0: the scalar's
};

enum class RecoveryStatus { recovered, not_bilinear, too_weak, refused };

template <class S> struct Recovery {
  RecoveryStatus status = RecoveryStatus::refused;
  ParametricSpan<Rational> span; // when recovered (or too weak: the nearest reading)
  bool exact = true;             // every coefficient read exactly
  double tolerance = 0;          // relative tolerance used when not exact
  std::size_t calls = 0;         // calls of the layer, bilinearity checks included
  std::string via;               // "apply", "apply_batch", "apply_transpose", "parameter_gradient"
  std::string detail;            // counterexample, refusal or why too weak

  bool recovered() const { return status == RecoveryStatus::recovered; }
};

namespace validation {

// Integers below 1/u (2^53 for float64, 2^24 for float32) are exact.
inline double exact_integer_limit(double u) { return 1 / u; }

template <class S> Rational to_rational(const S &v) {
  if constexpr (is_exact<S>)
    return Rational(v);
  else
    return Rational(double(v));
}

// The simplest rational (smallest denominator, by continued fractions)
// within [v − tol, v + tol], with denominator at most 2^20; nothing if none.
inline std::optional<Rational> simplest_rational(double v, double tol) {
  if (!std::isfinite(v)) return std::nullopt;
  const Rational target(v), lo(v - tol), hi(v + tol);
  // Convergents h/k of v.
  long long h0 = 1, h1 = 0, k0 = 0, k1 = 1; // h_{-1}=1, h_{-2}=0, k_{-1}=0, k_{-2}=1
  Rational rest = target;
  for (int step = 0; step < 64; ++step) {
    using boost::multiprecision::numerator, boost::multiprecision::denominator;
    const boost::multiprecision::cpp_int n = numerator(rest), d = denominator(rest);
    boost::multiprecision::cpp_int a = n / d;
    if (n < 0 && a * d != n) a -= 1; // floor
    if (boost::multiprecision::abs(a) > (1LL << 53)) return std::nullopt;
    const long long ai = a.convert_to<long long>();
    const long long h = ai * h0 + h1, k = ai * k0 + k1;
    if (k > (1LL << 20)) return std::nullopt;
    const Rational c(h, k);
    if (c >= lo && c <= hi) return c;
    h1 = h0, h0 = h, k1 = k0, k0 = k;
    const Rational frac = rest - Rational(a);
    if (frac == 0) return std::nullopt;
    rest = 1 / frac;
  }
  return std::nullopt;
}

// Coefficients keyed by (y, x, p), summed; the order of the recovered edges.
using CoefficientMap = std::map<std::tuple<Index, Index, Index>, Rational>;

inline ParametricSpan<Rational> span_of(const CoefficientMap &c, Index x, Index y, Index p) {
  ParametricSpan<Rational> a;
  a.span.s.codomain = x;
  a.span.t.codomain = y;
  a.pi.codomain = p;
  for (const auto &[key, mu] : c) {
    if (mu == 0) continue;
    a.span.t.images.push_back(std::get<0>(key));
    a.span.s.images.push_back(std::get<1>(key));
    a.pi.images.push_back(std::get<2>(key));
    a.span.mu.push_back(mu);
  }
  return a;
}

// The coefficient tensor of a span: Σ μ over parallel edges, zeros dropped.
inline CoefficientMap coefficients(const ParametricSpan<Rational> &a) {
  CoefficientMap c;
  for (Index e = 0; e < a.apex(); ++e) c[{a.span.t(e), a.span.s(e), a.pi(e)}] += a.span.mu[e];
  std::erase_if(c, [](const auto &kv) { return kv.second == 0; });
  return c;
}

template <class S> Function<S> basis(Index n, Index i) {
  Function<S> v(n, S(0));
  v[i] = S(1);
  return v;
}

} // namespace validation

// The number of calls recovery makes with these options (probes only), and
// the operation it would use.
template <ForwardLayer L>
std::pair<std::size_t, std::string> recovery_cost(const L &layer, const RecoverOptions &opt = {}) {
  const std::size_t x = layer.source_size(), y = layer.target_size(), p = layer.parameter_size();
  std::pair<std::size_t, std::string> best{p * x, "apply"};
  if constexpr (HasApplyBatch<L>)
    best = {p * ((x + opt.batch - 1) / std::max<Index>(opt.batch, 1)), "apply_batch"};
  if constexpr (Layer<L>) {
    if (opt.probe == Probe::cheapest) {
      if (p * y < best.first) best = {p * y, "apply_transpose"};
      if (x * y < best.first) best = {x * y, "parameter_gradient"};
    }
  }
  return best;
}

template <ForwardLayer L>
Recovery<typename L::scalar_type> recover_span(const L &layer, const RecoverOptions &opt = {}) {
  using namespace validation;
  using S = typename L::scalar_type;
  using F = Function<S>;
  Recovery<S> r;
  const Index nx = layer.source_size(), ny = layer.target_size(), np = layer.parameter_size();
  const auto [calls, via] = recovery_cost(layer, opt);
  r.via = via;
  const std::size_t out = via == "apply_transpose" ? nx : via == "parameter_gradient" ? np : ny;
  const std::size_t values = via == "apply_batch" ? np * nx * ny : calls * out;
  if (calls > opt.max_calls || values > opt.max_values) {
    r.detail = "recovery would need " + std::to_string(calls) + " calls of " + via + " reading " +
               std::to_string(values) + " values (|X| = " + std::to_string(nx) +
               ", |Y| = " + std::to_string(ny) + ", |P| = " + std::to_string(np) +
               "), more than the bound of " + std::to_string(opt.max_calls) + " calls and " +
               std::to_string(opt.max_values) +
               " values; shrink the layer: fewer channels and a smaller spatial extent give the "
               "same pattern of edges at a fraction of the cost";
    return r;
  }
  auto checked = [&](const F &v, Index size, const char *what) {
    require(v.size() == size, "recover_span: ", what, " returned ", v.size(), " values, expected ",
            size);
    return v;
  };
  auto counterexample = [&](const F &w, const F &phi, const F &got, const F &want, Index y) {
    r.status = RecoveryStatus::not_bilinear;
    r.detail = "not bilinear: apply(w, φ) at w = " + show(w) + ", φ = " + show(phi) + " gives " +
               show(got[y]) + " at target " + std::to_string(y) +
               ", the bilinear extension of the basis probes gives " + show(want[y]);
  };
  // An affine layer is caught before any probe: apply(0, 0) must be 0.
  {
    const F w(np, S(0)), phi(nx, S(0));
    const F got = checked(layer.apply(w, phi), ny, "apply");
    ++r.calls;
    for (Index y = 0; y < ny; ++y)
      if (!(got[y] == S(0))) {
        r.status = RecoveryStatus::not_bilinear;
        r.detail = "not bilinear: apply(0, 0) gives " + show(got[y]) + " at target " +
                   std::to_string(y) + ", a bilinear layer gives 0 (an affine term?)";
        return r;
      }
  }
  // Probes: raw[y, x, p] as the layer's scalars.
  std::map<std::tuple<Index, Index, Index>, S> raw;
  auto keep = [&](Index y, Index x, Index p, const S &v) {
    if (!(v == S(0))) raw[{y, x, p}] = v;
  };
  // One basis probe per (a, b) < (na, nb): call(a, b) returns `size` values,
  // the k-th of which is the coefficient at key(a, b, k) = (y, x, p).
  auto sweep = [&](Index na, Index nb, Index size, const char *what, auto &&call, auto &&key) {
    for (Index a = 0; a < na; ++a)
      for (Index b = 0; b < nb; ++b) {
        const F v = checked(call(a, b), size, what);
        ++r.calls;
        for (Index k = 0; k < size; ++k) {
          const auto [y, x, p] = key(a, b, k);
          keep(y, x, p, v[k]);
        }
      }
  };
  using K = std::tuple<Index, Index, Index>;
  if (via == "apply") {
    sweep(
        np, nx, ny, "apply",
        [&](Index p, Index x) { return layer.apply(basis<S>(np, p), basis<S>(nx, x)); },
        [](Index p, Index x, Index y) {
          return K{y, x, p};
        });
  } else if (via == "apply_batch") {
    if constexpr (HasApplyBatch<L>) {
      for (Index p = 0; p < np; ++p)
        for (Index x0 = 0; x0 < nx; x0 += opt.batch) {
          const Index cols = std::min<Index>(opt.batch, nx - x0);
          Batch<S> xs(nx, cols);
          for (Index b = 0; b < cols; ++b) xs(x0 + b, b) = S(1);
          const Batch<S> ys = layer.apply_batch(basis<S>(np, p), xs);
          ++r.calls;
          require(ys.rows == ny && ys.cols == cols, "recover_span: apply_batch returned a ",
                  ys.rows, " × ", ys.cols, " batch, expected ", ny, " × ", cols);
          for (Index b = 0; b < cols; ++b)
            for (Index y = 0; y < ny; ++y) keep(y, x0 + b, p, ys(y, b));
        }
    }
  } else if constexpr (Layer<L>) {
    if (via == "apply_transpose")
      sweep(
          np, ny, nx, "apply_transpose",
          [&](Index p, Index y) { return layer.apply_transpose(basis<S>(np, p), basis<S>(ny, y)); },
          [](Index p, Index y, Index x) {
            return K{y, x, p};
          });
    else
      sweep(
          nx, ny, np, "parameter_gradient",
          [&](Index x, Index y) {
            return layer.parameter_gradient(basis<S>(nx, x), basis<S>(ny, y));
          },
          [](Index x, Index y, Index p) {
            return K{y, x, p};
          });
  }
  // Read the coefficients as rationals.
  const double u = opt.unit_roundoff > 0 ? opt.unit_roundoff : unit_roundoff<double>();
  const double limit = exact_integer_limit(u);
  CoefficientMap c;
  for (const auto &[key, v] : raw) {
    if constexpr (is_exact<S>) {
      c[key] = Rational(v);
    } else {
      const double d = double(v);
      if (!std::isfinite(d)) {
        r.status = RecoveryStatus::not_bilinear;
        r.detail = "a basis probe returned " + show(d) + " (not a finite number)";
        return r;
      }
      if (d == std::floor(d) && std::abs(d) < limit) {
        c[key] = Rational(d);
        continue;
      }
      r.exact = false;
      const double gamma_m = gamma(double(std::max<std::size_t>(np * nx, 2)), u);
      const double tol = gamma_m * std::abs(d);
      r.tolerance = std::max(r.tolerance, gamma_m);
      const auto q = bound_is_meaningful(gamma_m) ? simplest_rational(d, tol) : std::nullopt;
      if (!q) {
        r.status = RecoveryStatus::too_weak;
        r.detail = "coefficient (y " + std::to_string(std::get<0>(key)) + ", x " +
                   std::to_string(std::get<1>(key)) + ", p " + std::to_string(std::get<2>(key)) +
                   ") = " + show(d) + " is no rational of denominator ≤ 2^20 within " + show(tol) +
                   ": the recovered span would not be exact";
        c[key] = Rational(d);
        continue;
      }
      c[key] = *q;
    }
  }
  r.span = span_of(c, nx, ny, np);
  if (r.status == RecoveryStatus::too_weak) return r;
  // Bilinearity: apply(0, 0) = 0, then random integer cases.
  const ParametricSpan<S> predicted = io::with_scalar<S>(r.span);
  std::mt19937_64 rng(opt.seed ^ fnv1a("CONF-RECOVER"));
  std::uniform_int_distribution<int> code(-8, 8);
  ParametricSpan<S> abs_pred = predicted;
  abs_pred.span.mu = magnitude(abs_pred.span.mu);
  const std::size_t n_terms = max_fibre(predicted.span.t) + 2;
  for (std::size_t k = 0; k < opt.checks; ++k) {
    F w(np), phi(nx);
    for (S &v : w) v = S(code(rng));
    for (S &v : phi) v = S(code(rng));
    const F got = checked(layer.apply(w, phi), ny, "apply");
    ++r.calls;
    const F want = act(predicted, w, phi);
    const F mag = act(abs_pred, magnitude(w), magnitude(phi));
    for (Index y = 0; y < ny; ++y) {
      bool ok = got[y] == want[y];
      if constexpr (!is_exact<S>) {
        // Exact while the sum of |terms| stays an integer below 2^53 and
        // every coefficient is an integer; else within γ_n M.
        const bool integer_exact = r.exact && double(mag[y]) < limit;
        const double gamma_n = gamma(double(n_terms + 1), u);
        if (!integer_exact && !bound_is_meaningful(gamma_n)) {
          r.status = RecoveryStatus::too_weak;
          r.detail = "the bilinearity check has no meaningful bound (γ_n ≥ 1 for n = " +
                     std::to_string(n_terms + 1) + " terms)";
          return r;
        }
        if (!integer_exact)
          ok = std::abs(double(got[y]) - double(want[y])) <=
               gamma_n * 2 * std::nextafter(double(mag[y]), 1e308);
        if (!std::isfinite(double(got[y]))) ok = false;
      }
      if (!ok) {
        counterexample(w, phi, got, want, y);
        return r;
      }
    }
  }
  r.status = RecoveryStatus::recovered;
  return r;
}

inline const char *recovery_status_name(RecoveryStatus s) {
  switch (s) {
  case RecoveryStatus::recovered:
    return "recovered";
  case RecoveryStatus::not_bilinear:
    return "not bilinear";
  case RecoveryStatus::too_weak:
    return "too weak";
  case RecoveryStatus::refused:
    return "refused";
  }
  return "?";
}

} // namespace pm
