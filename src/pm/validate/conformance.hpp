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
#include "pm/validate/layer_laws.hpp"
#include "pm/validate/span_diff.hpp"

namespace pm {

namespace validation {

inline LawResult row(const std::string &law, const std::string &subject, Status status,
                     std::size_t cases, std::uint64_t seed, std::string detail) {
  return {law, subject, status, cases, true, 0, 0, seed, std::move(detail), false};
}

inline std::string sizes_text(Index x, Index y, Index p) {
  return std::to_string(x) + " → " + std::to_string(y) + " with " + std::to_string(p) +
         " parameters";
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

// The CONF-RECOVER and CONF-SPAN-DIFF rows of a recovery against an
// intended span.
template <class S>
void conformance_rows(Report &rep, const Recovery<S> &rec, const ParametricSpan<Rational> &intended,
                      const SpaceShapes &shapes, const std::string &subject,
                      const ValidateOptions &opt, const std::string &prefix = "") {
  const std::string cost = std::to_string(rec.calls) + " calls of " + rec.via;
  if (rec.status == RecoveryStatus::refused) {
    rep.results.push_back(
        row("CONF-RECOVER", subject, Status::not_applicable, 0, opt.seed, prefix + rec.detail));
    rep.results.push_back(row("CONF-SPAN-DIFF", subject, Status::not_applicable, 0, opt.seed,
                              "no recovered span (CONF-RECOVER refused)"));
    return;
  }
  if (rec.status != RecoveryStatus::recovered) {
    rep.results.push_back(
        row("CONF-RECOVER", subject,
            rec.status == RecoveryStatus::too_weak ? Status::too_weak : Status::failed, rec.calls,
            opt.seed, prefix + rec.detail + " (" + cost + ")"));
    rep.results.push_back(row("CONF-SPAN-DIFF", subject, Status::not_applicable, 0, opt.seed,
                              "no recovered span (CONF-RECOVER " +
                                  std::string(recovery_status_name(rec.status)) + ")"));
    return;
  }
  LawResult r = row("CONF-RECOVER", subject, Status::passed, rec.calls, opt.seed,
                    prefix + cost + ", " + std::to_string(rec.span.apex()) + " coefficients" +
                        (rec.exact ? ", exact" : ", not exact"));
  r.exact = rec.exact;
  r.bound = rec.tolerance;
  rep.results.push_back(r);
  const SpanDiff d = span_diff(intended, rec.span, shapes);
  Status st = d.same() ? Status::passed : Status::failed;
  if (d.same() && d.compared == 0) st = Status::too_weak;
  rep.results.push_back(
      row("CONF-SPAN-DIFF", subject, st, d.compared, opt.seed, prefix + to_text(d)));
  if (!d.same())
    rep.results.back().counterexample = difference_counterexample(intended, rec.span, shapes, d);
}

// With a bias the span's source is X ⊔ {•}, flat: the bias point is last.
inline SpaceShapes shapes_of(const io::LayerDescription &d) {
  return {d.bias ? Shape({d.source.size() + 1}) : d.source, d.target, d.parameters, {}, {}, {}};
}

} // namespace validation

// The shapes of a model's spaces, for its counterexamples.
inline CaseShapes case_shapes(const io::LayerDescription &d) {
  return {d.source.extents(), d.target.extents(), d.parameters.extents()};
}
inline CaseShapes case_shapes(const io::MachineDescription &d) {
  return {d.space.extents(), d.space.extents(), d.parameters.extents()};
}

namespace validation {} // namespace validation

// The laws on the implementation, then its recovered span against the
// specification's.
template <ForwardLayer L>
Report check_layer(const io::LayerDescription &spec, const L &implementation,
                   const ValidateOptions &opt, const std::string &subject = "implementation",
                   const RecoverOptions &recover = {}) {
  using namespace validation;
  Report rep;
  const Index x = implementation.source_size(), y = implementation.target_size(),
              p = implementation.parameter_size();
  if (x != spec.source.size() || y != spec.target.size() || p != spec.parameters.size()) {
    rep.results.push_back(
        row("CONF-SPAN-DIFF", subject, Status::failed, 0, opt.seed,
            "the implementation is " + sizes_text(x, y, p) + ", " + spec.file + " specifies " +
                sizes_text(spec.source.size(), spec.target.size(), spec.parameters.size())));
    return rep;
  }
  if constexpr (Layer<L>) {
    ValidateOptions shaped = opt;
    shaped.shapes = case_shapes(spec);
    rep = validate(implementation, subject, shaped);
  } else {
    const char *why = "the implementation has only a forward pass (apply)";
    rep.results.push_back(row("PSPAN-ADJOINT", subject, Status::not_applicable, 0, opt.seed, why));
    rep.results.push_back(row("PSPAN-GRADIENT", subject, Status::not_applicable, 0, opt.seed, why));
  }
  RecoverOptions ro = recover;
  ro.seed = opt.seed;
  Recovery<typename L::scalar_type> rec;
  try {
    rec = recover_span(implementation, ro);
  } catch (const std::exception &e) {
    rec.status = RecoveryStatus::not_bilinear;
    rec.detail = std::string("the implementation threw: ") + e.what();
  }
  conformance_rows(rep, rec, spec.span, shapes_of(spec), subject, opt);
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
// grade order for any σ, when the implementation is a machine of finite
// depth).
template <MachineImplementation M>
std::optional<ParametricSpan<Rational>> recover_linear_part(const M &impl, Index n, Index np,
                                                            std::size_t &calls, std::string &why) {
  using S = typename M::scalar_type;
  if (n > max_machine_recovery || n * n * np > (Index{1} << 24)) {
    why = "the linear part was not recovered: " + std::to_string(np) + " parameters on " +
          std::to_string(n) + " points is above the bound (|I| ≤ " +
          std::to_string(max_machine_recovery) + ", |I|²|P| ≤ 2^24); shrink the machine";
    return std::nullopt;
  }
  CoefficientMap c;
  Batch<S> y0(n, n), z0(n, n);
  for (Index i = 0; i < n; ++i) z0(i, i) = S(1);
  for (Index p = 0; p < np; ++p) {
    const auto [y, z] = impl.forward(basis<S>(np, p), y0, z0);
    ++calls;
    if (y.rows != n || y.cols != n || z.rows != n || z.cols != n) {
      why = "the linear part was not recovered: forward returned batches of the wrong shape";
      return std::nullopt;
    }
    Batch<Rational> Y(n, n), Z(n, n);
    for (Index k = 0; k < n * n; ++k) {
      Y.data[k] = to_rational(y.data[k]);
      Z.data[k] = to_rational(z.data[k]);
    }
    const auto L = solve_right(Z, Y);
    if (!L) {
      why = "the linear part was not recovered: the returned z of the basis probes are linearly "
            "dependent (not a machine of finite depth?)";
      return std::nullopt;
    }
    for (Index s = 0; s < n; ++s)
      for (Index t = 0; t < n; ++t)
        if ((*L)(t, s) != 0) c[{t, s, p}] = (*L)(t, s);
  }
  return span_of(c, n, n, np);
}

template <class S> Batch<S> random_batch(std::mt19937_64 &rng, Index rows, Index cols, int range) {
  UniformInt<int> code(-range, range);
  Batch<S> b(rows, cols);
  for (S &v : b.data) v = S(code(rng));
  return b;
}

template <class S>
std::string first_difference(const Batch<S> &theirs, const Batch<Rational> &ref,
                             const std::string &what) {
  if (theirs.rows != ref.rows || theirs.cols != ref.cols)
    return what + " is " + std::to_string(theirs.rows) + " × " + std::to_string(theirs.cols) +
           ", expected " + std::to_string(ref.rows) + " × " + std::to_string(ref.cols);
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

// Their output minus the reference's, when the shapes agree.
template <class S>
void add_difference(Counterexample &c, const std::string &name, const Batch<S> &theirs,
                    const Batch<Rational> &ref, const Shape &space) {
  if (theirs.rows != ref.rows || theirs.cols != ref.cols) return;
  Batch<Rational> d(ref.rows, ref.cols);
  for (Index k = 0; k < ref.data.size(); ++k) d.data[k] = to_rational(theirs.data[k]) - ref.data[k];
  c.tensors.push_back(batch_tensor(name + " − reference", d, space, true));
}

} // namespace validation

// The implementation against the reference machine of `spec` on opt.cases
// generated cases of two samples each, exactly over the rationals (σ must
// have rational values; a floating implementation is fed small integers and
// its outputs compared with ==, which holds while every partial sum stays
// below 2^53). On a forward disagreement the linear part is recovered and
// diffed.
template <MachineImplementation M>
Report check_machine(const io::MachineDescription &spec, const M &implementation,
                     const ValidateOptions &opt, const std::string &subject = "implementation") {
  using namespace validation;
  using S = typename M::scalar_type;
  Report rep;
  require(opt.cases > 0, "check_machine: cases is 0, expected at least one case");
  if (!io::is_rational_sigma(spec.sigma)) {
    const std::string why = "sigma " + spec.sigma.name +
                            " has no exact rational values: compare samples with --against";
    rep.results.push_back(
        row("CONF-MACHINE forward", subject, Status::not_applicable, 0, opt.seed, why));
    rep.results.push_back(
        row("CONF-MACHINE backward", subject, Status::not_applicable, 0, opt.seed, why));
    return rep;
  }
  const GradedSpanMachine<Rational> ref = io::make_machine<Rational>(spec);
  const Index n = ref.size(), np = ref.parameters();
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
  std::string fwd_fail, bwd_fail;
  Counterexample fwd_case, bwd_case; // the failing case and the differences
  const SpaceShapes shapes = shapes_of(spec, n, np);
  const Shape &space = shapes.source, &params = shapes.parameters;
  std::size_t fwd_cases = 0, bwd_cases = 0;
  for (std::size_t k = 0; k < opt.cases && fwd_fail.empty() && bwd_fail.empty(); ++k) {
    const Batch<Rational> wb = random_batch<Rational>(rng, np, 1, 3);
    const Function<Rational> w = wb.column(0);
    const Batch<Rational> y0 = random_batch<Rational>(rng, n, 2, 3),
                          z0 = random_batch<Rational>(rng, n, 2, 3);
    const MachineState<Rational> x = forward(ref, w, y0, z0);
    const Function<S> ws = to_s(wb).column(0);
    const auto [y, z] = implementation.forward(ws, to_s(y0), to_s(z0));
    ++fwd_cases;
    std::ostringstream where;
    where << "case " << k << " (seed " << opt.seed << "): ";
    fwd_fail = first_difference(y, x.y, "y");
    if (fwd_fail.empty()) fwd_fail = first_difference(z, x.z, "z");
    auto inputs = [&](Counterexample &c) {
      c.scalars = {{"case", std::to_string(k)}};
      c.tensors = {parameter_tensor("w", w, params), batch_tensor("y0", y0, space),
                   batch_tensor("z0", z0, space)};
    };
    if (!fwd_fail.empty()) {
      fwd_fail = where.str() + fwd_fail;
      inputs(fwd_case);
      add_difference(fwd_case, "y", y, x.y, space);
      add_difference(fwd_case, "z", z, x.z, space);
      break;
    }
    if constexpr (HasMachineBackward<M>) {
      const Batch<Rational> gy = random_batch<Rational>(rng, n, 2, 3),
                            gz = random_batch<Rational>(rng, n, 2, 3);
      const Gradients<Rational> g = backward(ref, w, x, gy, gz);
      const Gradients<S> theirs =
          implementation.backward(ws, to_s(y0), to_s(z0), to_s(gy), to_s(gz));
      ++bwd_cases;
      bwd_fail = first_difference(theirs.y0, g.y0, "grad y0");
      if (bwd_fail.empty()) bwd_fail = first_difference(theirs.z0, g.z0, "grad z0");
      if (bwd_fail.empty())
        bwd_fail = first_difference(Batch<S>::from_columns(theirs.w.size(), {theirs.w}),
                                    Batch<Rational>::from_columns(g.w.size(), {g.w}), "grad w");
      if (!bwd_fail.empty()) {
        bwd_fail = where.str() + bwd_fail;
        inputs(bwd_case);
        bwd_case.tensors.push_back(batch_tensor("g_y", gy, space));
        bwd_case.tensors.push_back(batch_tensor("g_z", gz, space));
        add_difference(bwd_case, "grad_y0", theirs.y0, g.y0, space);
        add_difference(bwd_case, "grad_z0", theirs.z0, g.z0, space);
        if (theirs.w.size() == g.w.size()) {
          Function<Rational> dw(g.w.size());
          for (Index p = 0; p < dw.size(); ++p) dw[p] = to_rational(theirs.w[p]) - g.w[p];
          bwd_case.tensors.push_back(parameter_tensor("grad_w − reference", dw, params, true));
        }
      }
    }
  }
  if (fwd_fail.empty()) {
    rep.results.push_back(
        row("CONF-MACHINE forward", subject, Status::passed, fwd_cases, opt.seed, ""));
  } else {
    std::size_t calls = 0;
    std::string why;
    const auto lin = recover_linear_part(implementation, n, np, calls, why);
    if (lin) {
      const SpanDiff d = span_diff(cleaned_span(ref.span(), ref.grading()), *lin, shapes);
      fwd_fail += "; linear part recovered in " + std::to_string(calls) +
                  " calls of forward: " + to_text(d);
      if (!d.same()) {
        const Counterexample lin_diff =
            difference_counterexample(cleaned_span(ref.span(), ref.grading()), *lin, shapes, d);
        fwd_case.tensors.insert(fwd_case.tensors.end(), lin_diff.tensors.begin(),
                                lin_diff.tensors.end());
        fwd_case.scalars.insert(fwd_case.scalars.end(), lin_diff.scalars.begin(),
                                lin_diff.scalars.end());
      }
    } else {
      fwd_fail += "; " + why;
    }
    rep.results.push_back(
        row("CONF-MACHINE forward", subject, Status::failed, fwd_cases, opt.seed, fwd_fail));
    rep.results.back().counterexample = std::move(fwd_case);
  }
  if constexpr (HasMachineBackward<M>) {
    rep.results.push_back(row("CONF-MACHINE backward", subject,
                              !bwd_fail.empty() ? Status::failed
                              : bwd_cases == 0  ? Status::not_applicable
                                                : Status::passed,
                              bwd_cases, opt.seed,
                              !bwd_fail.empty() ? bwd_fail
                              : bwd_cases == 0  ? "not run: the forward pass failed first"
                                                : ""));
    rep.results.back().counterexample = std::move(bwd_case);
  } else {
    rep.results.push_back(row("CONF-MACHINE backward", subject, Status::not_applicable, 0, opt.seed,
                              "the implementation has no backward pass"));
  }
  return rep;
}

} // namespace pm
