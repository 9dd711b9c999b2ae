// Laws of the seed's machines (spec/layers.md, SEED-*): the authors' own test
// suite at their sizes, and the same checks as properties over random dims,
// pads, timeblocks and batch sizes. Exact over Q with relu and array σ; in
// double with tanh against derived bounds (docs/tolerances.md, "Layers").
#include <cmath>
#include <functional>
#include <optional>
#include <random>

#include "pm/layers.hpp"
#include "pm/numeric/uniform.hpp"
#include "support/generators.hpp"
#include "support/law.hpp"

using namespace pm;
using pm_test::rejects;
using Q = Rational;

namespace {

// ---- inputs ----------------------------------------------------------------

// Uniform [0, 1) entries (the authors' rand) or standard normal ones (randn),
// from a fixed seed.
Batch<double> random_batch(Index rows, Index cols, std::mt19937_64 &rng, bool normal = false) {
  Batch<double> b(rows, cols);
  UniformReal<double> u(0.0, 1.0);
  Normal<double> n(0.0, 1.0);
  for (double &x : b.data) x = normal ? n(rng) : u(rng);
  return b;
}
Function<double> random_function(Index n, std::mt19937_64 &rng) {
  return random_batch(n, 1, rng, true).data;
}

// Small rationals for the properties; `nonzero` avoids relu's kink at 0.
Batch<Q> draw_batch(Index rows, Index cols, bool nonzero = false) {
  Batch<Q> b(rows, cols);
  for (Q &x : b.data) {
    x = *pm_test::scalar<Q>();
    if (nonzero && x == 0) x = Q(*pm_test::full_size(rc::gen::element(-1, 1))) / Q(2);
  }
  return b;
}

SeedDescription draw_description() {
  SeedDescription d;
  // Two channel blocks or more seven times in eight: with one block every
  // weight is invalid and the machine is trivially zero.
  const Index blocks = *pm_test::full_size(rc::gen::weightedOneOf<Index>(
      {{1, rc::gen::just(Index{1})}, {7, rc::gen::inRange<Index>(2, 4)}}));
  d.dims = *pm_test::full_size(
      rc::gen::container<std::vector<Index>>(blocks, rc::gen::inRange<Index>(1, 3)));
  switch (*pm_test::full_size(rc::gen::inRange(0, 4))) {
  case 0:
    d.kind = "DenseMachine";
    break;
  case 1:
  case 2: {
    d.kind = "ConvMachine";
    const Index r = *pm_test::full_size(rc::gen::inRange<Index>(1, 4)); // 1-D, 2-D and 3-D
    for (Index j = 0; j < r; ++j) {
      d.positions.push_back(*pm_test::full_size(rc::gen::inRange<Index>(1, r == 3 ? 3 : 5)));
      d.pad.push_back(*pm_test::full_size(rc::gen::inRange<Index>(0, r == 3 ? 2 : 3)));
      d.pad.push_back(*pm_test::full_size(rc::gen::inRange<Index>(0, r == 3 ? 2 : 3)));
    }
    break;
  }
  default:
    d.kind = "RecurMachine";
    d.positions = {*pm_test::full_size(rc::gen::inRange<Index>(1, 7))};
    d.pad = {*pm_test::full_size(rc::gen::inRange<Index>(0, 5))};
    d.timeblock = *pm_test::full_size(rc::gen::inRange<Index>(2, 5));
  }
  return d;
}

// ---- the checks, shared by the fixed-size tests and the properties ---------

// |x| entrywise, for the magnitudes Σ|terms| of the error bounds.
template <class S> Function<S> magnitude(Function<S> v) {
  for (S &x : v) x = x < S(0) ? S(-x) : x;
  return v;
}
template <class S> Batch<S> magnitude(Batch<S> b) {
  b.data = magnitude(b.data);
  return b;
}

// The most edges into one index: the length of the longest sum.
template <class S> Index max_in_degree(const Span<S> &a) {
  const Measure<S> count = pushforward(a.t, Measure<S>(a.apex(), S(1)));
  S m = S(0);
  for (const S &c : count) m = c > m ? c : m;
  return Index(m);
}

// a = b exactly over Q; in double |a − b| ≤ γ_n (ma + mb) entrywise.
template <class S>
bool agree(const Batch<S> &a, const Batch<S> &b, const Batch<S> &ma, const Batch<S> &mb, Index n) {
  if (a.rows != b.rows || a.cols != b.cols) return false;
  for (Index i = 0; i < a.data.size(); ++i) {
    if constexpr (std::is_floating_point_v<S>) {
      if (!pm_test::within_bound(a.data[i], b.data[i], ma.data[i], mb.data[i], n)) return false;
    } else if (a.data[i] != b.data[i])
      return false;
  }
  return true;
}

template <class S> Batch<S> plus(Batch<S> a, const Batch<S> &b) {
  a.data = add(a.data, b.data);
  return a;
}

// a + t · v, the point at t on the line through a along v.
template <class S> Batch<S> axpy(Batch<S> a, const S &t, const Batch<S> &v) {
  for (Index i = 0; i < a.data.size(); ++i) a.data[i] += t * v.data[i];
  return a;
}

// The two equations a sweep solves, u = u₀ + L_W̃ v (L through the category
// core's act, not the solver) and v = v₀ + h, h entrywise: forward
// (u, v) = (y, z) and h = σ(y); backward (u, v) = (z̄, ȳ), the transposed
// span and h = σ'(y) ⊙ z̄. The second equation allows two roundings: h's
// product (possibly fused with the sum) and the sum.
template <class S, class Pointwise>
bool sweep_equations(const ParametricSpan<S> &a, const Function<S> &wc, const Batch<S> &u,
                     const Batch<S> &u0, const Batch<S> &v, const Batch<S> &v0, Pointwise h) {
  const Batch<S> rhs = plus(u0, act(a, wc, v));
  const Batch<S> mag = plus(magnitude(u0), act(a, magnitude(wc), magnitude(v)));
  if (!agree(u, rhs, mag, mag, max_in_degree(a.span) + 3)) return false;
  Batch<S> w = v0, wmag = magnitude(v0);
  for (Index b = 0; b < v.cols; ++b)
    for (Index i = 0; i < v.rows; ++i) {
      const S t = h(i, b);
      w(i, b) += t;
      wmag(i, b) += t < S(0) ? S(-t) : t;
    }
  return agree(v, w, wmag, wmag, 2);
}

template <class S>
bool forward_equations(const SeedMachine<S> &m, const Function<S> &w, const Batch<S> &y0,
                       const Batch<S> &z0, const MachineState<S> &x) {
  return sweep_equations(m.machine().span(), m.clean(w), x.y, y0, x.z, z0, [&](Index i, Index b) {
    return m.machine().sigma().value(x.y(i, b), i, b);
  });
}

template <class S>
bool backward_equations(const SeedMachine<S> &m, const Function<S> &w, const MachineState<S> &x,
                        const Batch<S> &gy, const Batch<S> &gz, const Gradients<S> &g) {
  return sweep_equations(transpose(m.machine().span()), m.clean(w), g.z0, gz, g.y0, gy,
                         [&](Index i, Index b) {
                           return m.machine().sigma().derivative(x.y(i, b), i, b) * g.z0(i, b);
                         });
}

// The authors' flip: transpose W as a map of parameter indices, reversing the
// kernel of a convolution and swapping input and output channels.
std::vector<Index> flip(const SeedMachine<Q> &m) {
  const Shape P = m.parameter_shape();
  const bool reverse_kernel = m.description().kind == "ConvMachine";
  std::vector<Index> f(P.size());
  for (Index p = 0; p < P.size(); ++p) {
    auto k = P.multi(p);
    const Index r = k.size() - 2;
    std::swap(k[r], k[r + 1]);
    if (reverse_kernel)
      for (Index j = 0; j < r; ++j) k[j] = P.extents()[j] - 1 - k[j];
    f[p] = P.flat(k);
  }
  return f;
}

// The span the authors' backward filtration convolves with: the conv with
// the pads swapped (the recurrent: anti-causal, pads (0, lag)).
ParametricSpan<Q> backward_span(const SeedMachine<Q> &m) {
  const SeedDescription &d = m.description();
  if (d.kind == "DenseMachine") return m.machine().span();
  ConvSpec c =
      d.kind == "ConvMachine" ? ConvMachine<Q>::spec_of(d) : RecurMachine<Q>::spec_of(d).as_conv();
  std::swap(c.pad_lo, c.pad_hi);
  return conv<Q>(c);
}

// SEED-FLIP-CLEAN: the transposed span with π relabelled by flip is the
// authors' backward span, and flip(clean(W)) = clean'(flip(W)), clean' for
// that span and the reversed grading. `flip_of` lets the mutant skip the
// kernel reversal.
bool flip_clean(const SeedMachine<Q> &m, const Function<Q> &w,
                const std::function<std::vector<Index>(const SeedMachine<Q> &)> &flip_of) {
  const std::vector<Index> f = flip_of(m);
  ParametricSpan<Q> t = transpose(m.machine().span());
  for (Index &p : t.pi.images) p = f[p];
  const ParametricSpan<Q> back = backward_span(m);
  if (!span_isomorphism(t, back)) return false;
  auto flipped = [&](const Function<Q> &v) {
    Function<Q> out(v.size());
    for (Index p = 0; p < v.size(); ++p) out[f[p]] = v[p];
    return out;
  };
  return flipped(m.clean(w)) == clean(back, m.machine().grading().reversed(), flipped(w));
}

// ℓ = ⟨g_y, y⟩ + ⟨g_z, z⟩, a linear functional of the state.
template <class S> S loss(const MachineState<S> &x, const Batch<S> &gy, const Batch<S> &gz) {
  return dot(gy.data, x.y.data) + dot(gz.data, x.z.data);
}

// p'(0) from p(0), p(1), …, p(n) by Newton's forward differences,
// p'(0) = Σ_{k=1..n} (−1)^{k−1} Δ^k p(0) / k: exact for polynomials of
// degree ≤ n.
template <class Eval>
Q exact_derivative(Eval state_at, Index n, const Batch<Q> &gy, const Batch<Q> &gz) {
  std::vector<Q> p;
  for (Index k = 0; k <= n; ++k) p.push_back(loss(state_at(Q(int(k))), gy, gz));
  Q d = 0;
  for (Index k = 1; k <= n; ++k) {
    for (Index j = 0; j + k <= n; ++j) p[j] = p[j + 1] - p[j]; // p[0] = Δ^k p(0)
    d += (k % 2 ? Q(1) : Q(-1)) * p[0] / Q(int(k));
  }
  return d;
}

using GradientFn =
    std::function<Gradients<Q>(const SeedMachine<Q> &, const Function<Q> &, const MachineState<Q> &,
                               const Batch<Q> &, const Batch<Q> &)>;

Gradients<Q> reference_gradients(const SeedMachine<Q> &m, const Function<Q> &w,
                                 const MachineState<Q> &x, const Batch<Q> &gy, const Batch<Q> &gz) {
  return m.backward(w, x, gy, gz);
}

// SEED-GRADIENT over Q: for random directions v, ⟨cotangent, v⟩ equals the
// exact derivative of ℓ along v, for y₀, z₀, W and (array σ) the slopes.
// With an array σ the machine is linear in the state, so ℓ is affine along
// y₀ and z₀ and a polynomial of degree ≤ D (levels) along W and the slopes:
// Newton's differences at t = 0, 1, …, D give its derivative exactly. A relu
// machine equals, near a state with no pre-activation at 0, the linear machine
// with slopes relu'(y) ∈ {0, 1}, so it has the same derivatives there;
// nothing is returned when some pre-activation is exactly 0 (the kink).
std::optional<bool> exact_gradients(const SeedDescription &d, const Sigma<Q> &sigma,
                                    const Function<Q> &w, const Batch<Q> &y0, const Batch<Q> &z0,
                                    const Batch<Q> &gy, const Batch<Q> &gz,
                                    const std::vector<Batch<Q>> &v, const GradientFn &gradients) {
  const SeedMachine<Q> m = make_seed_machine(d, sigma);
  const MachineState<Q> x = m.forward(w, y0, z0);
  const Gradients<Q> g = gradients(m, w, x, gy, gz);
  Batch<Q> slopes = sigma.kind() == Sigma<Q>::Kind::array ? sigma.slopes() : x.y;
  if (sigma.kind() != Sigma<Q>::Kind::array)
    for (Q &y : slopes.data) {
      if (y == 0) return std::nullopt;
      y = y > 0 ? 1 : 0;
    }
  const SeedMachine<Q> lin = make_seed_machine(d, Sigma<Q>::array(slopes));
  const Index n = m.machine().levels();
  const Q dy =
      exact_derivative([&](Q t) { return lin.forward(w, axpy(y0, t, v[0]), z0); }, 1, gy, gz);
  const Q dz =
      exact_derivative([&](Q t) { return lin.forward(w, y0, axpy(z0, t, v[1])); }, 1, gy, gz);
  const Q dw = exact_derivative(
      [&](Q t) { return lin.forward(add(w, scale(t, v[2].data)), y0, z0); }, n, gy, gz);
  bool ok = dot(g.y0.data, v[0].data) == dy && dot(g.z0.data, v[1].data) == dz &&
            dot(g.w, v[2].data) == dw;
  if (sigma.kind() == Sigma<Q>::Kind::array) {
    const Q ds = exact_derivative(
        [&](Q t) {
          return make_seed_machine(d, Sigma<Q>::array(axpy(slopes, t, v[3]))).forward(w, y0, z0);
        },
        n, gy, gz);
    ok = ok && dot(g.sigma.data, v[3].data) == ds;
  }
  return ok;
}

// A wrong backward: the parameter gradient from the loss gradient g_y instead
// of the cotangent ȳ (right only for machines of depth 1).
Gradients<Q> gradients_from_loss(const SeedMachine<Q> &m, const Function<Q> &w,
                                 const MachineState<Q> &x, const Batch<Q> &gy, const Batch<Q> &gz) {
  Gradients<Q> g = m.backward(w, x, gy, gz);
  g.w.assign(g.w.size(), Q(0));
  for (Index b = 0; b < x.y.cols; ++b)
    g.w = add(g.w, parameter_gradient(m.machine().span(), x.z.column(b), gy.column(b)));
  g.w = m.clean(g.w);
  return g;
}

// A wrong solver: one naive step x ← x₀ + f(x₀) instead of the level sweep.
MachineState<Q> one_naive_step(const SeedMachine<Q> &m, const Function<Q> &w, const Batch<Q> &y0,
                               const Batch<Q> &z0) {
  MachineState<Q> x{plus(y0, act(m.machine().span(), m.clean(w), z0)), z0};
  for (Index b = 0; b < x.y.cols; ++b)
    for (Index i = 0; i < x.y.rows; ++i) x.z(i, b) += m.machine().sigma().value(x.y(i, b), i, b);
  return x;
}

// A wrong dual: the transposed span solved over the forward grading.
Gradients<Q> unreversed_dual(const SeedMachine<Q> &m, const Function<Q> &w,
                             const MachineState<Q> &x, const Batch<Q> &gy, const Batch<Q> &gz) {
  const GradedSpanMachine<Q> good = dual(m.machine(), x.y);
  const GradedSpanMachine<Q> bad(m.machine().grading(), good.span(), good.sigma());
  const MachineState<Q> u = forward(bad, w, gz, gy);
  return Gradients<Q>{u.z, u.y, {}, {}};
}

// ---- properties ------------------------------------------------------------

struct Drawn {
  SeedDescription d;
  Sigma<Q> sigma;
  Function<Q> w;
  Batch<Q> y0, z0, gy, gz;
  Index rows;
};

// A case is non-trivial when the machine has two channel blocks or more (so
// valid weights) and a nonzero weight.
Drawn draw_case() {
  const SeedDescription d = draw_description();
  const Index batch = *pm_test::full_size(rc::gen::inRange<Index>(1, 4));
  const SeedMachine<Q> shape = make_seed_machine(d, Sigma<Q>::relu());
  const Index rows = shape.state_shape().size();
  const Sigma<Q> sigma = *pm_test::full_size(rc::gen::arbitrary<bool>())
                             ? Sigma<Q>::relu()
                             : Sigma<Q>::array(draw_batch(
                                   rows, *pm_test::full_size(rc::gen::element<Index>(1, batch))));
  // Inputs y₀ may have fewer channels than the machine.
  const Index c = *pm_test::full_size(rc::gen::inRange<Index>(1, shape.channels() + 1));
  const Function<Q> w = draw_batch(shape.parameters(), 1).data;
  pm_test::classify(d.dims.size() > 1 && pm_test::any_nonzero(w));
  return Drawn{d,
               sigma,
               w,
               draw_batch(shape.positions() * c, batch, true),
               draw_batch(rows, batch, true),
               draw_batch(rows, batch),
               draw_batch(rows, batch),
               rows};
}

using Solver = std::function<MachineState<Q>(const SeedMachine<Q> &, const Function<Q> &,
                                             const Batch<Q> &, const Batch<Q> &)>;

void law_forward(const Solver &solve) {
  const Drawn c = draw_case();
  const SeedMachine<Q> m = make_seed_machine(c.d, c.sigma);
  const Batch<Q> y0 = m.expand_channels(c.y0, "y0");
  RC_ASSERT(forward_equations(m, c.w, y0, c.z0, solve(m, c.w, y0, c.z0)));
}

void law_backward(const GradientFn &gradients) {
  const Drawn c = draw_case();
  const SeedMachine<Q> m = make_seed_machine(c.d, c.sigma);
  const MachineState<Q> x = m.forward(c.w, c.y0, c.z0);
  RC_ASSERT(backward_equations(m, c.w, x, c.gy, c.gz, gradients(m, c.w, x, c.gy, c.gz)));
}

void law_flip_clean(const std::function<std::vector<Index>(const SeedMachine<Q> &)> &flip_of) {
  const Drawn c = draw_case();
  RC_ASSERT(flip_clean(make_seed_machine(c.d, c.sigma), c.w, flip_of));
}

void law_gradient(const GradientFn &gradients) {
  const Drawn c = draw_case();
  const Batch<Q> y0 = make_seed_machine(c.d, c.sigma).expand_channels(c.y0, "y0");
  std::vector<Batch<Q>> v{draw_batch(c.rows, y0.cols), draw_batch(c.rows, y0.cols),
                          draw_batch(c.w.size(), 1)};
  if (c.sigma.kind() == Sigma<Q>::Kind::array)
    v.push_back(draw_batch(c.sigma.slopes().rows, c.sigma.slopes().cols));
  const auto ok = exact_gradients(c.d, c.sigma, c.w, y0, c.z0, c.gy, c.gz, v, gradients);
  RC_PRE(ok.has_value());
  RC_ASSERT(*ok);
}

// ---- the authors' suite at their sizes ---------------------------------------

struct AuthorsCase {
  const char *name;
  SeedDescription d;
  Index batch;
};

// Test sizes of the authors' runtests.jl. Their conv 1-D and recurrent cases
// use dims [2, 4, 7, 1] and batch 6 like the dense one.
const std::vector<AuthorsCase> &authors_cases() {
  static const std::vector<AuthorsCase> cases{
      {"dense", {"DenseMachine", {2, 4, 7, 1}, "", {}, {}, 0}, 6},
      {"conv 1-D", {"ConvMachine", {2, 4, 7, 1}, "", {12}, {1, 3}, 0}, 6},
      {"conv 2-D", {"ConvMachine", {2, 1, 3, 1}, "", {6, 9}, {1, 3, 2, 0}, 0}, 3},
      {"recurrent", {"RecurMachine", {2, 4, 7, 1}, "", {32}, {6}, 5}, 6}};
  return cases;
}

// Finite differences in double (tanh): the central difference D(h) of ℓ
// along a random direction against ⟨cotangent, v⟩, with the tolerance of
// docs/tolerances.md: |D(h) − D(h/2)| (three times the Richardson estimate of
// the truncation error of D(h/2)) plus the rounding of ℓ divided by h, plus
// the rounding of the analytic pairing.
bool fd_agrees(const std::function<double(double)> &ell, double analytic, double analytic_mag,
               double ell_mag, Index roundings) {
  const double h = std::ldexp(1.0, -16);
  auto central = [&](double s) { return (ell(s) - ell(-s)) / (2 * s); };
  const double d1 = central(h), d2 = central(h / 2);
  const double tol = std::abs(d1 - d2) + 2 * pm_test::gamma<double>(roundings) * ell_mag / h +
                     pm_test::gamma<double>(roundings) * analytic_mag;
  return std::abs(d2 - analytic) <= tol;
}

// SEED-GRADIENT in double for one machine; `perturb` scales the W cotangent
// (the mutant uses 1.01).
// One of the authors' cases in double with tanh: y₀, z₀ uniform in [0, 1),
// the loss gradients and W standard normal, from a fixed seed.
struct DoubleCase {
  SeedMachine<double> m;
  Batch<double> y0, z0, gy, gz;
  Function<double> w;
  MachineState<double> x;
};

DoubleCase double_case(const AuthorsCase &c, std::mt19937_64 &rng) {
  const SeedMachine<double> m = make_seed_machine(c.d, Sigma<double>::tanh());
  const Index rows = m.state_shape().size();
  DoubleCase k{m,
               random_batch(rows, c.batch, rng),
               random_batch(rows, c.batch, rng),
               random_batch(rows, c.batch, rng, true),
               random_batch(rows, c.batch, rng, true),
               random_function(m.parameters(), rng),
               {}};
  k.x = m.forward(k.w, k.y0, k.z0);
  return k;
}

bool double_gradients(const AuthorsCase &c, double perturb) {
  std::mt19937_64 rng(20220425);
  const DoubleCase k = double_case(c, rng);
  const SeedMachine<double> &m = k.m;
  const Batch<double> &y0 = k.y0, &z0 = k.z0, &gy = k.gy, &gz = k.gz;
  const Function<double> &w = k.w;
  const MachineState<double> &x = k.x;
  const Index rows = m.state_shape().size(), batch = c.batch;
  Gradients<double> g = m.backward(w, x, gy, gz);
  for (double &e : g.w) e *= perturb;
  const Batch<double> vy = random_batch(rows, batch, rng, true),
                      vz = random_batch(rows, batch, rng, true);
  const Function<double> vw = random_function(m.parameters(), rng);
  const Index roundings = 2 * m.machine().levels() * (max_in_degree(m.machine().span().span) + 3);
  auto ell = [&](const MachineState<double> &s) { return loss(s, gy, gz); };
  const double mag =
      dot(magnitude(gy.data), magnitude(x.y.data)) + dot(magnitude(gz.data), magnitude(x.z.data));
  return fd_agrees([&](double t) { return ell(m.forward(w, axpy(y0, t, vy), z0)); },
                   dot(g.y0.data, vy.data), dot(magnitude(g.y0.data), magnitude(vy.data)), mag,
                   roundings) &&
         fd_agrees([&](double t) { return ell(m.forward(w, y0, axpy(z0, t, vz))); },
                   dot(g.z0.data, vz.data), dot(magnitude(g.z0.data), magnitude(vz.data)), mag,
                   roundings) &&
         fd_agrees([&](double t) { return ell(m.forward(add(w, scale(t, vw)), y0, z0)); },
                   dot(g.w, vw), dot(magnitude(g.w), magnitude(vw)), mag, roundings);
}

} // namespace

