#pragma once
// A layer file: a parametric span between shaped spaces, optional default
// parameters (.npy) and an optional grading of source and target (see
// docs/formats.md, kind "layer"). Reading checks the structure (fields,
// types, index ranges, sizes); the laws, grading compatibility included, are
// the validator's business, so that a bad layer is answered with a
// counterexample rather than a parse error.
#include "pm/io/span_format.hpp"

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
};

// The header shared by every file: {"pmach": 1, "kind": <kind>, "name": …}.
inline std::string read_header(const Field &root, const std::string &kind) {
  if (!root.json().is_object()) root.fail("a JSON object");
  root.at("pmach").as_int(format_version, format_version);
  const Field k = root.at("kind");
  if (k.as_string() != kind) k.fail("\"" + kind + "\"");
  // The name is shown in tables and graphs: kept to one printable line.
  return root.has("name") ? printable(root.at("name").as_string(), 200) : std::string();
}

// Default parameters from {"weights": "file.npy"}, checked against the shape.
inline std::optional<std::vector<double>> read_weights(const Field &root, const Shape &shape) {
  const auto w = root.find("weights");
  if (!w) return std::nullopt;
  const std::string path = w->as_path();
  NpyArray a = read_npy(path);
  require(a.shape == shape.extents(), path, ": npy field 'shape': expected the shape of ",
          root.file(), " /parameters");
  return std::move(a.data);
}

inline LayerDescription parse_layer(const Json &json, const std::string &file) {
  const Field root(json, file);
  LayerDescription d;
  d.file = file;
  d.name = read_header(root, "layer");
  root.allow_only(
      {"pmach", "kind", "name", "source", "target", "parameters", "edges", "weights", "grading"});
  d.source = read_space(root.at("source"));
  d.target = read_space(root.at("target"));
  d.has_parameters = root.has("parameters");
  if (d.has_parameters) d.parameters = read_space(root.at("parameters"));
  d.span = read_edges(root.at("edges"), d.source, d.target, d.parameters, d.has_parameters);
  d.span.validate(file + " /edges");
  if (d.has_parameters)
    d.weights = read_weights(root, d.parameters);
  else if (root.has("weights"))
    root.at("weights").fail("no weights: the layer has no 'parameters'");
  if (const auto g = root.find("grading")) {
    g->allow_only({"source", "target"});
    d.source_grading = read_grading(g->at("source"), d.source);
    d.target_grading = read_grading(g->at("target"), d.target);
    renumber_levels({&*d.source_grading, &*d.target_grading});
  }
  return d;
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
