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
    "or to standard output. Layers are written with an explicit edge list.\n"
    "\n"
    "  dense           --in N --out M [--bias]\n"
    "  conv            --in C --out O --size n... --kernel k... [--stride s...]\n"
    "                  [--dilation d...] [--padding p...] [--padding-hi p...]\n"
    "                  [--groups G] [--layout pm|torch] [--transpose]\n"
    "                  one value per spatial axis; --padding is the low side and,\n"
    "                  without --padding-hi, the high side too (PyTorch's padding).\n"
    "                  Layout pm: x (position..., channel), parameters (kernel...,\n"
    "                  channel in group, out channel); torch: x (channel,\n"
    "                  position...), parameters (out, in/groups, kernel...).\n"
    "                  --transpose writes the transposed convolution.\n"
    "  pool            --channels C --size n... --kernel k... [--stride s...]\n"
    "                  [--padding p...] [--padding-hi p...]   (average pooling)\n"
    "  time-conv       --length T --in C --out O --lag L\n"
    "  graph           --nodes N --edges u v [u v ...] --in C --out O\n"
    "                  [--norm sum|mean|symmetric] [--self-loops]\n"
    "                  graph convolution over the edges u -> v; x (node, channel),\n"
    "                  parameters (in channel, out channel); symmetric needs every\n"
    "                  degree a perfect square (the file's weights are exact)\n"
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
  pm::require(first < argc && std::string(argv[first]).rfind("--", 0) != 0,
              "make: expected what to make (dense, conv, pool, time-conv, graph, "
              "dense-machine, conv-machine or recur-machine)");
  a.what = argv[first];
  const auto known = accepted.find(a.what);
  pm::require(known != accepted.end(), "make: unknown constructor '", a.what,
              "', expected dense, conv, pool, time-conv, graph, dense-machine, conv-machine "
              "or recur-machine");
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

inline pm::io::Json make_layer_json(const MakeArgs &a) {
  using pm::Index;
  using Q = pm::Rational;
  if (a.what == "dense") {
    const pm::DenseSpec d{a.size("in"), a.size("out"), a.has("bias")};
    return pm::io::layer_json("dense " + std::to_string(d.in) + " -> " + std::to_string(d.out),
                              pm::Shape({d.source()}), pm::Shape({d.out}),
                              pm::Shape({d.parameters()}), true, pm::dense<Q>(d));
  }
  if (a.what == "time-conv") {
    const pm::TimeConvSpec t{a.size("length"), a.size("in"), a.size("out"), a.size("lag", 0)};
    const pm::ConvSpec c = t.as_conv();
    return pm::io::layer_json("time conv", c.input_shape(), c.output_shape(), c.parameter_shape(),
                              true, pm::time_conv<Q>(t));
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
    return pm::io::layer_json("graph conv " + norm, pm::Shape({g.nodes, g.in_channels}),
                              pm::Shape({g.nodes, g.out_channels}),
                              pm::Shape({g.in_channels, g.out_channels}), true,
                              pm::graph_conv<Q>(g));
  }
  const std::vector<Index> size = a.sizes("size", true);
  const std::size_t r = size.size();
  const auto per_axis = [&](const char *n, Index min) { return a.sizes(n, false, r, min); };
  const std::vector<Index> kernel = a.sizes("kernel", true, r);
  const std::vector<Index> lo = per_axis("padding", 0);
  const std::vector<Index> hi = a.has("padding-hi") ? per_axis("padding-hi", 0) : lo;
  if (a.what == "pool") {
    const pm::PoolSpec p{size, a.size("channels"), kernel, lo, hi, per_axis("stride", 1)};
    const pm::ConvSpec c = p.as_conv();
    const pm::Span<Q> pool = pm::average_pool<Q>(p);
    return pm::io::layer_json("average pool", c.input_shape(), c.output_shape(), pm::Shape(), false,
                              pm::ParametricSpan<Q>{pool, pm::terminal_map(pool.apex())});
  }
  const pm::ConvSpec c{size,
                       a.size("in"),
                       a.size("out"),
                       kernel,
                       lo,
                       hi,
                       per_axis("stride", 1),
                       per_axis("dilation", 1),
                       a.has("groups") ? a.size("groups") : 1};
  pm::io::ShapedSpan made{a.has("transpose") ? pm::conv_transpose<Q>(c) : pm::conv<Q>(c),
                          c.input_shape(), c.output_shape(), c.parameter_shape()};
  if (a.has("transpose")) std::swap(made.source, made.target);
  const std::string layout = a.text("layout", "pm");
  pm::require(layout == "pm" || layout == "torch", "--layout: is '", layout,
              "', expected pm or torch");
  if (layout == "torch") made = pm::io::conv_in_torch_layout(std::move(made), r);
  return pm::io::layer_json(std::string(a.has("transpose") ? "conv transpose " : "conv ") +
                                std::to_string(r) + "d",
                            made.source, made.target, made.parameters, true, made.span);
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
  const std::set<std::string> conv_opts{"in",     "out",      "size",     "kernel",
                                        "stride", "dilation", "padding",  "padding-hi",
                                        "groups", "layout",   "transpose"};
  const std::map<std::string, std::set<std::string>> accepted{
      {"dense", {"in", "out", "bias"}},
      {"conv", conv_opts},
      {"pool", {"channels", "size", "kernel", "stride", "padding", "padding-hi"}},
      {"time-conv", {"length", "in", "out", "lag"}},
      {"graph", {"nodes", "edges", "in", "out", "norm", "self-loops"}},
      {"dense-machine", {"dims", "sigma"}},
      {"conv-machine", {"dims", "sigma", "size", "padding"}},
      {"recur-machine", {"dims", "sigma", "length", "lag", "timeblock"}}};
  const MakeArgs a = parse_make(argc, argv, 2, accepted);
  for (const char *flag : {"bias", "transpose", "self-loops"})
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
