// The validator: it passes the reference semantics, and it rejects a
// deliberately wrong variant (mutant) of every law it runs, with a shrunk
// counterexample. Mutants are wrong layers or machines a user could write.
#include <catch2/catch.hpp>

#include "pm/validate.hpp"
#include "pm/validate/catalogue.hpp"

using pm::Index;
using pm::Rational;
using pm::Status;
using Q = Rational;
using F = pm::Function<Q>;

namespace {

const pm::LawResult &result(const pm::Report &r, const std::string &law) {
  for (const auto &x : r.results)
    if (x.law == law) return x;
  FAIL("no result for " << law);
  return r.results.front();
}

// A layer given by its reference span, with one operation replaceable.
template <class S = Q> struct Mutant : pm::SpanLayer<S> {
  using Op = std::function<pm::Function<S>(const pm::Function<S> &, const pm::Function<S> &)>;
  Op apply_op, transpose_op, gradient_op;
  pm::Function<S> apply(const pm::Function<S> &w, const pm::Function<S> &x) const {
    return apply_op ? apply_op(w, x) : pm::SpanLayer<S>::apply(w, x);
  }
  pm::Function<S> apply_transpose(const pm::Function<S> &w, const pm::Function<S> &g) const {
    return transpose_op ? transpose_op(w, g) : pm::SpanLayer<S>::apply_transpose(w, g);
  }
  pm::Function<S> parameter_gradient(const pm::Function<S> &x, const pm::Function<S> &g) const {
    return gradient_op ? gradient_op(x, g) : pm::SpanLayer<S>::parameter_gradient(x, g);
  }
  Mutant magnitude() const {
    Mutant m = *this;
    m.span = pm::SpanLayer<S>::magnitude().span;
    return m;
  }
};

template <class S = Q> pm::ParametricSpan<S> conv_span() {
  return pm::conv<S>(pm::ConvSpec{{6}, 2, 2, {3}, {1}, {1}, {}, {}, 1});
}

template <class S = Q> Mutant<S> mutant() { return Mutant<S>{{conv_span<S>()}, {}, {}, {}}; }

const pm::ValidateOptions options{60, 7};

} // namespace

TEST_CASE("PSPAN-BILINEAR: the validator passes every catalogued span layer") {
  for (const auto &entry : pm::catalogue()) {
    if (entry.name.find("Machine") != std::string::npos) continue;
    const pm::Report r = entry.run({20, 3});
    INFO(pm::to_text(r));
    CHECK(r.passed());
    CHECK(result(r, "PSPAN-BILINEAR").status == Status::passed);
    CHECK(result(r, "PSPAN-ADJOINT").status == Status::passed);
    CHECK(result(r, "PSPAN-COMP").status == Status::passed);
  }
}

TEST_CASE("PSPAN-BILINEAR mutant: an affine layer (a stray +1) is rejected") {
  auto m = mutant();
  m.apply_op = [&](const F &w, const F &x) {
    F y = pm::act(m.span, w, x);
    y[0] += Q(1);
    return y;
  };
  const pm::Report r = pm::validate(m, "affine", options);
  CHECK(result(r, "PSPAN-BILINEAR").status == Status::failed);
  // Shrinking reaches the all-zero case: 0 ↦ 1 already breaks linearity.
  const auto &w = result(r, "PSPAN-BILINEAR").counterexample.tensors.at(0);
  CHECK(w.name == "w");
  CHECK(w.indices.empty());
}

TEST_CASE("PSPAN-ADJOINT mutant: a transpose without the kernel reflected is rejected") {
  auto m = mutant();
  // Treat the kernel as flipped: the parameter index of (k, c_in, c_out)
  // is read at (K − 1 − k, c_in, c_out).
  m.transpose_op = [&](const F &w, const F &g) {
    F wf(w.size());
    for (Index p = 0; p < w.size(); ++p) wf[p] = w[(2 - p / 4) * 4 + p % 4];
    return pm::act(pm::transpose(m.span), wf, g);
  };
  const pm::Report r = pm::validate(m, "unreflected", options);
  const auto &adj = result(r, "PSPAN-ADJOINT");
  CHECK(adj.status == Status::failed);
  CHECK(adj.detail.find("shrunk to") != std::string::npos);
  CHECK(result(r, "PSPAN-BILINEAR").status == Status::passed);
}

