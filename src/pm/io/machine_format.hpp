#pragma once
// A machine file (docs/formats.md, kind "machine"): either one of the seed's
// machines by name and hyper-parameters,
//   {"machine": "DenseMachine" | "ConvMachine" | "RecurMachine", "dims": […],
//    "sigma": …, "spatial": […], "pad": …, "length": n, "timeblock": b}
// or a graded span machine given by its parts,
//   {"space": …, "grading": …, "parameters": …, "edges": …, "sigma": …},
// in both cases with optional "weights" (.npy). σ is a name (identity, tanh,
// sigmoid, relu, softplus), {"polynomial": [c_0, c_1, …]} or
// {"array": "slopes.npy"} (one slope per point of the space).
#include <variant>

#include "pm/io/bounds.hpp"
#include "pm/io/sequence_format.hpp"
#include "pm/layers/seed_machines.hpp"

namespace pm::io {

struct SigmaDescription {
  std::string name;                   // Sigma::name()
  std::vector<Rational> coefficients; // polynomial
  std::vector<double> slopes;         // array, one per point of the space
};

struct MachineDescription {
  std::string file;
  std::string name;
  std::optional<SeedDescription> seed; // a seed machine by name; else the parts below
  Shape space;
  Grading grading;
  Shape parameters; // rank 0 (one point, weight 1) when given by parts without them
  bool has_parameters = true;
  ParametricSpan<Rational> span;
  SigmaDescription sigma;
  std::optional<std::vector<double>> weights;
};

// Whether σ has exact rational values (and so whether `exact` evaluation is possible).
inline bool is_rational_sigma(const SigmaDescription &s) {
  return s.name == "identity" || s.name == "relu" || s.name == "polynomial" || s.name == "array";
}

// The estimated bits of the exact state of the machine m described by d, on
// inputs (y0, z0, w) of at most `input_bits` bits: see exact_bits_estimate.
inline std::uint64_t exact_state_bits(const MachineDescription &d,
                                      const GradedSpanMachine<Rational> &m,
                                      std::uint64_t input_bits) {
  std::uint64_t sigma_bits = 0;
  for (const Rational &c : d.sigma.coefficients) sigma_bits = std::max(sigma_bits, bits(c));
  for (double s : d.sigma.slopes) sigma_bits = std::max(sigma_bits, bits(Rational(s)));
  const std::uint64_t degree =
      d.sigma.name == "polynomial" ? std::max<std::size_t>(d.sigma.coefficients.size(), 2) - 1 : 1;
  return exact_bits_estimate(m.grading(), m.span(), degree, input_bits, sigma_bits);
}

template <class S> Sigma<S> make_sigma(const SigmaDescription &d) {
  auto cast = [](const auto &v) {
    if constexpr (std::is_same_v<S, Rational>)
      return Rational(v);
    else
      return static_cast<S>(v);
  };
  if (d.name == "polynomial") {
    std::vector<S> c;
    for (const Rational &r : d.coefficients) {
      if constexpr (std::is_same_v<S, Rational>)
        c.push_back(r);
      else
        c.push_back(r.template convert_to<S>());
    }
    return Sigma<S>::polynomial(std::move(c));
  }
  if (d.name == "array") {
    Batch<S> s(d.slopes.size(), 1);
    for (Index i = 0; i < d.slopes.size(); ++i) s(i, 0) = cast(d.slopes[i]);
    return Sigma<S>::array(std::move(s));
  }
  return sigma_named<S>(d.name);
}

template <class S> GradedSpanMachine<S> make_machine(const MachineDescription &d) {
  if (d.seed) return make_seed_machine<S>(*d.seed, make_sigma<S>(d.sigma)).machine();
  return GradedSpanMachine<S>(d.grading, with_scalar<S>(d.span), make_sigma<S>(d.sigma));
}

namespace detail {

inline SigmaDescription read_sigma(const Field &f, const Shape &space) {
  SigmaDescription s;
  if (f.json().is_string()) {
    s.name = f.as_string();
    for (const char *known : {"identity", "tanh", "sigmoid", "relu", "softplus"})
      if (s.name == known) return s;
    f.fail("one of \"identity\", \"tanh\", \"sigmoid\", \"relu\", \"softplus\", "
           "{\"polynomial\": […]}, {\"array\": \"file.npy\"}");
  }
  if (f.has("polynomial")) {
    f.allow_only({"polynomial"});
    const Field c = f.at("polynomial");
    if (c.size() == 0 || c.size() > 64) c.fail("an array of 1 to 64 coefficients");
    s.name = "polynomial";
    for (std::size_t k = 0; k < c.size(); ++k) s.coefficients.push_back(c[k].as_rational());
    return s;
  }
  f.allow_only({"array"});
  const std::string path = f.at("array").as_path();
  NpyArray a = read_npy(path);
  require(a.shape == space.extents(), path,
          ": npy field 'shape': expected the shape of the machine's space");
  s.name = "array";
  s.slopes = std::move(a.data);
  return s;
}

inline std::vector<Index> read_sizes(const Field &f, std::size_t lo, std::size_t hi,
                                     Index max_value) {
  std::vector<Index> out;
  if (f.size() < lo || f.size() > hi)
    f.fail("an array of " + std::to_string(lo) + " to " + std::to_string(hi) + " integers");
  for (std::size_t i = 0; i < f.size(); ++i) out.push_back(f[i].as_size(0, max_value));
  return out;
}

// The seed machine's hyper-parameters; sizes are bounded before anything is
// built, so that no file can make the span exhaust memory.
inline SeedDescription read_seed(const Field &root) {
  SeedDescription d;
  const Field kind = root.at("machine");
  d.kind = kind.as_string();
  d.dims = read_sizes(root.at("dims"), 1, 64, max_space_size);
  Index n = 0;
  for (Index k : d.dims) n += k;
  double edges = double(n) * double(n);
  if (d.kind == "DenseMachine") {
    root.allow_only({"pmach", "kind", "name", "machine", "dims", "sigma", "weights"});
  } else if (d.kind == "ConvMachine") {
    root.allow_only(
        {"pmach", "kind", "name", "machine", "dims", "sigma", "spatial", "pad", "weights"});
    d.positions = read_sizes(root.at("spatial"), 1, 4, max_space_size);
    const Field pad = root.at("pad");
    if (pad.size() != d.positions.size())
      pad.fail("one [lo, hi] pair per spatial axis (" + std::to_string(d.positions.size()) + ")");
    for (std::size_t j = 0; j < pad.size(); ++j) {
      const auto p = read_sizes(pad[j], 2, 2, 1024);
      d.pad.insert(d.pad.end(), p.begin(), p.end());
      edges *= double(d.positions[j]) * double(p[0] + p[1] + 1);
    }
  } else if (d.kind == "RecurMachine") {
    root.allow_only({"pmach", "kind", "name", "machine", "dims", "sigma", "length", "pad",
                     "timeblock", "weights"});
    d.positions = {root.at("length").as_size(1, max_space_size)};
    d.pad = {root.at("pad").as_size(0, max_space_size)};
    d.timeblock = root.at("timeblock").as_size(1, max_space_size);
    edges *= double(d.positions[0]) * double(d.pad[0] + 1);
  } else {
    kind.fail("\"DenseMachine\", \"ConvMachine\" or \"RecurMachine\"");
  }
  require(edges <= double(max_edges), root.file(), ": ", root.pointer(),
          ": the machine would have ", edges, " edges, expected at most ", max_edges);
  return d;
}

} // namespace detail

inline MachineDescription parse_machine(const Json &json, const std::string &file) {
  const Field root(json, file);
  MachineDescription d;
  d.file = file;
  d.name = read_header(root, "machine");
  if (root.has("machine")) {
    d.seed = detail::read_seed(root);
    d.sigma = detail::read_sigma(root.at("sigma"), Shape());
    if (d.sigma.name == "array") root.at("sigma").fail("a named sigma or a polynomial");
    // Build it once in double: the constructors check what is left (e.g. a
    // kernel longer than the padded input) and give the shapes.
    try {
      const SeedMachine<double> m = make_seed_machine<double>(*d.seed, make_sigma<double>(d.sigma));
      d.space = m.state_shape();
      d.parameters = m.parameter_shape();
      d.grading = m.machine().grading();
    } catch (const Error &e) {
      pm::detail::fail(file, ": ", root.pointer(), ": ", e.what());
    }
  } else {
    root.allow_only(
        {"pmach", "kind", "name", "space", "grading", "parameters", "edges", "sigma", "weights"});
    d.space = read_space(root.at("space"));
    d.grading = read_grading(root.at("grading"), d.space);
    renumber_levels({&d.grading});
    const bool has_pi = root.has("parameters");
    d.has_parameters = has_pi;
    if (has_pi) d.parameters = read_space(root.at("parameters"));
    d.span = read_edges(root.at("edges"), d.space, d.space, d.parameters, has_pi);
    d.sigma = detail::read_sigma(root.at("sigma"), d.space);
  }
  d.weights = read_weights(root, d.parameters);
  return d;
}

// A model file: a layer (a sequence of layers is one) or a machine, told
// apart by "kind".
using ModelDescription = std::variant<LayerDescription, MachineDescription>;

inline ModelDescription parse_model(const Json &json, const std::string &file) {
  const Field root(json, file);
  if (!root.json().is_object()) root.fail("a JSON object");
  const Field kind = root.at("kind");
  if (kind.as_string() == "layer") return parse_layer(json, file);
  if (kind.as_string() == "sequence") {
    double built = 0;
    return parse_sequence(root, 0, false, built);
  }
  if (kind.as_string() == "machine") return parse_machine(json, file);
  kind.fail("\"layer\", \"sequence\" or \"machine\"");
}

inline ModelDescription read_model(const std::string &path) {
  return parse_model(read_json(path), path);
}

} // namespace pm::io
