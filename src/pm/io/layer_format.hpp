#pragma once
// A layer file: a parametric span between shaped spaces, optional default
// parameters (.npy) and an optional grading of source and target (see
// docs/formats.md, kind "layer"). Reading checks the structure (fields,
// types, index ranges, sizes); the laws, grading compatibility included, are
// the validator's business, so that a bad layer is answered with a
// counterexample rather than a parse error. A layer is given by its edges
// (span_format.hpp) or by a constructor's name (named_layer.hpp), with an
// optional bias.
#include <memory>

#include "pm/category/batch.hpp"
#include "pm/category/span_rows.hpp"
#include "pm/io/named_layer.hpp"
#include "pm/layers/coproduct.hpp"
#include "pm/layers/rows.hpp"

namespace pm::io {

inline constexpr long long format_version = 1;

struct LayerDescription {
  std::string file;
  std::string name;
  Shape source, target;
  Shape parameters; // rank 0 (one point, weight 1) when the layer has none
  bool has_parameters = false;
  ParametricSpan<Rational> span;
  std::optional<std::vector<double>> weights; // row-major over `parameters`
  std::optional<Grading> source_grading, target_grading;
  // With a bias the span is the copairing [L, b] : X ⊔ {•} → Y of the layer
  // with a span from the one-point space, whose point • (the last of the
  // span's source) takes the value 1: `source` stays X, the user's shape,
  // and `parameters` is flat, the layer's parameters then the bias's.
  bool bias = false;
  // The layer's rule when a constructor made it (src/pm/layers/): its rows,
  // generated on demand at any size. Absent for a layer read from edges,
  // whose rows are EdgeListRows over `span` (rows_of).
  std::shared_ptr<const SpanRows> rows;
  // False when the layer is too large to list (more than max_listed_edges):
  // `span` is then empty and only `rows` holds it (edges_of says so).
  bool span_held = true;
  // The named-layer form (§2.5) when the layer has one (a named layer read,
  // or a constructor's dense, conv or graph layer): its fields with "layer",
  // "layout" and "bias": {"axes": [a]}, without weights. A layer too large
  // to list is saved as this.
  Json named;
};

// The most edges a constructor lists next to its rule: 2^22 edges, about
// 200 MB of exact edges, the sizes where recovery and drawing still run.
inline constexpr Index max_listed_edges = Index(1) << 22;

// The rows of a layer: its rule, or those of its edge list.
inline std::shared_ptr<const SpanRows> rows_of(const LayerDescription &d) {
  if (d.rows) return d.rows;
  return std::make_shared<const EdgeListRows>(d.span);
}

// The edge list of a layer, or a one-line error naming `who` when the layer
// is held by its rule alone.
inline const ParametricSpan<Rational> &edges_of(const LayerDescription &d, const std::string &who) {
  if (!d.span_held) // the message reads the rule: built only when it is needed
    pm::detail::fail(who, ": ", d.name.empty() ? "the layer" : d.name, " has up to ",
                     d.rows->target() * d.rows->max_row(), " edges, expected at most ",
                     max_listed_edges,
                     " to list them; it is held by its rule (evaluated row by row)");
  return d.span;
}

// A constructor's layer: its rule, and its edge list when that is small.
inline LayerDescription described_layer(std::string name, Shape source, Shape target,
                                        Shape parameters, bool has_parameters,
                                        std::shared_ptr<const SpanRows> rows) {
  LayerDescription d;
  d.name = std::move(name);
  d.source = std::move(source);
  d.target = std::move(target);
  d.parameters = std::move(parameters);
  d.has_parameters = has_parameters;
  require(rows->target() == d.target.size() && rows->parameters() == d.parameters.size() &&
              rows->source() == d.source.size() + (rows->source() > d.source.size() ? 1 : 0),
          d.name, ": the rule does not fit the shapes");
  d.bias = rows->source() > d.source.size();
  d.span_held = double(rows->target()) * double(rows->max_row()) <= double(max_listed_edges);
  if (d.span_held) {
    d.span = materialise(*rows);
    d.span.validate(d.name);
  }
  d.rows = std::move(rows);
  return d;
}

// The span's input for inputs x on the source: x extended by 1 at the bias
// point when the layer has a bias.
template <class S> Batch<S> span_input(const LayerDescription &d, const Batch<S> &x) {
  if (!d.bias) return x;
  Batch<S> out(x.rows + 1, x.cols, S(1));
  for (Index b = 0; b < x.cols; ++b)
    for (Index i = 0; i < x.rows; ++i) out(i, b) = x(i, b);
  return out;
}

// A function on the span's source restricted to the layer's source: the
// bias point dropped (e.g. from the input gradient).
template <class S> Batch<S> source_part(const LayerDescription &d, const Batch<S> &g) {
  if (!d.bias) return g;
  Batch<S> out(g.rows - 1, g.cols);
  for (Index b = 0; b < g.cols; ++b)
    for (Index i = 0; i + 1 < g.rows; ++i) out(i, b) = g(i, b);
  return out;
}

// The header shared by every file: {"pmach": 1, "kind": <kind>, "name": …}.
// An element written inline in a sequence may leave out "pmach" and "kind".
inline std::string read_header(const Field &root, const std::string &kind,
                               bool inline_element = false) {
  if (!root.json().is_object()) root.fail("a JSON object");
  if (!inline_element || root.has("pmach")) root.at("pmach").as_int(format_version, format_version);
  if (!inline_element || root.has("kind")) {
    const Field k = root.at("kind");
    if (k.as_string() != kind) k.fail("\"" + kind + "\"");
  }
  // The name is shown in tables and graphs: kept to one printable line.
  return root.has("name") ? printable(root.at("name").as_string(), 200) : std::string();
}

// Default parameters from {"weights": "file.npy"}, checked against the shape.
inline std::optional<std::vector<double>> read_weights(const Field &root, const Shape &shape) {
  const auto w = root.find("weights");
  if (!w) return std::nullopt;
  const std::string path = w->as_path();
  NpyArray a = read_npy(path);
  require(a.shape == shape.extents(), path, ": npy field 'shape': expected ", shape_text(shape),
          ", the parameter shape of ", root.file(), " ", root.pointer());
  return std::move(a.data);
}

// A bias on Y: the span {•} ← Y → Y with one edge into every y, whose
// parameter is y's coordinates on the listed axes ({"axes": [a, …]}; [] is one
// bias for all). "bias": true means one bias per channel of a named layer.
struct Bias {
  ParametricSpan<Rational> span;
  Shape parameters;
  std::optional<std::vector<double>> weights;
};

inline std::vector<Index> bias_axes(const Field &f, const Shape &target,
                                    std::optional<Index> channel_axis) {
  std::vector<Index> axes;
  if (f.json().is_boolean()) { // true: false is no bias
    if (!channel_axis)
      f.fail("{\"axes\": [...]} (a layer given by its edges has no channel axis for true)");
    axes = {*channel_axis};
  } else {
    f.allow_only({"axes", "weights"});
    const Field list = f.at("axes");
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (target.rank() == 0) list[k].fail("no axis: the target has rank 0");
      const Index a = list[k].as_size(0, target.rank() - 1);
      if (std::find(axes.begin(), axes.end(), a) != axes.end())
        list[k].fail("an axis not listed before");
      axes.push_back(a);
    }
  }
  return axes;
}

