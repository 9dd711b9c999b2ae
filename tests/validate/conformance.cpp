// Conformance: a hand-written C++ conv2d and machine, correct and with each
// fault class planted (wrong dilation, wrong padding offset, reversed
// kernel, a missing channel group, a level typo that zeroes weights, a
// backward that forgets the batch sum), checked against the specification
// by recover_span, span_diff, check_layer and check_machine. The expected
// coefficients come from the catalogue constructors (pm::conv), never from
// the code under test.
#include <catch2/catch.hpp>

#include "pm/layers.hpp"
#include "pm/validate/conformance.hpp"
#include "validate/support/conv_description.hpp"
#include "validate/support/hand_conv.hpp"
#include "validate/support/hand_machine.hpp"

using pm::Index;
using pm::Rational;
using pm::Status;
using pm_test::dense_machine_spec;
using pm_test::Fault;
using pm_test::hand;
using pm_test::HandConv2d;
using pm_test::HandMachine;
using pm_test::HandMachineOf;

namespace {

using pm_test::result;

// The same layer with a batched forward, counting its calls.
struct BatchedConv : HandConv2d<double> {
  mutable std::size_t batch_calls = 0;
  pm::Batch<double> apply_batch(const pm::Function<double> &w, const pm::Batch<double> &xs) const {
    ++batch_calls;
    return pm::map_columns(xs, target_size(),
                           [&](const pm::Function<double> &x) { return apply(w, x); });
  }
};

// Two spatial axes with stride, dilation 2 on the second and padding; 2 groups.
const pm::ConvSpec spec2d{{5, 6}, 4, 4, {2, 3}, {1, 2}, {1, 2}, {1, 1}, {1, 2}, 2};

std::string caught(Fault f) {
  const HandConv2d<double> impl{spec2d, f};
  const pm::Report rep = pm::check_layer(pm_test::conv_description(spec2d), impl, {20, 3});
  const pm::LawResult &r = result(rep, "CONF-SPAN-DIFF");
  INFO(pm::to_text(rep));
  CHECK(result(rep, "CONF-RECOVER").status == Status::passed);
  CHECK(r.status == Status::failed);
  CHECK(!rep.passed());
  CHECK(r.detail.find("intended 1, implemented 0") != std::string::npos);
  return r.detail;
}

} // namespace

TEST_CASE("CONF-RECOVER: the span recovered from a hand-written conv2d is pm::conv's, exactly") {
  const HandConv2d<double> impl{spec2d};
  const auto rec = pm::recover_span(impl);
  INFO(rec.detail);
  REQUIRE(rec.recovered());
  CHECK(rec.exact);
  CHECK(rec.via == "apply");
  CHECK(rec.calls == impl.parameter_size() * impl.source_size() + 1 + 16);
  // Coefficient tensors equal: the edges of pm::conv, merged and re-ordered.
  CHECK(pm::validation::coefficients(rec.span) ==
        pm::validation::coefficients(pm::conv<Rational>(spec2d)));
  // Exact layers are recovered exactly too (at a smaller size: rational
  // arithmetic is slow).
  const pm::ConvSpec small{{4, 5}, 2, 2, {2, 2}, {1, 0}, {0, 1}, {1, 2}, {1, 2}, 2};
  const HandConv2d<Rational> exact{small};
  CHECK(pm::validation::coefficients(pm::recover_span(exact).span) ==
        pm::validation::coefficients(pm::conv<Rational>(small)));
}

TEST_CASE("CONF-RECOVER: a batched forward is called |P| times, a Layer's gradient |X||Y| times") {
  BatchedConv impl;
  impl.c = spec2d;
  const auto rec = pm::recover_span(impl);
  REQUIRE(rec.recovered());
  CHECK(rec.via == "apply_batch");
  CHECK(impl.batch_calls == impl.parameter_size());
  // A span layer with few source and target points: the gradient is cheaper.
  const auto a = pm::dense<Rational>({2, 3, false});
  const pm::SpanLayer<Rational> l{a};
  pm::RecoverOptions o;
  o.probe = pm::Probe::cheapest;
  const auto r = pm::recover_span(l, o);
  REQUIRE(r.recovered());
  CHECK(r.via == "parameter_gradient");
  CHECK(r.calls == 2 * 3 + 1 + 16);
  CHECK(pm::validation::coefficients(r.span) == pm::validation::coefficients(a));
}

