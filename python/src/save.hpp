#pragma once
// Writing models as model files (docs/formats.md) that pm::io::read_model
// reads back to the same description: a seed machine through
// pm::save_machine; a layer, or a graded span machine given by its parts, as
// an explicit edge list [s, t, π, μ] with exact measures ("p/q"), the
// grading as levels and the weights as "<stem>.W.npy" next to the file.
#include <filesystem>
#include <fstream>

#include "models.hpp"
#include "pm/train/checkpoint.hpp"

namespace pmach_py {

namespace detail {

inline std::string rational_text(const pm::Rational &r) { return r.str(); }

inline pm::io::Json space_json(const Shape &s) { return {{"shape", s.extents()}}; }

inline pm::io::Json edges_json(const pm::ParametricSpan<pm::Rational> &a, bool has_pi) {
  pm::io::Json list = pm::io::Json::array();
  for (Index e = 0; e < a.apex(); ++e) {
    pm::io::Json row = {a.span.s(e), a.span.t(e)};
    if (has_pi) row.push_back(a.pi(e));
    row.push_back(rational_text(a.span.mu[e]));
    list.push_back(std::move(row));
  }
  return {{"list", std::move(list)}};
}

inline pm::io::Json grading_json(const pm::Grading &g) { return {{"levels", g.grades()}}; }

inline std::filesystem::path checked_json_path(const std::string &path, const char *who) {
  const std::filesystem::path json(path);
  pm::require(json.extension() == ".json", who, ": path '", path,
              "', expected a file name ending in .json");
  return json;
}

// Writes the weights (if any) first and the header last, as save_machine
// does: a header on disk names a complete .npy.
inline void write_model(const std::filesystem::path &json, pm::io::Json j,
                        const std::optional<std::vector<double>> &weights, const Shape &shape) {
  if (weights) {
    const std::string npy = json.stem().string() + ".W.npy";
    pm::io::write_npy((json.parent_path() / npy).string(), shape.extents(), *weights);
    j["weights"] = npy;
  }
  std::ofstream out(json, std::ios::trunc);
  pm::require(bool(out), json.string(), ": cannot open the file for writing");
  out << j.dump(2) << '\n';
  pm::require(bool(out), json.string(), ": write error");
}

inline pm::io::Json header(const std::string &kind, const std::string &name) {
  return {{"pmach", pm::io::format_version}, {"kind", kind}, {"name", name}};
}

} // namespace detail

inline void save_layer(const LayerModel &m, const std::string &path) {
  const auto json = detail::checked_json_path(path, "save");
  const pm::io::LayerDescription &d = m.d;
  pm::io::Json j = detail::header("layer", d.name);
  j["source"] = detail::space_json(d.source);
  j["target"] = detail::space_json(d.target);
  if (d.has_parameters) j["parameters"] = detail::space_json(d.parameters);
  j["edges"] = detail::edges_json(d.span, d.has_parameters);
  if (d.source_grading)
    j["grading"] = {{"source", detail::grading_json(*d.source_grading)},
                    {"target", detail::grading_json(*d.target_grading)}};
  detail::write_model(json, std::move(j), d.weights, d.parameters);
}

inline void save_machine(const MachineModel &m, const std::string &path) {
  const auto json = detail::checked_json_path(path, "save");
  const pm::io::MachineDescription &d = m.d;
  if (d.seed) {
    pm::require(d.weights.has_value(), m.who(),
                ": save: the machine has no weights; set them first (weights=… or init_weights)");
    pm::save_machine(path, m.seed<double>(), *d.weights, d.name);
    return;
  }
  pm::io::Json j = detail::header("machine", d.name);
  j["space"] = detail::space_json(d.space);
  j["grading"] = detail::grading_json(d.grading);
  // Always with a parameter leg: without "parameters" the space is the one
  // point, which {"shape": []} says as well.
  j["parameters"] = detail::space_json(d.parameters);
  j["edges"] = detail::edges_json(d.span, true);
  if (d.sigma.name == "polynomial") {
    pm::io::Json c = pm::io::Json::array();
    for (const pm::Rational &r : d.sigma.coefficients) c.push_back(detail::rational_text(r));
    j["sigma"] = {{"polynomial", c}};
  } else if (d.sigma.name == "array") {
    const std::string npy = json.stem().string() + ".sigma.npy";
    pm::io::write_npy((json.parent_path() / npy).string(), d.space.extents(), d.sigma.slopes);
    j["sigma"] = {{"array", npy}};
  } else {
    j["sigma"] = d.sigma.name;
  }
  detail::write_model(json, std::move(j), d.weights, d.parameters);
}

} // namespace pmach_py
