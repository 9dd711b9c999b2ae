#pragma once
// Comparing another framework's samples of a machine with the reference
// (`pmach check MACHINE.json --against DIR`). DIR holds .npy files in the
// batch layout of docs/formats.md §1:
//   y0.npy, z0.npy (optional: zero)    the inputs
//   w.npy (optional: the weights)      the parameters
//   y.npy, z.npy                       their solution of the machine equation
//   gy.npy, gz.npy (one may be absent) gradients of a loss at (y, z)
//   grad_y0.npy, grad_z0.npy           their cotangents ȳ, z̄
//   grad_w.npy (optional)              their ∂ℓ/∂w, summed over the batch
// The reference runs in double. Each compared value gets a bound that adds
// the rounding of both computations and propagates it through the machine
// (docs/tolerances.md, "Validator"): the local errors, γ_{m+2}(u) times the
// sum of |terms| of each y (m the largest fan-in) and γ_{1+c}(u) |z| of
// each z (c ulps for evaluating σ), are carried through the solver by the
// absolute machine — |μ|, |w̃|, and σ replaced by its Lipschitz constant —
// which bounds how an error at one level reaches the later ones. The
// backward bound does the same on the dual machine, with the slopes' error
// |σ''| e_y. A σ without such constants (relu's σ' jumps; a polynomial is
// not globally Lipschitz) gets forward rows only, or none.
#include <filesystem>

#include "pm/io/machine_format.hpp"
#include "pm/validate/samples.hpp"

namespace pm {

namespace validation {

// What the bound needs to know of σ: Lipschitz constants of σ and σ' (< 0:
// unknown) and the accuracy of its evaluation in ulps of |σ(y)|.
struct SigmaConstants {
  double lipschitz = -1, lipschitz_derivative = -1, ulps = 0;
};

inline SigmaConstants sigma_constants(const std::string &name) {
  // tanh'' and sigmoid'' are at most 4/(3√3) < 0.77 and 1/(6√3) < 0.0963;
  // softplus'' = sigmoid' ≤ 1/4. Library tanh, exp and log1p are taken to be
  // accurate to 4 ulps.
  if (name == "identity") return {1, 0, 0};
  if (name == "array") return {1, 0, 1}; // slopes handled per point
  if (name == "relu") return {1, -1, 0};
  if (name == "tanh") return {1, 0.77, 4};
  if (name == "sigmoid") return {0.25, 0.0963, 4};
  if (name == "softplus") return {1, 0.25, 4};
  return {};
}

} // namespace validation

namespace validation {

// The derived error bounds of another computation of a machine against the
// reference in double (docs/tolerances.md, "Validator"), for one weight
// vector and a batch: forward (y, z), backward (ȳ, z̄) and the weight
// gradient. The machine samples of a directory and check_machine on a
// floating-point implementation share them.
struct MachineBound {
  using B = Batch<double>;
  const GradedSpanMachine<double> &m;
  SigmaConstants k;
  B lip; // Lipschitz slopes per point: the array's |s|, else the constant
  ParametricSpan<double> abs_span;
  std::size_t fan, rounds;
  double slack;
  static constexpr double u_r = 0x1p-53; // the reference's unit roundoff

  // γ_n as a factor of a bound: +∞ where γ_n ≥ 1 (n u ≥ 1/2), which allows
  // any answer of the right size (docs/formats.md §4), so that every bound
  // it enters is not finite and its row "too weak", never passed.
  static double bounding_gamma(double n, double u) {
    const double g = gamma(n, u);
    return bound_is_meaningful(g) ? g : std::numeric_limits<double>::infinity();
  }

  MachineBound(const io::MachineDescription &d, const GradedSpanMachine<double> &machine)
      : m(machine), k(sigma_constants(d.sigma.name)),
        lip(m.size(), 1, k.lipschitz), abs_span{Span<double>{m.span().span.s, m.span().span.t,
                                                             magnitude(m.span().span.mu)},
                                                m.span().pi},
        fan(std::max(max_fibre(m.span().span.t), max_fibre(m.span().span.s))),
        rounds(m.levels() * (fan + 3) + 8), // the bound's own rounding chain
        slack(1 + bounding_gamma(double(rounds), u_r)) {
    if (d.sigma.name == "array")
      for (Index i = 0; i < m.size(); ++i) lip(i, 0) = std::abs(d.sigma.slopes[i]);
  }
  bool has_forward() const { return k.lipschitz >= 0; }
  bool has_backward() const { return k.lipschitz_derivative >= 0; }

