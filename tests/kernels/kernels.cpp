// The machine kernels: a worked example, bad input, and determinism
// (KERNEL-THREADS): the same bits for 1, 2 and 4 threads and for buffers at
// different alignments. Agreement with the reference is checked by the
// differential laws in property_tests/kernels.cpp.
#include "pm/kernels.hpp"
#include "pm/layers/graph_conv.hpp"
#include "pm/layers/seed_machines.hpp"
#include "tests/support/random_values.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>
#include <functional>
#include <random>

using namespace pm;
using namespace pm::kernels;
using pm::kernels::backward;
using pm::kernels::forward;
using pm_test::random_values;

namespace {

// All outputs of the three kernels on one problem, written at an `offset`
// into their buffers (to move their alignment).
template <class T> struct Outputs {
  std::vector<T> y, z, ybar, zbar, dw;
  friend bool operator==(const Outputs &a, const Outputs &b) {
    auto same = [](const std::vector<T> &p, const std::vector<T> &q) {
      return p.size() == q.size() && std::memcmp(p.data(), q.data(), p.size() * sizeof(T)) == 0;
    };
    return same(a.y, b.y) && same(a.z, b.z) && same(a.ybar, b.ybar) && same(a.zbar, b.zbar) &&
           same(a.dw, b.dw);
  }
};

// The three kernels of a machine, on flat buffers.
template <class T> struct Calls {
  Index states, weights;
  std::function<void(std::span<const T>, std::span<const T>, std::span<const T>, std::span<T>,
                     std::span<T>)>
      forward;
  std::function<void(std::span<const T>, std::span<const T>, std::span<const T>, std::span<const T>,
                     std::span<T>, std::span<T>)>
      dual;
  std::function<void(std::span<const T>, std::span<const T>, std::span<T>)> gradient;
};

template <class T> Calls<T> dense_calls(const DenseMachineShape &s, Activation sigma) {
  return {s.state_size(), s.weight_size(),
          [=](auto w, auto y0, auto z0, auto y, auto z) {
            dense_forward<T>(s, sigma, w, y0, z0, y, z);
          },
          [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
            dense_dual<T>(s, sigma, w, y, gy, gz, yb, zb);
          },
          [=](auto z, auto yb, auto dw) { dense_weight_gradient<T>(s, z, yb, dw); }};
}

template <class T> Calls<T> sequence_calls(const SequencePlan &p, Activation sigma) {
  return {p.state_size(), p.weight_size(),
          [=](auto w, auto y0, auto z0, auto y, auto z) {
            sequence_forward<T>(p, sigma, w, y0, z0, y, z);
          },
          [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
            sequence_dual<T>(p, sigma, w, y, gy, gz, yb, zb);
          },
          [=](auto z, auto yb, auto dw) { sequence_weight_gradient<T>(p, z, yb, dw); }};
}

template <class T> Outputs<T> run_all(const Calls<T> &k, Index offset = 0) {
  const Index ns = k.states, nw = k.weights;
  auto shifted = [offset](std::vector<T> v) {
    v.insert(v.begin(), offset, T(0));
    return v;
  };
  const std::vector<T> w = shifted(random_values<T>(nw, 1)), y0 = shifted(random_values<T>(ns, 2)),
                       z0 = shifted(random_values<T>(ns, 3)), gy = shifted(random_values<T>(ns, 4)),
                       gz = shifted(random_values<T>(ns, 5));
  std::vector<T> y(ns + offset), z(ns + offset), yb(ns + offset), zb(ns + offset), dw(nw + offset);
  auto view = [offset](auto &v) { return std::span(v).subspan(offset); };
  auto cview = [offset](const std::vector<T> &v) { return std::span<const T>(v).subspan(offset); };
  k.forward(cview(w), cview(y0), cview(z0), view(y), view(z));
  k.dual(cview(w), cview(y), cview(gy), cview(gz), view(yb), view(zb));
  k.gradient(cview(z), cview(yb), view(dw));
  auto unshift = [offset](std::vector<T> v) { return std::vector<T>(v.begin() + offset, v.end()); };
  return {unshift(y), unshift(z), unshift(yb), unshift(zb), unshift(dw)};
}

// Runs every call of more than one piece in parallel, however small, while
// it lives (kernels::parallel_work).
struct AlwaysParallel {
  double before = kernels::parallel_work;
  AlwaysParallel() { kernels::parallel_work = 0; }
  ~AlwaysParallel() { kernels::parallel_work = before; }
};

template <class T> Outputs<T> run_with_threads(int threads, const Calls<T> &k) {
  const AlwaysParallel parallel;
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  Outputs<T> out = run_all<T>(k);
  omp_set_num_threads(before);
  return out;
}

template <class T> void check_threads(const Calls<T> &k) {
  const Outputs<T> one = run_with_threads<T>(1, k);
  CHECK(run_with_threads<T>(2, k) == one);
  CHECK(run_with_threads<T>(4, k) == one);
}

// A wrong parallel weight gradient: each thread sums its share of the batch
// and the shares are added, so the summation order follows the thread count.
std::vector<float> gradient_by_thread_shares(int threads, const DenseMachineShape &s,
                                             const std::vector<float> &z,
                                             const std::vector<float> &ybar) {
  const Index n = s.channels();
  std::vector<float> dw(n * n, 0.0f);
  omp_set_num_threads(threads);
#pragma omp parallel
  {
    std::vector<float> part(n * n, 0.0f);
#pragma omp for schedule(static)
    for (std::ptrdiff_t b = 0; b < std::ptrdiff_t(s.batch); ++b)
      for (Index x = 0; x < n; ++x)
        for (Index y = 0; y < n; ++y) part[x * n + y] += z[b * n + x] * ybar[b * n + y];
#pragma omp critical
    for (Index k = 0; k < n * n; ++k) dw[k] += part[k];
  }
  return dw;
}

// The span kernel's three passes on one span, batch `batch`.
template <class T>
std::vector<std::vector<T>> span_outputs(const ParametricSpan<T> &a, Index batch) {
  const SpanPlan<T> p = span_plan(a);
  const std::vector<T> w = random_values<T>(a.parameters(), 1),
                       phi = random_values<T>(a.source() * batch, 2),
                       g = random_values<T>(a.target() * batch, 3);
  std::vector<T> y(a.target() * batch), x(a.source() * batch), dw(a.parameters());
  span_forward<T>(p, w, phi, batch, y);
  span_transpose<T>(p, w, g, batch, x);
  span_parameter_gradient<T>(p, phi, g, batch, dw);
  return {y, x, dw};
}

template <class T> void check_span_threads(const ParametricSpan<T> &a, Index batch) {
  const AlwaysParallel parallel;
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<std::vector<T>> one = span_outputs(a, batch);
  for (int threads : {2, 4}) {
    omp_set_num_threads(threads);
    const std::vector<std::vector<T>> other = span_outputs(a, batch);
    for (Index k = 0; k < one.size(); ++k)
      CHECK(std::memcmp(one[k].data(), other[k].data(), one[k].size() * sizeof(T)) == 0);
  }
  omp_set_num_threads(before);
}

// A graph on 150 nodes with repeated edges and self loops; 12 → 8 channels
// (96 parameters), batch 50.
GraphConvSpec graph_spec() {
  GraphConvSpec c;
  c.nodes = 150;
  std::mt19937 g(11);
  for (Index e = 0; e < 600; ++e) c.edges.emplace_back(g() % 150, g() % 150);
  c.in_channels = 12;
  c.out_channels = 8;
  c.self_loops = true;
  c.norm = GraphNorm::mean;
  return c;
}

const DenseMachineShape wide{{3, 0, 17, 1, 40, 8}, 203, 16}; // 13 pieces, the last one short
// 7 pieces of samples (the last one short), a length not divisible by the
// time block, taps beyond the time block.
const ConvMachineShape conv_shape{{3, 1, 9}, 29, 13, 3, 2, 2};
// A 2-D grid of 7 × 5 positions, padding larger than the grid on one side.
const Conv2MachineShape conv2_shape{{3, 1, 6}, 7, 5, 13, {1, 2, 6, 0}, 2};
// A 3-D grid of 4 × 3 × 5 positions, padding larger than the grid along the
// middle axis.
const ConvGridShape conv3_shape{{3, 1, 6}, {4, 3, 5}, 13, {1, 0, 2, 3, 0, 2}, 2};
const RecurMachineShape recur_shape{{3, 1, 9}, 29, 13, 6, 5, 2};

} // namespace

