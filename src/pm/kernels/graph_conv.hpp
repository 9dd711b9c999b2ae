#pragma once
// The graph convolution layer (src/pm/layers/graph_conv.hpp) with its
// edge × channel structure. Its span has one edge per (graph edge, c_in,
// c_out), but the weight of an edge factors as c(u, v) · W(c_in, c_out), so
//   forward    H(v) = Σ_{u→v} c(u, v) φ(u),      (L_W φ)(v) = Wᵀ H(v)
//   transpose  G(v) = W g(v),                    (L_Wᵀ g)(u) = Σ_{u→v} c(u, v) G(v)
//   gradient   ∂W = Σ_b Σ_v H(v) g(v)ᵀ
// aggregate the neighbours once per channel vector (graph edges × channels
// indexed loads instead of graph edges × channels² for the span kernel) and
// run the channel weights as one matrix product over every node and sample.
//
// A batch column b holds node v's channel c at row v · C + c; a piece of
// samples is copied node-major, where it is one C × (nodes · samples)
// column-major matrix and a node's channels of every sample one vector. The
// aggregation sums each node's edges in the order of the edge list (self
// loops last), and the pieces of samples are fixed by the problem: the bits
// do not depend on the thread count.
#include <span>
#include <utility>
#include <vector>

#include "pm/kernels/eigen.hpp"
#include "pm/kernels/partition.hpp"
#include "pm/kernels/sequence_machine.hpp"
#include "pm/layers/graph_conv.hpp"