PM_LAW("SEED-FORWARD-EQ", "after the forward sweep y = y₀ + L_W̃ z and z = z₀ + σ(y), over Q",
       law_forward([](const SeedMachine<Q> &m, const Function<Q> &w, const Batch<Q> &y0,
                      const Batch<Q> &z0) { return m.forward(w, y0, z0); }),
       law_forward(one_naive_step))
PM_LAW("SEED-BACKWARD-EQ", "after the backward sweep z̄ = g_z + L_W̃ᵀ ȳ and ȳ = g_y + σ'(y) z̄",
       law_backward(reference_gradients), law_backward(unreversed_dual))
PM_LAW("SEED-FLIP-CLEAN", "flip(clean(W)) = clean(flip(W)) for the reversed grading",
       law_flip_clean(flip), law_flip_clean([](const SeedMachine<Q> &m) {
         std::vector<Index> f = flip(m); // mutant: kernel not reversed
         const Shape P = m.parameter_shape();
         for (Index p = 0; p < f.size(); ++p) {
           auto k = P.multi(p);
           std::swap(k[k.size() - 2], k[k.size() - 1]);
           f[p] = P.flat(k);
         }
         return f;
       }))
PM_LAW("SEED-GRADIENT", "every cotangent (y₀, z₀, W, array σ) is the exact derivative, over Q",
       law_gradient(reference_gradients), law_gradient(gradients_from_loss))