TEST_CASE("CONF-RECOVER mutant: an affine layer (a stray +1) is not bilinear") {
  const HandConv2d<double> impl{spec2d, Fault::affine};
  const auto rec = pm::recover_span(impl);
  CHECK(rec.status == pm::RecoveryStatus::not_bilinear);
  CHECK(rec.detail.find("not bilinear: apply(0, 0) gives 1") != std::string::npos);
  CHECK(rec.calls == 1);
  const pm::Report rep = pm::check_layer(pm_test::conv_description(spec2d), impl, {20, 3});
  CHECK(result(rep, "CONF-RECOVER").status == Status::failed);
  CHECK(result(rep, "CONF-SPAN-DIFF").status == Status::not_applicable);
}

TEST_CASE("CONF-RECOVER mutant: a layer quadratic in its input agrees on the basis, not beyond") {
  // x² = x on basis vectors: only the random cases of the check can tell.
  const HandConv2d<double> impl{spec2d, Fault::quadratic};
  const auto rec = pm::recover_span(impl);
  CHECK(rec.status == pm::RecoveryStatus::not_bilinear);
  CHECK(rec.detail.find("the bilinear extension of the basis probes gives") != std::string::npos);
}

TEST_CASE("CONF-RECOVER: a layer above the size bound is refused with how to shrink it") {
  pm::ConvSpec big{{64, 64}, 16, 16, {3, 3}, {}, {}, {}, {}, 1};
  const HandConv2d<double> impl{big};
  const auto rec = pm::recover_span(impl);
  CHECK(rec.status == pm::RecoveryStatus::refused);
  CHECK(rec.calls == 0);
  CHECK(rec.detail.find("shrink the layer") != std::string::npos);
}

TEST_CASE("CONF-SPAN-DIFF: the correct conv2d passes, and a permuted apex is no difference") {
  const HandConv2d<double> impl{spec2d};
  pm::io::LayerDescription d = pm_test::conv_description(spec2d);
  const pm::Report ok = pm::check_layer(d, impl, {20, 3});
  INFO(pm::to_text(ok));
  CHECK(ok.passed());
  CHECK(result(ok, "CONF-SPAN-DIFF").status == Status::passed);
  CHECK(result(ok, "PSPAN-ADJOINT").status == Status::not_applicable);
  // The same edges in reverse order, one of them split into two halves.
  pm::ParametricSpan<Rational> &a = d.span;
  std::reverse(a.span.s.images.begin(), a.span.s.images.end());
  std::reverse(a.span.t.images.begin(), a.span.t.images.end());
  std::reverse(a.pi.images.begin(), a.pi.images.end());
  a.span.mu[0] = Rational(1, 2);
  a.span.s.images.push_back(a.span.s.images[0]);
  a.span.t.images.push_back(a.span.t.images[0]);
  a.pi.images.push_back(a.pi.images[0]);
  a.span.mu.push_back(Rational(1, 2));
  const pm::Report perm = pm::check_layer(d, impl, {20, 3});
  CHECK(perm.passed());
  const pm::SpaceShapes sh{
      spec2d.input_shape(), spec2d.output_shape(), spec2d.parameter_shape(), {}, {}, {}};
  CHECK(pm::span_diff(pm::conv<Rational>(spec2d), a, sh).same());
}

TEST_CASE("CONF-SPAN-DIFF mutant: a wrong dilation is caught, with its pattern") {
  const std::string d = caught(Fault::dilation);
  INFO(d);
  CHECK(d.find("source axis 1 moves by -1 per step of parameter axis 1") != std::string::npos);
}

TEST_CASE("CONF-SPAN-DIFF mutant: a wrong padding offset is caught, with its pattern") {
  const std::string d = caught(Fault::padding);
  INFO(d);
  // Output row i now reads the input row the intended i + 1 read: the
  // same as the source shifted by -1, with fewer border exceptions.
  CHECK(d.find("target axis 0 is shifted by 1 (a shift on this axis, or a padding offset)") !=
        std::string::npos);
}

TEST_CASE("CONF-SPAN-DIFF mutant: a reversed kernel is caught, with its pattern") {
  const std::string d = caught(Fault::reversed);
  INFO(d);
  CHECK(d.find("a kernel flipped on one axis: parameter axis 0 reversed") != std::string::npos);
}

TEST_CASE("CONF-SPAN-DIFF mutant: a missing channel group is caught, with its pattern") {
  const std::string d = caught(Fault::missing_group);
  INFO(d);
  CHECK(d.find("exactly those with target axis 2 at 2..3 (a missing block") != std::string::npos);
}

