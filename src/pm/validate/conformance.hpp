#pragma once
// Conformance of an implementation to a specification (spec/validator.md).
// A model file is a specification: the span laws hold for it by theorem. An
// implementation — a C++ type with a forward pass, perhaps a transpose and a
// gradient, or a machine's forward and backward — is checked in two steps:
//  1. the laws on the implementation: PSPAN-BILINEAR, PSPAN-ADJOINT and
//     PSPAN-GRADIENT for a pm::Layer; for a forward-only layer the
//     bilinearity check of recovery, and the other two "not applicable";
//  2. intent: the span it implements is recovered by exact probes
//     (CONF-RECOVER) and compared with the specification by span_diff
//     (CONF-SPAN-DIFF); the difference, in multi-index coordinates, is the
//     detail of the failing row.
// A machine implementation is compared with the reference machine on
// generated cases (CONF-MACHINE); on disagreement its linear part is
// recovered and diffed with the specification's cleaned span.
#include "pm/io/machine_format.hpp"
#include "pm/machine.hpp"
#include "pm/numeric/uniform.hpp"
#include "pm/validate/equal.hpp"
#include "pm/validate/layer_laws.hpp"
#include "pm/validate/machine_laws.hpp"
#include "pm/validate/machine_samples.hpp"
#include "pm/validate/span_diff.hpp"

