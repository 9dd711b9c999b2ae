#pragma once
// The catalogue's constructors as models: each layer of src/pm/layers/ as its
// rule (pm::SpanRows) over the rationals, listed as edges when small
// (pm::io::described_layer), in the library's layout or PyTorch's, with an
// optional bias per channel; and the seed machines through the machine file
// reader (pm::io::parse_machine), so that a constructor checks its arguments
// and words its errors exactly as a model file is checked.
#include "models.hpp"
#include "pm/io/model_writer.hpp"
#include "pm/io/torch_layout.hpp"
#include "pm/layers.hpp"
#include "pm/validate/catalogue.hpp"

namespace pmach_py {

using Rows = std::shared_ptr<const pm::SpanRows>;

// A layer given by its edge list (a recovered span).
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

// "pm" or "torch"; true for torch.
inline bool torch_layout(const std::string &layout) {
  pm::require(layout == "pm" || layout == "torch", "layout: is '", layout,
              "', expected 'pm' or 'torch'");
  return layout == "torch";
}

// A rule between shaped spaces given in the library's layout, relabelled to
// PyTorch's by the axis orders when `torch`, with a bias per entry of the
// target's axis `bias_axis` (in the final layout) when `bias`: the layer
// file's convention, source the user's shape and parameters flat (the
// weights, then the bias).
struct Layout {
  bool torch = false;
  std::vector<Index> source_order, target_order, parameter_order;
  Index bias_axis = 0;
};

// `named`: the layer's named form (pm/io/model_writer.hpp), when it has one.
inline LayerModel rule_model(std::string name, Rows rows, Shape source, Shape target,
                             Shape parameters, bool has_parameters, const Layout &l, bool bias,
                             pm::io::Json named = {}) {
  if (l.torch) {
    const auto r = pm::io::relayout({rows, source, target, parameters}, l.source_order,
                                    l.target_order, l.parameter_order);
    rows = r.rows, source = r.source, target = r.target, parameters = r.parameters;
  }
  if (bias) {
    pm::require(has_parameters, name, ": bias: the layer has no parameters to add a bias to");
    rows = std::make_shared<const pm::BiasRows>(rows, target, l.bias_axis);
    parameters = Shape({rows->parameters()});
    name += " + bias";
    if (!named.is_null()) named["bias"] = pm::io::Json{{"axes", {l.bias_axis}}};
  }
  if (!named.is_null()) named["name"] = name;
  pm::io::LayerDescription d =
      pm::io::described_layer(std::move(name), std::move(source), std::move(target),
                              std::move(parameters), has_parameters, std::move(rows));
  d.named = std::move(named);
  return LayerModel(std::move(d));
}

// (position…, channel) ↔ (channel, position…) on source and target.
inline Layout channels_first(bool torch, Index rank, std::vector<Index> parameter_order = {}) {
  const auto order = pm::io::channel_first(rank);
  return Layout{torch, order, order, std::move(parameter_order), torch ? 0 : rank};
}

inline LayerModel dense_layer(Index in, Index out, bool bias, const std::string &layout) {
  const bool torch = torch_layout(layout);
  const std::string name = "dense(" + std::to_string(in) + ", " + std::to_string(out) + ")";
  require_layer_size(name, double(in) + 1, double(out), (double(in) + bias) * double(out));
  if (!torch) { // the seed's convention: the bias input is the last source point, set to 1
    const pm::DenseSpec s{in, out, bias};
    const Shape p = bias ? Shape({s.parameters()}) : Shape({in, out});
    pm::io::LayerDescription d =
        pm::io::described_layer(name + (bias ? " + bias" : ""), Shape({s.source()}), Shape({out}),
                                p, true, pm::dense_rows(s));
    if (!bias) d.named = pm::io::named_dense_json(name, in, out, false);
    return LayerModel(std::move(d));
  }
  // Linear's weight (out, in), and its bias added to the output.
  return rule_model(name, std::make_shared<const pm::DenseRows>(in, out), Shape({in}), Shape({out}),
                    Shape({in, out}), true, Layout{true, {}, {}, {1, 0}, 0}, bias,
                    pm::io::named_dense_json(name, in, out, true));
}

// A convolution in PyTorch's layout: parameters (c_out, c_in/groups, kernel…).
inline Layout conv_layout(bool torch, Index rank) {
  return channels_first(torch, rank, pm::io::conv_parameter_order(rank));
}

inline LayerModel conv_layer(const pm::ConvSpec &c, bool bias, const std::string &layout) {
  c.validate();
  const std::string name = "conv(" + std::to_string(c.rank()) + "-d, " +
                           std::to_string(c.in_channels) + " -> " + std::to_string(c.out_channels) +
                           ")";
  const bool torch = torch_layout(layout);
  return rule_model(name, std::make_shared<const pm::ConvRows>(c), c.input_shape(),
                    c.output_shape(), c.parameter_shape(), true, conv_layout(torch, c.rank()), bias,
                    pm::io::named_conv_json(name, c, false, torch));
}

// PyTorch's ConvTransposeNd(in, out, k, stride, padding, output_padding,
// groups, dilation) on inputs of extents `spatial`: the adjoint of the
// convolution from `out` to `in` channels whose input has the extents
// (m − 1)·s + d·(k − 1) + 1 − lo − hi + output_padding.
inline LayerModel conv_transpose_layer(pm::ConvSpec c, const std::vector<Index> &output_padding,
                                       bool bias, const std::string &layout) {
  const Index rank = c.spatial.size();
  pm::require(c.kernel.size() == rank && output_padding.size() == rank,
              "conv_transpose: kernel_size and output_padding need one entry per spatial axis");
  std::swap(c.in_channels, c.out_channels);
  const std::vector<Index> inputs = c.spatial;
  for (Index j = 0; j < rank; ++j) {
    pm::require(inputs[j] >= 1, "conv_transpose: spatial[", j, "] is 0, expected >= 1");
    pm::require(output_padding[j] < std::max(c.step(j), c.dil(j)),
                "conv_transpose: output_padding[", j, "] is ", output_padding[j],
                ", expected less than the stride or the dilation");
    const long long n = (long long)((inputs[j] - 1) * c.step(j) + c.reach(j) + output_padding[j]) -
                        (long long)(c.lo(j) + c.hi(j));
    pm::require(n >= 1, "conv_transpose: axis ", j, " has output extent ", n,
                ", expected at least 1 (padding too large)");
    c.spatial[j] = Index(n);
  }
  c.validate();
  pm::require(c.output_extents() == inputs, "conv_transpose: the input extents do not invert");
  const std::string name = "conv_transpose(" + std::to_string(rank) + "-d, " +
                           std::to_string(c.out_channels) + " -> " + std::to_string(c.in_channels) +
                           ")";
  const bool torch = torch_layout(layout);
  return rule_model(name, std::make_shared<const pm::ConvTransposeRows>(c), c.output_shape(),
                    c.input_shape(), c.parameter_shape(), true, conv_layout(torch, rank), bias,
                    pm::io::named_conv_json(name, c, true, torch));
}

inline LayerModel time_conv_layer(const pm::TimeConvSpec &c, bool bias, const std::string &layout) {
  return rule_model("time_conv", std::make_shared<const pm::TimeConvRows>(c),
                    Shape({c.length, c.in_channels}), Shape({c.length, c.out_channels}),
                    c.parameter_shape(), true, channels_first(torch_layout(layout), 1, {2, 1, 0}),
                    bias);
}

inline pm::GraphNorm graph_norm(const std::string &n) {
  if (n == "sum") return pm::GraphNorm::sum;
  if (n == "mean") return pm::GraphNorm::mean;
  if (n == "symmetric") return pm::GraphNorm::symmetric;
  pm::detail::fail("graph: norm is '", n, "', expected sum, mean or symmetric");
}

// Graph layouts: (node, channel) either way; torch's weight is (out, in).
inline LayerModel graph_layer(const pm::GraphConvSpec &c, bool bias, const std::string &layout) {
  const bool torch = torch_layout(layout);
  return rule_model("graph(" + std::to_string(c.nodes) + " nodes)",
                    std::make_shared<const pm::GraphRows>(c), Shape({c.nodes, c.in_channels}),
                    Shape({c.nodes, c.out_channels}), Shape({c.in_channels, c.out_channels}), true,
                    Layout{torch, {}, {}, {1, 0}, 1}, bias,
                    pm::io::named_graph_json("graph", c, torch));
}

// A parameterless layer (one-point parameter space) on (position…, channel).
inline LayerModel fixed_layer(std::string name, Rows rows, Shape source, Shape target,
                              const std::string &layout) {
  const Index rank = source.rank() - 1;
  return rule_model(std::move(name), std::move(rows), std::move(source), std::move(target), Shape(),
                    false, channels_first(torch_layout(layout), rank), false);
}

inline LayerModel avg_pool_layer(const pm::PoolSpec &c, const std::string &layout) {
  return fixed_layer("avg_pool", std::make_shared<const pm::PoolRows>(c), c.input_shape(),
                     c.output_shape(), layout);
}

inline pm::InterpolateMode interpolate_mode(const std::string &m, Index rank) {
  if (m == "nearest") return pm::InterpolateMode::nearest;
  const char *names[] = {"linear", "bilinear", "trilinear"};
  for (Index j = 0; j < 3; ++j)
    if (m == names[j]) {
      pm::require(j + 1 == rank, "interpolate: mode '", m, "' is for ", j + 1, "-d inputs, found ",
                  rank, " spatial axes");
      return pm::InterpolateMode::linear;
    }
  pm::detail::fail("interpolate: mode is '", m,
                   "', expected nearest, linear, bilinear or trilinear");
}

inline LayerModel interpolate_layer(const pm::InterpolateSpec &c, const std::string &layout) {
  c.validate();
  return fixed_layer("interpolate", std::make_shared<const pm::InterpolateRows>(c), c.input_shape(),
                     c.output_shape(), layout);
}

inline LayerModel pixel_shuffle_layer(const pm::PixelShuffleSpec &c, bool inverse,
                                      const std::string &layout) {
  auto rows = std::make_shared<const pm::PixelShuffleRows>(c, inverse);
  Shape source = c.stacked_shape(), target = c.shuffled_shape();
  if (inverse) std::swap(source, target);
  return fixed_layer(inverse ? "pixel_unshuffle" : "pixel_shuffle", rows, source, target, layout);
}

// unfold (or fold, its transpose): the image (position…, C) or torch's
// (C, position…); the columns (block, C·K) or torch's (C·K, block).
inline LayerModel unfold_layer(const pm::UnfoldSpec &u, bool fold, const std::string &layout) {
  const Shape image = u.image_shape(), columns = u.columns_shape();
  const bool torch = torch_layout(layout);
  const std::vector<Index> image_order = pm::io::channel_first(image.rank() - 1),
                           columns_order{1, 0};
  return rule_model(
      fold ? "fold" : "unfold", std::make_shared<const pm::UnfoldRows>(u, fold),
      fold ? columns : image, fold ? image : columns, Shape(), false,
      Layout{torch, fold ? columns_order : image_order, fold ? image_order : columns_order, {}, 0},
      false);
}

// roll acts on the tensor's own shape: no layout; `flat` rolls the
// flattened tensor by shifts[0] (torch.roll without dims).
inline LayerModel roll_layer(const Shape &shape, const std::vector<std::int64_t> &shifts,
                             bool flat) {
  auto rows = flat ? std::make_shared<const pm::RollRows>(Shape({shape.size()}), shifts)
                   : std::make_shared<const pm::RollRows>(shape, shifts);
  return rule_model("roll", rows, shape, shape, Shape(), false, Layout{}, false);
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
