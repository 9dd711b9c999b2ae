#pragma once
// pmach make: the model file of a catalogue layer or seed machine, from its
// hyper-parameters, so that a hand-written file can be compared with the
// constructor's (`pmach check mine.json --same-as made.json`), and
// pmach probe: the probe inputs of a layer or machine for a framework without
// bindings.
#include <iostream>
#include <map>

#include "args.hpp"
#include "pm/io/model_writer.hpp"
#include "pm/io/torch_layout.hpp"
#include "pm/layers.hpp"
#include "pm/validate/machine_probe.hpp"

namespace pmach {

inline const char *make_help =
    "usage: pmach make <what> [options] [--file OUT.json]\n"
    "\n"
    "Writes the model file (docs/formats.md) of a built-in constructor to OUT.json,\n"
    "or to standard output. Layers are written with an explicit edge list up to\n"
    "2^22 edges; larger dense, conv and graph layers by name ({\"layer\": ...}, held\n"
    "by their rule at any size). --bias adds one bias per output channel\n"
    "(\"bias\": {\"axes\"}); the parameters are then flat, the weights followed by\n"
    "the bias. Layers without parameters (pool, interpolate, pixel-shuffle, unfold,\n"
    "roll) are called as f(x).\n"
    "\n"
    "  dense           --in N --out M [--bias] [--layout pm|torch]\n"
    "                  torch: Linear's weight (out, in); pm with --bias: source\n"
    "                  N + 1, the last point the bias input 1 (the seed's layout)\n"
    "  conv            --in C --out O --size n... --kernel k... [--stride s...]\n"
    "                  [--dilation d...] [--padding p...] [--padding-hi p...]\n"
    "                  [--padding-mode zeros|circular|reflect|replicate]\n"
    "                  [--groups G] [--layout pm|torch] [--transpose] [--bias]\n"
    "                  one value per spatial axis; --padding is the low side and,\n"
    "                  without --padding-hi, the high side too (PyTorch's padding).\n"
    "                  Layout pm: x (position..., channel), parameters (kernel...,\n"
    "                  channel in group, out channel); torch: x (channel,\n"
    "                  position...), parameters (out, in/groups, kernel...).\n"
    "                  --transpose writes the transposed convolution from C to O\n"
    "                  channels whose output has the extents n (PyTorch's\n"
    "                  ConvTransposeNd(C, O) weight (C, O/groups, k...) in torch).\n"
    "  pool            --channels C --size n... --kernel k... [--stride s...]\n"
    "                  [--padding p...] [--padding-hi p...] [--exclude-pad] [--ceil]\n"
    "                  [--layout pm|torch]   (average pooling; --exclude-pad is\n"
    "                  count_include_pad=False, --ceil is ceil_mode=True)\n"
    "  interpolate     --channels C --size n... --to m... [--mode nearest|linear]\n"
    "                  [--align-corners] [--layout pm|torch]   (F.interpolate; linear\n"
    "                  on every axis is bilinear and trilinear)\n"
    "  pixel-shuffle   --channels C --size n... --factor r [--inverse]\n"
    "                  [--layout pm|torch]   from (n..., C*r^k) to (n*r..., C);\n"
    "                  --inverse is pixel_unshuffle from (n*r..., C)\n"
    "  unfold          --channels C --size n... --kernel k... [--stride s...]\n"
    "                  [--padding p...] [--dilation d...] [--fold] [--layout pm|torch]\n"
    "                  F.unfold from the image (n..., C) to the columns (block,\n"
    "                  C*K), K = k1*k2*...; torch (C, n...) to (C*K, block); --fold\n"
    "                  is F.fold, its transpose, from the columns to the image\n"
    "  roll            --shape n... --shifts s...   torch.roll on every axis\n"
    "  time-conv       --length T --in C --out O --lag L [--bias] [--layout pm|torch]\n"
    "  graph           --nodes N --edges u v [u v ...] --in C --out O\n"
    "                  [--norm sum|mean|symmetric] [--self-loops] [--bias]\n"
    "                  [--layout pm|torch]\n"
    "                  graph convolution over the edges u -> v; x (node, channel),\n"
    "                  parameters (in channel, out channel), torch (out, in); a\n"
    "                  symmetric weight that is not rational is written as the\n"
    "                  nearest double\n"
    "  dense-machine   --dims d... --sigma NAME\n"
    "  conv-machine    --dims d... --sigma NAME --size n... --padding lo hi ...\n"
    "  recur-machine   --dims d... --sigma NAME --length T --lag L --timeblock B\n"
    "\n"
    "Exit status: 0 written, 2 bad input or usage.\n";

inline const char *probe_help =
    "usage: pmach probe LAYER.json --out DIR [--seed S]\n"
    "       pmach probe MACHINE.json --out DIR [--cases N] [--seed S]\n"
    "\n"
    "Writes the probe inputs of a layer to DIR: x.npy (batch, *source), w.npy\n"
    "(batch, *parameters; one parameter vector per sample), g.npy (batch, *target)\n"
    "and probe.json. Run your framework on them, per sample b: y[b] = L(w[b], x[b]),\n"
    "optionally grad_x[b] = L(w[b])^T g[b] and grad_w = sum_b d<g[b], L(w, x[b])>/dw,\n"
    "write y.npy (and grad_x.npy, grad_w.npy) into DIR, float32 or float64, and run\n"
    "  pmach check LAYER.json --against DIR\n"
    "which compares your framework with the model at full size on the last k\n"
    "samples (CONF-EQUAL: random integer probes, exact in float32 and float64,\n"
    "missing a difference with probability at most the bound printed) and, for a\n"
    "layer with |P|·|X| at most 2048, recovers the span your framework implements\n"
    "from the first |P|·|X| + 17 samples (exactly, for these integer inputs) and\n"
    "prints its difference with the model's in multi-index coordinates.\n"
    "\n"
    "Of a machine: w.npy (batch, *parameters), y0.npy, z0.npy, gy.npy, gz.npy\n"
    "(batch, *space) and probe.json: N cases (default 10) of two samples with\n"
    "small integers, and for sigma with rational values the |P|·|I| basis probes\n"
    "w = e_p, y0 = 0, z0 = e_s. Per sample b, write the solution y[b], z[b] of the\n"
    "machine at w[b], y0[b], z0[b] as y.npy, z.npy and optionally its backward pass\n"
    "at gy[b], gz[b] as grad_y0.npy, grad_z0.npy and grad_w.npy (the gradient of\n"
    "that one sample, (batch, *parameters)); `pmach check MACHINE.json --against\n"
    "DIR` compares the passes with the reference and diffs the linear part\n"
    "recovered from the basis probes with the model's cleaned span.\n"
    "\n"
    "Exit status: 0 written, 2 bad input or usage.\n";

// "--name v1 v2 …" lists; flags have no values.
struct MakeArgs {
  std::string what;
  std::map<std::string, std::vector<std::string>> options;

