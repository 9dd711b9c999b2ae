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
#include "pm/layers/rows.hpp"

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
// ⌊√d⌋ (degrees are small: counting up is enough).
inline Index integer_sqrt(Index d) {
  Index r = 0;
  while ((r + 1) * (r + 1) <= d) ++r;
  return r;
}

// deg^(−1/2), exactly for exact scalars (a perfect square is required).
template <class S> S inverse_sqrt_degree(Index deg, Index node) {
  if constexpr (std::numeric_limits<S>::is_exact) {
    const Index r = integer_sqrt(deg);
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

// The rows of graph_conv(c): (v, c_out)'s row holds, for each edge u → v in
// list order (self loops last) and each c_in, (u·C_in + c_in, c_in·C_out + c_out)
// with the edge's coefficient; the edges into each node are indexed once.
class GraphRows final : public SpanRows {
public:
  explicit GraphRows(GraphConvSpec c) : c_(std::move(c)), start_(c_.nodes + 1, 0) {
    const auto edges = c_.all_edges();
    const auto deg = c_.in_degrees();
    for (const auto &e : edges) ++start_[e.second + 1];
    for (Index v = 0; v < c_.nodes; ++v) start_[v + 1] += start_[v];
    incoming_.resize(edges.size());
    std::vector<Index> next(start_.begin(), start_.end() - 1);
    std::vector<Index> out_degree(c_.nodes, 0);
    for (const auto &[u, v] : edges) {
      incoming_[next[v]++] = {u, coefficient(deg, u, v)};
      max_column_ = std::max(max_column_, ++out_degree[u]);
    }
    for (Index v = 0; v < c_.nodes; ++v) max_row_ = std::max(max_row_, start_[v + 1] - start_[v]);
  }
  Index source() const override { return c_.nodes * c_.in_channels; }
  Index target() const override { return c_.nodes * c_.out_channels; }
  Index parameters() const override { return c_.in_channels * c_.out_channels; }
  void row(Index y, std::vector<RowEdge> &out) const override {
    const Index v = y / c_.out_channels, co = y % c_.out_channels;
    for (Index e = start_[v]; e < start_[v + 1]; ++e)
      for (Index ci = 0; ci < c_.in_channels; ++ci)
        out.push_back({incoming_[e].first * c_.in_channels + ci, ci * c_.out_channels + co,
                       incoming_[e].second});
  }
  Index max_row() const override { return max_row_ * c_.in_channels; }
  Index max_column() const override { return max_column_ * c_.out_channels; }
  Index max_parameter_use() const override { return incoming_.size(); }
  bool exact() const override { return exact_; }
  bool integral() const override { return c_.norm == GraphNorm::sum; }

private:
  // Exact when the coefficient is rational (sum, mean, symmetric with square
  // degrees); otherwise the double of graph_conv<double>, held exactly.
  Rational coefficient(const std::vector<Index> &deg, Index u, Index v) {
    const auto square = [](Index d) {
      return detail::integer_sqrt(d) * detail::integer_sqrt(d) == d;
    };
    if (c_.norm != GraphNorm::symmetric || deg[u] == 0 || (square(deg[u]) && square(deg[v])))
      return detail::graph_coefficient<Rational>(c_, deg, u, v);
    exact_ = false;
    return Rational(detail::graph_coefficient<double>(c_, deg, u, v));
  }
  GraphConvSpec c_;
  std::vector<Index> start_;
  std::vector<std::pair<Index, Rational>> incoming_;
  Index max_row_ = 0, max_column_ = 0;
  bool exact_ = true;
};

} // namespace pm