TEST_CASE("dense_forward: a worked example over two blocks") {
  // dims [1, 2]: channel 0 feeds channels 1 and 2; the weight 1 → 2 lies
  // inside block 2 and the weight 2 → 0 goes backwards: both are cleaned.
  const DenseMachineShape s{{1, 2}, 1};
  std::vector<double> w(9, 0.0);
  w[0 * 3 + 1] = 2.0;
  w[0 * 3 + 2] = 3.0;
  w[1 * 3 + 2] = 5.0;
  w[2 * 3 + 0] = 7.0;
  const std::vector<double> y0{1.0, 0.5, 0.0}, z0{0.0, 0.0, 1.0};
  std::vector<double> y(3), z(3);
  dense_forward<double>(s, Activation::identity, w, y0, z0, y, z);
  CHECK(y == std::vector<double>{1.0, 2.5, 3.0});
  CHECK(z == std::vector<double>{1.0, 2.5, 4.0});

  // Dual with g_z = (0, 0, 1): z̄_2 = 1, ȳ_2 = 1, z̄_0 = 3·1, ȳ_0 = 3.
  const std::vector<double> gy(3, 0.0), gz{0.0, 0.0, 1.0};
  std::vector<double> yb(3), zb(3), dw(9);
  dense_dual<double>(s, Activation::identity, w, y, gy, gz, yb, zb);
  CHECK(zb == std::vector<double>{3.0, 0.0, 1.0});
  CHECK(yb == std::vector<double>{3.0, 0.0, 1.0});
  // ∂W(x, y) = z_x ȳ_y for block(x) < block(y): (0,1) = 0, (0,2) = 1.
  dense_weight_gradient<double>(s, z, yb, dw);
  CHECK(dw == std::vector<double>{0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0});
}

