#pragma once
// pmach eval: the reference semantics of a layer or machine on inputs from
// .npy files, forward and, given cotangents, backward; results as .npy.
#include <filesystem>
#include <iostream>

#include "args.hpp"
#include "pm/io/batch_npy.hpp"
#include "pm/io/bounds.hpp"
#include "pm/io/machine_format.hpp"
#include "pm/io/output.hpp"
#include "pm/kernels/dispatch.hpp"
#include "pm/version.hpp"

namespace pmach {

inline const char *eval_help =
    "usage: pmach eval MODEL.json --y0 FILE [--z0 FILE] [--ybar FILE] [--zbar FILE]\n"
    "                  [--w FILE] --out DIR [--precision float|double|exact] [--kernels]\n"
    "                  [--json]\n"
    "\n"
    "Runs the reference semantics forward and writes, into DIR, as .npy:\n"
    "  machine: y.npy, z.npy      the solution of y = y0 + L_w~ z, z = z0 + sigma(y)\n"
    "  layer:   y.npy             L_w y0 (y0 is the layer's input)\n"
    "Given cotangents (--ybar, and for machines --zbar; a missing one is zero)\n"
    "it also runs backward and writes grad_y0.npy, grad_z0.npy (machines),\n"
    "grad_w.npy (summed over the batch) and, for an array sigma, grad_sigma.npy.\n"
    "\n"
    "Layouts (C order): a batch of n samples on a space of shape (d0, ...) is\n"
    "(n, d0, ...); an array of shape (d0, ...) is a single sample and the outputs\n"
    "then have no batch axis either. Parameters have the model's parameter shape\n"
    "(--w overrides the file's \"weights\").\n"
    "\n"
    "  --precision    float (computed and written in float32), double (default),\n"
    "                 or exact (over the rationals, rounded once to float64 on\n"
    "                 output; refused when sigma has no rational values)\n"
    "  --kernels      run the fast CPU kernels (src/pm/kernels/) instead of the\n"
    "                 reference: the seed machines with sigma identity, tanh or\n"
    "                 sigmoid and every layer; other machines take the reference\n"
    "                 solver; float or double only (their results agree with the\n"
    "                 reference within the bounds of docs/tolerances.md, not bit\n"
    "                 for bit; pmach check --kernels compares them)\n"
    "  --json         print a JSON summary of the files written\n"
    "\n"
    "DIR is replaced as a whole once everything is computed: it must be absent,\n"
    "empty or the output of an earlier run (listed by its pmach-run.json), and\n"
    "its parent must exist. A failed or interrupted run leaves the previous one.\n";

namespace detail {

// The results of one run, replaced in DIR as a whole (pm/io/output.hpp).
struct Output {
  pm::io::RunOutput run;
  pm::io::Dtype dtype;
  bool batch_axis = true;

