// The C++ side of the comparison with the extracted Coq model (ctest
// proofs_extracted_vs_cpp, proofs/extraction/extracted_vs_cpp.py).
//
//   reference_cases generate SEED COUNT     write COUNT generated cases
//   reference_cases eval POLICY < cases     the results of the operations of
//                                           the span core on each case
//   reference_cases policies                the names of POLICY
//
// POLICY is `reference` (pm::, through property_tests/support/span_impl.hpp)
// or one of the mutants of property_tests/support/span_mutants.hpp. The
// results are printed in the format of model_cases.ml, the extracted model's
// driver, so that the two outputs must be equal byte for byte.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "pm/layers/conv.hpp"
#include "pm/layers/conv_machine.hpp"
#include "pm/layers/dense.hpp"
#include "pm/layers/dense_machine.hpp"
#include "pm/layers/graph_conv.hpp"
#include "pm/layers/pool.hpp"
#include "pm/layers/recur_machine.hpp"
#include "pm/layers/time_conv.hpp"
#include "pm/machine.hpp"
#include "pm/numeric/uniform.hpp"
#include "support/span_mutants.hpp"

namespace {

using pm::Index;
using Q = pm::Rational;
using pm_test::FinMap;
using Fn = std::vector<Q>;
using Span = pm::Span<Q>;
using PSpan = pm::ParametricSpan<Q>;

[[noreturn]] void fail(const std::string &what) {
  std::cerr << "reference_cases: " << what << "\n";
  std::exit(2);
}

// ---------------------------------------------------------------------------
// One case: the inputs of every operation compared.

struct Case {
  Index n = 0, l = 0;
  FinMap f, g, h; // f : m → n, g : k → n, h : n → l
  Fn phi_n, mu_m, psi_m;
  PSpan a, b; // a : X → Y (P_a), b : Y → Z (P_b)
  Fn phi_x, w_a, g_y;
  // A graded span machine on n_m indices: its grading (levels D, as a map
  // into 0..D whose images are the grades), span, parameters, inputs, the
  // slopes of an array σ and the output gradients of the backward pass.
  FinMap grades;
  PSpan m;
  Fn m_w, m_y0, m_z0, m_slopes, m_gy, m_gz;

