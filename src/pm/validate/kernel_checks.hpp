#pragma once
// pmach check --kernels: the fast kernels of src/pm/kernels/ validated on
// the CPU at hand. Every kernel (dense machine, convolution machines on 1, 2
// and 3 axes, recurrent machine, span kernel), every pass (forward, dual or
// transpose, weight gradient), in float and double, is compared with the
// reference in long double on generated cases within the derived bounds of
// docs/tolerances.md (the laws KERNEL-* of spec/kernels.md, decided by the
// same functions as the property tests, src/pm/kernels/reference_check.hpp),
// and run with one thread and with every available thread, which must give
// the same bits (KERNEL-THREADS). On a model file, the same on the model's
// own kernel: a seed machine's, or the span kernel of a layer.
//
// Case k of a row is drawn from the seed S + k alone, so the reproduction of
// a failure is `--seed S+k --cases 1`, printed with the case's description.
#include <omp.h>

#include <array>
#include <cstring>
#include <functional>
#include <optional>
#include <random>

#include "pm/io/machine_format.hpp"
#include "pm/kernels/check_cases.hpp"
#include "pm/kernels/dispatch.hpp"
#include "pm/numeric/uniform.hpp"
#include "pm/validate/cases.hpp"
#include "pm/validate/report.hpp"

