// Examples and edge cases of the category core, with expected values worked
// out by hand, and the errors for malformed input.
#include <catch2/catch.hpp>

#include "pm/category.hpp"

using namespace pm;
using Q = Rational;

namespace {
// Catches pm::Error and checks that its message mentions every fragment.
template <class F> void require_error(F &&f, std::initializer_list<const char *> fragments) {
  try {
    f();
  } catch (const Error &e) {
    const std::string msg = e.what();
    for (const char *frag : fragments) {
      INFO(msg);
      CHECK(msg.find(frag) != std::string::npos);
    }
    return;
  }
  FAIL("expected pm::Error");
}
} // namespace

TEST_CASE("shapes enumerate multi-indices in row-major order") {
  const Shape sh({2, 3, 4});
  CHECK(sh.size() == 24);
  CHECK(sh.flat({1, 2, 3}) == 23);
  CHECK(sh.flat({1, 0, 2}) == 14);
  CHECK(sh.multi(14) == std::vector<Index>{1, 0, 2});
  for (Index f = 0; f < sh.size(); ++f) CHECK(sh.flat(sh.multi(f)) == f);
  CHECK(Shape(std::vector<Index>{}).size() == 1);
  CHECK(Shape({3, 0}).size() == 0);
  require_error([&] { (void)sh.flat({1, 3, 0}); }, {"coordinate 1", "is 3", "< 3"});
  require_error([&] { (void)sh.flat({1, 2}); }, {"2 coordinates", "expected 3"});
  require_error([&] { (void)sh.multi(24); }, {"flat index 24", "< 24"});
}

TEST_CASE("maps compose like functions and are validated") {
  const FinMap f(3, {0, 2, 2, 1}, "f");
  const FinMap g(2, {1, 1, 0}, "g");
  CHECK(compose(g, f).images == std::vector<Index>{1, 0, 0, 1});
  CHECK(compose(g, f).codomain == 2);
  CHECK(terminal_map(3).images == std::vector<Index>{0, 0, 0});
  CHECK(empty_map(4).domain() == 0);
  require_error([] { FinMap(3, {0, 3}, "leg s"); }, {"leg s", "image of 1 is 3", "< codomain size 3"});
  require_error([&] { (void)compose(f, g); }, {"codomain of f has size 2", "domain size of g, 4"});
}

TEST_CASE("pullback, pushforward and integration on a small example") {
  const FinMap f(2, {0, 1, 1});
  const Function<Q> phi{Q(5), Q(7)};
  CHECK(pullback(f, phi) == Function<Q>{Q(5), Q(7), Q(7)});
  const Measure<Q> mu{Q(1, 2), Q(2), Q(-3)};
  CHECK(pushforward(f, mu) == Measure<Q>{Q(1, 2), Q(-1)});
  const Function<Q> psi{Q(4), Q(1), Q(1, 3)};
  // (f_!^μ ψ)(0) = 1/2·4, (f_!^μ ψ)(1) = 2·1 − 3·1/3.
  CHECK(integrate(f, mu, psi) == Function<Q>{Q(2), Q(1)});
  // An empty fibre integrates to zero.
  CHECK(integrate(FinMap(3, {0, 0}), Measure<Q>{Q(1), Q(1)}, Function<Q>{Q(2), Q(3)}) ==
        Function<Q>{Q(5), Q(0), Q(0)});
  require_error([&] { (void)pullback(f, Function<Q>{Q(1)}); }, {"pullback", "length 1", "expected 2"});
  require_error([&] { (void)integrate(f, Measure<Q>{Q(1)}, psi); }, {"measure", "length 1", "expected 3"});
  require_error([&] { (void)pushforward(f, Measure<Q>{}); }, {"pushforward", "length 0", "expected 3"});
}

TEST_CASE("fibre products enumerate pairs lexicographically") {
  const FinMap f(2, {1, 0, 1});
  const FinMap g(2, {1, 1, 0});
  const FibreProduct fp = fibre_product(f, g);
  CHECK(fp.p.images == std::vector<Index>{0, 0, 1, 2, 2});
  CHECK(fp.q.images == std::vector<Index>{0, 1, 2, 0, 1});
  require_error([] { (void)fibre_product(FinMap(2, {0}), FinMap(3, {0})); },
                {"codomain size 2", "codomain size of g, 3"});
}

TEST_CASE("the operator of a span is a matrix-vector product") {
  // X = {0,1}, Y = {0,1,2}; edges (x→y, μ): (0→0, 2), (1→0, 3), (1→2, −1), (1→2, 1/2).
  const Span<Q> a{FinMap(2, {0, 1, 1, 1}), FinMap(3, {0, 0, 2, 2}), {Q(2), Q(3), Q(-1), Q(1, 2)}};
  a.validate();
  const Function<Q> phi{Q(1), Q(10)};
  CHECK(act(a, phi) == Function<Q>{Q(32), Q(0), Q(-5)});
  CHECK(act(transpose(a), Function<Q>{Q(1), Q(1), Q(2)}) == Function<Q>{Q(2), Q(2)});
  CHECK(act(identity_span<Q>(2), phi) == phi);
}