TEST_CASE("dense kernels: bad buffers are rejected with the argument named") {
  const DenseMachineShape s{{2, 3}, 4};
  std::vector<float> w(25), st(20), bad(19);
  CHECK_THROWS_WITH(dense_forward<float>(s, Activation::tanh, w, st, bad, st, st),
                    "dense_forward: z0 has 19 entries, expected 20");
  CHECK_THROWS_WITH(dense_dual<float>(s, Activation::tanh, bad, st, st, st, st, st),
                    "dense_dual: W has 19 entries, expected 25");
  CHECK_THROWS_WITH(dense_weight_gradient<float>(s, st, st, bad),
                    "dense_weight_gradient: dW has 19 entries, expected 25");
  CHECK_THROWS_WITH(
      dense_forward<float>(DenseMachineShape{{2, 3}, 4, 0}, Activation::tanh, w, st, st, st, st),
      "DenseMachineShape: batch_piece is 0, expected > 0");
  // Sequences: 2 + 3 channels, length 4, batch 1, pads (1, 0): 2 taps.
  const SequencePlan p = plan(ConvMachineShape{{2, 3}, 4, 1, 1, 0});
  CHECK_THROWS_WITH(sequence_forward<float>(p, Activation::tanh, bad, st, st, st, st),
                    "sequence_forward: W has 19 entries, expected 50");
  CHECK_THROWS_WITH(
      sequence_dual<float>(p, Activation::tanh, std::vector<float>(50), st, bad, st, st, st),
      "sequence_dual: ybar0 has 19 entries, expected 20");
  CHECK_THROWS_WITH(plan(RecurMachineShape{{2, 3}, 4, 1, 2, 0}),
                    "RecurMachineShape: timeblock is 0, expected >= 1");
}