  template <class S>
  void batch(const std::string &name, const pm::Batch<S> &b, const pm::Shape &space) {
    write(name, pm::io::batch_to_npy(b, space, dtype, batch_axis));
  }
  template <class S>
  void function(const std::string &name, const pm::Function<S> &f, const pm::Shape &space) {
    write(name, pm::io::function_to_npy(f, space, dtype));
  }
  // A value that overflowed (in float32, float64, or from an exact rational
  // beyond float64) is an error: nothing of the run is written.
  void write(const std::string &name, const pm::io::NpyArray &a) {
    for (std::size_t i = 0; i < a.data.size(); ++i) {
      const double v = dtype == pm::io::Dtype::float32 ? double(float(a.data[i])) : a.data[i];
      pm::require(std::isfinite(v), run.path(name), ": element ", i, " is ", v, " in ",
                  dtype == pm::io::Dtype::float32 ? "float32" : "float64",
                  " (the result overflowed), expected a finite number; nothing was written");
    }
    run.add(name, pm::io::format_npy(a.shape, a.data, a.dtype));
  }
};

inline bool has_batch_axis(const pm::io::NpyArray &a, const pm::Shape &space) {
  return a.shape != space.extents();
}

// Reads the input --y0 and bounds the whole evaluation by its batch size
// before anything is computed (pm/io/bounds.hpp).
template <class S>
pm::io::NpyArray read_input(const std::string &path, const pm::Shape &space,
                            const pm::io::ModelSize &size, const std::string &model) {
  pm::io::NpyArray a = pm::io::read_npy(path);
  const std::uint64_t batch = has_batch_axis(a, space) && !a.shape.empty() ? a.shape[0] : 1;
  pm::io::require_batch(batch, space.size(), path);
  pm::io::require_evaluation(size, batch, !std::is_floating_point_v<S>, model);
  return a;
}

template <class S>
pm::Function<S> parameters(const Args &args, const pm::Shape &shape,
                           const std::optional<std::vector<double>> &weights, bool needed,
                           const std::string &file) {
  if (args.has("w"))
    return pm::io::function_from_npy<S>(pm::io::read_npy(args.get("w")), shape, args.get("w"));
  pm::require(weights.has_value() || !needed, file,
              ": /weights: expected the field, or the option --w FILE");
  pm::Function<S> w;
  if (weights)
    for (double v : *weights) w.push_back(pm::io::from_double<S>(v));
  else
    w.assign(shape.size(), S(1)); // a model without parameters: the one weight 1
  return w;
}

// Exact evaluation of a machine: the estimated bits of its rationals,
// from the bits of the inputs actually given, are bounded.
template <class S>
void require_exact_bits(const pm::io::MachineDescription &d, const pm::GradedSpanMachine<S> &m,
                        std::initializer_list<const std::vector<S> *> inputs) {
  if constexpr (!std::is_floating_point_v<S>) {
    std::uint64_t in = 0;
    for (const auto *v : inputs)
      for (const S &x : *v) in = std::max(in, pm::io::bits(x));
    const std::uint64_t est = pm::io::exact_state_bits(d, m, in);
    pm::require(est <= pm::io::max_exact_bits, d.file,
                ": exact evaluation would need rationals of about ", est, " bits or more over ",
                m.levels(), " levels, expected at most ", pm::io::max_exact_bits,
                "; use --precision double");
  }
}

template <class S>
void eval_layer(const pm::io::LayerDescription &d, const Args &args, Output &out) {
  pm::io::edges_of(d, "eval"); // a layer held by its rule alone is refused in one line
  const pm::io::ModelSize size{d.source.size(), d.target.size(), d.span.apex(), d.parameters.size(),
                               0};
  const pm::io::NpyArray x0 = read_input<S>(args.get("y0"), d.source, size, d.file);
  out.batch_axis = has_batch_axis(x0, d.source);
  const pm::Batch<S> x =
      pm::io::span_input(d, pm::io::batch_from_npy<S>(x0, d.source, args.get("y0")));
  const pm::ParametricSpan<S> a = pm::io::with_scalar<S>(d.span);
  const pm::Function<S> w = parameters<S>(args, d.parameters, d.weights, d.has_parameters, d.file);
  pm::require(!args.has("z0") && !args.has("zbar"), d.file,
              ": a layer has no z; --z0 and --zbar are for machines");
  const bool fast = args.flag("kernels");
  out.batch(std::string("y.npy"), fast ? pm::kernels::act(a, w, x) : pm::act(a, w, x), d.target);
  if (!args.has("ybar")) return;
  const pm::Batch<S> g = pm::io::batch_from_npy<S>(pm::io::read_npy(args.get("ybar")), d.target,
                                                   args.get("ybar"), x.cols);
  out.batch(std::string("grad_y0.npy"),
            pm::io::source_part(d, fast ? pm::kernels::act_transpose(a, w, g)
                                        : pm::act(pm::transpose(a), w, g)),
            d.source);
  out.function(std::string("grad_w.npy"),
               fast ? pm::kernels::parameter_gradient(a, x, g) : pm::parameter_gradient(a, x, g),
               d.parameters);
}

template <class S>
void eval_machine(const pm::io::MachineDescription &d, const Args &args, Output &out) {
  const pm::GradedSpanMachine<S> m = pm::io::make_machine<S>(d);
  const pm::io::ModelSize size{d.space.size(), d.space.size(), m.span().apex(), d.parameters.size(),
                               m.levels()};
  const pm::io::NpyArray y0a = read_input<S>(args.get("y0"), d.space, size, d.file);
  out.batch_axis = has_batch_axis(y0a, d.space);
  const pm::Batch<S> y0 = pm::io::batch_from_npy<S>(y0a, d.space, args.get("y0"));
  auto optional_batch = [&](const char *option) {
    if (!args.has(option)) return pm::Batch<S>(y0.rows, y0.cols);
    return pm::io::batch_from_npy<S>(pm::io::read_npy(args.get(option)), d.space, args.get(option),
                                     y0.cols);
  };
  const pm::Batch<S> z0 = optional_batch("z0");
  const pm::Function<S> w = parameters<S>(args, d.parameters, d.weights, d.has_parameters, d.file);
  require_exact_bits(d, m, {&y0.data, &z0.data, &w});
  // --kernels: a seed machine runs its kernel (pm/kernels/dispatch.hpp);
  // a machine given by parts has none and takes the reference solver.
  std::optional<pm::SeedMachine<S>> seed;
  if (args.flag("kernels") && d.seed) seed.emplace(pm::make_seed_machine<S>(*d.seed, m.sigma()));
  std::vector<S> slope; // σ'(y), kept by the kernel's forward when a backward follows
  const bool backward = args.has("ybar") || args.has("zbar");
  const pm::MachineState<S> x =
      seed ? pm::kernels::forward(*seed, w, y0, z0, backward ? &slope : nullptr)
           : pm::forward(m, w, y0, z0);
  out.batch(std::string("y.npy"), x.y, d.space);
  out.batch(std::string("z.npy"), x.z, d.space);
  if (!backward) return;
  const pm::Batch<S> gy = optional_batch("ybar"), gz = optional_batch("zbar");
  const pm::Gradients<S> g =
      seed ? pm::kernels::backward(*seed, w, x, gy, gz, &slope) : pm::backward(m, w, x, gy, gz);
  out.batch(std::string("grad_y0.npy"), g.y0, d.space);
  out.batch(std::string("grad_z0.npy"), g.z0, d.space);
  out.function(std::string("grad_w.npy"), g.w, d.parameters);
  if (d.sigma.name == "array")
    out.function(std::string("grad_sigma.npy"), g.sigma.column(0), d.space);
}

template <class S>
void eval_model(const pm::io::ModelDescription &model, const Args &args, Output &out) {
  if (const auto *layer = std::get_if<pm::io::LayerDescription>(&model))
    eval_layer<S>(*layer, args, out);
  else
    eval_machine<S>(std::get<pm::io::MachineDescription>(model), args, out);
}

} // namespace detail

inline int run_eval(const Args &args) {
  pm::require(args.positional.size() == 1, "eval: expected one MODEL.json, found ",
              args.positional.size(), " arguments");
  pm::require(args.has("y0"), "eval: expected --y0 FILE");
  pm::require(args.has("out"), "eval: expected --out DIR");
  // An empty path names no file: say which option has it.
  for (const char *o : {"y0", "z0", "ybar", "zbar", "w", "out"})
    pm::require(!args.has(o) || !args.get(o).empty(), "--", o, ": is '', expected a path");
  const std::string precision = args.get("precision", "double");
  pm::require(precision == "float" || precision == "double" || precision == "exact",
              "--precision: is '", precision, "', expected float, double or exact");
  pm::require(!args.flag("kernels") || precision != "exact",
              "--kernels: the kernels run in float or double, not with --precision exact");
  const auto model = pm::io::read_model(args.positional[0]);
  detail::Output out{pm::io::RunOutput(args.get("out")),
                     precision == "float" ? pm::io::Dtype::float32 : pm::io::Dtype::float64};
  if (precision == "exact") {
    if (const auto *m = std::get_if<pm::io::MachineDescription>(&model))
      pm::require(pm::io::is_rational_sigma(m->sigma), args.positional[0],
                  ": /sigma: --precision exact needs a sigma with rational values (identity, relu, "
                  "polynomial, array), found ",
                  m->sigma.name, "; use --precision double");
    detail::eval_model<pm::Rational>(model, args, out);
  } else if (precision == "float") {
    detail::eval_model<float>(model, args, out);
  } else {
    detail::eval_model<double>(model, args, out);
  }
  out.run.commit();
  if (args.flag("json")) {
    std::cout << nlohmann::json{{"version", pm::version},
                                {"precision", precision},
                                {"written", out.run.paths()}}
                     .dump(2)
              << "\n";
  } else {
    for (const auto &p : out.run.paths()) std::cout << "wrote " << p << "\n";
    if (precision == "exact")
      std::cout << "computed exactly over the rationals; values rounded once to float64\n";
  }
  return 0;
}

} // namespace pmach