TEST_CASE("span composition by fibre product") {
  // a : {0} → {0,1} with edges to 0 (weight 2) and to 1 (weight 3);
  // b : {0,1} → {0} with edges from 0 (weight 5) and twice from 1 (7, 11).
  const Span<Q> a{FinMap(1, {0, 0}), FinMap(2, {0, 1}), {Q(2), Q(3)}};
  const Span<Q> b{FinMap(2, {0, 1, 1}), FinMap(1, {0, 0, 0}), {Q(5), Q(7), Q(11)}};
  const Span<Q> c = compose(b, a);
  CHECK(c.apex() == 3);
  CHECK(c.mu == Measure<Q>{Q(10), Q(21), Q(33)});
  CHECK(act(c, Function<Q>{Q(1)}) == Function<Q>{Q(64)});
  require_error([&] { (void)compose(a, a); }, {"compose(b, a)", "target size 2", "source size of b, 1"});
  Span<Q> bad = a;
  bad.mu.pop_back();
  require_error([&] { bad.validate("layer"); }, {"layer.mu", "length 1", "expected 2"});
  bad = a;
  bad.t.images.pop_back();
  require_error([&] { bad.validate("layer"); }, {"layer", "domain size 1", "apex size 2"});
}

TEST_CASE("parametric spans: layer, transpose and parameter gradient by hand") {
  // A dense 2 → 1 layer: E = X × Y, π = id, weights w = (w0, w1).
  const ParametricSpan<Q> d{{FinMap(2, {0, 1}), FinMap(1, {0, 0}), {Q(1), Q(1)}}, FinMap(2, {0, 1})};
  const Function<Q> w{Q(3), Q(-2)}, phi{Q(5), Q(7)}, g{Q(4)};
  CHECK(act(d, w, phi) == Function<Q>{Q(1)});
  CHECK(act(transpose(d), w, g) == Function<Q>{Q(12), Q(-8)});
  CHECK(parameter_gradient(d, phi, g) == Function<Q>{Q(20), Q(28)});
  require_error([&] { (void)act(d, Function<Q>{Q(1)}, phi); }, {"parameters", "length 1", "expected 2"});
  ParametricSpan<Q> bad = d;
  bad.pi.images.push_back(0);
  require_error([&] { bad.validate("dense"); }, {"dense", "parameter leg", "apex size 2"});
  // Composite of two parametric spans has P_a × P_b parameters.
  const ParametricSpan<Q> e = compose(d, transpose(d));
  CHECK(e.parameters() == 4);
  CHECK(act(e, tensor(w, w), g) == act(d, w, act(transpose(d), w, g)));
}

TEST_CASE("span isomorphism returns a witness or nothing") {
  const Span<Q> a{FinMap(2, {0, 1, 1}), FinMap(2, {1, 0, 0}), {Q(1), Q(2), Q(3)}};
  const Span<Q> b{FinMap(2, {1, 0, 1}), FinMap(2, {0, 1, 0}), {Q(3), Q(1), Q(2)}};
  const auto h = span_isomorphism(a, b);
  REQUIRE(h.has_value());
  CHECK(h->images == std::vector<Index>{1, 2, 0});
  CHECK(is_span_isomorphism(a, b, *h));
  CHECK_FALSE(is_span_isomorphism(a, b, identity_map(3)));
  Span<Q> c = b;
  c.mu[0] = Q(4);
  CHECK_FALSE(span_isomorphism(a, c).has_value());
  CHECK_FALSE(span_isomorphism(a, identity_span<Q>(2)).has_value());
}

TEST_CASE("batches apply a layer column by column") {
  const Span<Q> a{FinMap(2, {0, 1}), FinMap(1, {0, 0}), {Q(1), Q(2)}};
  const Batch<Q> x = Batch<Q>::from_columns(2, {{Q(1), Q(1)}, {Q(0), Q(5)}, {Q(2), Q(0)}});
  const Batch<Q> y = act(a, x);
  CHECK(y.rows == 1);
  CHECK(y.data == std::vector<Q>{Q(3), Q(10), Q(2)});
  CHECK(x(1, 1) == Q(5));
  require_error([&] { (void)act(a, Batch<Q>(3, 1)); }, {"batch has 3 rows", "source size 2"});
  require_error([&] { (void)x.column(3); }, {"column 3", "< 3"});
}

TEMPLATE_TEST_CASE("the core works with every scalar type", "", float, double, long double,
                   BinFloat50, Rational) {
  using S = TestType;
  const Span<S> a{FinMap(2, {0, 1}), FinMap(1, {0, 0}), {S(1), S(2)}};
  const Function<S> phi{S(3), S(4)};
  CHECK(act(a, phi) == Function<S>{S(11)});
  CHECK(act(compose(transpose(a), a), phi) == Function<S>{S(11), S(22)});
  CHECK(span_isomorphism(a, a).has_value());
}
