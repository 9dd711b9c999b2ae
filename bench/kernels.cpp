// Google Benchmark suite of the kernels at the paper's sizes and at large
// sizes (problems.hpp): forward sweep, dual sweep and weight gradient, float
// and double, σ = tanh. GFLOP/s counts the multiply-adds over the weights
// that can be non-zero (DenseMachineShape::valid_weights,
// SequencePlan::valid_terms). The thread count is OMP_NUM_THREADS.
#include "problems.hpp"

#include <benchmark/benchmark.h>

#include <functional>

using namespace pm::kernels;
using pm::Index;

namespace {

enum class Pass { forward, dual, gradient };

template <class T> void run(benchmark::State &state, const pm_bench::Problem &p, Pass pass) {
  const Activation s = Activation::tanh;
  const DenseMachineShape dense{p.dims, p.batch};
  SequencePlan seq;
  if (p.machine == "conv")
    seq = plan(ConvMachineShape{p.dims, p.length, p.batch, p.pad_lo, p.pad_hi});
  if (p.machine == "recur")
    seq = plan(RecurMachineShape{p.dims, p.length, p.batch, p.max_lag, p.timeblock});
  const bool is_dense = p.machine == "dense";
  const Index states = is_dense ? dense.state_size() : seq.state_size();
  const Index weights = is_dense ? dense.weight_size() : seq.weight_size();
  const Index flops = 2 * (is_dense ? p.batch * dense.valid_weights() : seq.valid_terms());
  const pm_bench::Inputs<T> in(states, weights,
                               dense.channels() * (is_dense ? 1 : seq.taps.size()));
  std::vector<T> y(states), z(states), yb(states), zb(states), dw(weights);
  const std::function<void()> passes[] = {
      [&] {
        is_dense ? dense_forward<T>(dense, s, in.w, in.y0, in.z0, y, z)
                 : sequence_forward<T>(seq, s, in.w, in.y0, in.z0, y, z);
      },
      [&] {
        is_dense ? dense_dual<T>(dense, s, in.w, y, in.gy, in.gz, yb, zb)
                 : sequence_dual<T>(seq, s, in.w, y, in.gy, in.gz, yb, zb);
      },
      [&] {
        is_dense ? dense_weight_gradient<T>(dense, z, yb, dw)
                 : sequence_weight_gradient<T>(seq, z, yb, dw);
      }};
  passes[0]();
  passes[1]();
  for (auto _ : state) {
    passes[int(pass)]();
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(double(flops) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

const int registered = [] {
  for (const auto &p : pm_bench::problems())
    for (auto [pass, pname] : {std::pair{Pass::forward, "forward"}, std::pair{Pass::dual, "dual"},
                               std::pair{Pass::gradient, "gradient"}}) {
      const std::string base = p.machine + "/" + p.size + "/" + pname;
      benchmark::RegisterBenchmark((base + "/float").c_str(),
                                   [p, pass](benchmark::State &st) { run<float>(st, p, pass); });
      benchmark::RegisterBenchmark((base + "/double").c_str(),
                                   [p, pass](benchmark::State &st) { run<double>(st, p, pass); });
    }
  return 0;
}();

} // namespace

BENCHMARK_MAIN();