namespace pm {

namespace kernel_checks {

using kernels::Activation;
using kernels::Comparison;
using kernels::LD;

// The engine of case `seed` of the row `salt`: the rows draw different
// cases from one seed (splitmix64 of both, truncated to the engine's seed).
inline std::mt19937 engine(std::uint64_t seed, std::uint64_t salt) {
  std::uint64_t x = seed + 0x9e3779b97f4a7c15ull * (salt + 1);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return std::mt19937(std::uint32_t(x ^ (x >> 31)));
}

namespace ranges = kernels::case_ranges;
using kernels::Range;

inline Index in(std::mt19937 &g, Index lo, Index hi) { return UniformInt<Index>(lo, hi)(g); }
inline Index in(std::mt19937 &g, Range r) { return in(g, r.lo, r.hi); }
template <class T, std::size_t N> T one_of(std::mt19937 &g, const T (&elements)[N]) {
  return elements[in(g, 0, Index(N) - 1)];
}

// The cases of kernels::case_ranges, drawn uniformly but for the
// proportions the ranges give.
inline kernels::CaseCommon common(std::mt19937 &g) {
  kernels::CaseCommon c;
  c.batch = in(g, ranges::batch);
  c.piece = one_of(g, ranges::pieces);
  c.sigma = one_of(g, ranges::sigmas);
  c.seed = std::uint32_t(g());
  return c;
}

// 2 to max_blocks channel blocks, or one block (a machine without weights,
// whose dual and gradient show nothing) one time in six; each empty, of one
// channel or of more in the proportions of the weights.
inline std::vector<Index> blocks(std::mt19937 &g, const ranges::Blocks &b) {
  std::vector<Index> dims(in(g, 0, 5) == 0 ? 1 : in(g, 2, b.max_blocks));
  for (Index &d : dims) {
    const Index k = in(g, 0, b.empty_weight() + b.one_weight + b.more_weight - 1);
    d = k < b.empty_weight() ? 0 : k < b.empty_weight() + b.one_weight ? 1 : in(g, b.more());
  }
  return dims;
}

inline kernels::DenseCase dense_case(std::mt19937 &g) {
  return {blocks(g, ranges::dense_blocks), common(g)};
}
inline kernels::ConvCase conv_case(std::mt19937 &g) {
  kernels::ConvCase c;
  c.dims = blocks(g, ranges::conv_blocks);
  c.length = in(g, ranges::conv_length);
  c.lo = in(g, ranges::conv_pad);
  c.hi = in(g, ranges::conv_pad);
  c.c = common(g);
  return c;
}
template <Index Axes> kernels::GridCase<Axes> grid_case(std::mt19937 &g) {
  kernels::GridCase<Axes> c;
  c.dims = blocks(g, ranges::grid_blocks);
  for (Index j = 0; j < Axes; ++j) c.extents.push_back(in(g, ranges::grid_extent<Axes>));
  for (Index j = 0; j < 2 * Axes; ++j) c.pad.push_back(in(g, ranges::grid_pad));
  c.c = common(g);
  return c;
}
inline kernels::RecurCase recur_case(std::mt19937 &g) {
  kernels::RecurCase c;
  c.dims = blocks(g, ranges::recur_blocks);
  c.length = in(g, ranges::recur_length);
  c.max_lag = in(g, ranges::recur_lag);
  c.timeblock = in(g, ranges::recur_timeblock);
  c.c = common(g);
  return c;
}
inline kernels::SpanCase span_case(std::mt19937 &g) {
  constexpr auto sizes = ranges::span_sizes;
  auto size = [&](Index max) {
    return in(g, 0, sizes.empty_weight + sizes.set_weight - 1) < sizes.empty_weight ? Index(0)
                                                                                    : in(g, 1, max);
  };
  kernels::SpanCase c;
  c.source = size(sizes.max_set);
  c.target = in(g, 0, 1) ? c.source : size(sizes.max_set);
  c.parameters = size(sizes.max_parameters);
  c.apex = size(sizes.max_apex);
  c.batch = in(g, sizes.batch);
  c.seed = std::uint32_t(g());
  return c;
}
inline kernels::GraphCase graph_case(std::mt19937 &g) {
  constexpr auto sizes = ranges::graph_sizes;
  kernels::GraphCase c;
  c.spec.nodes = in(g, 1, sizes.max_nodes);
  c.spec.edges.resize(in(g, 0, sizes.max_edges));
  c.spec.in_channels = in(g, 1, sizes.max_channels);
  c.spec.out_channels = in(g, 1, sizes.max_channels);
  c.spec.self_loops = in(g, 0, 1) == 1;
  c.spec.norm = one_of(g, ranges::norms);
  c.batch = in(g, sizes.batch);
  c.seed = std::uint32_t(g());
  return kernels::with_endpoints(c);
}

// ---- Rows ---------------------------------------------------------------

// Where the cases of a row come from: the generated ones, or a model file's.
struct Source {
  std::string command; // the reproduction without --seed and --cases
};

// One row: `cases` cases, case k drawn from engine(seed + k, salt) by
// make, compared by compare. Failed at the first case beyond its bound,
// with its description and reproduction; too weak when no case was
// informative; else passed, with the worst error against its bound.
template <class Make, class Compare>
LawResult row(const std::string &law, const std::string &subject, const ValidateOptions &opt,
              std::uint64_t salt, const Source &source, Make make, Compare compare) {
  LawResult r{law, subject, Status::passed, 0, false, 0, 0, opt.seed, ""};
  std::size_t informative = 0, weak = 0;
  LD worst = -1;
  for (std::size_t k = 0; k < opt.cases; ++k) {
    std::mt19937 g = engine(opt.seed + k, salt);
    const auto problem = make(g);
    const Comparison c = compare(problem);
    ++r.cases;
    if (c.failed()) {
      r.status = Status::failed;
      r.max_error = double(c.error);
      r.bound = double(c.bound);
      r.detail = problem.repro + ": " + c.failure + "; reproduce: " + source.command + " --seed " +
                 std::to_string(opt.seed + k) + " --cases 1";
      return r;
    }
    if (c.too_weak()) {
      ++weak;
      continue;
    }
    ++informative;
    if (c.worst > worst) {
      worst = c.worst;
      r.max_error = double(c.error);
      r.bound = double(c.bound);
    }
  }
  if (informative == 0) {
    r.status = Status::too_weak;
    r.detail = "every case's outputs were mostly below their tolerance; use more --cases";
  } else if (weak > 0) {
    r.detail = std::to_string(weak) + " of " + std::to_string(r.cases) +
               " cases too weak (outputs mostly below their tolerance)";
  }
  return r;
}

// Runs f with `threads` threads and every call of more than one piece in
// parallel (kernels::parallel_work = 0), then restores both.
template <class F> auto with_threads(int threads, F &&f) {
  const double work = kernels::parallel_work;
  const int before = omp_get_max_threads();
  kernels::parallel_work = 0;
  omp_set_num_threads(threads);
  auto out = f();
  omp_set_num_threads(before);
  kernels::parallel_work = work;
  return out;
}

template <class T>
bool same_bits(const std::vector<std::vector<T>> &a, const std::vector<std::vector<T>> &b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].size() != b[k].size() ||
        std::memcmp(a[k].data(), b[k].data(), a[k].size() * sizeof(T)) != 0)
      return false;
  return true;
}