TEST_CASE("PSPAN-ADJOINT mutant: double, a transpose one rounding unit per term off") {
  auto m = mutant<double>();
  // An error well above γ_n Σ|terms| must be seen: scale by 1 + 2^-30.
  m.transpose_op = [&](const pm::Function<double> &w, const pm::Function<double> &g) {
    return pm::scale(1 + 0x1p-30, pm::act(pm::transpose(m.span), w, g));
  };
  CHECK(result(pm::validate(m, "scaled", options), "PSPAN-ADJOINT").status == Status::failed);
  // And the reference passes with the same bound.
  CHECK(result(pm::validate(mutant<double>(), "ref", options), "PSPAN-ADJOINT").status ==
        Status::passed);
}

TEST_CASE("PSPAN-GRADIENT mutant: a gradient with input and cotangent swapped is rejected") {
  auto m = mutant();
  m.gradient_op = [&](const F &x, const F &g) {
    // Pairs φ(t(e)) with g(s(e)) — the legs read backwards.
    return pm::integrate(
        m.span.pi, m.span.span.mu,
        pm::hadamard(pm::pullback(m.span.span.t, x), pm::pullback(m.span.span.s, g)));
  };
  const pm::Report r = pm::validate(m, "swapped", options);
  CHECK(result(r, "PSPAN-GRADIENT").status == Status::failed);
  CHECK(result(r, "PSPAN-ADJOINT").status == Status::passed);
}

TEST_CASE("PSPAN-COMP mutant: a composition that loses an edge of the fibre product is rejected") {
  const auto a = conv_span();
  const auto law = pm::validation::composition_law(
      a, "lossy", options, [](const pm::ParametricSpan<Q> &y, const pm::ParametricSpan<Q> &x) {
        auto c = pm::compose(y, x);
        c.span.mu.back() = 0;
        return c;
      });
  CHECK(law.status == Status::failed);
  CHECK(pm::validation::composition_law(a, "ref", options, [](const auto &y, const auto &x) {
          return pm::compose(y, x);
        }).status == Status::passed);
}

TEST_CASE("WF-SIZES: every catalogued span layer is well-formed") {
  for (const auto &entry : pm::catalogue()) {
    if (entry.name.find("Machine") != std::string::npos) continue;
    const pm::Report r = entry.run({5, 3});
    INFO(entry.name);
    CHECK(result(r, "WF-SIZES").status == Status::passed);
  }
}

TEST_CASE("WF-GRADING: a layer between graded spaces that raises the grade passes") {
  const auto a = pm::dense<Q>({2, 3, false});
  CHECK(pm::check_grading(a, pm::Grading(3, {1, 2}), pm::Grading(3, {3, 3, 3}), "ok").status ==
        Status::passed);
}

TEST_CASE("WF-SIZES mutant: a layer returning the wrong number of outputs is rejected") {
  auto m = mutant();
  m.apply_op = [&](const F &w, const F &x) {
    F y = pm::act(m.span, w, x);
    y.pop_back();
    return y;
  };
  const pm::Report r = pm::validate(m, "short", options);
  CHECK(result(r, "WF-SIZES").status == Status::failed);
  CHECK(result(r, "WF-SIZES").detail == "apply(w, φ) returned 11 values, expected 12");
  CHECK(result(r, "PSPAN-ADJOINT").status == Status::not_applicable);
  CHECK_FALSE(r.passed());
}

TEST_CASE("WF-GRADING mutant: an edge that does not raise the grade is the counterexample") {
  const auto a = pm::dense<Q>({2, 2, false}); // edges (x, y) in row-major order
  const pm::Grading dx(2, {1, 2}), dy(3, {3, 3});
  CHECK(pm::check_grading(a, dx, dy, "ok").status == Status::passed);
  const pm::Grading dy_bad(3, {2, 3});
  const auto r = pm::check_grading(a, dx, dy_bad, "bad");
  CHECK(r.status == Status::failed);
  CHECK(r.detail == "edge 2 (s = 1 of grade 2, t = 0 of grade 2, pi = 2) does not raise the grade");
}

