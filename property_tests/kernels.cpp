// Differential laws of the machine kernels (src/pm/kernels/): for the dense,
// 1-D convolution and recurrent machines, the forward sweep, the dual sweep
// and the weight gradient, in float and double, agree with the reference
// graded span machine (src/pm/machine/, built by src/pm/layers/) run in long
// double, within a forward error bound derived in docs/tolerances.md
// ("Kernels"). The bound is itself the resolvent of a linear machine on |W|
// (the error recursion runs level by level like the machine), so it is
// computed with the reference solver on absolute values. Each case is drawn
// from a one-line description (shape, σ, batch piece, data seed) that a
// failure prints; a case whose outputs are mostly below their tolerance is
// too weak to show anything and is discarded as such, not passed.
#include "pm/kernels.hpp"

#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>

#include "pm/layers/dense.hpp"
#include "pm/layers/seed_machines.hpp"
#include "support/kernel_check.hpp"
#include "support/law.hpp"

using namespace pm;
using kernels::Activation;
using LD = long double;
using pm_test::compare;
using pm_test::draw;
using pm_test::require_informative;
using pm_test::type_name;

namespace {

Sigma<LD> reference_sigma(Activation a) {
  switch (a) {
  case Activation::identity:
    return Sigma<LD>::identity();
  case Activation::tanh:
    return Sigma<LD>::tanh();
  case Activation::sigmoid:
    return Sigma<LD>::sigmoid();
  }
  return Sigma<LD>::identity();
}

// What every case has besides its machine's shape.
struct Common {
  Index batch = 1;
  Index piece = 1;
  Activation sigma = Activation::tanh;
  std::uint32_t seed = 0;
};

std::string describe(const std::vector<Index> &dims, const Common &c) {
  std::ostringstream os;
  os << "sigma=" << reference_sigma(c.sigma).name() << " dims=[";
  for (Index k = 0; k < dims.size(); ++k) os << (k ? "," : "") << dims[k];
  os << "] batch=" << c.batch << " piece=" << c.piece << " data_seed=" << c.seed;
  return os.str();
}

struct DenseCase {
  std::vector<Index> dims;
  Common c;
};
struct ConvCase {
  std::vector<Index> dims;
  Index length = 1, lo = 0, hi = 0;
  Common c;
};
// A grid of Axes axes (the 2-D and 3-D convolution machines).
template <Index Axes> struct GridCase {
  std::vector<Index> dims;
  std::vector<Index> extents, pad;
  Common c;
};
using Conv2Case = GridCase<2>;
using Conv3Case = GridCase<3>;
struct RecurCase {
  std::vector<Index> dims;
  Index length = 1, max_lag = 0, timeblock = 1;
  Common c;
};

rc::Gen<Common> commons() {
  return rc::gen::build<Common>(
      rc::gen::set(&Common::batch, rc::gen::inRange<Index>(1, 8)),
      rc::gen::set(&Common::piece, rc::gen::element<Index>(1, 2, 3, 128)),
      rc::gen::set(&Common::sigma,
                   rc::gen::element(Activation::identity, Activation::tanh, Activation::sigmoid)),
      rc::gen::set(&Common::seed, rc::gen::arbitrary<std::uint32_t>()));
}

// Channel blocks: size 1 often; for dense also empty blocks.
rc::Gen<std::vector<Index>> blocks(Index max_blocks, Index min_size, Index max_size) {
  const auto block = rc::gen::weightedOneOf<Index>(
      {{Index(min_size == 0 ? 2 : 0), rc::gen::just<Index>(0)},
       {3, rc::gen::just<Index>(1)},
       {6, rc::gen::inRange<Index>(std::max<Index>(min_size, 2), max_size + 1)}});
  return rc::gen::resize(max_blocks,
                         rc::gen::nonEmpty(rc::gen::container<std::vector<Index>>(block)));
}

template <class T> Batch<LD> batch_of(const std::vector<T> &v, Index rows, Index cols) {
  Batch<LD> b(rows, cols);
  for (Index k = 0; k < v.size(); ++k) b.data[k] = LD(v[k]);
  return b;
}

Batch<LD> abs(Batch<LD> b) {
  for (LD &x : b.data) x = std::fabs(x);
  return b;
}

template <class T> std::vector<T> abs_of(std::vector<T> v) {
  for (T &x : v) x = std::fabs(x);
  return v;
}
template <class T> Function<LD> function_of(const std::vector<T> &v) {
  return Function<LD>(v.begin(), v.end());
}

// A kernel under test in T, as three calls on flat buffers.
template <class T> struct Kernel {
  using Buffer = std::span<const T>;
  using Out = std::span<T>;
  std::function<void(Buffer w, Buffer y0, Buffer z0, Out y, Out z)> forward;
  std::function<void(Buffer w, Buffer y, Buffer gy, Buffer gz, Out yb, Out zb)> dual;
  std::function<void(Buffer z, Buffer yb, Out dw)> gradient;
};

// A problem: the reference machine, the kernel, the σ and the data.
template <class T> struct Problem {
  std::string repro;
  GradedSpanMachine<LD> machine;
  Activation sigma;
  Index batch;
  Kernel<T> kernel;
  std::vector<T> w, a, b, gy, gz; // weights; y0 (or y), z0 (or z); cotangents

  Index size() const { return machine.size(); }
  const ParametricSpan<LD> &span() const { return machine.span(); }
};

template <class T>
Problem<T> problem(std::string repro, GradedSpanMachine<LD> m, const Common &c, Kernel<T> kernel,
                   Index fan_in) {
  std::mt19937 g(c.seed);
  // Weights scaled like Glorot's 1/√(fan-in) keep tanh and sigmoid off
  // saturation, so that the backward outputs are not mostly zero.
  const T scale = T(1) / std::sqrt(T(std::max<Index>(fan_in, 1)));
  const Index states = m.size() * c.batch;
  std::vector<T> w = draw<T>(g, m.parameters(), scale);
  std::vector<T> a = draw<T>(g, states, T(2)), b = draw<T>(g, states, T(2));
  std::vector<T> gy = draw<T>(g, states, T(1)), gz = draw<T>(g, states, T(1));
  return Problem<T>{std::move(repro), std::move(m), c.sigma,      c.batch,       std::move(kernel),
                    std::move(w),     std::move(a), std::move(b), std::move(gy), std::move(gz)};
}

// Rounding of the kernel in T plus that of the reference in long double:
// unit roundoff u and the absolute errors of σ and σ' in units of u.
struct Rounding {
  LD u, sigma, derivative;
};

template <class T> Rounding rounding(Activation a) {
  const LD ut = std::numeric_limits<T>::epsilon() / 2, ul = std::numeric_limits<LD>::epsilon() / 2;
  const kernels::SigmaError et = kernels::sigma_error<T>(a), el = kernels::sigma_error<LD>(a);
  // The two error sources add: u_T c_T + u_LD c_LD ≤ (u_T + u_LD) max(c_T, c_LD).
  return {ut + ul, std::max(et.value, el.value), std::max(et.derivative, el.derivative)};
}

// Valid edges per target, per source and per parameter: the lengths of the
// sums that produce each output of the forward sweep, the dual sweep and the
// gradient (per sample).
struct Terms {
  std::vector<Index> into, from, per_parameter;
};

Terms terms(const GradedSpanMachine<LD> &m) {
  const ParametricSpan<LD> &a = m.span();
  const std::vector<bool> valid = valid_parameters(a, m.grading());
  Terms t{std::vector<Index>(m.size()), std::vector<Index>(m.size()),
          std::vector<Index>(a.parameters())};
  for (Index e = 0; e < a.apex(); ++e)
    if (valid[a.pi(e)]) {
      ++t.into[a.span.t(e)];
      ++t.from[a.span.s(e)];
      ++t.per_parameter[a.pi(e)];
    }
  return t;
}

// Forward: (y, z) from (W, y0, z0) against the level solver. Bound:
// e_y = γ_{m+1}(|y0| + L_|W̃| |ẑ|) + L_|W̃| e_z, e_z = u|ẑ| + c_σ u + sup|σ'| e_y,
// m the valid edges into the output, solved level by level.
template <class T> void check_forward(const Problem<T> &p) {
  const Index n = p.size();
  std::vector<T> y(p.a.size()), z(p.a.size());
  p.kernel.forward(p.w, p.a, p.b, y, z);
  const Batch<LD> y0 = batch_of(p.a, n, p.batch), z0 = batch_of(p.b, n, p.batch);
  const MachineState<LD> ref = forward(p.machine, function_of(p.w), y0, z0);

  const Rounding r = rounding<T>(p.sigma);
  const Function<LD> w_abs = clean(p.span(), p.machine.grading(), function_of(abs_of(p.w)));
  const Batch<LD> zk = abs(batch_of(z, n, p.batch));
  const Terms m = terms(p.machine);
  Batch<LD> alpha = act(p.span(), w_abs, zk), beta(n, p.batch);
  for (Index b = 0; b < p.batch; ++b)
    for (Index i = 0; i < n; ++i) {
      alpha(i, b) = pm::gamma(LD(m.into[i] + 1), r.u) * (std::fabs(y0(i, b)) + alpha(i, b));
      beta(i, b) = r.u * zk(i, b) + r.sigma * r.u;
    }
  const LD slope = kernels::bounds(p.sigma).slope;
  const GradedSpanMachine<LD> error(p.machine.grading(), p.span(),
                                    Sigma<LD>::array(Batch<LD>(n, 1, slope)));
  const MachineState<LD> e = forward(error, w_abs, alpha, beta);

  const Index informative = compare(p.repro, "y", y, ref.y.data, e.y.data) +
                            compare(p.repro, "z", z, ref.z.data, e.z.data);
  require_informative(informative, 2 * y.size(), p.repro);
}

// Dual sweep and gradient at a given state (y, z) = (a, b) and output
// cotangents (g_y, g_z), against the reference backward pass (neither needs
// the state to solve the forward equation). Bounds: the dual recursion
// e_z̄ = γ_{m+1}(|g_z| + L_|W̃|ᵀ |ȳ̂|) + L_|W̃|ᵀ e_ȳ,
// e_ȳ = γ_2(|g_y| + |σ̂'||ẑ̄|) + c_σ' u |ẑ̄| + sup|σ'| e_z̄ over the reversed
// grading, m the valid edges out of the index; then, with q the valid edges
// of the parameter, e_∂W = π_!(|z| · (γ_{qB}|ȳ̂| + e_ȳ)); cleaned entries
// exactly 0.
template <class T> void check_backward(const Problem<T> &p, bool gradient) {
  const Index n = p.size();
  std::vector<T> ybar(p.a.size()), zbar(p.a.size()), dw(p.w.size());
  p.kernel.dual(p.w, p.a, p.gy, p.gz, ybar, zbar);
  p.kernel.gradient(p.b, ybar, dw);

  const MachineState<LD> state{batch_of(p.a, n, p.batch), batch_of(p.b, n, p.batch)};
  const Batch<LD> gyl = batch_of(p.gy, n, p.batch), gzl = batch_of(p.gz, n, p.batch);
  const Gradients<LD> ref = backward(p.machine, function_of(p.w), state, gyl, gzl);

  const Rounding r = rounding<T>(p.sigma);
  const Function<LD> w_abs = clean(p.span(), p.machine.grading(), function_of(abs_of(p.w)));
  const Terms m = terms(p.machine);
  const Batch<LD> ybk = abs(batch_of(ybar, n, p.batch)), zbk = abs(batch_of(zbar, n, p.batch));
  Batch<LD> alpha = act(transpose(p.span()), w_abs, ybk), beta(n, p.batch);
  for (Index b = 0; b < p.batch; ++b)
    for (Index i = 0; i < n; ++i) {
      alpha(i, b) = pm::gamma(LD(m.from[i] + 1), r.u) * (std::fabs(gzl(i, b)) + alpha(i, b));
      const LD d =
          std::fabs(p.machine.sigma().derivative(state.y(i, b), i, b)) + r.derivative * r.u;
      beta(i, b) = pm::gamma(LD(2), r.u) * (std::fabs(gyl(i, b)) + d * zbk(i, b)) +
                   r.derivative * r.u * zbk(i, b);
    }
  const LD slope = kernels::bounds(p.sigma).slope;
  const GradedSpanMachine<LD> error(p.machine.grading().reversed(), transpose(p.span()),
                                    Sigma<LD>::array(Batch<LD>(n, 1, slope)));
  const MachineState<LD> e = forward(error, w_abs, alpha, beta); // (e_z̄, e_ȳ)

  if (!gradient) {
    const Index informative = compare(p.repro, "ybar", ybar, ref.y0.data, e.z.data) +
                              compare(p.repro, "zbar", zbar, ref.z0.data, e.y.data);
    require_informative(informative, 2 * ybar.size(), p.repro);
    return;
  }
  // ∂W: each entry sums q·B products z ȳ̂, and ȳ̂ carries e_ȳ. The rounding
  // term is bounded with the largest q, which keeps it one pushforward.
  const Index q = std::accumulate(m.per_parameter.begin(), m.per_parameter.end(), Index(0),
                                  [](Index x, Index y) { return std::max(x, y); });
  const Batch<LD> zl = abs(state.z);
  Function<LD> bound(p.w.size(), LD(0));
  for (Index b = 0; b < p.batch; ++b) {
    Function<LD> t(n);
    for (Index i = 0; i < n; ++i) t[i] = pm::gamma(LD(q * p.batch), r.u) * ybk(i, b) + e.z(i, b);
    bound = add(bound, parameter_gradient(p.span(), zl.column(b), t));
  }
  const std::vector<bool> valid = valid_parameters(p.span(), p.machine.grading());
  std::vector<T> dv;
  std::vector<LD> rv, bv;
  for (Index k = 0; k < dw.size(); ++k) {
    if (!valid[k]) {
      if (dw[k] != T(0)) RC_FAIL(p.repro + ": dW[" + std::to_string(k) + "] is not cleaned");
      continue;
    }
    dv.push_back(dw[k]);
    rv.push_back(ref.w[k]);
    bv.push_back(bound[k]);
  }
  require_informative(compare(p.repro, "dW", dv, rv, bv), dv.size(), p.repro);
}

// ---- Dense -------------------------------------------------------------

enum class Mutant {
  none,
  transposed_weights,
  single_precision,
  activation_of_z,
  uncleaned,
  flipped,
  timeblock
};

template <class T> Problem<T> dense_problem(const DenseCase &dc, Mutant mutant = Mutant::none) {
  const kernels::DenseMachineShape shape{dc.dims, dc.c.batch, dc.c.piece};
  const Index n = shape.channels();
  const Activation sigma = dc.c.sigma;
  Kernel<T> k;
  k.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    if (mutant == Mutant::transposed_weights) {
      std::vector<T> wt(w.size());
      for (Index x = 0; x < n; ++x)
        for (Index t = 0; t < n; ++t) wt[x * n + t] = w[t * n + x];
      return kernels::dense_forward<T>(shape, sigma, wt, y0, z0, y, z);
    }
    if (mutant == Mutant::single_precision) {
      // A kernel in T that computes in float: a loss of precision the bound sees.
      const std::vector<float> wf(w.begin(), w.end()), af(y0.begin(), y0.end()),
          bf(z0.begin(), z0.end());
      std::vector<float> yf(y.size()), zf(z.size());
      kernels::dense_forward<float>(shape, sigma, wf, af, bf, yf, zf);
      std::copy(yf.begin(), yf.end(), y.begin());
      std::copy(zf.begin(), zf.end(), z.begin());
      return;
    }
    kernels::dense_forward<T>(shape, sigma, w, y0, z0, y, z);
  };
  k.dual = [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    kernels::dense_dual<T>(shape, sigma, w, y, gy, gz, yb, zb);
  };
  k.gradient = [=](auto z, auto yb, auto dw) {
    kernels::DenseMachineShape g = shape;
    if (mutant == Mutant::uncleaned) g.dims = std::vector<Index>(n, 1); // cleans too little
    kernels::dense_weight_gradient<T>(g, z, yb, dw);
  };
  GradedSpanMachine<LD> m(Grading::from_blocks(dc.dims), dense<LD>(DenseSpec{n, n, false}),
                          reference_sigma(sigma));
  auto p = problem<T>(std::string("dense<") + type_name(T()) + "> " + describe(dc.dims, dc.c),
                      std::move(m), dc.c, std::move(k), n);
  if (mutant == Mutant::activation_of_z) {
    // σ' taken at z instead of y: the dual kernel is given the wrong state.
    auto dual = p.kernel.dual;
    const std::vector<T> zs = p.b;
    p.kernel.dual = [dual, zs](auto w, auto, auto gy, auto gz, auto yb, auto zb) {
      dual(w, zs, gy, gz, yb, zb);
    };
  }
  return p;
}