inline Bias read_bias(const Field &f, const Shape &target, std::optional<Index> channel_axis) {
  const std::vector<Index> axes = bias_axes(f, target, channel_axis);
  Bias b;
  b.parameters = permuted(target, axes);
  const Index n = target.size();
  FinMap pi(b.parameters.size(), std::vector<Index>(n));
  std::vector<Index> p(axes.size());
  for (Index y = 0; y < n; ++y) {
    const auto m = target.multi(y);
    for (std::size_t k = 0; k < axes.size(); ++k) p[k] = m[axes[k]];
    pi.images[y] = b.parameters.flat(p);
  }
  b.span = ParametricSpan<Rational>{
      Span<Rational>{terminal_map(n), identity_map(n), Measure<Rational>(n, Rational(1))},
      std::move(pi)};
  if (!f.json().is_boolean()) b.weights = read_weights(f, b.parameters);
  return b;
}

namespace detail {

// A bias adds one edge per target point to the layer's own.
inline void require_bias_edges(const Field &bias, double edges, double target_points) {
  const double n = edges + target_points;
  require(n <= double(max_edges), bias.file(), ": ", bias.pointer(), ": the layer would have ",
          Index(n), " edges with its bias (one per target point), expected at most ", max_edges);
}

// A named layer's form without its weights (LayerDescription::named), its
// bias (if any) on the listed target axes.
inline Json named_form(const Field &root, const std::vector<Index> &axes, bool bias) {
  Json j = root.json();
  j["pmach"] = format_version;
  j["kind"] = "layer";
  j.erase("weights");
  j.erase("bias");
  if (bias) j["bias"] = Json{{"axes", axes}};
  return j;
}

// A bias on a layer held by its rule: one per entry of one target axis
// (BiasRows), its parameters after the layer's.
inline void add_bias_to_rule(LayerDescription &d, const Field &f, Index channel_axis) {
  const std::vector<Index> axes = bias_axes(f, d.target, channel_axis);
  if (axes.size() != 1)
    f.fail("true or {\"axes\": [a]} with one axis (a layer held by its rule, more than " +
           std::to_string(max_listed_edges) + " edges, has one bias per entry of one axis)");
  if (!f.json().is_boolean()) {
    const auto b = read_weights(f, permuted(d.target, axes));
    if (bool(d.weights) != bool(b))
      f.fail("default weights for both the layer ('weights') and its bias ('bias/weights')");
    if (d.weights) d.weights->insert(d.weights->end(), b->begin(), b->end());
  } else if (d.weights) {
    f.fail("{\"axes\": [a], \"weights\": \"b.npy\"}: the layer has default weights, so its "
           "bias needs them too");
  }
  d.rows = std::make_shared<const BiasRows>(d.rows, d.target, axes[0]);
  d.parameters = Shape({d.rows->parameters()});
  d.bias = true;
}

} // namespace detail

