#pragma once
// The cases on which the machine kernels are compared with the reference
// (reference_check.hpp): a machine's shape, σ, batch, batch piece and data
// seed, the one line that describes (and reproduces) the case, and the
// problem it makes: the reference graded span machine of src/pm/layers/ in
// long double and the kernel on the same shape.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "pm/kernels/dense_machine.hpp"
#include "pm/kernels/reference_check.hpp"
#include "pm/kernels/sequence_machine.hpp"
#include "pm/kernels/weight_gradient.hpp"
#include "pm/layers/dense.hpp"
#include "pm/layers/graph_conv.hpp"
#include "pm/layers/seed_machines.hpp"

namespace pm::kernels {

// What every case has besides its machine's shape.
struct CaseCommon {
  Index batch = 1;
  Index piece = 1;
  Activation sigma = Activation::tanh;
  std::uint32_t seed = 0;
};

struct DenseCase {
  std::vector<Index> dims;
  CaseCommon c;
};
struct ConvCase {
  std::vector<Index> dims;
  Index length = 1, lo = 0, hi = 0;
  CaseCommon c;
};
// A grid of Axes axes (the 2-D and 3-D convolution machines).
template <Index Axes> struct GridCase {
  std::vector<Index> dims;
  std::vector<Index> extents, pad;
  CaseCommon c;
};
using Conv2Case = GridCase<2>;
using Conv3Case = GridCase<3>;
struct RecurCase {
  std::vector<Index> dims;
  Index length = 1, max_lag = 0, timeblock = 1;
  CaseCommon c;
};

// ---- The ranges of the generated cases ---------------------------------
// One definition for both generators of cases: RapidCheck's, in
// property_tests/kernels*.cpp (they shrink a failure, and their ranges grow
// with RapidCheck's case size, so early cases are small), and the seeded
// draws of `pmach check --kernels` (src/pm/validate/kernel_checks.hpp, which
// reproduce case k from the seed S + k alone). Bounds are inclusive.

struct Range {
  Index lo, hi;
};

// From below the padding and the time block up to a few channels per block.
namespace case_ranges {

inline constexpr Range batch{1, 7};
inline constexpr Index pieces[] = {1, 2, 3, 128}; // 1 to 3 samples per piece, and all at once
inline constexpr Activation sigmas[] = {Activation::identity, Activation::tanh,
                                        Activation::sigmoid};

// Channel blocks: 1 to max_blocks blocks, each empty (only when min_size is
// 0), of one channel, or of max(min_size, 2) to max_size channels, in the
// proportions of the weights.
struct Blocks {
  Index max_blocks, min_size, max_size;
  Index empty_weight() const { return min_size == 0 ? 2 : 0; }
  static constexpr Index one_weight = 3, more_weight = 6;
  Range more() const { return {std::max<Index>(min_size, 2), max_size}; }
};
inline constexpr Blocks dense_blocks{6, 0, 12};
inline constexpr Blocks conv_blocks{4, 1, 5};
inline constexpr Blocks grid_blocks{3, 1, 4};
inline constexpr Blocks recur_blocks{3, 1, 4};

inline constexpr Range conv_length{1, 9}, conv_pad{0, 3};
template <Index Axes> inline constexpr Range grid_extent{1, Axes == 2 ? 5 : 3};
inline constexpr Range grid_pad{0, 2};
inline constexpr Range recur_length{1, 12}, recur_lag{0, 6}, recur_timeblock{1, 5};

// Span kernel: sets of 1 to max elements, empty one time in
// `1 + set_weight`; a square span (source = target) half of the time.
struct SpanSizes {
  Index max_set, max_parameters, max_apex;
  Range batch;
  static constexpr Index empty_weight = 1, set_weight = 9;
};
inline constexpr SpanSizes span_sizes{6, 5, 40, {1, 5}};

// Graph convolutions: 1 to max_nodes nodes, 0 to max_edges edges (so that
// isolated nodes occur), 1 to max_channels channels each way.
struct GraphSizes {
  Index max_nodes, max_edges, max_channels;
  Range batch;
};
inline constexpr GraphSizes graph_sizes{12, 40, 5, {1, 5}};
inline constexpr GraphNorm norms[] = {GraphNorm::sum, GraphNorm::mean, GraphNorm::symmetric};

} // namespace case_ranges

inline std::string describe(const std::vector<Index> &dims, const CaseCommon &c) {
  std::ostringstream os;
  os << "sigma=" << reference_sigma(c.sigma).name() << " dims=[";
  for (Index k = 0; k < dims.size(); ++k) os << (k ? "," : "") << dims[k];
  os << "] batch=" << c.batch << " piece=" << c.piece << " data_seed=" << c.seed;
  return os.str();
}

template <class T> MachineKernel<T> dense_kernel(const DenseMachineShape &shape, Activation sigma) {
  MachineKernel<T> k;
  k.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    dense_forward<T>(shape, sigma, w, y0, z0, y, z);
  };
  k.dual = [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    dense_dual<T>(shape, sigma, w, y, gy, gz, yb, zb);
  };
  k.gradient = [=](auto z, auto yb, auto dw) { dense_weight_gradient<T>(shape, z, yb, dw); };
  return k;
}