// ---- Convolution and recurrent -----------------------------------------

template <class T> Kernel<T> sequence_kernel(kernels::SequencePlan plan, Activation sigma) {
  Kernel<T> k;
  k.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    kernels::sequence_forward<T>(plan, sigma, w, y0, z0, y, z);
  };
  k.dual = [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    kernels::sequence_dual<T>(plan, sigma, w, y, gy, gz, yb, zb);
  };
  k.gradient = [=](auto z, auto yb, auto dw) {
    kernels::sequence_weight_gradient<T>(plan, z, yb, dw);
  };
  return k;
}

template <class T> Problem<T> conv_problem(const ConvCase &cc, Mutant mutant = Mutant::none) {
  const kernels::ConvMachineShape shape{cc.dims, cc.length, cc.c.batch, cc.lo, cc.hi, cc.c.piece};
  kernels::SequencePlan plan = kernels::plan(shape);
  if (mutant == Mutant::flipped) // the kernel read backwards (true convolution)
    for (auto &tap : plan.taps) tap.shift = -tap.shift;
  const ConvMachine<LD> m(cc.dims, reference_sigma(cc.c.sigma), {cc.lo, cc.hi}, {cc.length});
  std::ostringstream os;
  os << "conv1d<" << type_name(T()) << "> length=" << cc.length << " pad=(" << cc.lo << "," << cc.hi
     << ") " << describe(cc.dims, cc.c);
  return problem<T>(os.str(), m.machine(), cc.c, sequence_kernel<T>(plan, cc.c.sigma),
                    plan.n * plan.taps.size());
}

