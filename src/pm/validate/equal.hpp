#pragma once
// CONF-EQUAL (spec/validator.md): an implementation compared with its
// specification at full size by k random integer probes. The difference D
// of two bilinear maps is bilinear, so for D ≠ 0 and probes w, x with
// entries drawn uniformly from s integers, Pr[D(w, x) = 0] ≤ 2/s
// (Schwartz–Zippel: D is a polynomial of degree 2), and k independent
// probes miss with probability at most (2/s)^k, which the row prints.
//
// The probes' magnitude r (s = 2r + 1) is chosen so that the
// implementation's own arithmetic is exact (docs/tolerances.md, "Exact
// probes"): every partial sum of a map is an integer multiple of 1/L of
// magnitude at most fan·max|μ|·L·r², below 2^53 in float64 and 2^24 in
// float32; then its outputs are compared with the specification's exact
// values with ==. Where no such r exists, or the weights are not dyadic
// (3/7) or not held exactly (1/√d), the outputs are compared within the
// derived bound γ_{fan+2}·Σ|terms| (+ the specification's own rounding), and
// the row says so. The transpose and the parameter gradient, when the
// implementation has them, are compared the same way on the same probes.
#include <array>
#include <cmath>
#include <optional>

#include "pm/io/layer_format.hpp"
#include "pm/validate/dtype.hpp"
#include "pm/validate/layer.hpp"
#include "pm/validate/localise.hpp"
#include "pm/validate/recover.hpp"
#include "pm/validate/report.hpp"
#include "pm/validate/span_diff.hpp"
#include "pm/validate/span_probes.hpp"

namespace pm {

struct EqualOptions {
  std::size_t probes = 0;           // 0: enough that (2/s)^k ≤ 2^-60
  std::optional<Dtype> dtype;       // the implementation's precision; default its scalar type's
  std::size_t max_differences = 10; // coefficient differences listed by the localisation
  bool localise = true;             // false: outputs read back from files answer no new probe
};

namespace validation {

// With a bias the span's source is X ⊔ {•}, flat: the bias point is last.
inline SpaceShapes shapes_of(const io::LayerDescription &d) {
  return {d.bias ? Shape({d.source.size() + 1}) : d.source, d.target, d.parameters, {}, {}, {}};
}

// How the probes of one check are sized, and what their comparison means.
struct ProbePlan {
  Dtype dtype = Dtype::float64;
  long long r = 1;   // entries in [−r, r]
  std::size_t k = 1; // probes
  bool exact = true; // outputs compared with ==
  // Else each map (forward, transpose, gradient) within (γ_{fan+2} of its
  // fan-in + the allowance for weights the implementation computes from
  // coordinates + the specification's rounding) · Σ|terms|; infinite when
  // n·u ≥ 1/2 (that map decides nothing).
  std::array<double, 3> gamma{};
  double allowance = 0;
  bool weak = false; // no map's bound is below 1: nothing decided

  // The relative bound of map m (0 forward, 1 transpose, 2 gradient).
  double bound(int m) const { return gamma[m] + allowance + std::ldexp(1.0, -51); }
  // Whether map m's comparison can fail at all (bound_is_meaningful).
  bool decides(int m) const { return exact || bound_is_meaningful(bound(m)); }
  std::string how; // the row's words for the above