// Every output of a machine problem's three kernels.
template <class T> std::vector<std::vector<T>> outputs(const kernels::MachineProblem<T> &p) {
  std::vector<T> y(p.a.size()), z(p.a.size()), yb(p.a.size()), zb(p.a.size()), dw(p.w.size());
  p.kernel.forward(p.w, p.a, p.b, y, z);
  p.kernel.dual(p.w, p.a, p.gy, p.gz, yb, zb);
  p.kernel.gradient(p.b, yb, dw);
  return {y, z, yb, zb, dw};
}
template <class T> std::vector<std::vector<T>> outputs(const kernels::SpanProblem<T> &p) {
  std::vector<T> y(p.reference.target() * p.batch), x(p.reference.source() * p.batch),
      dw(p.reference.parameters());
  kernels::span_forward<T>(p.plan, p.w, p.phi, p.batch, y);
  kernels::span_transpose<T>(p.plan, p.w, p.g, p.batch, x);
  kernels::span_parameter_gradient<T>(p.plan, p.phi, p.g, p.batch, dw);
  return {y, x, dw};
}

template <class T> std::vector<std::vector<T>> outputs(const kernels::GraphProblem<T> &p) {
  std::vector<T> y(p.reference.target() * p.batch), x(p.reference.source() * p.batch),
      dw(p.reference.parameters());
  kernels::graph_forward<T>(p.plan, p.w, p.phi, p.batch, y);
  kernels::graph_transpose<T>(p.plan, p.w, p.g, p.batch, x);
  kernels::graph_weight_gradient<T>(p.plan, p.phi, p.g, p.batch, dw);
  return {y, x, dw};
}

// The comparisons of a layer kernel: the span kernel's or the graph kernel's.
template <class T> Comparison layer(const kernels::SpanProblem<T> &p, bool transposed) {
  return kernels::compare_span_layer(p, transposed);
}
template <class T> Comparison layer(const kernels::GraphProblem<T> &p, bool transposed) {
  return kernels::compare_graph_layer(p, transposed);
}
template <class T> Comparison gradient(const kernels::SpanProblem<T> &p) {
  return kernels::compare_span_gradient(p);
}
template <class T> Comparison gradient(const kernels::GraphProblem<T> &p) {
  return kernels::compare_graph_gradient(p);
}

// The subject of the KERNEL-THREADS row of a kernel.
inline std::string threads_subject(const std::string &kernel) {
  return kernel + ", 1 and " + std::to_string(omp_get_max_threads()) + " threads";
}

// KERNEL-THREADS: the outputs of every pass with one thread and with all
// available threads have the same bits.
template <class Make>
LawResult threads_row(const std::string &subject, const ValidateOptions &opt, std::uint64_t salt,
                      const Source &source, Make make) {
  const int threads = omp_get_max_threads();
  LawResult r{
      "KERNEL-THREADS", threads_subject(subject), Status::passed, 0, true, 0, 0, opt.seed, ""};
  r.measured = false;
  if (threads < 2) {
    r.status = Status::not_applicable;
    r.detail = "one thread available (OMP_NUM_THREADS or the CPU): nothing to compare";
    return r;
  }
  for (std::size_t k = 0; k < opt.cases; ++k) {
    std::mt19937 g = engine(opt.seed + k, salt);
    const auto problem = make(g);
    ++r.cases;
    const auto one = with_threads(1, [&] { return outputs(problem); });
    const auto all = with_threads(threads, [&] { return outputs(problem); });
    if (!same_bits(one, all)) {
      r.status = Status::failed;
      r.detail = problem.repro + ": the outputs differ between 1 and " + std::to_string(threads) +
                 " threads; reproduce: " + source.command + " --seed " +
                 std::to_string(opt.seed + k) + " --cases 1";
      return r;
    }
  }
  return r;
}