// A layer object: a whole file, or an element of a sequence written inline.
// A named layer is shown to `admit` with its bias before it is built.
inline LayerDescription parse_layer(const Field &root, bool inline_element,
                                    const Admit &admit = {}) {
  LayerDescription d;
  d.file = root.file();
  d.name = read_header(root, "layer", inline_element);
  // "bias": false is no bias.
  const auto bias = root.find("bias");
  const bool has_bias = bias && !(bias->json().is_boolean() && !bias->as_bool());
  std::optional<Index> channel_axis;
  if (root.has("layer")) {
    NamedLayer named = read_named_layer(root, [&](const LayerSize &s) {
      if (admit)
        admit({s.edges + (has_bias ? s.target_points : 0.0), s.parameters, s.target_points});
    });
    d.source = named.layer.source;
    d.target = named.layer.target;
    d.parameters = named.layer.parameters;
    d.has_parameters = true;
    channel_axis = named.channel_axis;
    d.named = detail::named_form(
        root, has_bias ? bias_axes(*bias, d.target, channel_axis) : std::vector<Index>{}, has_bias);
    // Listed when small (every command reads it), held by the rule alone
    // when not; the rule serves CONF-EQUAL either way.
    const SpanRows &rows = *named.layer.rows;
    d.span_held = double(rows.target()) * double(rows.max_row()) <= double(max_listed_edges);
    if (d.span_held) d.span = materialise(rows);
    d.rows = std::move(named.layer.rows);
  } else {
    root.allow_only({"pmach", "kind", "name", "source", "target", "parameters", "edges", "weights",
                     "grading", "bias"});
    d.source = read_space(root.at("source"));
    d.target = read_space(root.at("target"));
    d.has_parameters = root.has("parameters");
    if (d.has_parameters) d.parameters = read_space(root.at("parameters"));
    d.span = read_edges(root.at("edges"), d.source, d.target, d.parameters, d.has_parameters);
  }
  if (d.span_held) d.span.validate(d.file + " " + root.pointer() + " edges");
  if (d.has_parameters)
    d.weights = read_weights(root, d.parameters);
  else if (root.has("weights"))
    root.at("weights").fail("no weights: the layer has no 'parameters'");
  if (const auto g = root.find("grading")) {
    if (has_bias) g->fail("no grading: a layer with a bias is not graded");
    g->allow_only({"source", "target"});
    d.source_grading = read_grading(g->at("source"), d.source);
    d.target_grading = read_grading(g->at("target"), d.target);
    renumber_levels({&*d.source_grading, &*d.target_grading});
  }
  if (has_bias) {
    const Field &f = *bias;
    if (!d.has_parameters)
      f.fail("no bias: a layer without 'parameters' has no weights to add one to");
    // A named layer whose edges with the bias's are too many to list keeps
    // its rule alone.
    if (d.rows && (!d.span_held || d.span.apex() + d.target.size() > max_listed_edges)) {
      d.span_held = false;
      d.span = {};
      detail::add_bias_to_rule(d, f, *channel_axis);
      return d;
    }
    d.rows = nullptr; // the copairing below is the bias's edge list
    detail::require_bias_edges(f, double(d.span.apex()), double(d.target.size()));
    Bias b = read_bias(f, d.target, channel_axis);
    if (bool(d.weights) != bool(b.weights))
      (d.weights ? root.at("weights") : f.at("weights"))
          .fail("default weights for both the layer ('weights') and its bias ('bias/weights')");
    if (d.weights) d.weights->insert(d.weights->end(), b.weights->begin(), b.weights->end());
    require(d.parameters.size() + b.parameters.size() <= max_space_size, d.file, ": ", f.pointer(),
            ": expected at most ", max_space_size, " parameters with the bias");
    d.parameters = Shape({d.parameters.size() + b.parameters.size()});
    d.span = copair(d.span, b.span);
    d.bias = true;
  }
  return d;
}

inline LayerDescription parse_layer(const Json &json, const std::string &file) {
  return parse_layer(Field(json, file), false);
}

inline LayerDescription read_layer(const std::string &path) {
  return parse_layer(read_json(path), path);
}

// The span with its measure in another scalar type (exact for Rational).
template <class S> ParametricSpan<S> with_scalar(const ParametricSpan<Rational> &a) {
  ParametricSpan<S> b{Span<S>{a.span.s, a.span.t, Measure<S>{}}, a.pi};
  b.span.mu.reserve(a.apex());
  for (const Rational &m : a.span.mu) {
    if constexpr (std::is_same_v<S, Rational>)
      b.span.mu.push_back(m);
    else
      b.span.mu.push_back(m.template convert_to<S>());
  }
  return b;
}

} // namespace pm::io