  bool has(const std::string &n) const { return options.count(n) > 0; }
  std::vector<pm::Index> sizes(const std::string &n, bool required, std::size_t count = 0,
                               pm::Index min = 1) const {
    const auto it = options.find(n);
    pm::require(it != options.end() || !required, "make ", what, ": expected --", n);
    std::vector<pm::Index> v;
    if (it == options.end()) return v;
    for (const std::string &s : it->second) {
      pm::require(!s.empty() && s.size() <= 9 &&
                      s.find_first_not_of("0123456789") == std::string::npos,
                  "--", n, ": is '", s, "', expected a non-negative integer");
      const pm::Index k = std::stoull(s);
      pm::require(k >= min, "--", n, ": is ", k, ", expected at least ", min);
      v.push_back(k);
    }
    pm::require(!v.empty(), "--", n, ": expected a value");
    pm::require(count == 0 || v.size() == count, "--", n, ": has ", v.size(), " values, expected ",
                count);
    return v;
  }
  pm::Index size(const std::string &n, pm::Index min = 1) const {
    return sizes(n, true, 1, min)[0];
  }
  std::string text(const std::string &n, const std::string &fallback = "") const {
    const auto it = options.find(n);
    if (it == options.end()) return fallback;
    pm::require(it->second.size() == 1, "--", n, ": expected one value");
    return it->second[0];
  }
};

inline MakeArgs parse_make(int argc, char **argv, int first,
                           const std::map<std::string, std::set<std::string>> &accepted) {
  MakeArgs a;
  pm::require(
      first < argc && std::string(argv[first]).rfind("--", 0) != 0,
      "make: expected what to make (dense, conv, pool, interpolate, pixel-shuffle, unfold, roll, "
      "time-conv, graph, dense-machine, conv-machine or recur-machine)");
  a.what = argv[first];
  const auto known = accepted.find(a.what);
  pm::require(
      known != accepted.end(), "make: unknown constructor '", a.what,
      "', expected dense, conv, pool, interpolate, pixel-shuffle, unfold, roll, time-conv, graph, "
      "dense-machine, conv-machine or recur-machine");
  std::string current;
  for (int i = first + 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      current = arg.substr(2);
      pm::require(known->second.count(current) || current == "file", "make ", a.what,
                  ": unknown option --", current, " (see --help)");
      pm::require(!a.has(current), "option --", current, " given twice");
      a.options[current];
    } else {
      pm::require(!current.empty(), "make ", a.what, ": unexpected argument '", arg, "'");
      a.options[current].push_back(arg);
    }
  }
  return a;
}

