// The slope σ'(y) that the sequence machines' forward keeps for the dual
// (sequence_forward with `slope`, sequence_dual at the slope): the same bits
// for 1, 2 and 4 threads (KERNEL-THREADS), which plans keep it
// (keeps_slope), and that kernels::forward/backward keep and read it. That
// the dual at the slope has the bits of the one at y is law_kernels_dual.
#include "pm/kernels.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>
#include <random>

#include "pm/kernels/dispatch.hpp"
#include "pm/layers/seed_machines.hpp"

using namespace pm;
using namespace pm::kernels;

namespace {

std::vector<float> random_values(Index n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  for (float &x : v) x = float(int(g() % 2001) - 1000) / 1000.0f;
  return v;
}

// y, z, the slope, ȳ and z̄ of the forward keeping the slope and the dual
// at it, with `threads` threads and every call of more than one piece in
// parallel.
std::vector<float> kept_outputs(const SequencePlan &p, int threads) {
  const double work_before = parallel_work;
  const int threads_before = omp_get_max_threads();
  parallel_work = 0;
  omp_set_num_threads(threads);
  const Index ns = p.state_size();
  const auto w = random_values(p.weight_size(), 1), y0 = random_values(ns, 2),
             z0 = random_values(ns, 3), gy = random_values(ns, 4), gz = random_values(ns, 5);
  std::vector<float> y(ns), z(ns), slope(ns), yb(ns), zb(ns);
  sequence_forward<float>(p, Activation::tanh, w, y0, z0, y, z, slope);
  sequence_dual<float>(p, w, slope, gy, gz, yb, zb);
  parallel_work = work_before;
  omp_set_num_threads(threads_before);
  std::vector<float> all;
  for (const auto *v : {&y, &z, &slope, &yb, &zb}) all.insert(all.end(), v->begin(), v->end());
  return all;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

TEST_CASE("KERNEL-THREADS: the kept slope and the dual at it give the same bits for 1, 2, 4 "
          "threads") {
  for (const SequencePlan &p : {plan(ConvMachineShape{{3, 4, 2}, 9, 7, 2, 1, 2}),
                                plan(RecurMachineShape{{2, 5, 3}, 11, 6, 4, 3, 2}),
                                plan(ConvGridShape{{2, 3}, {3, 5}, 5, {1, 0, 2, 1}, 2})}) {
    REQUIRE(p.batch > p.batch_piece); // more than one piece
    REQUIRE(keeps_slope(p));
    const std::vector<float> one = kept_outputs(p, 1);
    CHECK(same_bits(kept_outputs(p, 2), one));
    CHECK(same_bits(kept_outputs(p, 4), one));
  }
}

TEST_CASE("keeps_slope: the product path up to kept_slope_values values a piece, not the direct "
          "path") {
  CHECK(keeps_slope(plan(ConvMachineShape{{32, 32, 32, 32, 32}, 16, 32, 3, 3})));     // 40 960
  CHECK_FALSE(keeps_slope(plan(ConvMachineShape{{64, 64, 64, 64}, 256, 16, 3, 3})));  // 131 072
  CHECK_FALSE(keeps_slope(plan(RecurMachineShape{{64, 64, 64, 64}, 128, 16, 6, 5}))); // 262 144
  const SequencePlan direct = plan(ConvMachineShape{{4, 4}, direct_min_positions, 2, 1, 1});
  REQUIRE(direct_wanted(direct));
  CHECK_FALSE(keeps_slope(direct));
}

TEST_CASE("kernels::forward keeps the slope of a sequence machine, and backward reads it") {
  const RecurMachine<float> m({2, 3}, Sigma<float>::tanh(), 3, 2, 7); // lags 0..3, time block 2
  const Index batch = 4, n = m.machine().size();
  Function<float> w(m.parameters());
  const auto wv = random_values(w.size(), 6);
  std::copy(wv.begin(), wv.end(), w.begin());
  Batch<float> y0(n, batch), z0(n, batch), gy(n, batch), gz(n, batch);
  for (auto [b, seed] : {std::pair{&y0, 7u}, {&z0, 8u}, {&gy, 9u}, {&gz, 10u}}) {
    const auto v = random_values(b->data.size(), seed);
    std::copy(v.begin(), v.end(), b->data.begin());
  }
  std::vector<float> slope;
  const MachineState<float> x = kernels::forward(m, w, y0, z0, &slope);
  REQUIRE(slope.size() == x.y.data.size());
  const Gradients<float> kept = kernels::backward(m, w, x, gy, gz, &slope),
                         again = kernels::backward(m, w, x, gy, gz);
  CHECK(same_bits(kept.y0.data, again.y0.data));
  CHECK(same_bits(kept.z0.data, again.z0.data));
  CHECK(same_bits(std::vector<float>(kept.w.begin(), kept.w.end()),
                  std::vector<float>(again.w.begin(), again.w.end())));
  std::vector<float> ones(slope.size(), 1.0f);
  CHECK_FALSE(same_bits(kernels::backward(m, w, x, gy, gz, &ones).y0.data, again.y0.data));
}