template <class T, Index Axes>
Problem<T> grid_problem(const GridCase<Axes> &cc, Mutant mutant = Mutant::none) {
  const kernels::ConvGridShape shape{cc.dims, cc.extents, cc.c.batch, cc.pad, cc.c.piece};
  kernels::SequencePlan plan = kernels::plan(shape);
  if (mutant == Mutant::flipped) // the kernel read backwards along the innermost lines only
    for (auto &tap : plan.taps) {
      tap.shift -= 2 * tap.col;
      tap.col = -tap.col;
    }
  const ConvMachine<LD> m(cc.dims, reference_sigma(cc.c.sigma), cc.pad, cc.extents);
  std::ostringstream os;
  os << "conv" << Axes << "d<" << type_name(T()) << "> grid=";
  for (Index j = 0; j < Axes; ++j) os << (j ? "x" : "") << cc.extents[j];
  os << " pad=(";
  for (Index j = 0; j < 2 * Axes; ++j) os << (j ? "," : "") << cc.pad[j];
  os << ") " << describe(cc.dims, cc.c);
  return problem<T>(os.str(), m.machine(), cc.c, sequence_kernel<T>(plan, cc.c.sigma),
                    plan.n * plan.taps.size());
}

template <class T> Problem<T> recur_problem(const RecurCase &rc, Mutant mutant = Mutant::none) {
  const Index tb = rc.timeblock + (mutant == Mutant::timeblock ? 1 : 0);
  const kernels::RecurMachineShape shape{rc.dims,    rc.length, rc.c.batch,
                                         rc.max_lag, tb,        rc.c.piece};
  const kernels::SequencePlan plan = kernels::plan(shape);
  const RecurMachine<LD> m(rc.dims, reference_sigma(rc.c.sigma), rc.max_lag, rc.timeblock,
                           rc.length);
  std::ostringstream os;
  os << "recur<" << type_name(T()) << "> length=" << rc.length << " max_lag=" << rc.max_lag
     << " timeblock=" << rc.timeblock << " " << describe(rc.dims, rc.c);
  return problem<T>(os.str(), m.machine(), rc.c, sequence_kernel<T>(plan, rc.c.sigma),
                    plan.n * plan.taps.size());
}

} // namespace