TEST_CASE("KERNEL-THREADS: the kernels give the same bits for 1, 2 and 4 threads") {
  check_threads(dense_calls<float>(wide, Activation::tanh));
  check_threads(dense_calls<double>(wide, Activation::tanh));
  check_threads(sequence_calls<float>(plan(conv_shape), Activation::tanh));
  check_threads(sequence_calls<double>(plan(conv_shape), Activation::sigmoid));
  check_threads(sequence_calls<float>(plan(recur_shape), Activation::sigmoid));
  check_threads(sequence_calls<float>(plan(conv2_shape), Activation::tanh));
  check_threads(sequence_calls<double>(plan(conv2_shape), Activation::sigmoid));
  check_threads(sequence_calls<double>(plan(recur_shape), Activation::tanh));
  check_threads(sequence_calls<float>(plan(conv3_shape), Activation::tanh));
  check_threads(sequence_calls<double>(plan(conv3_shape), Activation::sigmoid));
  RecurMachineShape automatic = recur_shape; // batch_piece 0: 7 samples a piece
  automatic.batch_piece = 0;
  CHECK(plan(automatic).batch_piece == 7);
  check_threads(sequence_calls<float>(plan(automatic), Activation::tanh));
}

TEST_CASE("KERNEL-THREADS: the span kernel gives the same bits for 1, 2 and 4 threads") {
  check_span_threads(graph_conv<float>(graph_spec()), 50);
  check_span_threads(graph_conv<double>(graph_spec()), 50);
}

// The graph kernel's three passes on graph_spec(), batch 50 (two pieces of
// samples), at 1, 2 and 4 threads.
template <class T> void check_graph_threads() {
  const GraphConvSpec spec = graph_spec();
  const GraphPlan<T> p = graph_plan<T>(spec);
  const Index batch = 50, x = spec.nodes * spec.in_channels * batch,
              y = spec.nodes * spec.out_channels * batch;
  const std::vector<T> w = random_values<T>(spec.in_channels * spec.out_channels, 1),
                       phi = random_values<T>(x, 2), g = random_values<T>(y, 3);
  auto run = [&](int threads) {
    const AlwaysParallel parallel;
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<T> out(y), back(x), dw(w.size());
    graph_forward<T>(p, w, phi, batch, out);
    graph_transpose<T>(p, w, g, batch, back);
    graph_weight_gradient<T>(p, phi, g, batch, dw);
    omp_set_num_threads(before);
    return std::vector<std::vector<T>>{out, back, dw};
  };
  const auto one = run(1);
  for (int threads : {2, 4}) CHECK(run(threads) == one);
}

TEST_CASE("KERNEL-THREADS: the graph kernel gives the same bits for 1, 2 and 4 threads") {
  CHECK(kernels::detail::graph_piece(graph_spec().nodes) < 50); // more than one piece of samples
  check_graph_threads<float>();
  check_graph_threads<double>();
}

TEST_CASE("KERNEL-THREADS: the kernels give the same bits at any buffer alignment") {
  for (Activation sigma : {Activation::tanh, Activation::sigmoid}) {
    for (const Calls<float> &k :
         {dense_calls<float>(wide, sigma), sequence_calls<float>(plan(conv_shape), sigma),
          sequence_calls<float>(plan(recur_shape), sigma)}) {
      const Outputs<float> f0 = run_all<float>(k);
      for (Index offset : {1, 2, 3, 5, 8}) CHECK(run_all<float>(k, offset) == f0);
    }
    for (const Calls<double> &k :
         {dense_calls<double>(wide, sigma), sequence_calls<double>(plan(recur_shape), sigma)}) {
      const Outputs<double> d0 = run_all<double>(k);
      for (Index offset : {1, 3}) CHECK(run_all<double>(k, offset) == d0);
    }
  }
}

TEST_CASE("KERNEL-THREADS mutant: a gradient summed in per-thread shares changes bits") {
  const Outputs<float> out = run_all<float>(dense_calls<float>(wide, Activation::tanh));
  const int before = omp_get_max_threads();
  const std::vector<float> g1 = gradient_by_thread_shares(1, wide, out.z, out.ybar);
  const std::vector<float> g4 = gradient_by_thread_shares(4, wide, out.z, out.ybar);
  omp_set_num_threads(before);
  CHECK(std::memcmp(g1.data(), g4.data(), g1.size() * sizeof(float)) != 0);
}