namespace pm {

namespace validation {

inline LawResult row(const std::string &law, const std::string &subject, Status status,
                     std::size_t cases, std::uint64_t seed, std::string detail) {
  return {law, subject, status, cases, true, 0, 0, seed, std::move(detail), false};
}

// Above these, the difference tensor is left out of a counterexample (the
// detail still lists the first differences).
inline constexpr std::size_t max_difference_entries = std::size_t{1} << 16;
inline constexpr std::size_t max_difference_size = std::size_t{1} << 24;

// The span difference as one tensor, c_implemented − c_intended on the axes
// target × source × parameter (named t…, s…, p…): the arrays of
// pmach.check. The detail lists the same differences, so it is not printed.
inline Counterexample difference_counterexample(const ParametricSpan<Rational> &intended,
                                                const ParametricSpan<Rational> &implemented,
                                                const SpaceShapes &sh, const SpanDiff &d) {
  Counterexample c;
  c.scalars = {{"differences", std::to_string(d.count)}, {"compared", std::to_string(d.compared)}};
  std::vector<std::size_t> shape;
  std::vector<std::string> axes;
  auto add = [&](const Shape &space, const std::vector<std::string> &names, const char *prefix) {
    for (std::size_t j = 0; j < space.rank(); ++j) {
      shape.push_back(space.extents()[j]);
      axes.push_back(prefix + (names.size() == space.rank() ? names[j] : std::to_string(j)));
    }
  };
  add(sh.target, sh.target_axes, "t");
  add(sh.source, sh.source_axes, "s");
  add(sh.parameters, sh.parameter_axes, "p");
  const std::size_t size = sh.target.size() * sh.source.size() * sh.parameters.size();
  if (d.count > max_difference_entries || size > max_difference_size) return c;
  CoefficientMap diff = coefficients(implemented);
  for (const auto &[k, v] : coefficients(intended)) diff[k] -= v;
  CounterexampleTensor t{"implemented − intended", shape, axes, {}, {}, false};
  for (const auto &[k, v] : diff) // ascending (y, x, p): row-major order
    if (v != 0) {
      const auto [y, x, p] = k;
      t.indices.push_back((y * sh.source.size() + x) * sh.parameters.size() + p);
      t.values.push_back(value_text(v));
    }
  c.tensors.push_back(std::move(t));
  return c;
}

// The CONF-SPAN-DIFF row of an implemented span against the intended one;
// on a difference, the difference tensor is its counterexample.
inline LawResult span_diff_row(const std::string &subject, const ParametricSpan<Rational> &intended,
                               const ParametricSpan<Rational> &implemented, const SpaceShapes &sh,
                               std::uint64_t seed = 0, const std::string &prefix = "") {
  const SpanDiff d = span_diff(intended, implemented, sh);
  Status st = d.same() ? Status::passed : Status::failed;
  if (d.same() && d.compared == 0) st = Status::too_weak;
  LawResult r = row("CONF-SPAN-DIFF", subject, st, d.compared, seed, prefix + to_text(d));
  if (!d.same()) r.counterexample = difference_counterexample(intended, implemented, sh, d);
  return r;
}

// The CONF-RECOVER and CONF-SPAN-DIFF rows of a recovery against an
// intended span.
template <class S>
void conformance_rows(Report &rep, const Recovery<S> &rec, const ParametricSpan<Rational> &intended,
                      const SpaceShapes &shapes, const std::string &subject,
                      const ValidateOptions &opt, const std::string &prefix = "") {
  const std::string cost = std::to_string(rec.calls) + " calls of " + rec.via;
  if (rec.status == RecoveryStatus::refused) {
    rep.add(row("CONF-RECOVER", subject, Status::not_applicable, 0, opt.seed, prefix + rec.detail));
    rep.add(row("CONF-SPAN-DIFF", subject, Status::not_applicable, 0, opt.seed,
                "no recovered span (CONF-RECOVER refused: " + rec.detail + ")"));
    return;
  }
  if (rec.status != RecoveryStatus::recovered) {
    rep.add(row("CONF-RECOVER", subject,
                rec.status == RecoveryStatus::too_weak ? Status::too_weak : Status::failed,
                rec.calls, opt.seed, prefix + rec.detail + " (" + cost + ")"));
    rep.add(row("CONF-SPAN-DIFF", subject, Status::not_applicable, 0, opt.seed,
                "no recovered span (CONF-RECOVER " + std::string(recovery_status_name(rec.status)) +
                    ")"));
    return;
  }
  LawResult r = row("CONF-RECOVER", subject, Status::passed, rec.calls, opt.seed,
                    prefix + cost + ", " + std::to_string(rec.span.apex()) + " coefficients" +
                        (rec.exact ? ", exact" : ", not exact"));
  r.exact = rec.exact;
  r.bound = rec.tolerance;
  rep.add(r);
  rep.add(span_diff_row(subject, intended, rec.span, shapes, opt.seed, prefix));
}

} // namespace validation

// The shapes of a model's spaces, for its counterexamples.
inline CaseShapes case_shapes(const io::LayerDescription &d) {
  return {d.source.extents(), d.target.extents(), d.parameters.extents()};
}
inline CaseShapes case_shapes(const io::MachineDescription &d) {
  return {d.space.extents(), d.space.extents(), d.parameters.extents()};
}

namespace validation {

// No check that compared nothing passes: when none of the rows that compare
// the implementation with the specification (`laws`) passed or failed, those
// that were not applicable become too weak, "not compared: " and why, and a
// report without any of them gets one such row.
inline void require_comparison(Report &rep, const std::vector<std::string> &laws,
                               const std::string &subject, std::uint64_t seed) {
  auto compares = [&](const LawResult &r) {
    return std::find(laws.begin(), laws.end(), r.law) != laws.end();
  };
  for (const LawResult &r : rep.results)
    if (compares(r) && (r.status == Status::passed || r.status == Status::failed)) return;
  bool marked = false;
  for (LawResult &r : rep.results)
    if (compares(r) && r.status != Status::too_weak) {
      r.status = Status::too_weak;
      r.detail = "not compared: " + r.detail;
      marked = true;
    } else if (compares(r)) {
      marked = true;
    }
  if (!marked)
    rep.add(row(laws.front(), subject, Status::too_weak, 0, seed,
                "not compared: no comparison of the implementation with the "
                "specification ran"));
}

// Span recovery costs |P|·|X| calls; past this it is left to CONF-EQUAL,
// which compares at any size.
inline constexpr std::size_t max_recovery_calls = std::size_t{1} << 14;

} // namespace validation

// The laws on the implementation, within opt.value_budget (unset:
// implementation_value_budget); CONF-EQUAL, its comparison with the
// specification at full size; and, where recovery is affordable, its
// recovered span against the specification's (CONF-RECOVER, CONF-SPAN-DIFF).
template <ForwardLayer L>
Report check_layer(const io::LayerDescription &spec, const L &implementation,
                   const ValidateOptions &opt, const std::string &subject = "implementation",
                   const RecoverOptions &recover = {}, const EqualOptions &equal = {}) {
  using namespace validation;
  Report rep;
  const Index x = implementation.source_size(), y = implementation.target_size(),
              p = implementation.parameter_size();
  if (x != spec.source.size() || y != spec.target.size() || p != spec.parameters.size()) {
    rep.add(row("CONF-SPAN-DIFF", subject, Status::failed, 0, opt.seed,
                "the implementation is " + sizes_text(x, y, p) + ", " + spec.file + " specifies " +
                    sizes_text(spec.source.size(), spec.target.size(), spec.parameters.size())));
    return rep;
  }
  if constexpr (Layer<L>) {
    ValidateOptions shaped = opt;
    shaped.shapes = case_shapes(spec);
    // Its laws within a budget of values: at full size each case calls the
    // implementation on every weight, and CONF-EQUAL compares at full size.
    if (!shaped.value_budget) shaped.value_budget = implementation_value_budget;
    // An implementation computing in a narrower dtype than its scalars
    // (float32 through doubles) is held to that dtype's bounds on the sums
    // it makes, at most the specification's largest fan-in, fan-out or
    // parameter use (+ 2: two product roundings; the cases' values are
    // small integers, exact in the dtype), the laws' own sums of its
    // outputs to the scalars'.
    using S = typename L::scalar_type;
    if constexpr (!is_exact<S>)
      if (equal.dtype && *equal.dtype != Dtype::exact &&
          unit_roundoff(*equal.dtype) > double(unit_roundoff<S>())) {
        shaped.unit_roundoff = std::max(shaped.unit_roundoff, unit_roundoff(*equal.dtype));
        const auto rows = io::rows_of(spec);
        shaped.narrow_terms = std::size_t(std::max({rows->max_row(), rows->max_column(),
                                                    rows->max_parameter_use()})) +
                              2;
      }
    rep = validate(implementation, subject, shaped);
  } else {
    const char *why = "the implementation has only a forward pass (apply)";
    rep.add(row("PSPAN-ADJOINT", subject, Status::not_applicable, 0, opt.seed, why));
    rep.add(row("PSPAN-GRADIENT", subject, Status::not_applicable, 0, opt.seed, why));
  }
  try {
    rep.append(check_equal(spec, implementation, opt.seed, subject, equal));
  } catch (const std::exception &e) {
    rep.add(row("CONF-EQUAL forward", subject, Status::failed, 0, opt.seed,
                std::string("the implementation threw: ") + e.what()));
  }
  RecoverOptions ro = recover;
  ro.seed = opt.seed;
  ro.max_calls = std::min(ro.max_calls, max_recovery_calls);
  Recovery<typename L::scalar_type> rec;
  try {
    rec = recover_span(implementation, ro);
  } catch (const std::exception &e) {
    rec.status = RecoveryStatus::not_bilinear;
    rec.detail = std::string("the implementation threw: ") + e.what();
  }
  // The whole span is materialised only where recovery was affordable.
  if (rec.status == RecoveryStatus::refused)
    conformance_rows(rep, rec, {}, shapes_of(spec), subject, opt);
  else
    conformance_rows(rep, rec, spec.span, shapes_of(spec), subject, opt);
  require_comparison(rep, {"CONF-EQUAL forward", "CONF-SPAN-DIFF"}, subject, opt.seed);
  return rep;
}

// A machine under test: forward(w, y0, z0) -> (y, z), one column per sample;
// optionally backward(w, y0, z0, g_y, g_z) -> Gradients (ȳ, z̄, ∂ℓ/∂w summed
// over the batch; the `sigma` field is not compared).
template <class M>
concept MachineImplementation = requires(const M &m, const Function<typename M::scalar_type> &w,
                                         const Batch<typename M::scalar_type> &b) {
  typename M::scalar_type;
  {
    m.forward(w, b, b)
    } -> std::convertible_to<
        std::pair<Batch<typename M::scalar_type>, Batch<typename M::scalar_type>>>;
};

template <class M>
concept HasMachineBackward = MachineImplementation<M> &&
    requires(const M &m, const Function<typename M::scalar_type> &w,
             const Batch<typename M::scalar_type> &b) {
  { m.backward(w, b, b, b, b) } -> std::convertible_to<Gradients<typename M::scalar_type>>;
};

namespace validation {

// The specification's linear part: the span restricted to its valid
// parameters (what the machine equation uses, y = y₀ + L_clean(w) z).
inline ParametricSpan<Rational> cleaned_span(const ParametricSpan<Rational> &a, const Grading &d) {
  const std::vector<bool> valid = valid_parameters(a, d);
  ParametricSpan<Rational> c{Span<Rational>{FinMap{a.source(), {}}, FinMap{a.target(), {}}, {}},
                             FinMap{a.parameters(), {}}};
  for (Index e = 0; e < a.apex(); ++e) {
    if (!valid[a.pi(e)]) continue;
    c.span.s.images.push_back(a.span.s(e));
    c.span.t.images.push_back(a.span.t(e));
    c.pi.images.push_back(a.pi(e));
    c.span.mu.push_back(a.span.mu[e]);
  }
  return c;
}

inline SpaceShapes shapes_of(const io::MachineDescription &d, Index n, Index p) {
  const Shape space = d.space.size() == n ? d.space : Shape({n});
  const Shape params = d.parameters.size() == p ? d.parameters : Shape({p});
  return {space, space, params, {}, {}, {}};
}

// Solves L Z = Y for L (n × n) exactly by Gauss–Jordan elimination on Zᵀ;
// nothing when Z is singular. Matrices are batches (column-major).
inline std::optional<Batch<Rational>> solve_right(const Batch<Rational> &Z,
                                                  const Batch<Rational> &Y) {
  const Index n = Z.rows;
  // Rows of the augmented system Zᵀ Lᵀ = Yᵀ: row i is (Z(·, i) | Y(·, i)).
  std::vector<std::vector<Rational>> m(n, std::vector<Rational>(2 * n));
  for (Index i = 0; i < n; ++i)
    for (Index k = 0; k < n; ++k) {
      m[i][k] = Z(k, i);
      m[i][n + k] = Y(k, i);
    }
  for (Index c = 0; c < n; ++c) {
    Index pivot = c;
    while (pivot < n && m[pivot][c] == 0) ++pivot;
    if (pivot == n) return std::nullopt;
    std::swap(m[c], m[pivot]);
    const Rational inv = 1 / m[c][c];
    for (Rational &v : m[c]) v *= inv;
    for (Index r = 0; r < n; ++r)
      if (r != c && m[r][c] != 0) {
        const Rational f = m[r][c];
        for (Index k = c; k < 2 * n; ++k) m[r][k] -= f * m[c][k];
      }
  }
  Batch<Rational> L(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index k = 0; k < n; ++k) L(k, i) = m[i][n + k]; // Lᵀ(i, k) = L(k, i)
  return L;
}

inline constexpr Index max_machine_recovery = 512; // |I| for the exact solve

// The linear part c(t, s, p) of a machine implementation: at w = e_p,
// y₀ = 0 and z₀ = e_s for every s, the machine equation gives Y = L_{e_p} Z
// with Z the returned z's, so L_{e_p} = Y Z⁻¹ (Z is unit triangular in the
// grade order for any σ with σ(0) = 0, when the implementation is a machine
// of finite depth). |P| calls of forward, each on a batch of |I| samples.
// Exact over ℚ for an exact implementation, and for a floating one whose
// outputs are exact (σ with rational values on these integer inputs, while
// the integer bound of docs/tolerances.md holds).
template <MachineImplementation M>
Recovery<typename M::scalar_type> recover_linear_part(const M &impl, Index n, Index np) {
  using S = typename M::scalar_type;
  Recovery<S> r;
  r.via = "forward";
  if (n > max_machine_recovery || n * n * np > (Index{1} << 24)) {
    r.detail = "the linear part was not recovered: " + std::to_string(np) + " parameters on " +
               std::to_string(n) + " points is above the bound (|I| ≤ " +
               std::to_string(max_machine_recovery) + ", |I|²|P| ≤ 2^24); shrink the machine";
    return r;
  }
  r.status = RecoveryStatus::not_bilinear;
  CoefficientMap c;
  Batch<S> y0(n, n), z0(n, n);
  for (Index i = 0; i < n; ++i) z0(i, i) = S(1);
  for (Index p = 0; p < np; ++p) {
    const auto [y, z] = impl.forward(basis<S>(np, p), y0, z0);
    ++r.calls;
    if (y.rows != n || y.cols != n || z.rows != n || z.cols != n) {
      r.detail = "forward returned batches of the wrong shape on the basis probes";
      return r;
    }
    Batch<Rational> Y(n, n), Z(n, n);
    for (Index k = 0; k < n * n; ++k) {
      Y.data[k] = to_rational(y.data[k]);
      Z.data[k] = to_rational(z.data[k]);
    }
    const auto L = solve_right(Z, Y);
    if (!L) {
      r.detail = "the returned z of the basis probes at parameter " + std::to_string(p) +
                 " are linearly dependent (not a machine of finite depth?)";
      return r;
    }
    for (Index s = 0; s < n; ++s)
      for (Index t = 0; t < n; ++t)
        if ((*L)(t, s) != 0) c[{t, s, p}] = (*L)(t, s);
  }
  r.status = RecoveryStatus::recovered;
  r.span = span_of(c, n, n, np);
  return r;
}

template <class S> Batch<S> random_batch(std::mt19937_64 &rng, Index rows, Index cols, int range) {
  UniformInt<int> code(-range, range);
  Batch<S> b(rows, cols);
  for (S &v : b.data) v = S(code(rng));
  return b;
}

// "" when `b` is rows × cols, else what it is.
template <class S>
std::string wrong_shape(const Batch<S> &b, Index rows, Index cols, const std::string &what) {
  if (b.rows == rows && b.cols == cols) return "";
  return what + " is " + std::to_string(b.rows) + " × " + std::to_string(b.cols) + ", expected " +
         std::to_string(rows) + " × " + std::to_string(cols);
}

template <class S>
std::string first_difference(const Batch<S> &theirs, const Batch<Rational> &ref,
                             const std::string &what) {
  if (auto bad = wrong_shape(theirs, ref.rows, ref.cols, what); !bad.empty()) return bad;
  for (Index k = 0; k < ref.data.size(); ++k) {
    const Rational t = to_rational(theirs.data[k]);
    if (t != ref.data[k]) {
      std::ostringstream os;
      os << what << " at point " << k % ref.rows << " of sample " << k / ref.rows << ": theirs "
         << t << ", reference " << ref.data[k];
      return os.str();
    }
  }
  return "";
}

// A batch (points × samples) as a tensor of shape (samples, *space); for
// the inputs of a case, kept out of the text (the differences are printed).
template <class S>
CounterexampleTensor batch_tensor(const std::string &name, const Batch<S> &b, const Shape &space,
                                  bool in_text = false) {
  std::vector<std::size_t> shape{b.cols};
  if (space.size() == b.rows)
    shape.insert(shape.end(), space.extents().begin(), space.extents().end());
  else
    shape.push_back(b.rows);
  CounterexampleTensor t = sparse_tensor(name, shape, b.data);
  t.in_text = in_text;
  return t;
}

// A function on the parameters as a tensor of their shape.
inline CounterexampleTensor parameter_tensor(const std::string &name, const Function<Rational> &w,
                                             const Shape &params, bool in_text = false) {
  CounterexampleTensor t = sparse_tensor(name, params.extents(), w);
  t.in_text = in_text;
  return t;
}

// Their output minus the reference's (exact, or rounded where the derived
// bound decides), when the shapes agree.
template <class S, class R>
void add_difference(Counterexample &c, const std::string &name, const Batch<S> &theirs,
                    const Batch<R> &ref, const Shape &space) {
  if (theirs.rows != ref.rows || theirs.cols != ref.cols) return;
  Batch<Rational> d(ref.rows, ref.cols);
  for (Index k = 0; k < ref.data.size(); ++k)
    d.data[k] = to_rational(theirs.data[k]) - to_rational(ref.data[k]);
  c.tensors.push_back(batch_tensor(name + " − reference", d, space, true));
}

// The unit roundoff of an implementation's outputs: its own, when it says
// (samples read from float32 files), else its scalar's.
template <class M> double implementation_roundoff(const M &impl) {
  using S = typename M::scalar_type;
  if constexpr (requires { impl.unit_roundoff(); })
    return impl.unit_roundoff();
  else if constexpr (is_exact<S>)
    return 0;
  else
    return std::numeric_limits<S>::epsilon() / 2;
}

// The largest magnitude of any partial sum of the forward and backward
// passes on one case, for σ = identity or relu (|σ(y)| ≤ |y|, σ' ∈ {0, 1}):
// the absolute machine on absolute inputs, and its dual. Below 1/u every
// value of a floating computation on these integer inputs is exact
// (docs/tolerances.md, "Integer probes").
template <class S> Batch<S> abs_batch(Batch<S> b) {
  for (S &x : b.data) x = magnitude(x);
  return b;
}

inline double integer_magnitude(const GradedSpanMachine<double> &m, const Function<double> &w,
                                const Batch<double> &y0, const Batch<double> &z0,
                                const Batch<double> &gy, const Batch<double> &gz) {
  const ParametricSpan<double> abs_span{
      Span<double>{m.span().span.s, m.span().span.t, magnitude(m.span().span.mu)}, m.span().pi};
  const GradedSpanMachine<double> a(m.grading(), abs_span, Sigma<double>::identity());
  const Function<double> aw = magnitude(w);
  const MachineState<double> x = forward(a, aw, abs_batch(y0), abs_batch(z0));
  const Gradients<double> g = backward(a, aw, x, abs_batch(gy), abs_batch(gz));
  double most = 0;
  for (const auto *v : {&x.y.data, &x.z.data, &g.y0.data, &g.z0.data, &g.w})
    for (double e : *v) most = std::max(most, e);
  return most;
}

template <class S> Batch<double> to_double_batch(const Batch<S> &b) {
  Batch<double> d(b.rows, b.cols);
  for (Index k = 0; k < b.data.size(); ++k) d.data[k] = to_double(b.data[k]);
  return d;
}

// The first element of `theirs` outside reference ± bound, or "";
// `infinite` is set when a bound is not finite (nothing is decided).
template <class S>
std::string first_out_of_bound(const Batch<S> &theirs, const Batch<double> &ref,
                               const Batch<double> &bound, const std::string &what,
                               bool &infinite) {
  if (auto bad = wrong_shape(theirs, ref.rows, ref.cols, what); !bad.empty()) return bad;
  for (Index k = 0; k < ref.data.size(); ++k) {
    // A bound that is not finite (∞, or ∞ · 0 in its propagation) decides
    // nothing.
    if (!std::isfinite(bound.data[k])) {
      infinite = true;
      continue;
    }
    const double err = std::abs(to_double(theirs.data[k]) - ref.data[k]);
    if (!(err <= bound.data[k]))
      return what + " at point " + std::to_string(k % ref.rows) + " of sample " +
             std::to_string(k / ref.rows) + ": theirs " + show(to_double(theirs.data[k])) +
             ", reference " + show(ref.data[k]) + ", error " + show(err) + " > bound " +
             show(bound.data[k]);
  }
  return "";
}

// The machine laws on the implementation itself, with the structure
// (grading, span, σ) of the specification: MACH-CAUSALITY, MACH-EQUATION,
// MACH-BACKWARD and MACH-PARAM-GRADIENT (machine_laws.hpp).
template <MachineImplementation M>
Report machine_laws_of(const io::MachineDescription &spec, const M &impl,
                       const ValidateOptions &opt, const std::string &subject) {
  using S = typename M::scalar_type;
  const GradedSpanMachine<S> m = io::make_machine<S>(spec);
  // validate_machine hands its backward the state of the forward call just
  // before it; the implementation's backward takes that call's inputs.
  struct Call {
    Function<S> w;
    Batch<S> y0, z0;
  } last;
  auto fwd = [&](const Function<S> &w, const Batch<S> &y0, const Batch<S> &z0) {
    last = {w, y0, z0};
    auto [y, z] = impl.forward(w, y0, z0);
    return MachineState<S>{std::move(y), std::move(z)};
  };
  if constexpr (HasMachineBackward<M>)
    return validate_machine(
        m, fwd,
        [&](const Function<S> &, const MachineState<S> &, const Batch<S> &gy, const Batch<S> &gz) {
          return Gradients<S>(impl.backward(last.w, last.y0, last.z0, gy, gz));
        },
        subject, opt);
  else
    return validate_machine(m, fwd, nullptr, subject, opt);
}

} // namespace validation

// The implementation against the reference machine of `spec` on opt.cases
// generated cases of two samples each, with small integer inputs, weights
// and cotangents:
//  - the machine laws on the implementation (validation::machine_laws_of);
//  - CONF-MACHINE forward and backward: its outputs against the reference's,
//    exactly (==) where exactness is guaranteed — an exact implementation
//    and σ with rational values, or a floating one with σ = identity or relu
//    while every partial sum stays below 1/u (integer_magnitude) — and
//    otherwise within the derived bound of the machine samples
//    (MachineBound, docs/tolerances.md "Validator"): "too weak" where that
//    bound is not finite, not applicable for a σ without one;
//  - CONF-RECOVER and CONF-SPAN-DIFF: its linear part recovered from basis
//    probes (σ with rational values; of a floating implementation, σ =
//    identity or relu) and diffed with the specification's
//    cleaned span, so that a level typo that zeroes weights is named by its
//    coefficients.
// `laws = false` leaves out the first group (probe samples hold no cases
// of the laws).
template <MachineImplementation M>
Report check_machine(const io::MachineDescription &spec, const M &implementation,
                     const ValidateOptions &options, const std::string &subject = "implementation",
                     bool laws = true) {
  using namespace validation;
  using S = typename M::scalar_type;
  Report rep;
  require(options.cases > 0, "check_machine: cases is 0, expected at least one case");
  // The laws and CONF-MACHINE within a budget of values, as check_layer's.
  ValidateOptions opt = options;
  if (!opt.value_budget) opt.value_budget = implementation_value_budget;
  const bool rational = io::is_rational_sigma(spec.sigma);
  if (is_exact<S> && !rational) {
    const std::string why = "sigma " + spec.sigma.name +
                            " has no exact rational values: an exact implementation of it "
                            "cannot be compared";
    for (const char *law : {"CONF-MACHINE forward", "CONF-MACHINE backward", "CONF-RECOVER"})
      rep.add(row(law, subject, Status::not_applicable, 0, opt.seed, why));
    require_comparison(rep, {"CONF-MACHINE forward", "CONF-SPAN-DIFF"}, subject, opt.seed);
    return rep;
  }
  if (laws) rep = machine_laws_of(spec, implementation, opt, subject);
  const GradedSpanMachine<double> md = io::make_machine<double>(spec);
  const std::optional<GradedSpanMachine<Rational>> mq =
      rational ? std::optional(io::make_machine<Rational>(spec)) : std::nullopt;
  const MachineBound bound(spec, md);
  const double u = implementation_roundoff(implementation);
  const bool integer_sigma = spec.sigma.name == "identity" || spec.sigma.name == "relu";
  // A floating implementation's outputs on the basis probes are exact
  // integers only for σ = identity or relu.
  const bool recoverable = rational && (is_exact<S> || integer_sigma);
  const Index n = md.size(), np = md.parameters();
  std::mt19937_64 rng(opt.seed ^ fnv1a("CONF-MACHINE"));
  auto to_s = [](const Batch<Rational> &b) {
    Batch<S> s(b.rows, b.cols);
    for (Index k = 0; k < b.data.size(); ++k) {
      if constexpr (is_exact<S>)
        s.data[k] = S(b.data[k]);
      else
        s.data[k] = b.data[k].template convert_to<S>();
    }
    return s;
  };
  std::string fwd_fail, bwd_fail, not_exact;
  bool fwd_weak = false, bwd_weak = false, fwd_na = false, bwd_na = false;
  Counterexample fwd_case, bwd_case; // the failing case and the differences
  const SpaceShapes shapes = shapes_of(spec, n, np);
  const Shape &space = shapes.source, &params = shapes.parameters;
  std::size_t fwd_cases = 0, bwd_cases = 0;
  // A case: the implementation's forward and backward and the reference's,
  // on two samples (parameters + 8 × points values a pass), counted as 16
  // passes: its inputs are drawn as exact rationals, and its reference is
  // exact where exactness is guaranteed. Measured on a DenseMachine
  // [256] × 4 through PyTorch: 1.6 s a case with tanh (the double reference),
  // 8.5 s with relu (exact), against 0.07 s a pass of MACH-EQUATION.
  const CaseCost cost{16, np + 8 * n, machine_size_text(n, np)};
  const std::size_t cases = scaled_cases(opt, cost);
  for (std::size_t k = 0; k < cases && fwd_fail.empty() && bwd_fail.empty(); ++k) {
    const Batch<Rational> wb = random_batch<Rational>(rng, np, 1, 3);
    const Function<Rational> w = wb.column(0);
    const Batch<Rational> y0 = random_batch<Rational>(rng, n, 2, 3),
                          z0 = random_batch<Rational>(rng, n, 2, 3),
                          gy = random_batch<Rational>(rng, n, 2, 3),
                          gz = random_batch<Rational>(rng, n, 2, 3);
    const Function<double> wd = to_double_batch(wb).column(0);
    const Batch<double> y0d = to_double_batch(y0), z0d = to_double_batch(z0),
                        gyd = to_double_batch(gy), gzd = to_double_batch(gz);
    const bool exact =
        is_exact<S> || (integer_sigma && integer_magnitude(md, wd, y0d, z0d, gyd, gzd) * u <= 1);
    if (!exact && not_exact.empty())
      not_exact = is_exact<S> || integer_sigma
                      ? "partial sums above 1/u: compared within the derived bound"
                      : "sigma " + spec.sigma.name + " is compared within the derived bound";
    std::ostringstream where;
    where << "case " << k << " (seed " << opt.seed << "): ";
    const Function<S> ws = to_s(wb).column(0);
    const auto [y, z] = implementation.forward(ws, to_s(y0), to_s(z0));
    ++fwd_cases;
    // A failing case: its inputs, ahead of the differences already recorded.
    auto inputs = [&](Counterexample &c, std::vector<CounterexampleTensor> more) {
      c.scalars = {{"case", std::to_string(k)}};
      std::vector<CounterexampleTensor> in{parameter_tensor("w", w, params),
                                           batch_tensor("y0", y0, space),
                                           batch_tensor("z0", z0, space)};
      in.insert(in.end(), more.begin(), more.end());
      c.tensors.insert(c.tensors.begin(), in.begin(), in.end());
    };
    // Their outputs minus the reference's (exact, or rounded where the bound decides).
    // (y and z are passed, not captured: clang 14 cannot capture a structured binding.)
    auto outputs = [&](const auto &ty, const auto &tz, const auto &ref) {
      add_difference(fwd_case, "y", ty, ref.y, space);
      add_difference(fwd_case, "z", tz, ref.z, space);
    };
    MachineState<double> xd, e;
    MachineState<Rational> x; // exact cases only
    if (exact) {
      x = forward(*mq, w, y0, z0);
      fwd_fail = first_difference(y, x.y, "y");
      if (fwd_fail.empty()) fwd_fail = first_difference(z, x.z, "z");
      if (!fwd_fail.empty()) outputs(y, z, x);
    } else if (!bound.has_forward()) {
      fwd_na = true;
      break;
    } else {
      // Shapes first: the bound reads their z.
      fwd_fail = wrong_shape(y, n, 2, "y");
      if (fwd_fail.empty()) fwd_fail = wrong_shape(z, n, 2, "z");
      if (fwd_fail.empty()) {
        xd = forward(md, wd, y0d, z0d);
        e = bound.forward_error(wd, y0d, z0d, xd, to_double_batch(z), u);
        fwd_fail = first_out_of_bound(y, xd.y, e.y, "y", fwd_weak);
        if (fwd_fail.empty()) fwd_fail = first_out_of_bound(z, xd.z, e.z, "z", fwd_weak);
        if (!fwd_fail.empty()) outputs(y, z, xd);
      }
    }
    if (!fwd_fail.empty()) {
      fwd_fail = where.str() + fwd_fail + (recoverable ? "; its linear part: CONF-SPAN-DIFF" : "");
      inputs(fwd_case, {});
      break;
    }
    if constexpr (HasMachineBackward<M>) {
      const Gradients<S> theirs =
          implementation.backward(ws, to_s(y0), to_s(z0), to_s(gy), to_s(gz));
      const auto theirs_w = Batch<S>::from_columns(theirs.w.size(), {theirs.w});
      ++bwd_cases;
      // Their gradients minus the reference's (exact, or rounded).
      auto gradients = [&](const auto &g) {
        add_difference(bwd_case, "grad_y0", theirs.y0, g.y0, space);
        add_difference(bwd_case, "grad_z0", theirs.z0, g.z0, space);
        if (theirs.w.size() != g.w.size()) return;
        Function<Rational> dw(g.w.size());
        for (Index q = 0; q < dw.size(); ++q)
          dw[q] = to_rational(theirs.w[q]) - to_rational(g.w[q]);
        bwd_case.tensors.push_back(parameter_tensor("grad_w − reference", dw, params, true));
      };
      if (exact) {
        const Gradients<Rational> g = backward(*mq, w, x, gy, gz);
        bwd_fail = first_difference(theirs.y0, g.y0, "grad y0");
        if (bwd_fail.empty()) bwd_fail = first_difference(theirs.z0, g.z0, "grad z0");
        if (bwd_fail.empty())
          bwd_fail = first_difference(theirs_w, Batch<Rational>::from_columns(g.w.size(), {g.w}),
                                      "grad w");
        if (!bwd_fail.empty()) gradients(g);
      } else if (!bound.has_backward()) {
        bwd_na = true;
      } else {
        for (const auto &[b, rows, cols, what] : {std::tuple{&theirs.y0, n, Index{2}, "grad y0"},
                                                  std::tuple{&theirs.z0, n, Index{2}, "grad z0"},
                                                  std::tuple{&theirs_w, np, Index{1}, "grad w"}})
          if (bwd_fail.empty()) bwd_fail = wrong_shape(*b, rows, cols, what);
        if (bwd_fail.empty()) {
          const Gradients<double> g = backward(md, wd, xd, gyd, gzd);
          const Batch<double> yb = to_double_batch(theirs.y0), zb = to_double_batch(theirs.z0);
          const MachineState<double> eb = bound.backward_error(wd, xd, e, gyd, gzd, g, yb, zb, u);
          bwd_fail = first_out_of_bound(theirs.y0, g.y0, eb.z, "grad y0", bwd_weak);
          if (bwd_fail.empty())
            bwd_fail = first_out_of_bound(theirs.z0, g.z0, eb.y, "grad z0", bwd_weak);
          if (bwd_fail.empty()) {
            const Function<double> gb = bound.gradient_error(xd, g, e, eb, u);
            bwd_fail = first_out_of_bound(theirs_w, Batch<double>::from_columns(g.w.size(), {g.w}),
                                          Batch<double>::from_columns(gb.size(), {gb}), "grad w",
                                          bwd_weak);
          }
          if (!bwd_fail.empty()) gradients(g);
        }
      }
      if (!bwd_fail.empty()) {
        bwd_fail = where.str() + bwd_fail;
        inputs(bwd_case, {batch_tensor("g_y", gy, space), batch_tensor("g_z", gz, space)});
      }
    }
  }
  auto verdict = [&](const char *law, const std::string &fail, bool weak, bool na, std::size_t ran,
                     const std::string &why_na, Counterexample &&c) {
    const Status st = !fail.empty()    ? Status::failed
                      : na || ran == 0 ? Status::not_applicable
                      : weak           ? Status::too_weak
                                       : Status::passed;
    const std::string detail = !fail.empty() ? fail
                               : na          ? "sigma " + spec.sigma.name + " has " + why_na
                               : ran == 0    ? "not run: the forward pass failed first"
                               : weak ? "the derived bound is not finite (n·u ≥ 1): nothing is "
                                        "decided; use float64 or a smaller machine"
                                      : not_exact;
    rep.add(row(law, subject, st, ran, opt.seed, detail));
    if (!fail.empty()) rep.results.back().counterexample = std::move(c);
    if ((st == Status::passed || st == Status::too_weak) && cases < opt.cases) {
      LawResult &r = rep.results.back();
      r.detail += (r.detail.empty() ? "" : "; ") + scaled_note(ran, opt, cost);
      r.cases_requested = opt.cases;
    }
  };
  verdict("CONF-MACHINE forward", fwd_fail, fwd_weak, fwd_na, fwd_cases,
          "no derived forward bound (no global Lipschitz constant)", std::move(fwd_case));
  if constexpr (HasMachineBackward<M>)
    verdict("CONF-MACHINE backward", bwd_fail, bwd_weak, bwd_na, bwd_cases,
            "no derived backward bound (a discontinuous derivative)", std::move(bwd_case));
  else
    rep.add(row("CONF-MACHINE backward", subject, Status::not_applicable, 0, opt.seed,
                "the implementation has no backward pass"));
  if (!recoverable) {
    rep.add(
        row("CONF-RECOVER", subject, Status::not_applicable, 0, opt.seed,
            "sigma " + spec.sigma.name +
                (rational ? " in floating point gives no exact outputs"
                          : " has no exact rational values") +
                ": the linear part is not recovered exactly (CONF-MACHINE compares the passes)"));
    require_comparison(rep, {"CONF-MACHINE forward", "CONF-SPAN-DIFF"}, subject, opt.seed);
    return rep;
  }
  conformance_rows(rep, recover_linear_part(implementation, n, np),
                   cleaned_span(mq->span(), mq->grading()), shapes_of(spec, n, np), subject, opt);
  require_comparison(rep, {"CONF-MACHINE forward", "CONF-SPAN-DIFF"}, subject, opt.seed);
  return rep;
}

} // namespace pm