  // Bounds on |theirs − reference| of y and z: the local errors of both
  // computations carried through the absolute machine.
  MachineState<double> forward_error(const Function<double> &w, const B &y0, const B &z0,
                                     const MachineState<double> &x, const B &z_t,
                                     double u_t) const {
    const Index n = m.size(), cols = y0.cols;
    const Function<double> abs_wc = magnitude(clean(m.span(), m.grading(), w));
    B ly(n, cols), lz(n, cols);
    auto local = [&](double u, const B &z) {
      for (Index b = 0; b < cols; ++b) {
        const Function<double> terms = act(abs_span, abs_wc, magnitude(z.column(b)));
        for (Index i = 0; i < n; ++i) {
          ly(i, b) += bounding_gamma(double(fan + 2), u) * (std::abs(y0(i, b)) + terms[i]);
          lz(i, b) +=
              bounding_gamma(1 + k.ulps, u) * (std::abs(z0(i, b)) + std::abs(z(i, b) - z0(i, b)));
        }
      }
    };
    local(u_t, z_t);
    local(u_r, x.z);
    const GradedSpanMachine<double> abs_m(m.grading(), abs_span, Sigma<double>::array(lip));
    MachineState<double> e = forward(abs_m, magnitude(w), ly, lz);
    for (double &v : e.y.data) v *= slack;
    for (double &v : e.z.data) v *= slack;
    return e;
  }

  // Bounds on the cotangents: the dual machine z̄ = g_z + L_w̃ᵀ ȳ,
  // ȳ = g_y + σ'(y) ⊙ z̄ with absolute weights and slopes |σ'(y)| + δs, δs
  // bounding their slope error. Returned as a state: y bounds z̄, z bounds ȳ.
  MachineState<double> backward_error(const Function<double> &w, const MachineState<double> &x,
                                      const MachineState<double> &e, const B &gy, const B &gz,
                                      const Gradients<double> &g, const B &yb_t, const B &zb_t,
                                      double u_t) const {
    const Index n = m.size(), cols = gy.cols;
    const Function<double> abs_wc = magnitude(clean(m.span(), m.grading(), w));
    B slopes(n, cols), ls(n, cols), lyb(n, cols);
    for (Index b = 0; b < cols; ++b)
      for (Index i = 0; i < n; ++i) {
        const double s = m.sigma().derivative(x.y(i, b), i, b);
        const double ds = k.lipschitz_derivative * e.y(i, b) +
                          bounding_gamma(1 + k.ulps, u_t + u_r) * std::abs(s);
        slopes(i, b) = std::abs(s) + ds;
        lyb(i, b) = ds * std::abs(zb_t(i, b));
      }
    const ParametricSpan<double> abs_t = transpose(abs_span);
    for (const auto &[u, yb, zb] : {std::tuple{u_t, &yb_t, &zb_t}, std::tuple{u_r, &g.y0, &g.z0}})
      for (Index b = 0; b < cols; ++b) {
        const Function<double> terms = act(abs_t, abs_wc, magnitude(yb->column(b)));
        for (Index i = 0; i < n; ++i) {
          ls(i, b) += bounding_gamma(double(fan + 2), u) * (std::abs(gz(i, b)) + terms[i]);
          lyb(i, b) +=
              bounding_gamma(2.0, u) * (std::abs(gy(i, b)) + slopes(i, b) * std::abs((*zb)(i, b)));
        }
      }
    const GradedSpanMachine<double> abs_dual(m.grading().reversed(), abs_t,
                                             Sigma<double>::array(slopes));
    MachineState<double> eb = forward(abs_dual, magnitude(w), ls, lyb); // y: z̄, z: ȳ
    for (double &v : eb.y.data) v *= slack;
    for (double &v : eb.z.data) v *= slack;
    return eb;
  }