template <class T> MachineKernel<T> sequence_kernel(const SequencePlan &plan, Activation sigma) {
  MachineKernel<T> k;
  k.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    sequence_forward<T>(plan, sigma, w, y0, z0, y, z);
  };
  k.dual = [=](auto w, auto y, auto gy, auto gz, auto yb, auto zb) {
    sequence_dual<T>(plan, sigma, w, y, gy, gz, yb, zb);
  };
  k.gradient = [=](auto z, auto yb, auto dw) { sequence_weight_gradient<T>(plan, z, yb, dw); };
  return k;
}

inline DenseMachineShape shape_of(const DenseCase &c) { return {c.dims, c.c.batch, c.c.piece}; }
inline SequencePlan plan_of(const ConvCase &c) {
  return plan(ConvMachineShape{c.dims, c.length, c.c.batch, c.lo, c.hi, c.c.piece});
}
template <Index Axes> SequencePlan plan_of(const GridCase<Axes> &c) {
  return plan(ConvGridShape{c.dims, c.extents, c.c.batch, c.pad, c.c.piece});
}
inline SequencePlan plan_of(const RecurCase &c) {
  return plan(RecurMachineShape{c.dims, c.length, c.c.batch, c.max_lag, c.timeblock, c.c.piece});
}

template <class T> MachineProblem<T> problem(const DenseCase &dc) {
  const DenseMachineShape shape = shape_of(dc);
  const Index n = shape.channels();
  GradedSpanMachine<LD> m(Grading::from_blocks(dc.dims), dense<LD>(DenseSpec{n, n, false}),
                          reference_sigma(dc.c.sigma));
  return machine_problem<T>(std::string("dense<") + type_name(T()) + "> " + describe(dc.dims, dc.c),
                            std::move(m), dc.c.sigma, dc.c.batch, dc.c.seed,
                            dense_kernel<T>(shape, dc.c.sigma), n);
}

template <class T> MachineProblem<T> problem(const ConvCase &cc) {
  const SequencePlan plan = plan_of(cc);
  const ConvMachine<LD> m(cc.dims, reference_sigma(cc.c.sigma), {cc.lo, cc.hi}, {cc.length});
  std::ostringstream os;
  os << "conv1d<" << type_name(T()) << "> length=" << cc.length << " pad=(" << cc.lo << "," << cc.hi
     << ") " << describe(cc.dims, cc.c);
  return machine_problem<T>(os.str(), m.machine(), cc.c.sigma, cc.c.batch, cc.c.seed,
                            sequence_kernel<T>(plan, cc.c.sigma), plan.n * plan.taps.size());
}

template <class T, Index Axes> MachineProblem<T> problem(const GridCase<Axes> &cc) {
  const SequencePlan plan = plan_of(cc);
  const ConvMachine<LD> m(cc.dims, reference_sigma(cc.c.sigma), cc.pad, cc.extents);
  std::ostringstream os;
  os << "conv" << Axes << "d<" << type_name(T()) << "> grid=";
  for (Index j = 0; j < Axes; ++j) os << (j ? "x" : "") << cc.extents[j];
  os << " pad=(";
  for (Index j = 0; j < 2 * Axes; ++j) os << (j ? "," : "") << cc.pad[j];
  os << ") " << describe(cc.dims, cc.c);
  return machine_problem<T>(os.str(), m.machine(), cc.c.sigma, cc.c.batch, cc.c.seed,
                            sequence_kernel<T>(plan, cc.c.sigma), plan.n * plan.taps.size());
}