namespace pm::kernels {

template <class T> struct GraphPlan {
  struct Edge {
    Index node; // the other end
    T c;        // the normalisation coefficient c(u, v)
  };
  Index nodes = 0, in_channels = 0, out_channels = 0;
  std::vector<Index> into_start, out_start; // CSR row starts: by target, by source
  std::vector<Edge> into, out;
  Index edges() const { return into.size(); }
  // Floating-point operations of one pass: the aggregation and the product.
  double flops(Index batch, Index aggregated) const {
    return 2.0 * double(batch) *
           (double(edges()) * double(aggregated) +
            double(nodes) * double(in_channels) * double(out_channels));
  }
};

template <class T> GraphPlan<T> graph_plan(const GraphConvSpec &spec) {
  require(spec.in_channels >= 1 && spec.out_channels >= 1, "graph_plan: channels are ",
          spec.in_channels, " → ", spec.out_channels, ", expected at least 1 → 1");
  const auto all = spec.all_edges();
  const std::vector<Index> deg = spec.in_degrees();
  GraphPlan<T> p{spec.nodes, spec.in_channels, spec.out_channels, {}, {}, {}, {}};
  // Stable counting sorts by target and by source: a row keeps list order.
  auto csr = [&](bool by_target, std::vector<Index> &start,
                 std::vector<typename GraphPlan<T>::Edge> &rows) {
    start.assign(spec.nodes + 1, 0);
    for (const auto &[u, v] : all) ++start[(by_target ? v : u) + 1];
    for (Index k = 0; k < spec.nodes; ++k) start[k + 1] += start[k];
    rows.resize(all.size());
    std::vector<Index> next(start.begin(), start.end() - 1);
    for (const auto &[u, v] : all)
      rows[next[by_target ? v : u]++] = {by_target ? u : v,
                                         pm::detail::graph_coefficient<T>(spec, deg, u, v)};
  };
  csr(true, p.into_start, p.into);
  csr(false, p.out_start, p.out);
  return p;
}

namespace detail {

// Samples per task: about 4096 (node, sample) columns per product.
inline Index graph_piece(Index nodes) {
  return std::max<Index>(1, 4096 / std::max<Index>(1, nodes));
}

// The aggregation runs node-major: node v's channels of all samples of a
// piece are one vector (column (v, b) at (v · samples + b) · C), so an edge
// is one run of samples × C values instead of C.
//   dst(v) = Σ_{k ∈ row v} c_k src(node_k), in the order of the row.
// The sums of up to 8 packets are kept in registers over the whole row (a
// row's first term starts them: no zero fill, no reload of dst per edge),
// so a row of samples × C ≤ 8 packets reads each edge's node and coefficient
// once; the elements past the last whole packet are summed by scalar code.
// Which code sums an element depends on its place in the run only.
template <Index K, class T, class Edge>
void aggregate_packets(const Edge *first, const Edge *last, Index width, const T *src, T *out) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr Index w = ei::packet_traits<T>::size;
  P acc[K];
  const P c0 = ei::pset1<P>(first->c);
  const T *in0 = src + first->node * width;
  for (Index j = 0; j < K; ++j) acc[j] = ei::pmul(c0, ei::ploadu<P>(in0 + j * w));
  for (const Edge *e = first + 1; e != last; ++e) {
    const P c = ei::pset1<P>(e->c);
    const T *in = src + e->node * width;
    for (Index j = 0; j < K; ++j) acc[j] = ei::pmadd(c, ei::ploadu<P>(in + j * w), acc[j]);
  }
  for (Index j = 0; j < K; ++j) ei::pstoreu(out + j * w, acc[j]);
}

template <class T>
void aggregate(const std::vector<Index> &start,
               const std::vector<typename GraphPlan<T>::Edge> &rows, Index nodes, Index width,
               const T *src, T *dst) {
  constexpr Index w = Eigen::internal::packet_traits<T>::size, run = 8 * w;
  for (Index v = 0; v < nodes; ++v) {
    T *out = dst + v * width;
    const auto *first = rows.data() + start[v], *last = rows.data() + start[v + 1];
    if (first == last) {
      std::fill_n(out, width, T(0));
      continue;
    }
    Index i = 0;
    for (; i + run <= width; i += run) aggregate_packets<8>(first, last, width, src + i, out + i);
    const Index k = (width - i) / w;
    [&]<Index... K>(std::integer_sequence<Index, K...>) {
      ((k == K + 1 ? aggregate_packets<K + 1>(first, last, width, src + i, out + i) : void()), ...);
    }
    (std::make_integer_sequence<Index, 7>{});
    i += k * w;
    for (; i < width; ++i) {
      T sum = first->c * src[first->node * width + i];
      for (const auto *e = first + 1; e != last; ++e) sum += e->c * src[e->node * width + i];
      out[i] = sum;
    }
  }
}

// dst[0, n) = src[0, n) for the short runs of one (node, sample): whole
// packets, then a half packet, then scalars (a library memcpy call costs
// more than copying 8 floats).
template <class T> void copy_run(const T *src, Index n, T *dst) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  using H = typename ei::packet_traits<T>::half;
  constexpr Index w = ei::packet_traits<T>::size, hw = sizeof(H) / sizeof(T);
  Index i = 0;
  for (; i + w <= n; i += w) ei::pstoreu(dst + i, ei::ploadu<P>(src + i));
  if constexpr (hw < w)
    for (; i + hw <= n; i += hw) ei::pstoreu(dst + i, ei::ploadu<H>(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

// Samples [b0, b0 + samples) of a batch (sample, node, channel) to node-major
// (node, sample, channel), and back.
template <class T>
void to_node_major(const T *batch, Index nodes, Index channels, Index b0, Index samples, T *dst) {
  for (Index b = 0; b < samples; ++b)
    for (Index v = 0; v < nodes; ++v)
      copy_run(batch + ((b0 + b) * nodes + v) * channels, channels,
               dst + (v * samples + b) * channels);
}
template <class T>
void from_node_major(const T *src, Index nodes, Index channels, Index b0, Index samples, T *batch) {
  for (Index b = 0; b < samples; ++b)
    for (Index v = 0; v < nodes; ++v)
      copy_run(src + (v * samples + b) * channels, channels,
               batch + ((b0 + b) * nodes + v) * channels);
}

// Samples [b0, b0 + samples) of a batch in node-major order: the batch
// itself for one sample, else a copy in scratch buffer `slot`.
template <class T>
const T *node_major(const T *batch, Index nodes, Index channels, Index b0, Index samples,
                    Index slot) {
  if (samples == 1) return batch + b0 * nodes * channels;
  T *dst = scratch<T>(slot, nodes * channels * samples);
  to_node_major(batch, nodes, channels, b0, samples, dst);
  return dst;
}
// Where a piece writes its node-major output: in place for one sample, else
// scratch buffer `slot`, copied back by from_node_major.
template <class T>
T *node_major_out(T *batch, Index nodes, Index channels, Index b0, Index samples, Index slot) {
  return samples == 1 ? batch + b0 * nodes * channels
                      : scratch<T>(slot, nodes * channels * samples);
}

// H = Σ_{u→v} c(u, v) φ(u) of the piece of samples [b0, b0 + samples),
// node-major: into `aggregated` at offset b0 · nodes · C_in when given (the
// layout the forward pass keeps H in: each piece node-major; for pieces of
// one sample the batch's layout), else into a scratch buffer.
template <class T>
const T *aggregate_piece(const GraphPlan<T> &p, const T *phi, Index b0, Index samples,
                         T *aggregated) {
  const Index ci = p.in_channels;
  const T *x = node_major(phi, p.nodes, ci, b0, samples, 0);
  T *h = aggregated ? aggregated + b0 * p.nodes * ci : scratch<T>(1, p.nodes * ci * samples);
  aggregate<T>(p.into_start, p.into, p.nodes, samples * ci, x, h);
  return h;
}

template <class T>
void require_graph_buffers(const GraphPlan<T> &p, Index batch, const char *kernel,
                           std::initializer_list<std::tuple<Index, Index, const char *>> buffers) {
  for (auto [size, channels, name] : buffers)
    require(size == p.nodes * channels * batch, kernel, ": ", name, " has ", size,
            " entries, expected ", p.nodes, " nodes × ", channels, " channels × ", batch);
}

} // namespace detail

// out = L_W φ (φ: nodes · C_in × batch, out: nodes · C_out × batch). With
// `aggregated` (nodes · C_in × batch) the pass also keeps the aggregation H
// there, in its own layout, for graph_weight_gradient_from_aggregate.
template <class T>
void graph_forward(const GraphPlan<T> &p, std::span<const T> w, std::span<const T> phi, Index batch,
                   std::span<T> out, std::span<T> aggregated = {}) {
  require(w.size() == p.in_channels * p.out_channels, "graph_forward: W has ", w.size(),
          " entries, expected ", p.in_channels * p.out_channels);
  detail::require_graph_buffers(
      p, batch, "graph_forward",
      {{phi.size(), p.in_channels, "phi"}, {out.size(), p.out_channels, "out"}});
  if (!aggregated.empty())
    detail::require_graph_buffers(p, batch, "graph_forward",
                                  {{aggregated.size(), p.in_channels, "aggregated"}});
  const Index ci = p.in_channels, co = p.out_channels;
  const ConstMatrixView<T> M(w.data(), co, ci, Eigen::OuterStride<>(co)); // Wᵀ
  for_each_piece(
      batch, detail::graph_piece(p.nodes),
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0, cols = nb * p.nodes;
        const T *h = detail::aggregate_piece(p, phi.data(), b0, nb,
                                             aggregated.empty() ? nullptr : aggregated.data());
        T *o = detail::node_major_out(out.data(), p.nodes, co, b0, nb, 2);
        MatrixView<T> O(o, co, cols, Eigen::OuterStride<>(co));
        O.setZero();
        multiply_add(O, M, ConstMatrixView<T>(h, ci, cols, Eigen::OuterStride<>(ci)));
        if (nb > 1) detail::from_node_major(o, p.nodes, co, b0, nb, out.data());
      },
      p.flops(batch, ci));
}

// out = L_Wᵀ g (g: nodes · C_out × batch, out: nodes · C_in × batch).
template <class T>
void graph_transpose(const GraphPlan<T> &p, std::span<const T> w, std::span<const T> g, Index batch,
                     std::span<T> out) {
  require(w.size() == p.in_channels * p.out_channels, "graph_transpose: W has ", w.size(),
          " entries, expected ", p.in_channels * p.out_channels);
  detail::require_graph_buffers(
      p, batch, "graph_transpose",
      {{g.size(), p.out_channels, "g"}, {out.size(), p.in_channels, "out"}});
  const Index ci = p.in_channels, co = p.out_channels;
  const ConstMatrixView<T> M(w.data(), co, ci, Eigen::OuterStride<>(co));
  for_each_piece(
      batch, detail::graph_piece(p.nodes),
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0, cols = nb * p.nodes;
        const T *gn = detail::node_major(g.data(), p.nodes, co, b0, nb, 0);
        T *h = detail::scratch<T>(1, ci * cols),
          *x = detail::node_major_out(out.data(), p.nodes, ci, b0, nb, 2);
        MatrixView<T> G(h, ci, cols, Eigen::OuterStride<>(ci));
        G.setZero();
        multiply_add(G, M.transpose(), ConstMatrixView<T>(gn, co, cols, Eigen::OuterStride<>(co)));
        detail::aggregate<T>(p.out_start, p.out, p.nodes, nb * ci, h, x);
        if (nb > 1) detail::from_node_major(x, p.nodes, ci, b0, nb, out.data());
      },
      p.flops(batch, ci));
}