// A rule relabelled to PyTorch's layout when asked, listed as edges, with a
// bias per entry of the target's axis `bias_axis` (in the final layout) when
// --bias is given: the file's "bias": {"axes": [...]}, which the reader adds
// as the copairing with the bias span (parameters: the weights, then the bias).
struct MadeRule {
  std::shared_ptr<const pm::SpanRows> rows;
  pm::Shape source, target, parameters;
  bool has_parameters = true;
};

// A layer with more than max_listed_edges edges is written as its named form
// (`named`, docs/formats.md §2.5) when it has one, and refused when not.
inline pm::io::Json rule_json(const MakeArgs &a, const std::string &name, MadeRule m, bool torch,
                              const std::vector<pm::Index> &source_order,
                              const std::vector<pm::Index> &target_order,
                              const std::vector<pm::Index> &parameter_order, pm::Index bias_axis,
                              const pm::io::Json &named = {}) {
  if (torch) {
    const auto r = pm::io::relayout({m.rows, m.source, m.target, m.parameters}, source_order,
                                    target_order, parameter_order);
    m.rows = r.rows, m.source = r.source, m.target = r.target, m.parameters = r.parameters;
  }
  pm::require(!a.has("bias") || m.has_parameters,
              "--bias: the layer has no parameters to add a bias to");
  const double edges = double(m.rows->target()) * double(m.rows->max_row());
  pm::io::Json j;
  if (edges <= double(pm::io::max_listed_edges)) {
    j = pm::io::layer_json(name, m.source, m.target, m.parameters, m.has_parameters,
                           pm::materialise(*m.rows));
  } else {
    pm::require(!named.is_null(), "make ", a.what, ": the layer has up to ",
                static_cast<unsigned long long>(std::min(edges, 1e19)), " edges, expected at most ",
                pm::io::max_listed_edges,
                " to list them in a file (dense, conv and graph layers of any size are written "
                "by name)");
    j = named;
  }
  if (a.has("bias")) j["bias"] = pm::io::Json{{"axes", {bias_axis}}};
  return j;
}

// "--layout pm|torch": true for torch.
inline bool torch_layout(const MakeArgs &a) {
  const std::string layout = a.text("layout", "pm");
  pm::require(layout == "pm" || layout == "torch", "--layout: is '", layout,
              "', expected pm or torch");
  return layout == "torch";
}

// A parameterless layer on (position…, channel), channels first in torch's
// layout.
inline pm::io::Json fixed_json(const MakeArgs &a, const std::string &name,
                               std::shared_ptr<const pm::SpanRows> rows, pm::Shape source,
                               pm::Shape target) {
  const auto order = pm::io::channel_first(source.rank() - 1);
  return rule_json(a, name,
                   {std::move(rows), std::move(source), std::move(target), pm::Shape(), false},
                   torch_layout(a), order, order, {}, 0);
}

