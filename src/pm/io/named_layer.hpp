#pragma once
// A layer given by its constructor's name and hyper-parameters instead of its
// edges (docs/formats.md §2.5): {"layer": "dense" | "conv" | "graph", …,
// "layout": "pm" | "torch"}. The spaces and the parameter shape follow from
// the hyper-parameters, each in one documented layout per layer; "layout":
// "torch" relabels them so that PyTorch's weight tensor is the parameter
// array unchanged (torch_layout.hpp). The layer is its constructor's rule
// (pm::SpanRows), so a named layer of any size costs O(parameters +
// activations); every size is bounded before the rule is made.
#include <functional>

#include "pm/io/span_format.hpp"
#include "pm/io/torch_layout.hpp"
#include "pm/layers/conv.hpp"
#include "pm/layers/dense.hpp"
#include "pm/layers/graph_conv.hpp"

namespace pm::io {

// The most edges a named layer may have: it is held by its rule, so this
// bounds the work of one evaluation (about 4 s per probe at 1 ns an edge),
// not memory. A ResNet-50 convolution has about 2^27.
inline constexpr Index max_named_edges = Index(1) << 32;

// A constructed layer and the axis of its target that holds the channels
// (what "bias": true gives one bias per entry of).
struct NamedLayer {
  ShapedRows layer;
  Index channel_axis = 0;
};

// What a named layer will hold, known from its hyper-parameters: a reader
// given an Admit calls it before building, so that what the layer is part of
// (a bias, a sequence) can refuse it before its edges are paid for.
struct LayerSize {
  double edges = 0;
  double parameters = 0; // the weights', a bias's aside
  double target_points = 0;
};
using Admit = std::function<void(const LayerSize &)>;

namespace detail {

// "layout": "pm" (the default) or "torch".
inline bool torch_layout(const Field &root) {
  const auto f = root.find("layout");
  if (!f) return false;
  const std::string l = f->as_string();
  if (l != "pm" && l != "torch") f->fail("\"pm\" or \"torch\"");
  return l == "torch";
}

// A product of sizes, refused above `bound` (computed in double: no overflow).
inline void require_product(const Field &f, double product, Index bound, const char *what) {
  require(product <= double(bound), f.file(), ": ", f.pointer(), ": the layer would have ", product,
          " ", what, ", expected at most ", bound);
}

// One integer per spatial axis (`rank` of them), or `fallback` when absent.
inline std::vector<Index> per_axis(const Field &root, const char *key, Index rank, Index lo,
                                   Index fallback) {
  const auto f = root.find(key);
  if (!f) return std::vector<Index>(rank, fallback);
  if (f->size() != rank)
    f->fail("an array of " + std::to_string(rank) + " integers (one per spatial axis)");
  std::vector<Index> v;
  for (std::size_t j = 0; j < rank; ++j) v.push_back((*f)[j].as_size(lo, max_space_size));
  return v;
}

inline NamedLayer read_dense(const Field &root, const Admit &admit) {
  root.allow_only({"pmach", "kind", "name", "layer", "layout", "bias", "weights", "in", "out"});
  const DenseSpec d{root.at("in").as_size(1, max_space_size),
                    root.at("out").as_size(1, max_space_size), false};
  require_product(root, double(d.in) * double(d.out), max_space_size, "weights");
  if (admit) admit({double(d.in) * double(d.out), double(d.in) * double(d.out), double(d.out)});
  // pm: W(in, out), the seed's layout; torch: Linear's W(out, in).
  ShapedRows a{std::make_shared<const DenseRows>(d.in, d.out), Shape({d.in}), Shape({d.out}),
               Shape({d.in, d.out})};
  if (torch_layout(root)) a = relayout(a, {}, {}, {1, 0});
  return {std::move(a), 0};
}

// The edges of a convolution: per axis the (output, tap) pairs that read
// inside the input (a tap in zero padding is no edge), times the channel
// pairs. Its loops are as long as the upper bound o·k per axis allows.
inline double conv_edges(const ConvSpec &c) {
  double n = double(c.out_channels) * double(c.in_channels / c.groups);
  const std::vector<Index> o = c.output_extents();
  for (Index j = 0; j < c.rank(); ++j) {
    Index taps = 0;
    for (Index y = 0; y < o[j]; ++y)
      for (Index k = 0; k < c.kernel[j]; ++k) {
        const Index i = y * c.step(j) + k * c.dil(j); // in the padded axis
        taps +=
            c.padding_mode != PaddingMode::zeros || (i >= c.lo(j) && i < c.lo(j) + c.spatial[j]);
      }
    n *= double(taps);
  }
  return n;
}

inline NamedLayer read_conv(const Field &root, const Admit &admit) {
  root.allow_only({"pmach", "kind", "name", "layer", "layout", "bias", "weights", "in", "out",
                   "size", "kernel", "stride", "dilation", "padding", "padding_hi", "groups",
                   "transpose", "padding_mode"});
  const bool transposed = root.has("transpose") && root.at("transpose").as_bool();
  const Field size = root.at("size");
  if (size.size() < 1 || size.size() > 8) size.fail("an array of 1 to 8 spatial extents");
  const Index r = size.size();
  ConvSpec c;
  for (std::size_t j = 0; j < r; ++j) c.spatial.push_back(size[j].as_size(1, max_space_size));
  // A transposed convolution is the adjoint of the convolution from its
  // target to its source: "in" and "out" are the transposed layer's own.
  const Index in = root.at("in").as_size(1, max_space_size);
  const Index out = root.at("out").as_size(1, max_space_size);
  c.in_channels = transposed ? out : in;
  c.out_channels = transposed ? in : out;
  root.at("kernel"); // required: fails here when absent
  c.kernel = per_axis(root, "kernel", r, 1, 1);
  c.stride = per_axis(root, "stride", r, 1, 1);
  c.dilation = per_axis(root, "dilation", r, 1, 1);
  c.pad_lo = per_axis(root, "padding", r, 0, 0);
  c.pad_hi = root.has("padding_hi") ? per_axis(root, "padding_hi", r, 0, 0) : c.pad_lo;
  c.groups = root.has("groups") ? root.at("groups").as_size(1, max_space_size) : 1;
  if (const auto m = root.find("padding_mode")) {
    try {
      c.padding_mode = padding_mode_named(m->as_string());
    } catch (const Error &) {
      m->fail("\"zeros\", \"circular\", \"reflect\" or \"replicate\"");
    }
    if (transposed && c.padding_mode != PaddingMode::zeros)
      m->fail("\"zeros\" (a transposed convolution pads with zeros only)");
  }
  try {
    c.validate();
  } catch (const Error &e) {
    pm::detail::fail(root.file(), ": ", root.pointer(), ": ", e.what());
  }
  double positions_in = c.in_channels, positions_out = c.out_channels,
         edges = double(c.out_channels) * double(c.in_channels / c.groups), weights = edges;
  const std::vector<Index> o = c.output_extents();
  for (Index j = 0; j < r; ++j) {
    positions_in *= double(c.spatial[j]);
    positions_out *= double(o[j]);
    edges *= double(o[j]) * double(c.kernel[j]);
    weights *= double(c.kernel[j]);
  }
  require_product(root, std::max(positions_in, positions_out), max_space_size, "points in a space");
  require_product(root, weights, max_space_size, "weights");
  require_product(root, edges, max_named_edges, "edges");
  if (admit)
    admit({conv_edges(c), double(c.parameter_shape().size()),
           transposed ? positions_in : positions_out});
  ShapedRows a{nullptr, c.input_shape(), c.output_shape(), c.parameter_shape()};
  if (transposed) {
    a.rows = std::make_shared<const ConvTransposeRows>(c);
    std::swap(a.source, a.target);
  } else {
    a.rows = std::make_shared<const ConvRows>(c);
  }
  if (torch_layout(root))
    return {relayout(a, channel_first(r), channel_first(r), conv_parameter_order(r)), 0};
  return {std::move(a), r};
}

inline NamedLayer read_graph(const Field &root, const Admit &admit) {
  root.allow_only({"pmach", "kind", "name", "layer", "layout", "bias", "weights", "nodes", "edges",
                   "c_in", "c_out", "normalisation", "self_loops"});
  GraphConvSpec g;
  g.nodes = root.at("nodes").as_size(1, max_space_size);
  g.in_channels = root.at("c_in").as_size(1, max_space_size);
  g.out_channels = root.at("c_out").as_size(1, max_space_size);
  g.self_loops = root.has("self_loops") && root.at("self_loops").as_bool();
  const Field edges = root.at("edges");
  const double channel_pairs = double(g.in_channels) * double(g.out_channels);
  require_product(root, double(g.nodes) * double(std::max(g.in_channels, g.out_channels)),
                  max_space_size, "points in a space");
  require_product(root, channel_pairs, max_space_size, "weights");
  const double span_edges =
      (double(edges.size()) + (g.self_loops ? double(g.nodes) : 0.0)) * channel_pairs;
  require_product(edges, span_edges, max_named_edges, "edges (graph edges × channel pairs)");
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const Field uv = edges[e];
    if (uv.size() != 2) uv.fail("a pair [u, v] of node indices (an edge from u into v)");
    g.edges.emplace_back(uv[0].as_size(0, g.nodes - 1), uv[1].as_size(0, g.nodes - 1));
  }
  if (const auto n = root.find("normalisation")) {
    const std::string name = n->as_string();
    if (name == "sum")
      g.norm = GraphNorm::sum;
    else if (name == "mean")
      g.norm = GraphNorm::mean;
    else if (name == "symmetric")
      g.norm = GraphNorm::symmetric;
    else
      n->fail("\"sum\", \"mean\" or \"symmetric\"");
  }
  if (admit) admit({span_edges, channel_pairs, double(g.nodes) * double(g.out_channels)});
  // Symmetric weights that are not rational (a degree that is not a perfect
  // square) are the rule's, compared within a derived bound (GraphRows).
  ShapedRows a{std::make_shared<const GraphRows>(g), Shape({g.nodes, g.in_channels}),
               Shape({g.nodes, g.out_channels}), Shape({g.in_channels, g.out_channels})};
  // torch: the weight of torch.nn.Linear (and of PyTorch Geometric's
  // GraphConv/GCNConv), W(c_out, c_in); node features stay (node, channel).
  if (torch_layout(root)) a = relayout(a, {}, {}, {1, 0});
  return {std::move(a), 1};
}

} // namespace detail

inline NamedLayer read_named_layer(const Field &root, const Admit &admit = {}) {
  const Field kind = root.at("layer");
  const std::string k = kind.as_string();
  if (k == "dense") return detail::read_dense(root, admit);
  if (k == "conv") return detail::read_conv(root, admit);
  if (k == "graph") return detail::read_graph(root, admit);
  kind.fail("\"dense\", \"conv\" or \"graph\"");
}

} // namespace pm::io