TEST_CASE("SEED-FORWARD-EQ: the authors' sizes, double tanh") {
  for (const auto &c : authors_cases()) {
    INFO(c.name);
    std::mt19937_64 rng(7);
    const DoubleCase k = double_case(c, rng);
    CHECK(forward_equations(k.m, k.w, k.y0, k.z0, k.x));
  }
}

TEST_CASE("SEED-BACKWARD-EQ: the authors' sizes, double tanh") {
  for (const auto &c : authors_cases()) {
    INFO(c.name);
    std::mt19937_64 rng(8);
    const DoubleCase k = double_case(c, rng);
    CHECK(backward_equations(k.m, k.w, k.x, k.gy, k.gz, k.m.backward(k.w, k.x, k.gy, k.gz)));
  }
}

TEST_CASE("SEED-GRADIENT: the authors' sizes, finite differences in double (tanh)") {
  for (const auto &c : authors_cases()) {
    INFO(c.name);
    CHECK(double_gradients(c, 1.0));
  }
}

TEST_CASE("SEED-GRADIENT mutant: the authors' sizes, a W cotangent 1% off is rejected") {
  for (const auto &c : authors_cases()) {
    INFO(c.name);
    CHECK_FALSE(double_gradients(c, 1.01));
  }
}

namespace {
// k/4 with k uniform in −8..8, from a fixed seed; `offset` adds 1/1009 so
// that pre-activations (dyadic sums plus multiples of 1/1009) rarely cancel
// to relu's kink at 0.
Batch<Q> quarter_batch(Index rows, Index cols, std::mt19937_64 &rng, bool offset = false) {
  UniformInt<int> k(-8, 8);
  Batch<Q> b(rows, cols);
  for (Q &x : b.data) x = Q(k(rng)) / Q(4) + (offset ? Q(1) / Q(1009) : Q(0));
  return b;
}
} // namespace