inline pm::io::Json make_layer_json(const MakeArgs &a) {
  using pm::Index;
  const bool torch = torch_layout(a);
  if (a.what == "dense") {
    const Index in = a.size("in"), out = a.size("out");
    if (!torch && a.has("bias")) { // the seed's convention: a last source point set to 1
      const pm::DenseSpec d{in, out, true};
      pm::require(double(d.source()) * double(out) <= double(pm::io::max_listed_edges), "make ",
                  "dense: --bias in layout pm has ", double(d.source()) * double(out),
                  " edges, expected at most ", pm::io::max_listed_edges,
                  " to list them; write it with --layout torch (by name, any size)");
      return pm::io::layer_json(
          "dense " + std::to_string(in) + " -> " + std::to_string(out), pm::Shape({d.source()}),
          pm::Shape({out}), pm::Shape({d.parameters()}), true, pm::materialise(*pm::dense_rows(d)));
    }
    const std::string name = "dense " + std::to_string(in) + " -> " + std::to_string(out);
    return rule_json(a, name,
                     {std::make_shared<const pm::DenseRows>(in, out), pm::Shape({in}),
                      pm::Shape({out}), pm::Shape({in, out})},
                     torch, {}, {}, {1, 0}, 0, pm::io::named_dense_json(name, in, out, torch));
  }
  if (a.what == "time-conv") {
    const pm::TimeConvSpec t{a.size("length"), a.size("in"), a.size("out"), a.size("lag", 0)};
    const pm::ConvSpec c = t.as_conv();
    return rule_json(a, "time conv",
                     {std::make_shared<const pm::TimeConvRows>(t), c.input_shape(),
                      c.output_shape(), t.parameter_shape()},
                     torch, {1, 0}, {1, 0}, {2, 1, 0}, torch ? 0 : 1);
  }
  if (a.what == "graph") {
    pm::GraphConvSpec g;
    g.nodes = a.size("nodes");
    const std::vector<Index> ends = a.sizes("edges", true, 0, 0);
    pm::require(ends.size() % 2 == 0, "--edges: has ", ends.size(),
                " values, expected pairs u v (an even number)");
    for (std::size_t k = 0; k < ends.size(); k += 2) {
      pm::require(ends[k] < g.nodes && ends[k + 1] < g.nodes, "--edges: edge ", k / 2, " is (",
                  ends[k], ", ", ends[k + 1], "), expected node indices < ", g.nodes);
      g.edges.emplace_back(ends[k], ends[k + 1]);
    }
    g.in_channels = a.size("in");
    g.out_channels = a.size("out");
    g.self_loops = a.has("self-loops");
    const std::string norm = a.text("norm", "sum");
    pm::require(norm == "sum" || norm == "mean" || norm == "symmetric", "--norm: is '", norm,
                "', expected sum, mean or symmetric");
    g.norm = norm == "sum"    ? pm::GraphNorm::sum
             : norm == "mean" ? pm::GraphNorm::mean
                              : pm::GraphNorm::symmetric;
    return rule_json(
        a, "graph conv " + norm,
        {std::make_shared<const pm::GraphRows>(g), pm::Shape({g.nodes, g.in_channels}),
         pm::Shape({g.nodes, g.out_channels}), pm::Shape({g.in_channels, g.out_channels})},
        torch, {}, {}, {1, 0}, 1, pm::io::named_graph_json("graph conv " + norm, g, torch));
  }
  if (a.what == "roll") {
    const pm::Shape shape(a.sizes("shape", true));
    const auto it = a.options.find("shifts");
    pm::require(it != a.options.end() && it->second.size() == shape.rank(),
                "--shifts: expected one integer per axis of --shape (", shape.rank(), ")");
    std::vector<std::int64_t> shifts;
    for (const std::string &v : it->second) {
      pm::require(!v.empty() && v.size() <= 9 &&
                      v.find_first_not_of("0123456789", v[0] == '-' ? 1 : 0) == std::string::npos &&
                      v != "-",
                  "--shifts: is '", v, "', expected an integer");
      shifts.push_back(std::stoll(v));
    }
    return rule_json(
        a, "roll",
        {std::make_shared<const pm::RollRows>(shape, shifts), shape, shape, pm::Shape(), false},
        false, {}, {}, {}, 0);
  }
  const std::vector<Index> size = a.sizes("size", true);
  const std::size_t r = size.size();
  const auto per_axis = [&](const char *n, Index min) { return a.sizes(n, false, r, min); };
  if (a.what == "interpolate") {
    const std::string mode = a.text("mode", "nearest");
    pm::require(mode == "nearest" || mode == "linear", "--mode: is '", mode,
                "', expected nearest or linear");
    const pm::InterpolateSpec c{size, a.size("channels"), a.sizes("to", true, r),
                                mode == "nearest" ? pm::InterpolateMode::nearest
                                                  : pm::InterpolateMode::linear,
                                a.has("align-corners")};
    c.validate();
    return fixed_json(a, "interpolate " + mode, std::make_shared<const pm::InterpolateRows>(c),
                      c.input_shape(), c.output_shape());
  }
  if (a.what == "pixel-shuffle") {
    const bool inverse = a.has("inverse");
    const pm::PixelShuffleSpec c{size, a.size("channels"), a.size("factor")};
    auto rows = std::make_shared<const pm::PixelShuffleRows>(c, inverse);
    return inverse ? fixed_json(a, "pixel unshuffle", rows, c.shuffled_shape(), c.stacked_shape())
                   : fixed_json(a, "pixel shuffle", rows, c.stacked_shape(), c.shuffled_shape());
  }
  const std::vector<Index> kernel = a.sizes("kernel", true, r);
  const std::vector<Index> lo = per_axis("padding", 0);
  const std::vector<Index> hi = a.has("padding-hi") ? per_axis("padding-hi", 0) : lo;
  if (a.what == "unfold") {
    pm::require(!a.has("padding-hi"), "make unfold: --padding-hi: F.unfold pads both sides alike");
    const pm::UnfoldSpec u{size, a.size("channels"),    kernel,
                           lo,   per_axis("stride", 1), per_axis("dilation", 1)};
    const bool fold = a.has("fold");
    auto rows = std::make_shared<const pm::UnfoldRows>(u, fold);
    const auto image = pm::io::channel_first(r), columns = pm::io::channel_first(1);
    if (fold)
      return rule_json(a, "fold", {rows, u.columns_shape(), u.image_shape(), pm::Shape(), false},
                       torch, columns, image, {}, 0);
    return rule_json(a, "unfold", {rows, u.image_shape(), u.columns_shape(), pm::Shape(), false},
                     torch, image, columns, {}, 0);
  }
  if (a.what == "pool") {
    const pm::PoolSpec p{size,
                         a.size("channels"),
                         kernel,
                         lo,
                         hi,
                         per_axis("stride", 1),
                         !a.has("exclude-pad"),
                         a.has("ceil")};
    return fixed_json(a, "average pool", std::make_shared<const pm::PoolRows>(p), p.input_shape(),
                      p.output_shape());
  }
  // --transpose: --in and --out are the transposed layer's own channels, and
  // --size its output's extents (the convolution's input, as "size" of the
  // named layer).
  const bool transposed = a.has("transpose");
  const Index in = a.size("in"), out = a.size("out");
  pm::ConvSpec c{size,
                 transposed ? out : in,
                 transposed ? in : out,
                 kernel,
                 lo,
                 hi,
                 per_axis("stride", 1),
                 per_axis("dilation", 1),
                 a.has("groups") ? a.size("groups") : 1};
  c.padding_mode = pm::padding_mode_named(a.text("padding-mode", "zeros"));
  c.validate();
  const auto param = pm::io::conv_parameter_order(r);
  const auto order = pm::io::channel_first(r);
  const std::string name = std::string(transposed ? "conv transpose " : "conv ") +
                           std::to_string(r) + "d " + std::to_string(in) + " -> " +
                           std::to_string(out);
  if (transposed)
    return rule_json(a, name,
                     {std::make_shared<const pm::ConvTransposeRows>(c), c.output_shape(),
                      c.input_shape(), c.parameter_shape()},
                     torch, order, order, param, torch ? 0 : r,
                     pm::io::named_conv_json(name, c, true, torch));
  return rule_json(a, name,
                   {std::make_shared<const pm::ConvRows>(c), c.input_shape(), c.output_shape(),
                    c.parameter_shape()},
                   torch, order, order, param, torch ? 0 : r,
                   pm::io::named_conv_json(name, c, false, torch));
}