  // The bound on ∂ℓ/∂w = Σ_b π_!^μ(s*z · t*ȳ): errors e_z, e_ȳ of the
  // factors, plus the rounding of a sum of B · (largest π-fibre)
  // three-factor products; zero on the parameters that cleaning removes
  // (their gradient must be 0).
  Function<double> gradient_error(const MachineState<double> &x, const Gradients<double> &g,
                                  const MachineState<double> &e, const MachineState<double> &eb,
                                  double u_t) const {
    const Index cols = x.z.cols;
    Function<double> bound(m.parameters(), 0.0);
    const double gw_gamma = bounding_gamma(double(cols * max_fibre(m.span().pi) + 2), u_t + u_r);
    for (Index b = 0; b < cols; ++b) {
      const Function<double> az = magnitude(x.z.column(b)), ayb = magnitude(g.y0.column(b));
      const Function<double> ez = e.z.column(b), eyb = eb.z.column(b);
      bound = add(bound, parameter_gradient(abs_span, ez, add(ayb, eyb)));
      bound = add(bound, parameter_gradient(abs_span, az, eyb));
      bound = add(bound, scale(gw_gamma, parameter_gradient(abs_span, add(az, ez), add(ayb, eyb))));
    }
    for (double &v : bound) v *= slack;
    return clean(m.span(), m.grading(), bound);
  }
};

inline Report machine_sample_rows(const io::MachineDescription &d, const std::string &dir,
                                  const std::string &subject) {
  using B = Batch<double>;
  namespace fs = std::filesystem;
  auto path = [&](const char *f) { return (fs::path(dir) / f).string(); };
  auto present = [&](const char *f) { return fs::exists(path(f)); };
  require(fs::is_directory(dir), dir, ": expected a directory of .npy samples");
  require(present("y0.npy"), path("y0.npy"), ": expected the inputs of the samples");
  const io::NpyArray y0a = io::read_npy(path("y0.npy"));
  const B y0 = io::batch_from_npy<double>(y0a, d.space, path("y0.npy"));
  const Index n = y0.rows, cols = y0.cols;
  auto batch = [&](const char *f) {
    return present(f) ? io::batch_from_npy<double>(io::read_npy(path(f)), d.space, path(f), cols)
                      : B(n, cols);
  };
  const B z0 = batch("z0.npy");
  Function<double> w;
  if (present("w.npy")) {
    w = io::function_from_npy<double>(io::read_npy(path("w.npy")), d.parameters, path("w.npy"));
  } else {
    require(d.weights.has_value(), path("w.npy"),
            ": expected the parameters (the machine file has no 'weights')");
    w = *d.weights;
  }
  const GradedSpanMachine<double> m = io::make_machine<double>(d);
  // The reference and its bounds are a few evaluations in double: bounded as
  // one (docs/formats.md §5.2).
  io::require_evaluation(
      {d.space.size(), d.space.size(), m.span().apex(), d.parameters.size(), m.levels()}, cols,
      false, path("y0.npy"));
  const MachineBound bound(d, m);
  Report rep;
  auto not_applicable = [&](const std::string &what, const std::string &why) {
    rep.add({"SAMPLE " + what, subject, Status::not_applicable, 0, false, 0, 0, 0, why});
  };
  if (!bound.has_forward()) {
    not_applicable("*", "sigma " + d.sigma.name + " has no global Lipschitz constant");
    return rep;
  }
  if (!present("y.npy") || !present("z.npy")) {
    not_applicable("y, z", "expected y.npy and z.npy in " + dir);
    return rep;
  }
  const io::NpyArray ya = io::read_npy(path("y.npy")), za = io::read_npy(path("z.npy"));
  const B y_t = io::batch_from_npy<double>(ya, d.space, path("y.npy"), cols);
  const B z_t = io::batch_from_npy<double>(za, d.space, path("z.npy"), cols);
  const double u_t = unit_roundoff(ya.dtype);

  const MachineState<double> x = forward(m, w, y0, z0);
  const MachineState<double> e = bound.forward_error(w, y0, z0, x, z_t, u_t);
  rep.add(compare_to_bound("y", subject, ya, x.y.data, e.y.data, n, &d.space));
  rep.add(compare_to_bound("z", subject, za, x.z.data, e.z.data, n, &d.space));

  if (!present("gy.npy") && !present("gz.npy")) return rep;
  if (!bound.has_backward()) {
    not_applicable("grad_*", "sigma " + d.sigma.name + " has a discontinuous derivative");
    return rep;
  }
  if (!present("grad_y0.npy") || !present("grad_z0.npy")) {
    not_applicable("grad_*", "expected grad_y0.npy and grad_z0.npy in " + dir);
    return rep;
  }
  const B gy = batch("gy.npy"), gz = batch("gz.npy");
  const io::NpyArray gya = io::read_npy(path("grad_y0.npy")),
                     gza = io::read_npy(path("grad_z0.npy"));
  const B yb_t = io::batch_from_npy<double>(gya, d.space, path("grad_y0.npy"), cols);
  const B zb_t = io::batch_from_npy<double>(gza, d.space, path("grad_z0.npy"), cols);
  const Gradients<double> g = backward(m, w, x, gy, gz);
  const MachineState<double> eb = bound.backward_error(w, x, e, gy, gz, g, yb_t, zb_t, u_t);
  rep.add(compare_to_bound("grad_y0", subject, gya, g.y0.data, eb.z.data, n, &d.space));
  rep.add(compare_to_bound("grad_z0", subject, gza, g.z0.data, eb.y.data, n, &d.space));

  if (!present("grad_w.npy")) {
    rep.add({"SAMPLE grad_w", subject, Status::not_applicable, 0, false, 0, 0, 0,
             "absent: grad_w.npy is not in " + dir});
    return rep;
  }
  const io::NpyArray gwa = io::read_npy(path("grad_w.npy"));
  io::function_from_npy<double>(gwa, d.parameters, path("grad_w.npy"));
  rep.add(compare_to_bound("grad_w", subject, gwa, g.w, bound.gradient_error(x, g, e, eb, u_t),
                           m.parameters(), &d.parameters));
  return rep;
}

inline constexpr const char *machine_sample_files[] = {
    "y0.npy", "z0.npy", "w.npy",       "y.npy",       "z.npy",
    "gy.npy", "gz.npy", "grad_y0.npy", "grad_z0.npy", "grad_w.npy"};

} // namespace validation

// The rows of machine_sample_rows, then a warning per unknown file, and the
// failing SAMPLES row when no output tensor was compared.
inline Report compare_machine_samples(const io::MachineDescription &d, const std::string &dir,
                                      const std::string &subject) {
  using namespace validation;
  Report rep = machine_sample_rows(d, dir, subject);
  std::size_t compared = 0;
  for (const auto &r : rep.results) compared += r.status != Status::not_applicable;
  sample_verdicts(rep, {}, compared, dir, subject);
  unknown_files(rep, dir, machine_sample_files, subject);
  return rep;
}

} // namespace pm
