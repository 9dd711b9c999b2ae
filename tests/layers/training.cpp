// Training pieces: the mean squared error, SGD and Adam steps, the readout
// layer, and the gradient of a machine followed by a readout.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "pm/category/scalar.hpp"
#include "pm/layers/seed_machines.hpp"
#include "pm/train/model.hpp"
#include "pm/train/optimizer.hpp"

using namespace pm;
using Q = Rational;
using Catch::Contains;

TEST_CASE("mse and its gradient on a hand example") {
  Batch<Q> p(2, 1), t(2, 1);
  p(0, 0) = 1, p(1, 0) = 2; // errors 1 and 2: ℓ = (1 + 4)/2, ∂ℓ/∂ŷ = (2/2)(1, 2)
  CHECK(mse(p, t) == Q(5, 2));
  CHECK(mse_gradient(p, t).data == std::vector<Q>{1, 2});
  CHECK_THROWS_WITH(mse(p, Batch<Q>(2, 2)), Contains("mse: prediction is 2 × 1, expected"));
}

TEST_CASE("SGD and Adam steps") {
  Function<double> w{1.0, -1.0};
  Sgd<double>(0.5).step(w, {2.0, -4.0}); // 1 − 0.5·2, −1 + 0.5·4
  CHECK(w == Function<double>{0.0, 1.0});
  // Adam's first step moves every entry by η g / (|g| + ε): by η up to
  // η ε / |g| (here 5e-10), plus a few roundings of numbers of size 1.
  Function<double> a{1.0, 1.0};
  Adam<double> adam(0.1);
  adam.step(a, {2.0, -0.5});
  const double tol = 0.1 * 1e-8 / 0.5 + 8 * std::numeric_limits<double>::epsilon();
  CHECK(std::abs(a[0] - 0.9) <= tol);
  CHECK(std::abs(a[1] - 1.1) <= tol);
  CHECK_THROWS_WITH(adam.step(a, {1.0}), Contains("Adam::step: gradient has length 1, expected 2"));
}

TEST_CASE("readout: the same affine map of the channels at every position") {
  // 3 positions, 2 channels in, 1 out: o(p) = 2 z(p,0) − z(p,1) + 5.
  const ReadoutSpec r{3, 2, 1};
  Batch<Q> z(6, 1);
  for (Index i = 0; i < 6; ++i) z(i, 0) = Q(int(i));
  const Batch<Q> o = act(readout<Q>(r), Function<Q>{2, -1, 5}, adjoin_unit(z));
  CHECK(o.data == std::vector<Q>{2 * 0 - 1 + 5, 2 * 2 - 3 + 5, 2 * 4 - 5 + 5});
}

// With identity σ and two channel blocks, the prediction is affine in W and
// in the readout separately, so ℓ is quadratic along either and the central
// difference (ℓ(w + v) − ℓ(w − v))/2 is its exact derivative over Q.
TEST_CASE("machine with readout: the gradient is exact along W and along the readout") {
  const std::vector<SeedMachine<Q>> machines{
      DenseMachine<Q>({2, 3}, Sigma<Q>::identity()),
      ConvMachine<Q>({1, 2}, Sigma<Q>::identity(), {1, 1}, {5}),
      RecurMachine<Q>({1, 2}, Sigma<Q>::identity(), 2, 5, 5)}; // one time block: 2 levels
  for (const auto &m : machines) {
    INFO(m.description().kind);
    const MachineWithReadout<Q> model(m, 2);
    auto fill = [k = 0](Index n) mutable {
      Function<Q> f(n);
      for (Q &x : f) x = Q((k = (k * 7 + 3) % 11) - 5, 4); // a fixed spread of quarters
      return f;
    };
    const Index p = m.positions();
    Batch<Q> x(p * 1, 3), t(p * 2, 3); // inputs with one channel, fewer than the machine's
    x.data = fill(x.data.size());
    t.data = fill(t.data.size());
    const ModelParameters<Q> w{fill(m.parameters()), fill(model.readout_spec().parameters())};
    const auto e = model.evaluate(w, x, t);
    CHECK(e.loss == mse(model.predict(w, x), t));
    const Function<Q> vm = fill(w.machine.size()), vr = fill(w.readout.size());
    auto loss_at = [&](const Q &s) {
      return model.evaluate({add(w.machine, scale(s, vm)), add(w.readout, scale(s, vr))}, x, t)
          .loss;
    };
    auto loss_machine = [&](const Q &s) {
      return model.evaluate({add(w.machine, scale(s, vm)), w.readout}, x, t).loss;
    };
    auto loss_readout = [&](const Q &s) {
      return model.evaluate({w.machine, add(w.readout, scale(s, vr))}, x, t).loss;
    };
    CHECK(dot(e.gradient.machine, vm) == (loss_machine(1) - loss_machine(-1)) / 2);
    CHECK(dot(e.gradient.readout, vr) == (loss_readout(1) - loss_readout(-1)) / 2);
    // Along both at once ℓ has degree 4, so the central difference is not
    // exact: a check that the test can tell a wrong derivative apart.
    CHECK(dot(e.gradient.machine, vm) + dot(e.gradient.readout, vr) !=
          (loss_at(1) - loss_at(-1)) / 2);
  }
}