namespace rc {
template <> struct Arbitrary<DenseCase> {
  static Gen<DenseCase> arbitrary() {
    return gen::build<DenseCase>(gen::set(&DenseCase::dims, blocks(6, 0, 12)),
                                 gen::set(&DenseCase::c, commons()));
  }
};
// Lengths from 1 (shorter than the padding) up; padding on either side.
template <> struct Arbitrary<ConvCase> {
  static Gen<ConvCase> arbitrary() {
    return gen::build<ConvCase>(gen::set(&ConvCase::dims, blocks(4, 1, 5)),
                                gen::set(&ConvCase::length, gen::inRange<Index>(1, 10)),
                                gen::set(&ConvCase::lo, gen::inRange<Index>(0, 4)),
                                gen::set(&ConvCase::hi, gen::inRange<Index>(0, 4)),
                                gen::set(&ConvCase::c, commons()));
  }
};
// Grids from 1 × 1 (× 1) (smaller than the padding) up; padding on every side.
template <Index Axes> struct Arbitrary<GridCase<Axes>> {
  static Gen<GridCase<Axes>> arbitrary() {
    return gen::exec([] {
      GridCase<Axes> c;
      c.dims = *blocks(3, 1, 4);
      for (Index j = 0; j < Axes; ++j)
        c.extents.push_back(*gen::inRange<Index>(1, Axes == 2 ? 6 : 4));
      for (Index j = 0; j < 2 * Axes; ++j) c.pad.push_back(*gen::inRange<Index>(0, 3));
      c.c = *commons();
      return c;
    });
  }
};
// Lengths not divisible by the time block, lags beyond the time block and
// beyond the length.
template <> struct Arbitrary<RecurCase> {
  static Gen<RecurCase> arbitrary() {
    return gen::build<RecurCase>(gen::set(&RecurCase::dims, blocks(3, 1, 4)),
                                 gen::set(&RecurCase::length, gen::inRange<Index>(1, 13)),
                                 gen::set(&RecurCase::max_lag, gen::inRange<Index>(0, 7)),
                                 gen::set(&RecurCase::timeblock, gen::inRange<Index>(1, 6)),
                                 gen::set(&RecurCase::c, commons()));
  }
};
} // namespace rc