// The rows of a machine kernel in T: forward, dual and gradient, and threads.
// laws: the law IDs of the three passes (one ID for all three but dense).
template <class T, class Make>
void machine_rows(Report &rep, const std::array<std::string, 3> &laws, const std::string &name,
                  const ValidateOptions &opt, std::uint64_t salt, const Source &source, Make make) {
  const std::string type = std::string(" (") + kernels::type_name(T()) + ")";
  auto problem = [&](std::mt19937 &g) { return make(T(), g); };
  auto pass = [&](const std::string &law, const std::string &subject, auto compare) {
    add_row(rep, opt, law, subject,
            [&] { return row(law, subject, opt, salt, source, problem, compare); });
  };
  pass(laws[0], name + " forward" + type,
       [](const auto &p) { return kernels::compare_forward(p); });
  pass(laws[1], name + " dual" + type,
       [](const auto &p) { return kernels::compare_backward(p, false); });
  pass(laws[2], name + " gradient" + type,
       [](const auto &p) { return kernels::compare_backward(p, true); });
  add_row(rep, opt, "KERNEL-THREADS", threads_subject(name + type),
          [&] { return threads_row(name + type, opt, salt, source, problem); });
}

// The rows of a layer kernel in T: forward, transpose and gradient, and threads.
template <class T, class Make>
void layer_rows(Report &rep, const std::string &law, const std::string &name,
                const ValidateOptions &opt, std::uint64_t salt, const Source &source, Make make) {
  const std::string type = std::string(" (") + kernels::type_name(T()) + ")";
  auto problem = [&](std::mt19937 &g) { return make(T(), g); };
  auto pass = [&](const std::string &subject, auto compare) {
    add_row(rep, opt, law, subject,
            [&] { return row(law, subject, opt, salt, source, problem, compare); });
  };
  pass(name + " forward" + type, [](const auto &p) { return layer(p, false); });
  pass(name + " transpose" + type, [](const auto &p) { return layer(p, true); });
  pass(name + " gradient" + type, [](const auto &p) { return gradient(p); });
  add_row(rep, opt, "KERNEL-THREADS", threads_subject(name + type),
          [&] { return threads_row(name + type, opt, salt, source, problem); });
}

template <class T> void generated_rows(Report &rep, const ValidateOptions &opt) {
  const Source src{"pmach check --kernels"};
  const std::array<std::string, 3> dense{"KERNEL-DENSE-FORWARD", "KERNEL-DENSE-DUAL",
                                         "KERNEL-DENSE-GRADIENT"};
  auto same = [](const char *law) { return std::array<std::string, 3>{law, law, law}; };
  machine_rows<T>(rep, dense, "dense machine", opt, 1, src, [](auto t, std::mt19937 &g) {
    return kernels::problem<decltype(t)>(dense_case(g));
  });
  machine_rows<T>(
      rep, same("KERNEL-CONV"), "conv1d machine", opt, 2, src,
      [](auto t, std::mt19937 &g) { return kernels::problem<decltype(t)>(conv_case(g)); });
  machine_rows<T>(
      rep, same("KERNEL-CONV2D"), "conv2d machine", opt, 3, src,
      [](auto t, std::mt19937 &g) { return kernels::problem<decltype(t)>(grid_case<2>(g)); });
  machine_rows<T>(
      rep, same("KERNEL-CONV3D"), "conv3d machine", opt, 4, src,
      [](auto t, std::mt19937 &g) { return kernels::problem<decltype(t)>(grid_case<3>(g)); });
  machine_rows<T>(
      rep, same("KERNEL-RECUR"), "recurrent machine", opt, 5, src,
      [](auto t, std::mt19937 &g) { return kernels::problem<decltype(t)>(recur_case(g)); });
  layer_rows<T>(rep, "KERNEL-SPAN", "span kernel", opt, 6, src, [](auto t, std::mt19937 &g) {
    return kernels::problem<decltype(t)>(span_case(g));
  });
  layer_rows<T>(rep, "KERNEL-GRAPH", "graph kernel", opt, 9, src, [](auto t, std::mt19937 &g) {
    return kernels::graph_problem<decltype(t)>(graph_case(g));
  });
}

// The law IDs of a seed machine's kernel.
inline std::array<std::string, 3> laws_of(const SeedDescription &d) {
  if (d.kind == "DenseMachine")
    return {"KERNEL-DENSE-FORWARD", "KERNEL-DENSE-DUAL", "KERNEL-DENSE-GRADIENT"};
  const char *law = d.kind == "RecurMachine"  ? "KERNEL-RECUR"
                    : d.positions.size() == 1 ? "KERNEL-CONV"
                    : d.positions.size() == 2 ? "KERNEL-CONV2D"
                                              : "KERNEL-CONV3D";
  return {law, law, law};
}

