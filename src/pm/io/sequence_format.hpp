#pragma once
// A composition of layers (docs/formats.md §2.7): {"kind": "sequence",
// "layers": [L_1, …, L_n]}, each element a layer object written inline or the
// name of a layer (or sequence) file. The result is one layer, the composite
// L_n ∘ … ∘ L_1 by fibre product (pm::compose): its parameter space is
// P_1 × … × P_n, and at w_1 ⊗ … ⊗ w_n it is the composite of the layers
// (PSPAN-COMP). Consecutive spaces must have the same shape; a bias is
// allowed on the first layer only, since the unit point of a bias is not a
// point of the previous layer's target.
#include "pm/io/layer_format.hpp"

namespace pm::io {

// Sequences inside sequences (through files, which could name each other),
// and elements of one sequence.
inline constexpr std::size_t max_sequence_depth = 8;
inline constexpr std::size_t max_sequence_layers = 256;
// Edges built in reading one sequence, its layers' and the composites',
// so that many large layers cannot add up to an unbounded amount of work.
inline constexpr double max_sequence_edges = double(max_edges) * 4;

// `built` counts the edges built so far in reading the outermost sequence.
inline LayerDescription parse_sequence(const Field &root, std::size_t depth, bool inline_element,
                                       double &built);

namespace detail {

inline bool is_sequence(const Field &f) {
  return f.has("kind") && f.at("kind").json() == "sequence";
}

// `built` edges so far, in the sequence of element f.
inline void require_sequence_edges(const Field &f, double built) {
  require(built <= max_sequence_edges, f.file(), ": ", f.pointer(), ": the layers so far have ",
          built, " edges with their composites, expected at most ", max_sequence_edges,
          " in a sequence");
}

// Element f of a sequence at nesting `depth`: an inline object or a file name.
// A named layer is refused before it is built when its edges would exceed
// the sequence's bound, or when `admit` refuses it.
inline LayerDescription read_element(const Field &f, std::size_t depth, double &built,
                                     const Admit &admit) {
  require(depth < max_sequence_depth, f.file(), ": ", f.pointer(), ": expected at most ",
          max_sequence_depth, " nested sequences (does a file name itself?)");
  std::optional<Json> json;
  std::optional<Field> root;
  if (f.json().is_string()) {
    const std::string path = f.as_path();
    json = read_json(path);
    root.emplace(*json, path);
  } else {
    root.emplace(f);
  }
  if (is_sequence(*root)) return parse_sequence(*root, depth + 1, !json, built);
  LayerDescription l = parse_layer(*root, !json, [&](const LayerSize &s) {
    require_sequence_edges(f, built + s.edges);
    admit(s);
  });
  require(l.span_held, f.file(), ": ", f.pointer(), ": the layer has more than ", max_listed_edges,
          " edges and is held by its rule; a sequence composes edge lists (at most ",
          max_listed_edges, " edges per layer)");
  built += double(l.span.apex());
  require_sequence_edges(f, built);
  return l;
}

// The edges of compose(b, a), counted without building them: one per pair of
// an edge of a into y and an edge of b out of y.
inline double composite_edges(const ParametricSpan<Rational> &a,
                              const ParametricSpan<Rational> &b) {
  std::vector<double> into(a.target(), 0.0);
  for (Index e = 0; e < a.apex(); ++e) into[a.span.t(e)] += 1;
  double n = 0;
  for (Index e = 0; e < b.apex(); ++e) n += into[b.span.s(e)];
  return n;
}

} // namespace detail

inline LayerDescription parse_sequence(const Field &root, std::size_t depth, bool inline_element,
                                       double &built) {
  const std::string name = read_header(root, "sequence", inline_element);
  root.allow_only({"pmach", "kind", "name", "layers"});
  const Field layers = root.at("layers");
  if (layers.size() == 0 || layers.size() > max_sequence_layers)
    layers.fail("an array of 1 to " + std::to_string(max_sequence_layers) + " layers");
  LayerDescription d;
  std::vector<Index> parameter_axes;
  std::optional<std::vector<double>> weights = std::vector<double>{1.0};
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const Field f = layers[k];
    const std::string where = root.file() + ": " + f.pointer();
    // The composite's parameters are the product of the layers'.
    auto require_parameters = [&](double layer_parameters) {
      const double parameters = double(d.parameters.size()) * layer_parameters;
      require(k == 0 || parameters <= double(max_space_size), where, ": the composite would have ",
              parameters, " parameters (the product of the layers'), expected at most ",
              max_space_size);
      return parameters;
    };
    LayerDescription l = detail::read_element(
        f, depth, built, [&](const LayerSize &s) { require_parameters(s.parameters); });
    require(!l.source_grading, where, ": expected a layer without 'grading' in a sequence");
    parameter_axes.insert(parameter_axes.end(), l.parameters.extents().begin(),
                          l.parameters.extents().end());
    require(parameter_axes.size() <= 16, where,
            ": expected at most 16 parameter axes in total (the product of the layers')");
    const double parameters = require_parameters(double(l.parameters.size()));
    // Default weights: the tensor product of the layers' own, when each
    // layer with parameters has some.
    if (weights && l.has_parameters)
      weights = l.weights ? std::optional(tensor(*weights, *l.weights)) : std::nullopt;
    if (k == 0) {
      d = std::move(l);
      continue;
    }
    require(!l.bias, where, ": expected no bias (a bias is allowed on the first layer of a ",
            "sequence only: the unit point of a bias is not a point of the layer before)");
    require(l.source == d.target, where, ": the source has shape ", shape_text(l.source),
            ", expected the target shape ", shape_text(d.target), " of ", layers[k - 1].pointer());
    const double edges = detail::composite_edges(d.span, l.span);
    require(edges <= double(max_edges), where, ": the composite would have ", edges,
            " edges, expected at most ", max_edges);
    built += edges;
    detail::require_sequence_edges(f, built);
    d.span = compose(l.span, d.span);
    d.target = l.target;
    d.parameters = Shape({Index(parameters)}); // the running size; shaped below
    d.has_parameters = d.has_parameters || l.has_parameters;
  }
  d.file = root.file();
  d.name = name;
  d.parameters = Shape(parameter_axes);
  d.weights = d.has_parameters ? weights : std::nullopt;
  return d;
}

} // namespace pm::io