inline pm::io::Json make_machine_json(const MakeArgs &a) {
  pm::SeedDescription d;
  d.dims = a.sizes("dims", true);
  d.sigma = a.text("sigma");
  pm::require(!d.sigma.empty(), "make ", a.what, ": expected --sigma");
  if (a.what == "dense-machine") {
    d.kind = "DenseMachine";
  } else if (a.what == "conv-machine") {
    d.kind = "ConvMachine";
    d.positions = a.sizes("size", true);
    d.pad = a.sizes("padding", true, 2 * d.positions.size(), 0);
  } else {
    d.kind = "RecurMachine";
    d.positions = {a.size("length")};
    d.pad = {a.size("lag", 0)};
    d.timeblock = a.size("timeblock");
  }
  return pm::io::seed_machine_json(d.kind, d);
}

inline int run_make(int argc, char **argv) {
  const std::set<std::string> conv_opts{"in",        "out",     "size",        "kernel", "stride",
                                        "dilation",  "padding", "padding-hi",  "groups", "layout",
                                        "transpose", "bias",    "padding-mode"};
  const std::map<std::string, std::set<std::string>> accepted{
      {"dense", {"in", "out", "bias", "layout"}},
      {"conv", conv_opts},
      {"pool",
       {"channels", "size", "kernel", "stride", "padding", "padding-hi", "exclude-pad", "ceil",
        "layout"}},
      {"interpolate", {"channels", "size", "to", "mode", "align-corners", "layout"}},
      {"pixel-shuffle", {"channels", "size", "factor", "inverse", "layout"}},
      {"unfold", {"channels", "size", "kernel", "stride", "padding", "dilation", "fold", "layout"}},
      {"roll", {"shape", "shifts"}},
      {"time-conv", {"length", "in", "out", "lag", "bias", "layout"}},
      {"graph", {"nodes", "edges", "in", "out", "norm", "self-loops", "bias", "layout"}},
      {"dense-machine", {"dims", "sigma"}},
      {"conv-machine", {"dims", "sigma", "size", "padding"}},
      {"recur-machine", {"dims", "sigma", "length", "lag", "timeblock"}}};
  const MakeArgs a = parse_make(argc, argv, 2, accepted);
  for (const char *flag : {"bias", "transpose", "self-loops", "exclude-pad", "ceil",
                           "align-corners", "inverse", "fold"})
    pm::require(!a.has(flag) || a.options.at(flag).empty(), "option --", flag, " takes no value");
  const bool machine = a.what.find("machine") != std::string::npos;
  const pm::io::Json j = machine ? make_machine_json(a) : make_layer_json(a);
  const std::string file = a.text("file", "-");
  // Read back: what is written is a model file every reader accepts.
  pm::io::parse_model(j, file == "-" ? "pmach make" : file);
  const std::string text = j.dump(machine ? 2 : -1) + "\n";
  if (file == "-")
    std::cout << text;
  else
    pm::io::write_file_atomically(file, text);
  return 0;
}