template <class T> MachineProblem<T> problem(const RecurCase &rc) {
  const SequencePlan plan = plan_of(rc);
  const RecurMachine<LD> m(rc.dims, reference_sigma(rc.c.sigma), rc.max_lag, rc.timeblock,
                           rc.length);
  std::ostringstream os;
  os << "recur<" << type_name(T()) << "> length=" << rc.length << " max_lag=" << rc.max_lag
     << " timeblock=" << rc.timeblock << " " << describe(rc.dims, rc.c);
  return machine_problem<T>(os.str(), m.machine(), rc.c.sigma, rc.c.batch, rc.c.seed,
                            sequence_kernel<T>(plan, rc.c.sigma), plan.n * plan.taps.size());
}

// ---- The span kernel ------------------------------------------------------

// A random parametric span: the legs and μ drawn from `seed`; an edge is a
// copy of an earlier one a quarter of the time (repeated edges). A leg into
// an empty set forces the apex to be empty.
struct SpanCase {
  Index source = 1, target = 1, parameters = 1, apex = 0, batch = 1;
  std::uint32_t seed = 0;
};

template <class T> ParametricSpan<T> random_span(const SpanCase &c) {
  std::mt19937 g(c.seed);
  const Index apex = c.source && c.target && c.parameters ? c.apex : 0;
  ParametricSpan<T> a;
  a.span.s.codomain = c.source;
  a.span.t.codomain = c.target;
  a.pi.codomain = c.parameters;
  a.span.mu = draw<T>(g, apex, T(1));
  for (Index e = 0; e < apex; ++e) {
    if (e > 0 && g() % 4 == 0) {
      const Index f = g() % e;
      a.span.s.images.push_back(a.span.s(f));
      a.span.t.images.push_back(a.span.t(f));
      a.pi.images.push_back(a.pi(f));
      a.span.mu[e] = a.span.mu[f];
      continue;
    }
    a.span.s.images.push_back(g() % c.source);
    a.span.t.images.push_back(g() % c.target);
    a.pi.images.push_back(g() % c.parameters);
  }
  return a;
}

template <class T> std::string describe(const SpanCase &c) {
  std::ostringstream os;
  os << "span<" << type_name(T()) << "> source=" << c.source << " target=" << c.target
     << " parameters=" << c.parameters << " apex=" << c.apex << " batch=" << c.batch
     << " seed=" << c.seed;
  return os.str();
}

template <class T> SpanProblem<T> problem(const SpanCase &c) {
  return span_problem(describe<T>(c), random_span<T>(c), c.batch, c.seed);
}

// ---- Graph convolutions ---------------------------------------------------

struct GraphCase {
  GraphConvSpec spec; // its edges' endpoints are drawn by with_endpoints
  Index batch = 1;
  std::uint32_t seed = 0;
};

inline const char *norm_name(GraphNorm n) {
  switch (n) {
  case GraphNorm::sum:
    return "sum";
  case GraphNorm::mean:
    return "mean";
  case GraphNorm::symmetric:
    return "symmetric";
  }
  return "?";
}

// The case with its endpoints drawn from its seed, a quarter of the edges
// repeating an earlier one.
inline GraphCase with_endpoints(GraphCase c) {
  std::mt19937 g(c.seed);
  for (auto &[u, v] : c.spec.edges) {
    u = g() % c.spec.nodes;
    v = g() % c.spec.nodes;
  }
  for (Index e = 1; e < c.spec.edges.size(); ++e)
    if (g() % 4 == 0) c.spec.edges[e] = c.spec.edges[g() % e];
  return c;
}

template <class T> std::string describe(const GraphCase &c) {
  std::ostringstream os;
  os << "graph<" << type_name(T()) << "> nodes=" << c.spec.nodes << " edges=" << c.spec.edges.size()
     << " channels=" << c.spec.in_channels << "->" << c.spec.out_channels
     << " self_loops=" << c.spec.self_loops << " norm=" << norm_name(c.spec.norm)
     << " batch=" << c.batch << " seed=" << c.seed;
  return os.str();
}

// The graph kernel's problem (with_endpoints already applied to c).
template <class T> GraphProblem<T> graph_problem(const GraphCase &c) {
  return graph_problem<T>(describe<T>(c), c.spec, c.batch, c.seed);
}

} // namespace pm::kernels
