#pragma once
// Writing model files and probe inputs (`pmach make`, `pmach probe`); the
// files themselves are written all-or-nothing by pm/io/output.hpp. A layer is written with an
// explicit edge list of flat indices (s, t, pi, mu), which every reader of docs/formats.md accepts
// and which holds any span exactly (μ as "p/q" when not an integer).
#include <sstream>

#include "pm/io/layer_format.hpp"
#include "pm/layers/seed_machine.hpp"

namespace pm::io {

inline Json space_json(const Shape &s) { return Json{{"shape", s.extents()}}; }

inline Json rational_json(const Rational &q) {
  if (denominator(q) == 1) return Json(numerator(q).convert_to<long long>());
  std::ostringstream os;
  os << q;
  return Json(os.str());
}

// {"pmach": 1, "kind": "layer", …} with the edges listed; `has_parameters`
// false writes a layer without "parameters" (π constant into one point).
inline Json layer_json(const std::string &name, const Shape &source, const Shape &target,
                       const Shape &parameters, bool has_parameters,
                       const ParametricSpan<Rational> &a) {
  require(a.source() == source.size() && a.target() == target.size() &&
              a.parameters() == parameters.size(),
          "layer_json: the span does not fit the shapes");
  Json list = Json::array();
  bool unit = true;
  for (Index e = 0; e < a.apex(); ++e) unit = unit && a.span.mu[e] == 1;
  for (Index e = 0; e < a.apex(); ++e) {
    Json row = Json::array({a.span.s(e), a.span.t(e)});
    if (has_parameters) row.push_back(a.pi(e));
    if (!unit) row.push_back(rational_json(a.span.mu[e]));
    list.push_back(std::move(row));
  }
  Json j{{"pmach", format_version},
         {"kind", "layer"},
         {"name", name},
         {"source", space_json(source)},
         {"target", space_json(target)}};
  if (has_parameters) j["parameters"] = space_json(parameters);
  j["edges"] = Json{{"list", std::move(list)}};
  return j;
}

// A named layer (docs/formats.md §2.5, read by named_layer.hpp): a layer by
// its constructor and hyper-parameters, how a layer too large to list is
// written. A bias is added by the caller ("bias": {"axes": [a]}).
inline Json named_header(const std::string &name, const char *layer, bool torch) {
  return Json{{"pmach", format_version},
              {"kind", "layer"},
              {"name", name},
              {"layer", layer},
              {"layout", torch ? "torch" : "pm"}};
}

inline Json named_dense_json(const std::string &name, Index in, Index out, bool torch) {
  Json j = named_header(name, "dense", torch);
  j["in"] = in;
  j["out"] = out;
  return j;
}

// A convolution, or with `transposed` the transposed convolution of c (its
// "in" and "out" the transposed layer's own, c's output and input channels).
inline Json named_conv_json(const std::string &name, const ConvSpec &c, bool transposed,
                            bool torch) {
  Json j = named_header(name, "conv", torch);
  j["in"] = transposed ? c.out_channels : c.in_channels;
  j["out"] = transposed ? c.in_channels : c.out_channels;
  j["size"] = c.spatial;
  j["kernel"] = c.kernel;
  std::vector<Index> stride, dilation, lo, hi;
  for (Index a = 0; a < c.rank(); ++a) {
    stride.push_back(c.step(a));
    dilation.push_back(c.dil(a));
    lo.push_back(c.lo(a));
    hi.push_back(c.hi(a));
  }
  j["stride"] = stride;
  j["dilation"] = dilation;
  j["padding"] = lo;
  j["padding_hi"] = hi;
  j["groups"] = c.groups;
  if (transposed) j["transpose"] = true;
  j["padding_mode"] = padding_mode_names[int(c.padding_mode)];
  return j;
}

inline Json named_graph_json(const std::string &name, const GraphConvSpec &g, bool torch) {
  Json j = named_header(name, "graph", torch);
  j["nodes"] = g.nodes;
  Json edges = Json::array();
  for (const auto &[u, v] : g.edges) edges.push_back(Json::array({u, v}));
  j["edges"] = std::move(edges);
  j["c_in"] = g.in_channels;
  j["c_out"] = g.out_channels;
  const char *norms[] = {"sum", "mean", "symmetric"};
  j["normalisation"] = norms[int(g.norm)];
  j["self_loops"] = g.self_loops;
  return j;
}

// A seed machine by name and hyper-parameters (docs/formats.md, "machine").
inline Json seed_machine_json(const std::string &name, const SeedDescription &d) {
  Json j{{"pmach", format_version}, {"kind", "machine"}, {"name", name},
         {"machine", d.kind},       {"dims", d.dims},    {"sigma", d.sigma}};
  if (d.kind == "ConvMachine") {
    j["spatial"] = d.positions;
    Json pad = Json::array();
    for (std::size_t k = 0; k + 1 < d.pad.size(); k += 2)
      pad.push_back(Json::array({d.pad[k], d.pad[k + 1]}));
    j["pad"] = pad;
  } else if (d.kind == "RecurMachine") {
    j["length"] = d.positions.at(0);
    j["pad"] = d.pad.at(0);
    j["timeblock"] = d.timeblock;
  }
  return j;
}

} // namespace pm::io