inline int run_probe(const Args &args) {
  pm::require(args.positional.size() == 1, "probe: expected one MODEL.json, found ",
              args.positional.size(), " arguments");
  pm::require(args.has("out"), "probe: expected --out DIR");
  const auto model = pm::io::read_model(args.positional[0]);
  const std::uint64_t seed = args.number("seed", 1, ~0ull);
  const auto *layer = std::get_if<pm::io::LayerDescription>(&model);
  pm::require(layer == nullptr || !args.has("cases"),
              "probe: --cases is for machines (a layer's probes are fixed by its sizes)");
  std::size_t n = 0;
  if (layer) {
    pm::require(!layer->bias, args.positional[0],
                ": probes are written for layers without a bias; probe the layer without its "
                "'bias' field");
    n = pm::write_probes(*layer, args.get("out"), seed);
  } else {
    const std::size_t cases = args.number("cases", 10, pm::io::max_cases);
    pm::require(cases > 0, "--cases: is 0, expected at least 1");
    n = pm::write_machine_probes(std::get<pm::io::MachineDescription>(model), args.get("out"),
                                 cases, seed);
  }
  std::cout << "wrote " << n << " probe samples to " << args.get("out") << ": "
            << (layer ? "x.npy, w.npy, g.npy" : "w.npy, y0.npy, z0.npy, gy.npy, gz.npy")
            << ", probe.json\n";
  return 0;
}

} // namespace pmach