TEST_CASE("KERNEL-DENSE-FORWARD: the forward sweep agrees with the level solver") {
  rc::prop("float", [](const DenseCase &c) { check_forward(dense_problem<float>(c)); });
  rc::prop("double", [](const DenseCase &c) { check_forward(dense_problem<double>(c)); });
}

TEST_CASE("KERNEL-DENSE-FORWARD mutant: weights read transposed") {
  CHECK(pm_test::rejects([](const DenseCase &c) {
    check_forward(dense_problem<double>(c, Mutant::transposed_weights));
  }));
}

TEST_CASE("KERNEL-DENSE-FORWARD mutant: a double kernel that rounds to float") {
  CHECK(pm_test::rejects([](const DenseCase &c) {
    check_forward(dense_problem<double>(c, Mutant::single_precision));
  }));
}

TEST_CASE("KERNEL-DENSE-DUAL: the dual sweep agrees with the reference backward pass") {
  rc::prop("float", [](const DenseCase &c) { check_backward(dense_problem<float>(c), false); });
  rc::prop("double", [](const DenseCase &c) { check_backward(dense_problem<double>(c), false); });
}

TEST_CASE("KERNEL-DENSE-DUAL mutant: sigma' taken at z instead of y") {
  CHECK(pm_test::rejects([](const DenseCase &c) {
    check_backward(dense_problem<double>(c, Mutant::activation_of_z), false);
  }));
}