  pm::Grading grading() const { return pm::Grading(grades.codomain - 1, grades.images); }
  // The layers: dense (with or without bias), convolution, pooling, graph
  // convolution (sum, mean, or symmetric on a graph whose degrees are
  // perfect squares), time convolution, and a recurrent machine with its
  // parameters.
  pm::DenseSpec dense;
  pm::ConvSpec conv;
  pm::PoolSpec pool;
  pm::GraphConvSpec graph;
  pm::TimeConvSpec time;
  struct Recur {
    std::vector<Index> dims;
    Index pad = 0, timeblock = 1, length = 1;
    Fn w;
  } recur;
  // The seed's other machines on one list of channel blocks:
  // DenseMachine(dims) and ConvMachine(dims, pad, spatial), with their
  // parameters.
  struct Seed {
    std::vector<Index> dims, spatial, pad_lo, pad_hi;
    Fn dense_w, conv_w;
  } seed;
};

// An index list as `size entries…`.
void write_list(std::ostream &out, const std::vector<Index> &v) {
  out << " " << v.size();
  for (Index i : v) out << " " << i;
}

// The file format: whitespace-separated tokens, a map as `codomain size
// images…`, a function as `size values…`, a rational as `num/den`.
std::string show(const Q &q) {
  std::ostringstream out;
  out << boost::multiprecision::numerator(q) << "/" << boost::multiprecision::denominator(q);
  return out.str();
}

void write_map(std::ostream &out, const FinMap &f) {
  out << " " << f.codomain << " " << f.domain();
  for (Index i : f.images) out << " " << i;
}

void write_fn(std::ostream &out, const Fn &v) {
  out << " " << v.size();
  for (const Q &q : v) out << " " << show(q);
}

Index read_index(std::istream &in, const char *what) {
  long long v = -1;
  if (!(in >> v) || v < 0) fail(std::string("cases: expected a size or index for ") + what);
  return static_cast<Index>(v);
}

FinMap read_map(std::istream &in, const char *what) {
  FinMap f;
  f.codomain = read_index(in, what);
  f.images.resize(read_index(in, what));
  for (Index &i : f.images) i = read_index(in, what);
  f.validate(what);
  return f;
}

Fn read_fn(std::istream &in, const char *what) {
  Fn v(read_index(in, what));
  for (Q &q : v) {
    std::string token;
    long long num = 0, den = 0;
    char slash = 0;
    std::istringstream t;
    if (!(in >> token)) fail(std::string("cases: expected a rational for ") + what);
    t.str(token);
    if (!(t >> num >> slash >> den) || slash != '/' || den <= 0)
      fail(std::string("cases: `") + token + "` for " + what + " is not num/den with den > 0");
    q = Q(num) / Q(den);
  }
  return v;
}

void write_case(std::ostream &out, const Case &c) {
  out << "case " << c.n << " " << c.l;
  for (const FinMap *m : {&c.f, &c.g, &c.h}) write_map(out, *m);
  for (const Fn *v : {&c.phi_n, &c.mu_m, &c.psi_m}) write_fn(out, *v);
  for (const PSpan *p : {&c.a, &c.b}) {
    write_map(out, p->span.s);
    write_map(out, p->span.t);
    write_fn(out, p->span.mu);
    write_map(out, p->pi);
  }
  for (const Fn *v : {&c.phi_x, &c.w_a, &c.g_y}) write_fn(out, *v);
  write_map(out, c.grades);
  write_map(out, c.m.span.s);
  write_map(out, c.m.span.t);
  write_fn(out, c.m.span.mu);
  write_map(out, c.m.pi);
  for (const Fn *v : {&c.m_w, &c.m_y0, &c.m_z0, &c.m_slopes, &c.m_gy, &c.m_gz}) write_fn(out, *v);
  out << " " << c.dense.in << " " << c.dense.out << " " << c.dense.bias;
  write_list(out, c.conv.spatial);
  out << " " << c.conv.in_channels << " " << c.conv.out_channels;
  for (const auto *v :
       {&c.conv.kernel, &c.conv.pad_lo, &c.conv.pad_hi, &c.conv.stride, &c.conv.dilation})
    write_list(out, *v);
  out << " " << c.conv.groups;
  write_list(out, c.pool.spatial);
  out << " " << c.pool.channels;
  for (const auto *v : {&c.pool.window, &c.pool.pad_lo, &c.pool.pad_hi, &c.pool.stride})
    write_list(out, *v);
  out << " " << c.graph.nodes << " " << c.graph.edges.size();
  for (const auto &[u, v] : c.graph.edges) out << " " << u << " " << v;
  out << " " << c.graph.self_loops << " " << c.graph.in_channels << " " << c.graph.out_channels
      << " " << static_cast<int>(c.graph.norm);
  out << " " << c.time.length << " " << c.time.in_channels << " " << c.time.out_channels << " "
      << c.time.max_lag;
  out << " " << c.recur.length << " " << c.recur.pad << " " << c.recur.timeblock;
  write_list(out, c.recur.dims);
  write_fn(out, c.recur.w);
  for (const auto *v : {&c.seed.dims, &c.seed.spatial, &c.seed.pad_lo, &c.seed.pad_hi})
    write_list(out, *v);
  write_fn(out, c.seed.dense_w);
  write_fn(out, c.seed.conv_w);
  out << "\n";
}

bool read_case(std::istream &in, Case &c) {
  std::string word;
  if (!(in >> word)) return false;
  if (word != "case") fail("cases: expected `case`, found `" + word + "`");
  c.n = read_index(in, "n");
  c.l = read_index(in, "l");
  c.f = read_map(in, "f");
  c.g = read_map(in, "g");
  c.h = read_map(in, "h");
  c.phi_n = read_fn(in, "phi_n");
  c.mu_m = read_fn(in, "mu_m");
  c.psi_m = read_fn(in, "psi_m");
  for (PSpan *p : {&c.a, &c.b}) {
    p->span.s = read_map(in, "span.s");
    p->span.t = read_map(in, "span.t");
    p->span.mu = read_fn(in, "span.mu");
    p->pi = read_map(in, "span.pi");
    p->validate("case span");
  }
  c.phi_x = read_fn(in, "phi_x");
  c.w_a = read_fn(in, "w_a");
  c.g_y = read_fn(in, "g_y");
  c.grades = read_map(in, "grades");
  if (c.grades.codomain < 2) fail("cases: a grading needs at least one level");
  c.m.span.s = read_map(in, "machine span.s");
  c.m.span.t = read_map(in, "machine span.t");
  c.m.span.mu = read_fn(in, "machine span.mu");
  c.m.pi = read_map(in, "machine span.pi");
  c.m.validate("machine span");
  for (Fn *v : {&c.m_w, &c.m_y0, &c.m_z0, &c.m_slopes, &c.m_gy, &c.m_gz})
    *v = read_fn(in, "machine");
  (void)c.grading();
  c.dense.in = read_index(in, "dense.in");
  c.dense.out = read_index(in, "dense.out");
  c.dense.bias = read_index(in, "dense.bias") != 0;
  const auto list = [&](const char *what) {
    std::vector<Index> v(read_index(in, what));
    for (Index &i : v) i = read_index(in, what);
    return v;
  };
  c.conv.spatial = list("conv.spatial");
  c.conv.in_channels = read_index(in, "conv.in_channels");
  c.conv.out_channels = read_index(in, "conv.out_channels");
  for (auto [v, what] : {std::pair{&c.conv.kernel, "conv.kernel"},
                         {&c.conv.pad_lo, "conv.pad_lo"},
                         {&c.conv.pad_hi, "conv.pad_hi"},
                         {&c.conv.stride, "conv.stride"},
                         {&c.conv.dilation, "conv.dilation"}})
    *v = list(what);
  c.conv.groups = read_index(in, "conv.groups");
  c.conv.validate();
  c.pool.spatial = list("pool.spatial");
  c.pool.channels = read_index(in, "pool.channels");
  for (auto [v, what] : {std::pair{&c.pool.window, "pool.window"},
                         {&c.pool.pad_lo, "pool.pad_lo"},
                         {&c.pool.pad_hi, "pool.pad_hi"},
                         {&c.pool.stride, "pool.stride"}})
    *v = list(what);
  c.pool.as_conv().validate();
  c.graph.nodes = read_index(in, "graph.nodes");
  c.graph.edges.resize(read_index(in, "graph.edges"));
  for (auto &[u, v] : c.graph.edges) {
    u = read_index(in, "graph edge");
    v = read_index(in, "graph edge");
  }
  c.graph.self_loops = read_index(in, "graph.self_loops") != 0;
  c.graph.in_channels = read_index(in, "graph.in_channels");
  c.graph.out_channels = read_index(in, "graph.out_channels");
  const Index norm = read_index(in, "graph.norm");
  if (norm > 2) fail("cases: graph.norm is " + std::to_string(norm) + ", expected 0, 1 or 2");
  c.graph.norm = static_cast<pm::GraphNorm>(norm);
  (void)c.graph.all_edges();
  c.time.length = read_index(in, "time.length");
  c.time.in_channels = read_index(in, "time.in_channels");
  c.time.out_channels = read_index(in, "time.out_channels");
  c.time.max_lag = read_index(in, "time.max_lag");
  c.recur.length = read_index(in, "recur.length");
  c.recur.pad = read_index(in, "recur.pad");
  c.recur.timeblock = read_index(in, "recur.timeblock");
  c.recur.dims = list("recur.dims");
  c.recur.w = read_fn(in, "recur.w");
  c.seed.dims = list("seed.dims");
  c.seed.spatial = list("seed.spatial");
  c.seed.pad_lo = list("seed.pad_lo");
  c.seed.pad_hi = list("seed.pad_hi");
  c.seed.dense_w = read_fn(in, "seed.dense_w");
  c.seed.conv_w = read_fn(in, "seed.conv_w");
  return true;
}

// ---------------------------------------------------------------------------
// Generation: small shapes (empty ones included) and small rationals, so
// that fibre products are mostly non-empty and sums have several terms.

struct Generator {
  std::mt19937_64 rng;
  Index size(Index lo, Index hi) { return pm::UniformInt<Index>(lo, hi)(rng); }
  FinMap map(Index domain, Index codomain) {
    std::vector<Index> images(domain);
    for (Index &i : images) i = size(0, codomain - 1);
    return FinMap(codomain, images);
  }
  Fn fn(Index n) {
    Fn v(n);
    for (Q &q : v)
      q = Q(static_cast<long long>(size(0, 6)) - 3) / Q(static_cast<long long>(size(1, 2)));
    return v;
  }
  PSpan pspan(Index x, Index y, Index p) {
    const Index e = size(0, 5);
    return PSpan{Span{map(e, x), map(e, y), fn(e)}, map(e, p)};
  }
  Case next() {
    Case c;
    c.n = size(1, 3);
    c.l = size(1, 3);
    const Index m = size(0, 4), k = size(0, 4), x = size(1, 3), y = size(1, 3), z = size(1, 3);
    c.f = map(m, c.n);
    c.g = map(k, c.n);
    c.h = map(c.n, c.l);
    c.phi_n = fn(c.n);
    c.mu_m = fn(m);
    c.psi_m = fn(m);
    c.a = pspan(x, y, size(1, 3));
    c.b = pspan(y, z, size(1, 3));
    c.phi_x = fn(x);
    c.w_a = fn(c.a.parameters());
    c.g_y = fn(y);
    // The machine: one level in a quarter of the cases (every edge then
    // stays within its grade and is cleaned away), else two or three; edges
    // drawn again (up to three times) when they stay within a grade, and
    // turned round when they would fall, so that cleaning keeps most
    // parameters and zeroes some.
    const Index n = size(1, 5), levels = std::min<Index>(size(1, 4), 3), e = size(0, 8),
                p = size(1, 3);
    std::vector<Index> g(n), s(e), t(e);
    for (Index &v : g) v = size(1, levels);
    for (Index i = 0; i < e; ++i) {
      s[i] = size(0, n - 1);
      t[i] = size(0, n - 1);
      for (int tries = 0; tries < 3 && g[s[i]] == g[t[i]]; ++tries) t[i] = size(0, n - 1);
      if (g[s[i]] > g[t[i]]) std::swap(s[i], t[i]);
    }
    c.grades = FinMap(levels + 1, g);
    c.m = PSpan{Span{FinMap(n, s), FinMap(n, t), fn(e)}, map(e, p)};
    c.m_w = fn(p);
    for (Fn *v : {&c.m_y0, &c.m_z0, &c.m_slopes, &c.m_gy, &c.m_gz}) *v = fn(n);
    c.dense = pm::DenseSpec{size(0, 4), size(0, 4), size(0, 1) == 1};
    c.conv = conv_spec();
    c.pool = pool_spec();
    c.graph = graph_spec();
    c.time = pm::TimeConvSpec{size(1, 6), size(1, 2), size(1, 2), size(0, 3)};
    for (Index k = size(1, 3); k > 0; --k) c.recur.dims.push_back(size(1, 2));
    c.recur.pad = size(0, 3);
    c.recur.timeblock = size(1, 3);
    c.recur.length = size(1, 6);
    Index channels = 0;
    for (Index d : c.recur.dims) channels += d;
    c.recur.w = fn((c.recur.pad + 1) * channels * channels);
    Index seed_channels = 0, taps = 1;
    for (Index k = size(1, 3); k > 0; --k) c.seed.dims.push_back(size(1, 2));
    for (Index d : c.seed.dims) seed_channels += d;
    for (Index r = size(1, 2); r > 0; --r) {
      c.seed.spatial.push_back(size(1, 3));
      c.seed.pad_lo.push_back(size(0, 2));
      c.seed.pad_hi.push_back(size(0, 2));
      taps *= c.seed.pad_lo.back() + c.seed.pad_hi.back() + 1;
    }
    c.seed.dense_w = fn(seed_channels * seed_channels);
    c.seed.conv_w = fn(taps * seed_channels * seed_channels);
    return c;
  }
  // A graph convolution; for the symmetric normalisation, which is exact
  // over Q only at perfect squares, every in-degree (self loop included) is
  // drawn from 0, 1 and 4 and the edges into each node are shuffled in.
  pm::GraphConvSpec graph_spec() {
    pm::GraphConvSpec g;
    g.nodes = size(1, 4);
    g.self_loops = size(0, 1) == 1;
    g.in_channels = size(1, 2);
    g.out_channels = size(1, 2);
    g.norm = static_cast<pm::GraphNorm>(size(0, 2));
    if (g.norm != pm::GraphNorm::symmetric) {
      g.edges.resize(size(0, 6));
      for (auto &[u, v] : g.edges) {
        u = size(0, g.nodes - 1);
        v = size(0, g.nodes - 1);
      }
      return g;
    }
    for (Index v = 0; v < g.nodes; ++v) {
      const Index degree = size(0, 1) == 1 ? 4 : g.self_loops ? 1 : size(0, 1);
      for (Index e = g.self_loops ? 1 : 0; e < degree; ++e)
        g.edges.emplace_back(size(0, g.nodes - 1), v);
    }
    for (Index i = g.edges.size(); i > 1; --i) std::swap(g.edges[i - 1], g.edges[size(0, i - 1)]);
    return g;
  }
  // A valid average pooling of rank 1 or 2, padding below the window, the
  // stride left to its default (the window) in a quarter of the cases.
  pm::PoolSpec pool_spec() {
    pm::PoolSpec s;
    const Index rank = size(1, 2);
    s.channels = size(1, 2);
    const bool stride = size(0, 3) > 0;
    for (Index j = 0; j < rank; ++j) {
      const Index window = size(1, 3);
      s.window.push_back(window);
      s.pad_lo.push_back(size(0, window - 1));
      s.pad_hi.push_back(size(0, window - 1));
      if (stride) s.stride.push_back(size(1, 2));
      const Index padding = s.pad_lo[j] + s.pad_hi[j];
      s.spatial.push_back(std::max(size(1, 5), window > padding ? window - padding : 1));
    }
    return s;
  }
  // A valid convolution: rank 1 to 3 (smaller extents for higher rank),
  // asymmetric padding, strides and dilations up to 2, one or two groups;
  // each optional field left empty in a quarter of the cases.
  pm::ConvSpec conv_spec() {
    pm::ConvSpec s;
    const Index rank = size(1, 3), extent = rank == 1 ? 6 : rank == 2 ? 4 : 3;
    s.groups = size(1, 2);
    s.in_channels = s.groups * size(1, 2);
    s.out_channels = s.groups * size(1, 2);
    const auto optional = [&](Index lo, Index hi) {
      std::vector<Index> v;
      if (size(0, 3) > 0)
        for (Index j = 0; j < rank; ++j) v.push_back(size(lo, hi));
      return v;
    };
    for (Index j = 0; j < rank; ++j) s.kernel.push_back(size(1, 3));
    s.pad_lo = optional(0, 2);
    s.pad_hi = optional(0, 2);
    s.stride = optional(1, 2);
    s.dilation = optional(1, 2);
    for (Index j = 0; j < rank; ++j) {
      const Index padding = s.lo(j) + s.hi(j);
      s.spatial.push_back(
          std::max(size(1, extent), s.reach(j) > padding ? s.reach(j) - padding : 1));
    }
    return s;
  }
};

// ---------------------------------------------------------------------------
// Evaluation: one line per operation, `index name result`.

void out_map(std::ostream &out, const FinMap &f) { write_map(out, f); }
void out_span(std::ostream &out, const Span &a) {
  write_map(out, a.s);
  write_map(out, a.t);
  write_fn(out, a.mu);
}
void out_pspan(std::ostream &out, const PSpan &a) {
  out_span(out, a.span);
  write_map(out, a.pi);
}

pm::Batch<Q> column(const Fn &v) { return pm::Batch<Q>::from_columns(v.size(), {v}); }

// The operations of the machine, bundled like Reference so that a mutant can
// replace one. These mirror mutants of the property tests of machines: a
// clean that keeps every parameter, a sweep over the reversed grading, a
// dual machine over the original grading, an uncleaned weight gradient.
struct MachineReference {
  static Fn clean(const PSpan &a, const pm::Grading &d, const Fn &w) { return pm::clean(a, d, w); }
  static pm::MachineState<Q> forward(const pm::GradedSpanMachine<Q> &m, const Fn &w,
                                     const pm::Batch<Q> &y0, const pm::Batch<Q> &z0) {
    return pm::forward(m, w, y0, z0);
  }
  static pm::Gradients<Q> backward(const pm::GradedSpanMachine<Q> &m, const Fn &w,
                                   const pm::MachineState<Q> &x, const pm::Batch<Q> &gy,
                                   const pm::Batch<Q> &gz) {
    return pm::backward(m, w, x, gy, gz);
  }
};
struct MutCleanKeepsAll : MachineReference {
  static Fn clean(const PSpan &, const pm::Grading &, const Fn &w) { return w; }
};
struct MutReversedSweep : MachineReference {
  static pm::MachineState<Q> forward(const pm::GradedSpanMachine<Q> &m, const Fn &w,
                                     const pm::Batch<Q> &y0, const pm::Batch<Q> &z0) {
    return pm::forward(pm::GradedSpanMachine<Q>(m.grading().reversed(), m.span(), m.sigma()), w, y0,
                       z0);
  }
};
struct MutUnreversedDual : MachineReference {
  static pm::Gradients<Q> backward(const pm::GradedSpanMachine<Q> &m, const Fn &w,
                                   const pm::MachineState<Q> &x, const pm::Batch<Q> &gy,
                                   const pm::Batch<Q> &gz) {
    pm::Gradients<Q> g = pm::backward(m, w, x, gy, gz);
    const pm::GradedSpanMachine<Q> d = pm::dual(m, x.y);
    const auto u =
        pm::forward(pm::GradedSpanMachine<Q>(m.grading(), d.span(), d.sigma()), w, gz, gy);
    g.y0 = u.z;
    g.z0 = u.y;
    return g;
  }
};
struct MutUncleanedGradient : MachineReference {
  static pm::Gradients<Q> backward(const pm::GradedSpanMachine<Q> &m, const Fn &w,
                                   const pm::MachineState<Q> &x, const pm::Batch<Q> &gy,
                                   const pm::Batch<Q> &gz) {
    pm::Gradients<Q> g = pm::backward(m, w, x, gy, gz);
    g.w = pm::parameter_gradient(m.span(), x.z.column(0), g.y0.column(0));
    return g;
  }
};

// The layer constructors, and mutants that each forget one field of the
// specification or one step of the construction.
// What the comparison reads of a seed machine (RecurMachine, DenseMachine,
// ConvMachine): its span, its grading and the cleaning of its parameters.
struct MachineResult {
  PSpan span;
  std::vector<Index> grades;
  Fn clean;
};
template <class M> MachineResult machine_result(const M &m, const Fn &w) {
  return MachineResult{m.machine().span(), m.machine().grading().grades(), m.clean(w)};
}

struct LayerReference {
  static PSpan dense(const pm::DenseSpec &d) { return pm::dense<Q>(d); }
  static PSpan conv(const pm::ConvSpec &c) { return pm::conv<Q>(c); }
  static PSpan conv_transpose(const pm::ConvSpec &c) { return pm::conv_transpose<Q>(c); }
  static Span average_pool(const pm::PoolSpec &c) { return pm::average_pool<Q>(c); }
  static PSpan graph_conv(const pm::GraphConvSpec &c) { return pm::graph_conv<Q>(c); }
  static PSpan time_conv(const pm::TimeConvSpec &c) { return pm::time_conv<Q>(c); }
  static MachineResult recur(const Case::Recur &r) {
    return machine_result(
        pm::RecurMachine<Q>(r.dims, pm::Sigma<Q>::relu(), r.pad, r.timeblock, r.length), r.w);
  }
  static MachineResult dense_machine(const Case::Seed &s) {
    return machine_result(pm::DenseMachine<Q>(s.dims, pm::Sigma<Q>::relu()), s.dense_w);
  }
  static MachineResult conv_machine(const Case::Seed &s) {
    std::vector<Index> pad;
    for (std::size_t j = 0; j < s.spatial.size(); ++j) {
      pad.push_back(s.pad_lo[j]);
      pad.push_back(s.pad_hi[j]);
    }
    return machine_result(pm::ConvMachine<Q>(s.dims, pm::Sigma<Q>::relu(), pad, s.spatial),
                          s.conv_w);
  }
};
struct MutDenseOutputMajor : LayerReference {
  static PSpan dense(const pm::DenseSpec &d) {
    PSpan a = pm::dense<Q>(d);
    for (Index &p : a.pi.images) p = (p % d.out) * d.in + p / d.out;
    return a;
  }
};
struct MutDenseBiasFirst : LayerReference {
  static PSpan dense(const pm::DenseSpec &d) {
    PSpan a = pm::dense<Q>(d);
    for (Index &p : a.pi.images) p = (p + d.out) % d.parameters();
    return a;
  }
};
struct MutConvPadsSwapped : LayerReference {
  static PSpan conv(pm::ConvSpec c) {
    std::swap(c.pad_lo, c.pad_hi);
    return pm::conv<Q>(c);
  }
};
struct MutConvNoDilation : LayerReference {
  static PSpan conv(pm::ConvSpec c) {
    c.dilation.clear();
    for (Index j = 0; j < c.rank(); ++j) c.kernel[j] = c.reach(j); // keep the output extents
    return pm::conv<Q>(c);
  }
};
struct MutConvNoStride : LayerReference {
  static PSpan conv(pm::ConvSpec c) {
    c.stride.clear();
    return pm::conv<Q>(c);
  }
};
struct MutConvOneGroup : LayerReference {
  static PSpan conv(pm::ConvSpec c) {
    c.groups = 1;
    return pm::conv<Q>(c);
  }
};
struct MutPoolPadsSwapped : LayerReference {
  static Span average_pool(pm::PoolSpec c) {
    std::swap(c.pad_lo, c.pad_hi);
    return pm::average_pool<Q>(c);
  }
};
struct MutGraphUnnormalised : LayerReference {
  static PSpan graph_conv(pm::GraphConvSpec c) {
    c.norm = pm::GraphNorm::sum;
    return pm::graph_conv<Q>(c);
  }
};
struct MutGraphReversedEdges : LayerReference {
  static PSpan graph_conv(pm::GraphConvSpec c) {
    for (auto &[u, v] : c.edges) std::swap(u, v);
    return pm::graph_conv<Q>(c);
  }
};
struct MutGraphSymmetricAsMean : LayerReference {
  static PSpan graph_conv(pm::GraphConvSpec c) {
    if (c.norm == pm::GraphNorm::symmetric) c.norm = pm::GraphNorm::mean;
    return pm::graph_conv<Q>(c);
  }
};
// The authors' cleaning: with more than one time block, lag 0 zeroed for
// every channel pair.
struct MutRecurAuthorsClean : LayerReference {
  static MachineResult recur(const Case::Recur &r) {
    MachineResult out = LayerReference::recur(r);
    const Index n = out.span.source() / r.length;
    if (r.length > r.timeblock) std::fill(out.clean.begin(), out.clean.begin() + n * n, Q(0));
    return out;
  }
};
struct MutRecurTimeblockIgnored : LayerReference { // every time step its own block
  static MachineResult recur(const Case::Recur &r) {
    return machine_result(pm::RecurMachine<Q>(r.dims, pm::Sigma<Q>::relu(), r.pad, 1, r.length),
                          r.w);
  }
};
struct MutDenseMachineOneBlock : LayerReference { // the channel blocks merged into one
  static MachineResult dense_machine(Case::Seed s) {
    Index n = 0;
    for (Index d : s.dims) n += d;
    s.dims = {n};
    return LayerReference::dense_machine(s);
  }
};
struct MutConvMachinePadsSwapped : LayerReference {
  static MachineResult conv_machine(Case::Seed s) {
    std::swap(s.pad_lo, s.pad_hi);
    return LayerReference::conv_machine(s);
  }
};
struct MutTimeConvKernelOrder : LayerReference { // lag k instead of max_lag − k
  static PSpan time_conv(const pm::TimeConvSpec &c) { return pm::conv<Q>(c.as_conv()); }
};
struct MutConvTransposeUntransposed : LayerReference {
  static PSpan conv_transpose(const pm::ConvSpec &c) { return pm::conv<Q>(c); }
};

template <class Impl, class MImpl = MachineReference, class LImpl = LayerReference>
void evaluate(std::istream &in, std::ostream &out) {
  Case c;
  for (Index i = 0; read_case(in, c); ++i) {
    const auto line = [&](const char *op) -> std::ostream & { return out << i << " " << op; };
    out_map(line("id"), Impl::id(c.n));
    out << "\n";
    out_map(line("comp"), Impl::comp(c.h, c.f));
    out << "\n";
    const pm::FibreProduct fp = Impl::fib(c.f, c.g);
    out_map(line("fib"), fp.p);
    out_map(out, fp.q);
    out << "\n";
    write_fn(line("pull"), Impl::pull(c.f, c.phi_n));
    out << "\n";
    write_fn(line("push"), Impl::push(c.f, c.mu_m));
    out << "\n";
    write_fn(line("integ"), Impl::integ(c.f, c.mu_m, c.psi_m));
    out << "\n";
    out_span(line("sid"), Impl::template sid<Q>(c.n));
    out << "\n";
    out_span(line("scomp"), Impl::scomp(c.b.span, c.a.span));
    out << "\n";
    out_span(line("strans"), Impl::strans(c.a.span));
    out << "\n";
    write_fn(line("sapply"), Impl::sapply(c.a.span, c.phi_x));
    out << "\n";
    write_fn(line("papply"), Impl::papply(c.a, c.w_a, c.phi_x));
    out << "\n";
    out_pspan(line("ptrans"), Impl::ptrans(c.a));
    out << "\n";
    write_fn(line("pgrad"), Impl::pgrad(c.a, c.phi_x, c.g_y));
    out << "\n";
    out_pspan(line("pcomp"), Impl::pcomp(c.b, c.a));
    out << "\n";
    const pm::Grading d = c.grading();
    write_fn(line("clean"), MImpl::clean(c.m, d, c.m_w));
    out << "\n";
    const auto machine = [&](const char *name, const pm::Sigma<Q> &sigma) {
      const pm::GradedSpanMachine<Q> m(d, c.m, sigma);
      const pm::MachineState<Q> x = MImpl::forward(m, c.m_w, column(c.m_y0), column(c.m_z0));
      write_fn(line((std::string("fwd_") + name).c_str()), x.y.column(0));
      write_fn(out, x.z.column(0));
      out << "\n";
      const pm::Gradients<Q> g = MImpl::backward(m, c.m_w, x, column(c.m_gy), column(c.m_gz));
      write_fn(line((std::string("bwd_") + name).c_str()), g.y0.column(0));
      write_fn(out, g.z0.column(0));
      write_fn(out, g.w);
      out << "\n";
    };
    machine("array", pm::Sigma<Q>::array(column(c.m_slopes)));
    machine("relu", pm::Sigma<Q>::relu());
    out_pspan(line("dense"), LImpl::dense(c.dense));
    out << "\n";
    out_pspan(line("conv"), LImpl::conv(c.conv));
    out << "\n";
    out_pspan(line("conv_transpose"), LImpl::conv_transpose(c.conv));
    out << "\n";
    out_span(line("pool"), LImpl::average_pool(c.pool));
    out << "\n";
    // A mutant may give a symmetric graph degrees that are not squares:
    // the refusal is printed, and differs from the model's line.
    try {
      const PSpan graph = LImpl::graph_conv(c.graph);
      out_pspan(line("graph"), graph);
    } catch (const pm::Error &e) {
      line("graph") << " refused: " << e.what();
    }
    out << "\n";
    out_pspan(line("time_conv"), LImpl::time_conv(c.time));
    out << "\n";
    const auto seed_machine = [&](const char *op, const MachineResult &r) {
      out_pspan(line(op), r.span);
      write_list(out, r.grades);
      write_fn(out, r.clean);
      out << "\n";
    };
    seed_machine("recur", LImpl::recur(c.recur));
    seed_machine("dense_machine", LImpl::dense_machine(c.seed));
    seed_machine("conv_machine", LImpl::conv_machine(c.seed));
  }
}

using Evaluator = void (*)(std::istream &, std::ostream &);

// Every policy of span_mutants.hpp whose mistake is in an operation of the
// model, and the machine and layer mutants above. Not here: MutBatch (the batch
// layout, which the model does not have) and MutIso (the isomorphism
// decision procedure).
const std::map<std::string, Evaluator> &policies() {
  using namespace pm_test;
  static const std::map<std::string, Evaluator> table{
      {"reference", evaluate<Reference>},
      {"MutIdentity", evaluate<MutIdentity>},
      {"MutCompose", evaluate<MutCompose>},
      {"MutPull", evaluate<MutPull>},
      {"MutPush", evaluate<MutPush>},
      {"MutIntegrate", evaluate<MutIntegrate>},
      {"MutFibre", evaluate<MutFibre>},
      {"MutMeasureDifference", evaluate<MutMeasureDifference>},
      {"MutDroppedMeasure", evaluate<MutDroppedMeasure>},
      {"MutSpanIdentity", evaluate<MutSpanIdentity>},
      {"MutTransposeUnitMeasure", evaluate<MutTransposeUnitMeasure>},
      {"MutTransposeReversedMeasure", evaluate<MutTransposeReversedMeasure>},
      {"MutApplyAdds", evaluate<MutApplyAdds>},
      {"MutPTranspose", evaluate<MutPTranspose>},
      {"MutGradient", evaluate<MutGradient>},
      {"MutParameterOrder", evaluate<MutParameterOrder>},
      {"MutCleanKeepsAll", evaluate<Reference, MutCleanKeepsAll>},
      {"MutReversedSweep", evaluate<Reference, MutReversedSweep>},
      {"MutUnreversedDual", evaluate<Reference, MutUnreversedDual>},
      {"MutUncleanedGradient", evaluate<Reference, MutUncleanedGradient>},
      {"MutDenseOutputMajor", evaluate<Reference, MachineReference, MutDenseOutputMajor>},
      {"MutDenseBiasFirst", evaluate<Reference, MachineReference, MutDenseBiasFirst>},
      {"MutConvPadsSwapped", evaluate<Reference, MachineReference, MutConvPadsSwapped>},
      {"MutConvNoDilation", evaluate<Reference, MachineReference, MutConvNoDilation>},
      {"MutConvNoStride", evaluate<Reference, MachineReference, MutConvNoStride>},
      {"MutConvOneGroup", evaluate<Reference, MachineReference, MutConvOneGroup>},
      {"MutPoolPadsSwapped", evaluate<Reference, MachineReference, MutPoolPadsSwapped>},
      {"MutGraphUnnormalised", evaluate<Reference, MachineReference, MutGraphUnnormalised>},
      {"MutGraphReversedEdges", evaluate<Reference, MachineReference, MutGraphReversedEdges>},
      {"MutGraphSymmetricAsMean", evaluate<Reference, MachineReference, MutGraphSymmetricAsMean>},
      {"MutRecurAuthorsClean", evaluate<Reference, MachineReference, MutRecurAuthorsClean>},
      {"MutRecurTimeblockIgnored", evaluate<Reference, MachineReference, MutRecurTimeblockIgnored>},
      {"MutDenseMachineOneBlock", evaluate<Reference, MachineReference, MutDenseMachineOneBlock>},
      {"MutConvMachinePadsSwapped",
       evaluate<Reference, MachineReference, MutConvMachinePadsSwapped>},
      {"MutTimeConvKernelOrder", evaluate<Reference, MachineReference, MutTimeConvKernelOrder>},
      {"MutConvTransposeUntransposed",
       evaluate<Reference, MachineReference, MutConvTransposeUntransposed>},
  };
  return table;
}

} // namespace

int main(int argc, char **argv) {
  const std::string usage = "usage: reference_cases generate SEED COUNT | eval POLICY | policies";
  if (argc == 4 && std::string(argv[1]) == "generate") {
    char *end = nullptr;
    const unsigned long long seed = std::strtoull(argv[2], &end, 10);
    if (*end) fail("generate: SEED `" + std::string(argv[2]) + "` is not a number");
    const long count = std::strtol(argv[3], &end, 10);
    if (*end || count <= 0 || count > 100000)
      fail("generate: COUNT `" + std::string(argv[3]) + "` is not in 1..100000");
    Generator gen{std::mt19937_64(seed)};
    for (long i = 0; i < count; ++i) write_case(std::cout, gen.next());
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "eval") {
    const auto it = policies().find(argv[2]);
    if (it == policies().end()) fail("eval: unknown POLICY `" + std::string(argv[2]) + "`");
    it->second(std::cin, std::cout);
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "policies") {
    for (const auto &[name, _] : policies()) std::cout << name << "\n";
    return 0;
  }
  fail(usage);
}