// dW = Σ_b Σ_v H_b(v) g_b(v)ᵀ in W's layout (c_in, c_out), from the
// aggregation H (nodes · C_in × batch, in the forward's piece layout) a
// forward pass kept. Per piece of samples one product over the piece's
// (node, sample) columns, with g copied node-major (in place for one
// sample), sums into the piece's own partial; the partials are then added in
// piece order, so the bits do not depend on which thread ran which piece.
template <class T>
void graph_weight_gradient_from_aggregate(const GraphPlan<T> &p, std::span<const T> aggregated,
                                          std::span<const T> g, Index batch, std::span<T> dw) {
  detail::require_graph_buffers(
      p, batch, "graph_weight_gradient",
      {{aggregated.size(), p.in_channels, "aggregated"}, {g.size(), p.out_channels, "g"}});
  require(dw.size() == p.in_channels * p.out_channels, "graph_weight_gradient: dW has ", dw.size(),
          " entries, expected ", p.in_channels * p.out_channels);
  const Index ci = p.in_channels, co = p.out_channels, piece = detail::graph_piece(p.nodes);
  std::vector<T> partial(pieces(batch, piece) * ci * co);
  for_each_piece(
      batch, piece,
      [&](Index b0, Index b1) {
        const Index nb = b1 - b0, cols = nb * p.nodes;
        const T *gn = detail::node_major(g.data(), p.nodes, co, b0, nb, 0);
        MatrixView<T> P(partial.data() + (b0 / piece) * ci * co, co, ci, Eigen::OuterStride<>(co));
        P.setZero();
        multiply_add(P, ConstMatrixView<T>(gn, co, cols, Eigen::OuterStride<>(co)),
                     ConstMatrixView<T>(aggregated.data() + b0 * p.nodes * ci, ci, cols,
                                        Eigen::OuterStride<>(ci))
                         .transpose());
      },
      2.0 * double(batch) * double(p.nodes) * double(ci) * double(co));
  std::fill(dw.begin(), dw.end(), T(0));
  for (Index k = 0; k < partial.size(); k += ci * co)
    for (Index i = 0; i < ci * co; ++i) dw[i] += partial[k + i];
}

// dW = Σ_b ∂⟨g_b, L_W φ_b⟩/∂W in W's layout (c_in, c_out): the aggregation
// of the forward pass, then the gradient from it.
template <class T>
void graph_weight_gradient(const GraphPlan<T> &p, std::span<const T> phi, std::span<const T> g,
                           Index batch, std::span<T> dw) {
  detail::require_graph_buffers(
      p, batch, "graph_weight_gradient",
      {{phi.size(), p.in_channels, "phi"}, {g.size(), p.out_channels, "g"}});
  require(dw.size() == p.in_channels * p.out_channels, "graph_weight_gradient: dW has ", dw.size(),
          " entries, expected ", p.in_channels * p.out_channels);
  std::vector<T> h(phi.size());
  for_each_piece(
      batch, detail::graph_piece(p.nodes),
      [&](Index b0, Index b1) { detail::aggregate_piece(p, phi.data(), b0, b1 - b0, h.data()); },
      2.0 * double(batch) * double(p.edges()) * double(p.in_channels));
  graph_weight_gradient_from_aggregate<T>(p, h, g, batch, dw);
}

} // namespace pm::kernels