TEST_CASE("KERNEL-DENSE-GRADIENT: the weight gradient agrees with the reference") {
  rc::prop("float", [](const DenseCase &c) { check_backward(dense_problem<float>(c), true); });
  rc::prop("double", [](const DenseCase &c) { check_backward(dense_problem<double>(c), true); });
}

TEST_CASE("KERNEL-DENSE-GRADIENT mutant: the gradient cleaned for single-channel blocks") {
  CHECK(pm_test::rejects([](const DenseCase &c) {
    check_backward(dense_problem<double>(c, Mutant::uncleaned), true);
  }));
}

// The six properties of a machine's kernels: forward sweep, dual sweep and
// weight gradient, in float and double; make(T(), case) builds the problem.
template <class Case, class Make> void check_machine(Make make) {
  rc::prop("forward float", [make](const Case &c) { check_forward(make(float(), c)); });
  rc::prop("forward double", [make](const Case &c) { check_forward(make(double(), c)); });
  rc::prop("dual float", [make](const Case &c) { check_backward(make(float(), c), false); });
  rc::prop("dual double", [make](const Case &c) { check_backward(make(double(), c), false); });
  rc::prop("gradient float", [make](const Case &c) { check_backward(make(float(), c), true); });
  rc::prop("gradient double", [make](const Case &c) { check_backward(make(double(), c), true); });
}