inline LawResult no_kernel(const std::string &subject, const std::string &why,
                           const ValidateOptions &opt) {
  return {"KERNEL-*", subject, Status::not_applicable, 0, true, 0, 0, opt.seed, why};
}

// A machine file's kernel, on batches of 1 to 4 samples of random data.
template <class T>
void model_rows(Report &rep, const io::MachineDescription &d, const std::string &name,
                const ValidateOptions &opt) {
  const SeedDescription &seed = *d.seed;
  const Activation sigma = *kernels::activation_of(io::make_sigma<T>(d.sigma));
  const GradedSpanMachine<LD> reference = io::make_machine<LD>(d);
  const Source src{"pmach check " + d.file + " --kernels"};
  machine_rows<T>(rep, laws_of(seed), name, opt, 7, src, [&](auto, std::mt19937 &g) {
    const Index batch = in(g, 1, 4);
    const std::uint32_t data = std::uint32_t(g());
    const std::string repro = name + "<" + kernels::type_name(T()) +
                              "> batch=" + std::to_string(batch) +
                              " data_seed=" + std::to_string(data);
    if (seed.kind == "DenseMachine") {
      const kernels::DenseMachineShape shape{seed.dims, batch};
      return kernels::machine_problem<T>(repro, reference, sigma, batch, data,
                                         kernels::dense_kernel<T>(shape, sigma), shape.channels());
    }
    const kernels::SequencePlan plan = kernels::detail::sequence_plan<T>(seed, batch);
    return kernels::machine_problem<T>(repro, reference, sigma, batch, data,
                                       kernels::sequence_kernel<T>(plan, sigma),
                                       plan.n * plan.taps.size());
  });
}

// A layer file's span kernel.
template <class T>
void model_rows(Report &rep, const io::LayerDescription &d, const std::string &name,
                const ValidateOptions &opt) {
  const ParametricSpan<T> a = io::with_scalar<T>(d.span);
  const Source src{"pmach check " + d.file + " --kernels"};
  layer_rows<T>(rep, "KERNEL-SPAN", name, opt, 8, src, [&](auto, std::mt19937 &g) {
    const Index batch = in(g, 1, 4);
    const std::uint32_t data = std::uint32_t(g());
    return kernels::span_problem<T>(name + "<" + kernels::type_name(T()) +
                                        "> batch=" + std::to_string(batch) +
                                        " data_seed=" + std::to_string(data),
                                    a, batch, data);
  });
}

} // namespace kernel_checks

// Every kernel on generated cases, in float and double.
inline Report check_kernels(const ValidateOptions &opt) {
  Report rep;
  kernel_checks::generated_rows<float>(rep, opt);
  kernel_checks::generated_rows<double>(rep, opt);
  return rep;
}

// The kernel of a layer file (the span kernel).
inline Report check_kernels(const io::LayerDescription &d, const std::string &name,
                            const ValidateOptions &opt) {
  Report rep;
  io::edges_of(d, "--kernels"); // the span kernel runs an edge list
  kernel_checks::model_rows<float>(rep, d, name, opt);
  kernel_checks::model_rows<double>(rep, d, name, opt);
  return rep;
}

// The kernel of a machine file: a seed machine's with σ identity, tanh or
// sigmoid; any other machine has none (it runs the reference solver).
inline Report check_kernels(const io::MachineDescription &d, const std::string &name,
                            const ValidateOptions &opt) {
  Report rep;
  if (!d.seed || !kernels::activation_of(io::make_sigma<double>(d.sigma))) {
    const std::string why =
        !d.seed ? "a machine given by its parts has no kernel: it runs the reference solver"
                : "sigma " + d.sigma.name + " has no kernel: the machine runs the reference solver";
    add_row(rep, opt, "KERNEL-*", name, [&] { return kernel_checks::no_kernel(name, why, opt); });
    return rep;
  }
  kernel_checks::model_rows<float>(rep, d, name, opt);
  kernel_checks::model_rows<double>(rep, d, name, opt);
  return rep;
}

} // namespace pm