TEST_CASE("CONF-SPAN-DIFF: differences in multi-index coordinates, the first N and the count") {
  const pm::ParametricSpan<Rational> a = pm::conv<Rational>(spec2d);
  pm::ParametricSpan<Rational> b = a;
  b.span.mu[0] = 0;
  b.span.mu[1] = 3;
  pm::SpaceShapes sh{spec2d.input_shape(), spec2d.output_shape(), spec2d.parameter_shape(),
                     {"y", "x", "c"},      {"y", "x", "o"},       {}};
  pm::SpanDiffOptions o;
  o.max_differences = 1;
  const pm::SpanDiff d = pm::span_diff(a, b, sh, o);
  CHECK(d.count == 2);
  REQUIRE(d.differences.size() == 1);
  // Edge 0 of pm::conv: output (0, 0, 0), kernel (1, 2) (the first inside
  // the padding), input channel 0 of group 0.
  const auto &c = d.differences[0];
  CHECK(c.target == std::vector<Index>{0, 0, 0});
  CHECK(c.intended == 1);
  CHECK(c.implemented == 0);
  const std::string text = pm::to_text(d);
  CHECK(text.find("2 of ") != std::string::npos);
  CHECK(text.find("target (y=0, x=0, o=0) <- source (y=") != std::string::npos);
  CHECK(text.find("... and 1 more") != std::string::npos);
}

namespace {

// The machine laws on the implementation and its conformance, row by row.
const char *const machine_rows[] = {
    "MACH-CAUSALITY",       "MACH-EQUATION",         "MACH-BACKWARD", "MACH-PARAM-GRADIENT",
    "CONF-MACHINE forward", "CONF-MACHINE backward", "CONF-RECOVER",  "CONF-SPAN-DIFF"};

} // namespace

TEST_CASE("CONF-MACHINE: a correct machine implementation passes forward and backward") {
  const auto spec = dense_machine_spec({1, 1, 2, 3});
  const pm::Report rep = pm::check_machine(spec, hand(spec), {10, 5});
  INFO(pm::to_text(rep));
  CHECK(rep.passed());
  CHECK(result(rep, "CONF-MACHINE forward").status == Status::passed);
  CHECK(result(rep, "CONF-MACHINE backward").status == Status::passed);
  CHECK(result(rep, "CONF-MACHINE backward").cases == 10);
  for (const char *law : machine_rows) {
    INFO(law);
    CHECK(result(rep, law).status == Status::passed);
    CHECK(result(rep, law).cases > 0);
  }
  CHECK(result(rep, "CONF-RECOVER").detail.find("16 calls of forward") != std::string::npos);
}

TEST_CASE("CONF-MACHINE mutant: a level typo that zeroes weights is caught, linear part diffed") {
  const auto spec = dense_machine_spec({1, 1, 2, 3});
  // The implementation was built with point 2 at level 1: its edges from
  // points 0 and 1 into point 2 no longer raise the grade and are cleaned away.
  const auto typo = dense_machine_spec({1, 1, 1, 3});
  const pm::Report rep = pm::check_machine(spec, hand(typo), {10, 5});
  INFO(pm::to_text(rep));
  CHECK(result(rep, "CONF-MACHINE forward").status == Status::failed);
  CHECK(result(rep, "CONF-RECOVER").status == Status::passed);
  CHECK(result(rep, "CONF-RECOVER").detail.find("16 calls of forward") != std::string::npos);
  const pm::LawResult &r = result(rep, "CONF-SPAN-DIFF");
  CHECK(r.status == Status::failed);
  CHECK(r.detail.find("2 of ") != std::string::npos);
  CHECK(r.detail.find("target (2) <- source (0) via parameter (2, 0): intended 1, implemented 0") !=
        std::string::npos);
}

TEST_CASE("CONF-MACHINE mutant: a backward that forgets the batch sum is caught") {
  const auto spec = dense_machine_spec({1, 1, 2, 3});
  const pm::Report rep = pm::check_machine(spec, hand(spec, true), {10, 5});
  const pm::LawResult &r = result(rep, "CONF-MACHINE backward");
  INFO(r.detail);
  CHECK(result(rep, "CONF-MACHINE forward").status == Status::passed);
  CHECK(r.status == Status::failed);
  CHECK(r.detail.find("grad w at point") != std::string::npos);
}

TEST_CASE("CONF-MACHINE: a machine without backward has its backward rows not applicable") {
  struct ForwardOnly {
    using scalar_type = Rational;
    HandMachine h;
    auto forward(const pm::Function<Rational> &w, const pm::Batch<Rational> &y0,
                 const pm::Batch<Rational> &z0) const {
      return h.forward(w, y0, z0);
    }
  };
  const auto spec = dense_machine_spec({1, 1, 2, 3});
  const pm::Report rep = pm::check_machine(spec, ForwardOnly{hand(spec)}, {5, 5});
  CHECK(rep.passed());
  for (const char *law : {"MACH-BACKWARD", "MACH-PARAM-GRADIENT", "CONF-MACHINE backward"})
    CHECK(result(rep, law).status == Status::not_applicable);
  CHECK(result(rep, "MACH-EQUATION").status == Status::passed);
}