TEST_CASE("validator: a layer whose outputs are all zero is too weak, not passed") {
  auto a = conv_span();
  for (auto &m : a.span.mu) m = Q(0);
  const pm::Report r = pm::validate(a, "zero", options);
  CHECK(result(r, "PSPAN-ADJOINT").status == Status::too_weak);
  CHECK(result(r, "PSPAN-BILINEAR").status == Status::too_weak);
  CHECK_FALSE(r.passed());
}

TEST_CASE("validator: runs are reproducible from their seed") {
  const auto a = conv_span<double>();
  // Everything but the wall-clock durations is a function of the seed.
  const auto untimed = [&](std::uint64_t seed) {
    pm::Report r = pm::validate(a, "a", {30, seed});
    for (auto &row : r.results) row.seconds = 0;
    return pm::to_json(r);
  };
  const auto r1 = untimed(11);
  const auto r2 = untimed(11);
  const auto r3 = untimed(12);
  CHECK(r1 == r2);
  CHECK(r1 != r3);
}

namespace {

using D = double;
const pm::DenseMachine<D> dense_machine({2, 3, 2}, pm::Sigma<D>::tanh());
const pm::GradedSpanMachine<D> &gm = dense_machine.machine();

pm::MachineState<D> reference_forward(const pm::Function<D> &w, const pm::Batch<D> &y0,
                                      const pm::Batch<D> &z0) {
  return pm::forward(gm, w, y0, z0);
}
pm::Gradients<D> reference_backward(const pm::Function<D> &w, const pm::MachineState<D> &x,
                                    const pm::Batch<D> &gy, const pm::Batch<D> &gz) {
  return pm::backward(gm, w, x, gy, gz);
}

template <class Fwd, class Bwd> pm::Report check_machine(Fwd fwd, Bwd bwd) {
  return pm::validate_machine(gm, fwd, bwd, "mutant machine", options);
}

} // namespace

TEST_CASE("MACH-EQUATION: the validator passes the catalogued machines") {
  for (const auto &entry : pm::catalogue()) {
    if (entry.name.find("Machine") == std::string::npos) continue;
    const pm::Report r = entry.run({10, 5});
    INFO(pm::to_text(r));
    CHECK(r.passed());
  }
  CHECK(check_machine(reference_forward, reference_backward).passed());
}

TEST_CASE("MACH-CAUSALITY mutant: a forward pass that reads a later grade is rejected") {
  const auto r = check_machine(
      [](const pm::Function<D> &w, const pm::Batch<D> &y0, const pm::Batch<D> &z0) {
        auto x = reference_forward(w, y0, z0);
        x.y(0, 0) += y0(6, 0); // index 0 (grade 1) sees the input at index 6 (grade 3)
        return x;
      },
      reference_backward);
  CHECK(result(r, "MACH-CAUSALITY").status == Status::failed);
  CHECK(result(r, "MACH-CAUSALITY").detail.find("index 0 of grade 1 changes") != std::string::npos);
}

TEST_CASE("MACH-EQUATION mutant: a forward pass that forgets z0 is rejected") {
  const auto r = check_machine(
      [](const pm::Function<D> &w, const pm::Batch<D> &y0, const pm::Batch<D> &z0) {
        return reference_forward(w, y0, pm::Batch<D>(z0.rows, z0.cols));
      },
      reference_backward);
  CHECK(result(r, "MACH-EQUATION").status == Status::failed);
}

TEST_CASE("MACH-BACKWARD mutant: a backward pass that forgets sigma' is rejected") {
  const auto r =
      check_machine(reference_forward, [](const pm::Function<D> &w, const pm::MachineState<D> &x,
                                          const pm::Batch<D> &gy, const pm::Batch<D> &gz) {
        const pm::GradedSpanMachine<D> linear(gm.grading(), gm.span(), pm::Sigma<D>::identity());
        return pm::backward(linear, w, x, gy, gz);
      });
  CHECK(result(r, "MACH-BACKWARD").status == Status::failed);
  CHECK(result(r, "MACH-EQUATION").status == Status::passed);
}