TEST_CASE("seed machines: inputs with more channels than the machine are an error") {
  const DenseMachine<Q> m({2, 3}, Sigma<Q>::relu());
  Batch<Q> two(2, 1);
  two(0, 0) = 3, two(1, 0) = 4;
  const Batch<Q> five = m.expand_channels(two, "y0"); // the prefix, then zeros
  CHECK(five.data == std::vector<Q>{3, 4, 0, 0, 0});
  CHECK(m.select_channels(five, 2) == two);
  CHECK_THROWS_WITH(m.select_channels(five, 6), Contains("select_channels(6), expected at most 5"));
  CHECK_THROWS_WITH(m.forward(Function<Q>(25), Batch<Q>(6, 1)),
                    Contains("DenseMachine: y0 has 6 rows, expected positions (1) × channels with "
                             "at most 5 channels"));
  const ConvMachine<Q> c({1, 1}, Sigma<Q>::relu(), {1, 0}, {4});
  CHECK_THROWS_WITH(c.forward(Function<Q>(c.parameters()), Batch<Q>(5, 1)),
                    Contains("ConvMachine: y0 has 5 rows, expected positions (4)"));
  CHECK_THROWS_WITH(ConvMachine<Q>({1, 1}, Sigma<Q>::relu(), {1}, {4}),
                    Contains("ConvMachine: pad has 1 entries, expected 2"));
  CHECK_THROWS_WITH(RecurMachine<Q>({1, 1}, Sigma<Q>::relu(), 2, 0, 4),
                    Contains("RecurMachine: timeblock is 0"));
  CHECK_THROWS_WITH(DenseMachine<Q>({2, 0}, Sigma<Q>::relu()),
                    Contains("DenseMachine: dims[1] is 0"));
}

TEST_CASE("RecurMachine: lag 0 keeps the weights from an earlier channel block") {
  // dims [1, 1], pad 1, timeblock 1, length 2: four levels (t, block). Lag 0
  // from channel 0 to channel 1 raises the grade in every time block; the
  // authors' code would zero it because there are two time blocks.
  const RecurMachine<Q> m({1, 1}, Sigma<Q>::identity(), 1, 1, 2);
  const Shape P = m.parameter_shape(); // (lag, in, out)
  Function<Q> w(P.size(), Q(1));
  const Function<Q> wc = m.clean(w);
  CHECK(wc[P.flat({0, 0, 1})] == 1);
  CHECK(wc[P.flat({0, 1, 0})] == 0);
  CHECK(wc[P.flat({0, 0, 0})] == 0);
  CHECK(wc[P.flat({1, 1, 0})] == 1); // lag ≥ timeblock: every channel pair
}