namespace {

pm::io::MachineDescription with_sigma(pm::io::MachineDescription d, const char *sigma) {
  d.sigma.name = sigma;
  return d;
}

HandMachineOf<double> hand_double(const pm::io::MachineDescription &d, double nudge = 0) {
  return {pm::io::make_machine<double>(d), false, nudge};
}

} // namespace

TEST_CASE("CONF-MACHINE: double, tanh, compared within the derived bound") {
  const auto spec = with_sigma(dense_machine_spec({1, 1, 2, 3}), "tanh");
  // The reference in double: equal to itself, so within any bound.
  const pm::Report ok = pm::check_machine(spec, hand_double(spec), {10, 5});
  INFO(pm::to_text(ok));
  CHECK(ok.passed());
  CHECK(result(ok, "CONF-MACHINE forward").detail.find("derived bound") != std::string::npos);
  CHECK(result(ok, "CONF-RECOVER").status == Status::not_applicable);
  // One more rounding of every y (a relative error of 2^-52, two ulps at
  // most): inside the bound, which allows several ulps per level.
  const pm::Report rounding = pm::check_machine(spec, hand_double(spec, 0x1p-52), {10, 5});
  INFO(pm::to_text(rounding));
  CHECK(result(rounding, "CONF-MACHINE forward").status == Status::passed);
  // A relative error of 10^-6: far outside it.
  const pm::Report off = pm::check_machine(spec, hand_double(spec, 1e-6), {10, 5});
  const pm::LawResult &r = result(off, "CONF-MACHINE forward");
  INFO(r.detail);
  CHECK(r.status == Status::failed);
  CHECK(r.detail.find("> bound") != std::string::npos);
}

TEST_CASE("CONF-MACHINE: double, relu, exact on small integers; a level typo is diffed") {
  const auto spec = dense_machine_spec({1, 1, 2, 3});
  const pm::Report ok = pm::check_machine(spec, hand_double(spec), {10, 5});
  INFO(pm::to_text(ok));
  CHECK(ok.passed());
  CHECK(result(ok, "CONF-RECOVER").detail.find("exact") != std::string::npos);
  // One rounding away from the exact integer is a difference: == applies.
  const pm::Report rounding = pm::check_machine(spec, hand_double(spec, 0x1p-40), {10, 5});
  CHECK(result(rounding, "CONF-MACHINE forward").status == Status::failed);
  const auto typo = dense_machine_spec({1, 1, 1, 3});
  const pm::Report bad = pm::check_machine(spec, hand_double(typo), {10, 5});
  CHECK(result(bad, "CONF-SPAN-DIFF")
            .detail.find(
                "target (2) <- source (0) via parameter (2, 0): intended 1, implemented 0") !=
        std::string::npos);
}

TEST_CASE("CONF-MACHINE: where the derived bound is not finite the rows are too weak") {
  // An implementation in a format with unit roundoff 2^-2: γ_n ≥ 1 for the
  // machine's rounding chains, so its bound allows anything and decides
  // nothing.
  struct Coarse : HandMachineOf<double> {
    double unit_roundoff() const { return 0x1p-2; }
  };
  const auto spec = with_sigma(dense_machine_spec({1, 1, 2, 3}), "tanh");
  const pm::Report rep = pm::check_machine(spec, Coarse{hand_double(spec)}, {5, 5});
  INFO(pm::to_text(rep));
  CHECK(!rep.passed());
  CHECK(result(rep, "CONF-MACHINE forward").status == Status::too_weak);
  CHECK(result(rep, "CONF-MACHINE forward").detail.find("not finite") != std::string::npos);
}

TEST_CASE("CONF-MACHINE: outputs of the wrong shape fail before any bound reads them") {
  struct OneColumn : HandMachineOf<double> {
    std::pair<pm::Batch<double>, pm::Batch<double>> forward(const pm::Function<double> &w,
                                                            const pm::Batch<double> &y0,
                                                            const pm::Batch<double> &z0) const {
      auto [y, z] = HandMachineOf<double>::forward(w, y0, z0);
      z = pm::Batch<double>::from_columns(z.rows, {z.column(0)});
      return {y, z};
    }
  };
  const auto spec = with_sigma(dense_machine_spec({1, 1, 2, 3}), "tanh");
  const pm::Report rep =
      pm::check_machine(spec, OneColumn{hand_double(spec)}, {3, 5}, "impl", false);
  const pm::LawResult &r = result(rep, "CONF-MACHINE forward");
  INFO(r.detail);
  CHECK(r.status == Status::failed);
  CHECK(r.detail.find("z is 4 × 1, expected 4 × 2") != std::string::npos);
}