// The three statements each reject a mutant machine: make(case) builds the
// mutant's problem in double.
template <class Case, class Make> void check_rejected(Make make) {
  CHECK(pm_test::rejects([make](const Case &c) { check_forward(make(c)); }));
  CHECK(pm_test::rejects([make](const Case &c) { check_backward(make(c), false); }));
  CHECK(pm_test::rejects([make](const Case &c) { check_backward(make(c), true); }));
}

TEST_CASE("KERNEL-CONV: the 1-D convolution machine kernels agree with the reference") {
  check_machine<ConvCase>([](auto t, const ConvCase &c) { return conv_problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-CONV mutant: the kernel read backwards") {
  check_rejected<ConvCase>(
      [](const ConvCase &c) { return conv_problem<double>(c, Mutant::flipped); });
}

TEST_CASE("KERNEL-CONV2D: the 2-D convolution machine kernels agree with the reference") {
  check_machine<Conv2Case>([](auto t, const Conv2Case &c) { return grid_problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-CONV2D mutant: the kernel read backwards along the rows") {
  check_rejected<Conv2Case>(
      [](const Conv2Case &c) { return grid_problem<double>(c, Mutant::flipped); });
}

TEST_CASE("KERNEL-CONV3D: the 3-D convolution machine kernels agree with the reference") {
  check_machine<Conv3Case>([](auto t, const Conv3Case &c) { return grid_problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-CONV3D mutant: the kernel read backwards along the innermost lines") {
  check_rejected<Conv3Case>(
      [](const Conv3Case &c) { return grid_problem<double>(c, Mutant::flipped); });
}

TEST_CASE("KERNEL-RECUR: the recurrent machine kernels agree with the reference") {
  check_machine<RecurCase>(
      [](auto t, const RecurCase &c) { return recur_problem<decltype(t)>(c); });
}

TEST_CASE("KERNEL-RECUR mutant: the time block off by one") {
  check_rejected<RecurCase>(
      [](const RecurCase &c) { return recur_problem<double>(c, Mutant::timeblock); });
}
