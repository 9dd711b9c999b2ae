// Google Benchmark suite of the kernels at the paper's sizes and at large
// sizes (problems.hpp): forward sweep, dual sweep and weight gradient, float
// and double, σ = tanh. GFLOP/s counts the multiply-adds over the weights
// that can be non-zero (DenseMachineShape::valid_weights,
// SequencePlan::valid_terms). The thread count is OMP_NUM_THREADS.
#include "problems.hpp"

#include <benchmark/benchmark.h>

#include <functional>

#include "pm/kernels/span_kernel.hpp"
#include "pm/layers/graph_conv.hpp"

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
    for (const auto &entry : {std::pair{Pass::forward, "forward"}, std::pair{Pass::dual, "dual"},
                              std::pair{Pass::gradient, "gradient"}}) {
      // A named copy, not a structured binding: Clang 14 cannot capture those.
      const Pass pass = entry.first;
      const std::string base = p.machine + "/" + p.size + "/" + entry.second;
      benchmark::RegisterBenchmark((base + "/float").c_str(),
                                   [p, pass](benchmark::State &st) { run<float>(st, p, pass); });
      benchmark::RegisterBenchmark((base + "/double").c_str(),
                                   [p, pass](benchmark::State &st) { run<double>(st, p, pass); });
    }
  return 0;
}();

// The span kernel on a graph span: 1000 nodes, 8000 random edges plus self
// loops, 8 → 8 channels, mean normalisation, batch 16. The span kernel is
// generic: it runs the graph span edge by edge (576 000 edges × channels), 2
// flops per edge and sample, without using its edge × channel structure.
void graph_span(benchmark::State &state, Pass pass) {
  pm::GraphConvSpec c;
  c.nodes = 1000;
  std::mt19937 g(5);
  for (Index e = 0; e < 8000; ++e) c.edges.emplace_back(g() % 1000, g() % 1000);
  c.in_channels = c.out_channels = 8;
  c.self_loops = true;
  c.norm = pm::GraphNorm::mean;
  const pm::ParametricSpan<float> a = pm::graph_conv<float>(c);
  const SpanPlan<float> plan = span_plan(a);
  const Index batch = 16;
  const pm_bench::Inputs<float> in(a.source() * batch, a.parameters(), c.in_channels);
  std::vector<float> y(a.target() * batch), x(a.source() * batch), dw(a.parameters());
  for (auto _ : state) {
    if (pass == Pass::forward) span_forward<float>(plan, in.w, in.y0, batch, y);
    if (pass == Pass::dual) span_transpose<float>(plan, in.w, in.gy, batch, x);
    if (pass == Pass::gradient) span_parameter_gradient<float>(plan, in.y0, in.gy, batch, dw);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(double(2 * a.apex() * batch) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(graph_span, forward, Pass::forward);
BENCHMARK_CAPTURE(graph_span, transpose, Pass::dual);
BENCHMARK_CAPTURE(graph_span, gradient, Pass::gradient);

// The 2-D convolution machine: dims [16]×4, a 32 × 32 grid, 3 × 3 kernel
// (pad 1 on every side), batch 8, float. GFLOP/s as for the 1-D machine
// (SequencePlan::valid_terms: the taps' positions that exist).
void conv2d(benchmark::State &state, Pass pass) {
  const SequencePlan p = plan(Conv2MachineShape{{16, 16, 16, 16}, 32, 32, 8, {1, 1, 1, 1}});
  const pm_bench::Inputs<float> in(p.state_size(), p.weight_size(), p.n * p.taps.size());
  std::vector<float> y(p.state_size()), z(y.size()), yb(y.size()), zb(y.size()),
      dw(p.weight_size());
  const Activation s = Activation::tanh;
  sequence_forward<float>(p, s, in.w, in.y0, in.z0, y, z);
  sequence_dual<float>(p, s, in.w, y, in.gy, in.gz, yb, zb);
  for (auto _ : state) {
    if (pass == Pass::forward) sequence_forward<float>(p, s, in.w, in.y0, in.z0, y, z);
    if (pass == Pass::dual) sequence_dual<float>(p, s, in.w, y, in.gy, in.gz, yb, zb);
    if (pass == Pass::gradient) sequence_weight_gradient<float>(p, z, yb, dw);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(double(2 * p.valid_terms()) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(conv2d, forward, Pass::forward);
BENCHMARK_CAPTURE(conv2d, dual, Pass::dual);
BENCHMARK_CAPTURE(conv2d, gradient, Pass::gradient);

} // namespace

BENCHMARK_MAIN();