TEST_CASE("SEED-GRADIENT: the authors' sizes, exact over Q (relu and array σ)") {
  for (const auto &c : authors_cases()) {
    for (bool array : {false, true}) {
      INFO(c.name << (array ? ", array σ" : ", relu"));
      // Draws from seeds 9, 10, … until no pre-activation sits on relu's
      // kink at 0 (where ℓ is not differentiable); a handful suffice.
      // The recurrent case (28 levels) runs on 2 samples: its exact
      // derivatives along W take 29 rational sweeps, which at batch 6 would
      // dominate the suite's run time.
      const Index batch = c.d.kind == "RecurMachine" ? 2 : c.batch;
      std::optional<bool> ok;
      for (std::uint64_t seed = 9; seed < 19 && !ok; ++seed) {
        std::mt19937_64 rng(seed);
        const Index rows = make_seed_machine(c.d, Sigma<Q>::relu()).state_shape().size();
        const Sigma<Q> sigma =
            array ? Sigma<Q>::array(quarter_batch(rows, batch, rng)) : Sigma<Q>::relu();
        const SeedMachine<Q> m = make_seed_machine(c.d, sigma);
        const Batch<Q> y0 = quarter_batch(rows, batch, rng, true);
        const Batch<Q> z0 = quarter_batch(rows, batch, rng, true);
        const Batch<Q> gy = quarter_batch(rows, batch, rng);
        const Batch<Q> gz = quarter_batch(rows, batch, rng);
        const Function<Q> w = quarter_batch(m.parameters(), 1, rng).data;
        const MachineState<Q> x = m.forward(w, y0, z0);
        CHECK(forward_equations(m, w, y0, z0, x));
        CHECK(backward_equations(m, w, x, gy, gz, m.backward(w, x, gy, gz)));
        CHECK(flip_clean(m, w, flip));
        std::vector<Batch<Q>> v{quarter_batch(rows, batch, rng), quarter_batch(rows, batch, rng),
                                quarter_batch(m.parameters(), 1, rng)};
        if (array) v.push_back(quarter_batch(rows, batch, rng));
        ok = exact_gradients(c.d, sigma, w, y0, z0, gy, gz, v, reference_gradients);
      }
      REQUIRE(ok.has_value());
      CHECK(*ok);
    }
  }
}