TEST_CASE("dispatch: structured machines run their kernel, the others the generic solver") {
  const DenseMachine<double> dense({2, 3, 1}, Sigma<double>::tanh());
  const ConvMachine<float> conv1({2, 1}, Sigma<float>::sigmoid(), {1, 2}, {7});
  const ConvMachine<float> conv2({2, 1}, Sigma<float>::tanh(), {1, 0, 0, 1}, {3, 4});
  const ConvMachine<float> conv3({2, 1}, Sigma<float>::tanh(), {1, 0, 0, 1, 0, 0}, {3, 4, 2});
  const RecurMachine<double> recur({1, 2}, Sigma<double>::identity(), 3, 2, 9);
  const DenseMachine<double> relu({2, 3}, Sigma<double>::relu());
  CHECK(path(dense) == Path::dense);
  CHECK(path(conv1) == Path::sequence);
  CHECK(path(conv2) == Path::sequence);
  CHECK(path(conv3) == Path::sequence);
  CHECK(path(recur) == Path::sequence);
  CHECK(path(relu) == Path::generic);

  // The dispatched passes are the kernels' (same bits as a direct call) and
  // the fallback is the reference solver's.
  const Index n = 6, batch = 3;
  const Function<double> w = random_values<double>(n * n, 7);
  Batch<double> y0(n, batch), z0(n, batch);
  y0.data = random_values<double>(n * batch, 8);
  z0.data = random_values<double>(n * batch, 9);
  const MachineState<double> x = kernels::forward(dense, w, y0, z0);
  std::vector<double> y(n * batch), z(n * batch);
  dense_forward<double>({{2, 3, 1}, batch}, Activation::tanh, w, y0.data, z0.data, y, z);
  CHECK(x.y.data == y);
  CHECK(x.z.data == z);
  const Gradients<double> g = kernels::backward(dense, w, x, z0, y0);
  std::vector<double> yb(n * batch), zb(n * batch), dw(n * n);
  dense_dual<double>({{2, 3, 1}, batch}, Activation::tanh, w, x.y.data, z0.data, y0.data, yb, zb);
  dense_weight_gradient<double>({{2, 3, 1}, batch}, x.z.data, yb, dw);
  CHECK(g.y0.data == yb);
  CHECK(g.z0.data == zb);
  CHECK(g.w == dw);

  const Function<double> wr = random_values<double>(25, 10);
  Batch<double> r0(5, batch);
  r0.data = random_values<double>(5 * batch, 11);
  CHECK(kernels::forward(relu, wr, r0, r0).z == relu.forward(wr, r0, r0).z);
}

TEST_CASE("dispatch: exact scalars take the generic solver") {
  const DenseMachine<Rational> dense({1, 1}, Sigma<Rational>::identity());
  CHECK(path(dense) == Path::generic);
  const Function<Rational> w{0, 2, 0, 0};
  Batch<Rational> y0(2, 1);
  y0.data = {1, 0};
  CHECK(kernels::forward(dense, w, y0, Batch<Rational>(2, 1)).z.data ==
        std::vector<Rational>{1, 2});
}

TEST_CASE("dispatch: the layer of a span runs the span kernel, or pm::act for exact scalars") {
  GraphConvSpec c{4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}}, 2, 3, true, GraphNorm::sum};
  const ParametricSpan<double> a = graph_conv<double>(c);
  const Function<double> w = random_values<double>(6, 12);
  Batch<double> phi(8, 3);
  phi.data = random_values<double>(24, 13);
  std::vector<double> y(12 * 3);
  span_forward<double>(span_plan(a), w, phi.data, 3, y);
  CHECK(kernels::act(a, w, phi).data == y);
  CHECK_THROWS_WITH(kernels::act(a, w, Batch<double>(7, 3)),
                    "act: batch has 7 rows, expected the span source size 8");
  CHECK_THROWS_WITH(span_forward<double>(span_plan(a), w, phi.data, 2, y),
                    "span_forward: phi has 24 entries, expected 8 × 2");

  // Exact: edges 0 → 0 and 1 → 0 with μ = (1, 2), parameters (3, 5).
  const ParametricSpan<Rational> r{
      Span<Rational>{FinMap(2, {0, 1}), FinMap(1, {0, 0}), Measure<Rational>{1, 2}},
      FinMap(2, {0, 1})};
  Batch<Rational> pr(2, 1);
  pr.data = {7, 11};
  CHECK(kernels::act(r, Function<Rational>{3, 5}, pr).data == std::vector<Rational>{131});
}