TEST_CASE("MACH-PARAM-GRADIENT mutant: a weight gradient that is not cleaned is rejected") {
  const auto r =
      check_machine(reference_forward, [](const pm::Function<D> &w, const pm::MachineState<D> &x,
                                          const pm::Batch<D> &gy, const pm::Batch<D> &gz) {
        auto g = reference_backward(w, x, gy, gz);
        g.w = pm::parameter_gradient(gm.span(), x.z.column(0), g.y0.column(0)); // uncleaned
        return g;
      });
  CHECK(result(r, "MACH-PARAM-GRADIENT").status == Status::failed);
  CHECK(result(r, "MACH-BACKWARD").status == Status::passed);
}

TEST_CASE("MACH-BACKWARD mutant: double, cotangents scaled by 1 + 2^-30 are rejected") {
  const auto r =
      check_machine(reference_forward, [](const pm::Function<D> &w, const pm::MachineState<D> &x,
                                          const pm::Batch<D> &gy, const pm::Batch<D> &gz) {
        auto g = reference_backward(w, x, gy, gz);
        for (D &v : g.y0.data) v *= 1 + 0x1p-30;
        for (D &v : g.z0.data) v *= 1 + 0x1p-30;
        return g;
      });
  CHECK(result(r, "MACH-BACKWARD").status == Status::failed);
}

namespace {

// The options that select the rows of one law.
pm::ValidateOptions selecting(const std::string &law) {
  pm::ValidateOptions o = options;
  o.select = [law](const std::string &l, const std::string &) { return l == law; };
  return o;
}

std::vector<std::string> laws_of(const std::vector<std::pair<std::string, std::string>> &rows) {
  std::vector<std::string> laws;
  for (const auto &row : rows) laws.push_back(row.first);
  return laws;
}

} // namespace

TEST_CASE("validator: a selection runs only the layer laws it selects") {
  // A gradient that throws once WF-SIZES has called it: PSPAN-GRADIENT
  // fails when it is run at all.
  auto calls = std::make_shared<int>(0);
  Mutant<> m = mutant();
  m.gradient_op = [calls](const F &x, const F &g) {
    if (++*calls > 1) throw std::runtime_error("the gradient was run");
    return pm::SpanLayer<Q>{conv_span()}.parameter_gradient(x, g);
  };
  const pm::Report r = pm::validate(m, "conv", selecting("PSPAN-ADJOINT"));
  INFO(pm::to_text(r));
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].law == "PSPAN-ADJOINT");
  CHECK(r.results[0].status == Status::passed);
  CHECK(r.results[0].cases == options.cases);
  CHECK(laws_of(r.left_out) ==
        std::vector<std::string>{"WF-SIZES", "PSPAN-BILINEAR", "PSPAN-GRADIENT"});
  CHECK(*calls == 1); // WF-SIZES only
  // Unselected, the planted gradient fails its law: the test above could fail.
  *calls = 0;
  CHECK(result(pm::validate(m, "conv", options), "PSPAN-GRADIENT").status == Status::failed);
}

TEST_CASE("validator: a selection runs only the machine laws it selects") {
  std::size_t backward_calls = 0;
  const auto counting_backward = [&](const pm::Function<D> &w, const pm::MachineState<D> &x,
                                     const pm::Batch<D> &gy, const pm::Batch<D> &gz) {
    ++backward_calls;
    return reference_backward(w, x, gy, gz);
  };
  const pm::Report r = pm::validate_machine(gm, reference_forward, counting_backward, "machine",
                                            selecting("MACH-EQUATION"));
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].law == "MACH-EQUATION");
  CHECK(r.results[0].cases == options.cases);
  CHECK(laws_of(r.left_out) ==
        std::vector<std::string>{"MACH-CAUSALITY", "MACH-BACKWARD", "MACH-PARAM-GRADIENT"});
  CHECK(backward_calls == 0);
  CHECK(
      pm::validate_machine(gm, reference_forward, counting_backward, "machine", options).passed());
  CHECK(backward_calls > 0);
}

TEST_CASE("validator: a selection names the rows of a span it leaves out") {
  const pm::Report r = pm::validate(conv_span(), "conv", selecting("WF-SIZES"));
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].law == "WF-SIZES");
  CHECK(laws_of(r.left_out) == std::vector<std::string>{"PSPAN-BILINEAR", "PSPAN-ADJOINT",
                                                        "PSPAN-GRADIENT", "PSPAN-COMP"});
}
