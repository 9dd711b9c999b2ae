#pragma once
// Graph convolution from an edge list, as a parametric span:
//   (L_W φ)(v, c_out) = Σ_{(u→v) ∈ A} c(u, v) Σ_{c_in} W(c_in, c_out) φ(u, c_in),
// where A is the edge list, plus a self loop v→v at every node when
// self_loops is set. The coefficient c is the normalisation:
//   sum:       c = 1;
//   mean:      c = 1 / deg(v);
//   symmetric: c = deg(u)^(−1/2) deg(v)^(−1/2)   (D^−1/2 A D^−1/2),
// with deg(v) the number of edges into v (self loop included), and a node of
// degree 0 contributing 0 (as in PyTorch Geometric). The symmetric weights
// need a square root: over an exact scalar (pm::Rational) every degree that
// occurs must be a perfect square, otherwise a pm::Error says which node.
//
// Layout: input (node, c_in), output (node, c_out), P = (c_in, c_out), all
// row-major. Edges: graph edges in list order (self loops after them, by
// node), then c_in, then c_out.
#include <cmath>
#include <limits>
#include <utility>

#include "pm/category/parametric_span.hpp"

namespace pm {

enum class GraphNorm { sum, mean, symmetric };

struct GraphConvSpec {
  Index nodes = 0;
  std::vector<std::pair<Index, Index>> edges; // (u, v): from u into v
  Index in_channels = 1;
  Index out_channels = 1;
  bool self_loops = false;
  GraphNorm norm = GraphNorm::sum;

  // The edge list with the self loops appended; every endpoint checked.
  std::vector<std::pair<Index, Index>> all_edges() const {
    for (Index e = 0; e < edges.size(); ++e)
      require(edges[e].first < nodes && edges[e].second < nodes, "GraphConvSpec.edges[", e,
              "] is (", edges[e].first, ", ", edges[e].second, "), expected node indices < ",
              nodes);
    auto all = edges;
    if (self_loops)
      for (Index v = 0; v < nodes; ++v) all.emplace_back(v, v);
    return all;
  }

  std::vector<Index> in_degrees() const {
    std::vector<Index> deg(nodes, 0);
    for (const auto &[u, v] : all_edges()) ++deg[v];
    return deg;
  }
};

namespace detail {
// deg^(−1/2), exactly for exact scalars (a perfect square is required).
template <class S> S inverse_sqrt_degree(Index deg, Index node) {
  if constexpr (std::numeric_limits<S>::is_exact) {
    Index r = 0;
    while ((r + 1) * (r + 1) <= deg) ++r;
    require(r * r == deg, "graph_conv: node ", node, " has degree ", deg,
            ", expected a perfect square for symmetric normalisation over an exact scalar");
    return S(1) / S(r);
  } else {
    using std::sqrt;
    return S(1) / sqrt(S(deg));
  }
}

template <class S>
S graph_coefficient(const GraphConvSpec &c, const std::vector<Index> &deg, Index u, Index v) {
  switch (c.norm) {
  case GraphNorm::sum:
    return S(1);
  case GraphNorm::mean:
    return S(1) / S(deg[v]); // deg[v] ≥ 1: the edge u→v enters v
  case GraphNorm::symmetric:
    if (deg[u] == 0) return S(0);
    return inverse_sqrt_degree<S>(deg[u], u) * inverse_sqrt_degree<S>(deg[v], v);
  }
  return S(0);
}
} // namespace detail

template <class S> ParametricSpan<S> graph_conv(const GraphConvSpec &c) {
  const auto edges = c.all_edges();
  const auto deg = c.in_degrees();
  const Index ci_n = c.in_channels, co_n = c.out_channels;
  ParametricSpan<S> a;
  a.span.s.codomain = c.nodes * ci_n;
  a.span.t.codomain = c.nodes * co_n;
  a.pi.codomain = ci_n * co_n;
  for (const auto &[u, v] : edges) {
    const S coefficient = detail::graph_coefficient<S>(c, deg, u, v);
    for (Index ci = 0; ci < ci_n; ++ci)
      for (Index co = 0; co < co_n; ++co) {
        a.span.s.images.push_back(u * ci_n + ci);
        a.span.t.images.push_back(v * co_n + co);
        a.pi.images.push_back(ci * co_n + co);
        a.span.mu.push_back(coefficient);
      }
  }
  return a;
}

} // namespace pm