  double miss() const { return std::pow(2.0 / double(2 * r + 1), double(k)); }
};

inline std::string number_text(double v) {
  std::ostringstream os;
  os << std::setprecision(3) << v;
  return os.str();
}

// `extent`: the largest extent of the source's axes, the coordinates from
// which an implementation may compute weights that are not dyadic.
inline ProbePlan plan_probes(const RowsProfile &pf, Dtype dtype, std::size_t probes, Index extent) {
  ProbePlan p;
  p.dtype = dtype;
  // Partial sums are multiples of 1/L bounded by fan·max|μ|·r²; for the
  // comparison in int64 (and for an exact implementation) 2^62 is the limit.
  const int bits = dtype == Dtype::exact ? 62 : significand_bits(dtype);
  const bool representable = dtype == Dtype::exact || (pf.exact && pf.dyadic());
  const Rational per_r2 = Rational(pf.fan) * std::max(pf.max_weight, Rational(1)) *
                          (representable && pf.scale != 0 ? pf.scale : Rational(1));
  const double room = std::ldexp(1.0, bits) / per_r2.convert_to<double>();
  const long long r = room >= 1 ? (long long)std::floor(std::sqrt(room)) : 0;
  p.r = std::clamp(r, 1LL, 1LL << 20);
  p.exact = representable && r >= 1;
  const std::string name = dtype_name(dtype);
  const std::string limit = "2^" + std::to_string(bits);
  if (p.exact) {
    p.how = dtype == Dtype::exact
                ? "exact arithmetic, compared with =="
                : name + ": every partial sum ≤ fan-in " + std::to_string(pf.fan) + " × max|μ| " +
                      value_text(pf.max_weight) + " × r² = " +
                      number_text(per_r2.convert_to<double>() * double(p.r) * double(p.r)) + " ≤ " +
                      limit + " is exact, compared with ==";
  } else {
    // A relative bound does not depend on the probes' magnitude, so r is
    // not held down by exactness: a larger s makes each probe, and each
    // localising probe, likelier to see a difference.
    p.r = std::max(p.r, 1LL << 10);
    const double u = unit_roundoff(dtype);
    auto gamma = [&](double n) { return n * u < 0.5 ? n * u / (1 - n * u) : INFINITY; };
    // The implementation's weights: dyadic ones exactly; divisors 1/m and
    // weights held as nearest doubles (1/√(d_i d_j)) within 3 roundings of
    // their own (n + 3); other fractions (3/14, of an interpolation) are
    // computed from coordinates up to N, with an absolute error up to
    // γ_4·(N + 1) each: a term's error within that / min|μ| of the term.
    const bool dyadic_weights = pf.exact && pf.dyadic();
    const bool few_roundings = !dyadic_weights && (!pf.exact || pf.unit_fractions);
    const char *maps[] = {"forward", "transpose", "gradient"};
    std::string within;
    for (int m = 0; m < 3; ++m) {
      const Index n = pf.fans[m] + 2 + (few_roundings ? 3 : 0);
      p.gamma[m] = gamma(double(n));
      within += std::string(m ? ", " : "") + maps[m] + " γ_" + std::to_string(n) + " = " +
                number_text(p.gamma[m]);
    }

    std::string coordinates;
    if (!dyadic_weights && !few_roundings) {
      p.allowance = gamma(4) * double(extent + 1) / pf.min_weight.convert_to<double>();
      coordinates = ", plus γ_4·(N + 1)/min|μ| = " + number_text(p.allowance) +
                    " (N = " + std::to_string(extent) + ", min|μ| = " + value_text(pf.min_weight) +
                    ") for weights computed from coordinates";
    }
    p.weak = !p.decides(0) && !p.decides(1) && !p.decides(2);
    const std::string why =
        !pf.exact ? "weights not held exactly (nearest doubles)"
        : !pf.dyadic()
            ? "weights not dyadic (denominators " +
                  (pf.scale == 0 ? std::string("above 2^30") : "lcm " + value_text(pf.scale)) + ")"
            : "fan-in " + std::to_string(pf.fan) + " × max|μ| too large for " + limit;
    p.how = name + ": " + why + ": each map compared within γ_n × Σ|terms|, n its fan-in + 2" +
            (few_roundings ? " + 3" : "") + " (" + within + ")" + coordinates +
            " (docs/tolerances.md, \"Exact probes\")";
  }
  if (probes == 0) {
    // (2/s)^k ≤ 2^-60.
    const double per = std::log2(double(2 * p.r + 1) / 2);
    probes = std::size_t(std::ceil(60 / per));
  }
  p.k = std::clamp<std::size_t>(probes, 1, 64);
  return p;
}

// One map's comparison, accumulated over the passes: the first differing
// output, and all differing outputs of the first probe that has one (what
// the localisation starts from).
struct MapComparison {
  std::size_t compared = 0, differing = 0;
  std::size_t probe = 0;     // of the first difference
  std::vector<Index> points; // differing points of that probe
  std::string first;         // the first difference in words
  double max_error = 0, bound = 0;
};

// The implementation's values `theirs[j]` (probe first + j of the check,
// one vector per probe of this pass) against the specification's (values·L
// at point·k + j, k the pass's probes), added to `c`.
template <class S, class Acc>
void compare_map(MapComparison &c, const std::vector<Function<S>> &theirs,
                 const std::vector<Acc> &ref, const std::vector<Acc> &ref_abs,
                 const Rational &scale, Index n, const ProbePlan &plan, int map, std::size_t first,
                 const Shape &space, const char *what) {
  const std::size_t k = theirs.size();
  const bool pow2 = scale != 0 && (numerator(scale) & (numerator(scale) - 1)) == 0;
  const int e2 = pow2 ? int(msb(numerator(scale))) : 0;
  for (std::size_t j = 0; j < k; ++j)
    for (Index i = 0; i < n; ++i) {
      const Acc &a = ref[i * k + j];
      const S &v = theirs[j][i];
      bool same;
      double err = 0, bound = 0;
      if constexpr (std::is_same_v<Acc, long long> && !is_exact<S>) {
        if (plan.exact && pow2) {
          same = std::ldexp(double(v), e2) == double(a);
        } else {
          const double want = double(a) / scale.convert_to<double>();
          err = std::abs(double(v) - want);
          // The specification's own rounding: of a/L, and of μ when held as
          // the nearest double.
          if (!plan.exact) // the magnitudes are computed only then
            bound = plan.bound(map) * double(ref_abs[i * k + j]) / scale.convert_to<double>();
          same = plan.exact ? double(v) * scale.convert_to<double>() == double(a) : err <= bound;
        }
      } else {
        const Rational want = Rational(a) / (scale == 0 ? Rational(1) : scale);
        const Rational got = to_rational(v);
        if (plan.exact) {
          same = got == want;
        } else {
          err = std::abs((got - want).template convert_to<double>());
          bound =
              plan.bound(map) * (Rational(ref_abs[i * k + j]) / (scale == 0 ? Rational(1) : scale))
                                    .template convert_to<double>();
          same = err <= bound;
        }
      }
      ++c.compared;
      if (!plan.exact && bound > 0 && err / bound > c.max_error / std::max(c.bound, 1e-300)) {
        c.max_error = err;
        c.bound = bound;
      }
      if (same) continue;
      if (c.differing++ == 0) {
        c.probe = first + j;
        std::ostringstream os;
        os << what << " of probe " << first + j << " at " << multi_index(space.multi(i), {})
           << ": implemented " << value_text(v) << ", specified "
           << value_text(Rational(a) / (scale == 0 ? Rational(1) : scale));
        if (!plan.exact)
          os << " (error " << number_text(err) << " > bound " << number_text(bound) << ")";
        c.first = os.str();
      }
      if (first + j == c.probe) c.points.push_back(i);
    }
}

// Probe j of `v` (n points) in the implementation's scalars, into f.
template <class S>
const Function<S> &probe_vector(Function<S> &f, const Probes &pr, const std::vector<long long> &v,
                                Index n, std::size_t j) {
  f.resize(n);
  for (Index i = 0; i < n; ++i) f[i] = S(pr.at(v, i, j));
  return f;
}

// The specification's values of one map on probe j, exactly.
template <class Acc>
std::vector<Rational> probe_values(const std::vector<Acc> &v, const Rational &scale, Index n,
                                   std::size_t k, std::size_t j) {
  std::vector<Rational> out(n);
  for (Index i = 0; i < n; ++i) out[i] = Rational(v[i * k + j]) / (scale == 0 ? 1 : scale);
  return out;
}

template <class S>
std::vector<Function<S>> call_each(std::size_t k, Index n, const std::string &what,
                                   const std::function<Function<S>(std::size_t)> &call) {
  std::vector<Function<S>> out;
  for (std::size_t j = 0; j < k; ++j) {
    out.push_back(call(j));
    require(out.back().size() == n, what, " returned ", out.back().size(), " values, expected ", n);
  }
  return out;
}

// The probes of CONF-EQUAL, pass by pass: f(pr, first) with the pass's
// pr.k probes, the first of them probe `first` of the check. Each pass
// draws its own (the first from the check's seed), into the one `pr` (see
// make_probes).
template <class F>
void for_each_pass(const SpanRows &rows, const ProbePlan &plan, std::size_t per_pass, bool bias,
                   std::uint64_t seed, F &&f) {
  Probes pr;
  for (std::size_t first = 0; first < plan.k; first += per_pass) {
    make_probes(pr, rows, std::min(per_pass, plan.k - first), plan.r, bias,
                seed ^ fnv1a("CONF-EQUAL") ^ first);
    f(static_cast<const Probes &>(pr), first);
  }
}

// The plan of a check of `spec` whose implementation computes in `dtype`.
inline ProbePlan plan_for(const io::LayerDescription &spec, const RowsProfile &pf, Dtype dtype,
                          const EqualOptions &eo) {
  const auto &ex = spec.source.extents();
  return plan_probes(pf, dtype, eo.probes,
                     ex.empty() ? 1 : *std::max_element(ex.begin(), ex.end()));
}

template <ForwardLayer L, class Acc>
Report equal_rows(const io::LayerDescription &spec, const L &impl, const SpanRows &rows,
                  const ProbePlan &plan, const Rational &scale, const EqualOptions &eo,
                  std::uint64_t seed, const std::string &subject) {
  using S = typename L::scalar_type;
  Report rep;
  const Index nx = impl.source_size(), ny = impl.target_size(), np = impl.parameter_size();
  const std::size_t k = plan.k, per_pass = probes_per_pass(nx, ny, np, k);
  const SpaceShapes sh = shapes_of(spec);
  MapComparison cf, ct, cg;
  std::string where;
  // Reused by every pass (see make_probes).
  SpecValues<Acc> v;
  Function<S> wj, xj, gj;
  for_each_pass(rows, plan, per_pass, spec.bias, seed, [&](const Probes &pr, std::size_t first) {
    const std::size_t n = pr.k;
    evaluate(v, rows, pr, scale, Layer<L>, !plan.exact);
    const auto fwd = call_each<S>(n, ny, "apply(w, x)", [&](std::size_t j) {
      return impl.apply(probe_vector(wj, pr, pr.w, np, j), probe_vector(xj, pr, pr.x, nx, j));
    });
    const bool had = cf.differing > 0;
    compare_map(cf, fwd, v.y, v.y_abs, scale, ny, plan, 0, first, spec.target, "output");
    if (!had && cf.differing && eo.localise && !spec.bias) {
      const std::size_t j = cf.probe - first;
      std::vector<long long> wv(np), xv(nx);
      for (Index p = 0; p < np; ++p) wv[p] = pr.at(pr.w, p, j);
      for (Index i = 0; i < nx; ++i) xv[i] = pr.at(pr.x, i, j);
      const Localisation l =
          localise(impl, rows, sh, wv, xv, fwd[j], probe_values(v.y, scale, ny, n, j), cf.points,
                   plan.r, plan.exact ? 0.0 : plan.bound(0), seed ^ fnv1a("CONF-EQUAL localise"));
      where = to_text(l, sh, eo.max_differences);
    }
    if constexpr (Layer<L>) {
      const auto tr = call_each<S>(n, nx, "apply_transpose(w, g)", [&](std::size_t j) {
        return impl.apply_transpose(probe_vector(wj, pr, pr.w, np, j),
                                    probe_vector(gj, pr, pr.g, ny, j));
      });
      compare_map(ct, tr, v.x, v.x_abs, scale, nx, plan, 1, first, spec.source, "transpose");
      const auto gr = call_each<S>(n, np, "parameter_gradient(x, g)", [&](std::size_t j) {
        return impl.parameter_gradient(probe_vector(xj, pr, pr.x, nx, j),
                                       probe_vector(gj, pr, pr.g, ny, j));
      });
      compare_map(cg, gr, v.p, v.p_abs, scale, np, plan, 2, first, spec.parameters, "gradient");
    }
  });
  if (cf.differing && !eo.localise)
    where = "not localised: probe files answer only the probes written (pm::check_layer and "
            "pmach.check localise)";
  else if (cf.differing && spec.bias)
    where = "not localised: the layer has a bias";
  std::ostringstream basis;
  basis << k << " probes with integers in [-" << plan.r << ", " << plan.r << "] at full size ("
        << nx << " -> " << ny << " with " << np << " parameters): a difference is missed with "
        << "probability <= (2/" << 2 * plan.r + 1 << ")^" << k << " = " << number_text(plan.miss())
        << "; " << plan.how;
  auto add = [&](const char *law, const MapComparison &c, std::string more, int map) {
    LawResult r{law,     subject,    c.differing ? Status::failed : Status::passed,
                k,       plan.exact, c.max_error,
                c.bound, seed,       "",
                true};
    r.detail = c.differing ? std::to_string(c.differing) + " of " + std::to_string(c.compared) +
                                 " compared values differ; the first: " + c.first +
                                 (more.empty() ? "" : "\n  " + more) + "\n  (" + basis.str() + ")"
                           : basis.str();
    // A map without a finite bound compared nothing: never passed.
    // A bound of 1 or more lets even 0 pass: that map decided nothing.
    if (!plan.exact && !plan.decides(map)) {
      r.status = Status::too_weak;
      r.detail = "not compared: this map's relative bound (γ_n + the weights' allowance) is not "
                 "below 1 in " +
                 std::string(dtype_name(plan.dtype)) + "; use float64 or a smaller layer (" +
                 basis.str() + ")";
    }
    rep.add(std::move(r));
  };
  add("CONF-EQUAL forward", cf, where, 0);
  if constexpr (Layer<L>) {
    add("CONF-EQUAL transpose", ct, "", 1);
    add("CONF-EQUAL gradient", cg, "", 2);
  } else {
    for (const char *law : {"CONF-EQUAL transpose", "CONF-EQUAL gradient"})
      rep.add({law, subject, Status::not_applicable, 0, true, 0, 0, seed,
               eo.localise ? "the implementation has only a forward pass (apply)"
                           : "probe files give these probes' outputs y only (grad_w.npy is "
                             "summed over the batch): the SAMPLE grad_x and grad_w rows "
                             "compare the adjoints",
               false});
  }
  return rep;
}

} // namespace validation

// CONF-EQUAL: the implementation against the specification, given by its
// rows, at full size (see the top of this file); `spec` gives the shapes
// (its span is not read).
template <ForwardLayer L>
Report check_equal(const io::LayerDescription &spec, const SpanRows &rows, const L &impl,
                   std::uint64_t seed, const std::string &subject = "implementation",
                   const EqualOptions &eo = {}) {
  using namespace validation;
  const RowsProfile pf = profile(rows);
  const Dtype dtype = eo.dtype.value_or(dtype_of<typename L::scalar_type>());
  const ProbePlan plan = plan_for(spec, pf, dtype, eo);
  if (plan.weak) {
    Report rep;
    for (const char *law : {"CONF-EQUAL forward", "CONF-EQUAL transpose", "CONF-EQUAL gradient"})
      rep.add({law, subject, Status::too_weak, 0, false, 0, 0, seed,
               "not compared: " + plan.how + ": no map's relative bound is below 1 in " +
                   dtype_name(dtype) + "; use float64 or a smaller layer",
               false});
    return rep;
  }
  // int64 holds every sum when fan·max|μ|·L·r² < 2^62.
  const Rational most =
      Rational(pf.fan) * std::max(pf.max_weight, Rational(1)) * pf.scale * plan.r * plan.r;
  if (pf.scale != 0 && most < Rational(boost::multiprecision::cpp_int(1) << 62))
    return equal_rows<L, long long>(spec, impl, rows, plan, pf.scale, eo, seed, subject);
  return equal_rows<L, Rational>(spec, impl, rows, plan, Rational(1), eo, seed, subject);
}

// The inputs (w, x) that check_equal feeds an implementation of `spec`
// computing in eo.dtype (float64 if unset), in order, without evaluating
// the specification: `pmach probe` writes them for a framework to answer.
template <class F>
void equal_probes(const io::LayerDescription &spec, const SpanRows &rows, std::uint64_t seed,
                  const EqualOptions &eo, F &&f) {
  using namespace validation;
  const ProbePlan plan = plan_for(spec, profile(rows), eo.dtype.value_or(Dtype::float64), eo);
  if (plan.weak) return; // check_equal calls nothing either
  const Index nx = rows.source(), ny = rows.target(), np = rows.parameters();
  Function<double> w, x;
  for_each_pass(rows, plan, probes_per_pass(nx, ny, np, plan.k), spec.bias, seed,
                [&](const Probes &pr, std::size_t) {
                  for (std::size_t j = 0; j < pr.k; ++j)
                    f(probe_vector(w, pr, pr.w, np, j), probe_vector(x, pr, pr.x, nx, j));
                });
}

// The same with the description's own rows.
template <ForwardLayer L>
Report check_equal(const io::LayerDescription &spec, const L &impl, std::uint64_t seed,
                   const std::string &subject = "implementation", const EqualOptions &eo = {}) {
  return check_equal(spec, *io::rows_of(spec), impl, seed, subject, eo);
}

} // namespace pm
