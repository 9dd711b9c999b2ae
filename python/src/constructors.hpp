#pragma once
// The catalogue's constructors as models: the layers of src/pm/layers/ over
// the rationals, and the seed machines through the machine file reader
// (pm::io::parse_machine), so that a constructor checks its arguments and
// words its errors exactly as a model file is checked.
#include "models.hpp"
#include "pm/layers.hpp"
#include "pm/validate/catalogue.hpp"

namespace pmach_py {

inline LayerModel layer_model(std::string name, Shape source, Shape target, Shape parameters,
                              bool has_parameters, pm::ParametricSpan<pm::Rational> span) {
  pm::io::LayerDescription d;
  d.name = std::move(name);
  d.source = std::move(source);
  d.target = std::move(target);
  d.parameters = std::move(parameters);
  d.has_parameters = has_parameters;
  d.span = std::move(span);
  d.span.validate(d.name);
  return LayerModel(std::move(d));
}

inline LayerModel dense_layer(Index in, Index out, bool bias) {
  const pm::DenseSpec s{in, out, bias};
  const Shape p = bias ? Shape({s.parameters()}) : Shape({in, out});
  return layer_model("dense(" + std::to_string(in) + ", " + std::to_string(out) +
                         (bias ? ", bias" : "") + ")",
                     Shape({s.source()}), Shape({out}), p, true, pm::dense<pm::Rational>(s));
}

inline LayerModel conv_layer(const pm::ConvSpec &c, bool transposed) {
  c.validate();
  const std::string name = std::string(transposed ? "conv_transpose" : "conv") + "(" +
                           std::to_string(c.rank()) + "-d, " + std::to_string(c.in_channels) +
                           " -> " + std::to_string(c.out_channels) + ")";
  if (transposed)
    return layer_model(name, c.output_shape(), c.input_shape(), c.parameter_shape(), true,
                       pm::conv_transpose<pm::Rational>(c));
  return layer_model(name, c.input_shape(), c.output_shape(), c.parameter_shape(), true,
                     pm::conv<pm::Rational>(c));
}

inline LayerModel time_conv_layer(const pm::TimeConvSpec &c) {
  const pm::ParametricSpan<pm::Rational> a = pm::time_conv<pm::Rational>(c);
  return layer_model("time_conv", Shape({c.length, c.in_channels}),
                     Shape({c.length, c.out_channels}), c.parameter_shape(), true, a);
}

inline pm::GraphNorm graph_norm(const std::string &n) {
  if (n == "sum") return pm::GraphNorm::sum;
  if (n == "mean") return pm::GraphNorm::mean;
  if (n == "symmetric") return pm::GraphNorm::symmetric;
  pm::detail::fail("graph: norm is '", n, "', expected sum, mean or symmetric");
}

inline LayerModel graph_layer(const pm::GraphConvSpec &c) {
  return layer_model("graph(" + std::to_string(c.nodes) + " nodes)",
                     Shape({c.nodes, c.in_channels}), Shape({c.nodes, c.out_channels}),
                     Shape({c.in_channels, c.out_channels}), true, pm::graph_conv<pm::Rational>(c));
}

inline LayerModel avg_pool_layer(const pm::PoolSpec &c) {
  const pm::ConvSpec g = c.as_conv();
  g.validate();
  return layer_model("avg_pool", g.input_shape(), g.output_shape(), Shape(), false,
                     pm::validation::unparametrised(pm::average_pool<pm::Rational>(c)));
}

// A seed machine from the fields of its machine file.
inline MachineModel seed_model(pm::io::Json j, const std::string &kind) {
  j["pmach"] = pm::io::format_version;
  j["kind"] = "machine";
  j["name"] = kind;
  j["machine"] = kind;
  return MachineModel(pm::io::parse_machine(j, "pmach." + kind));
}

} // namespace pmach_py
