#pragma once
// Writing models as model files (docs/formats.md) that pm::io::read_model
// reads back to the same description: a seed machine through
// pm::save_machine; a layer, or a graded span machine given by its parts,
// through pm::io::layer_json (an explicit, exact edge list), the grading as
// levels and the weights as "<stem>.W.npy" next to the file.
#include <filesystem>

#include "models.hpp"
#include "pm/io/model_writer.hpp"
#include "pm/io/output.hpp"
#include "pm/train/checkpoint.hpp"

namespace pmach_py {

namespace detail {

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
  pm::io::write_file_atomically(json.string(), j.dump(2) + "\n");
}

} // namespace detail

inline void save_layer(const LayerModel &m, const std::string &path) {
  const auto json = detail::checked_json_path(path, "save");
  const pm::io::LayerDescription &d = m.d;
  pm::io::Json j = pm::io::layer_json(d.name, d.source, d.target, d.parameters, d.has_parameters,
                                      pm::io::edges_of(d, "save"));
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
  // The layer's fields with X = Y = I, always with a parameter leg (a
  // machine without "parameters" has the one-point space, which
  // {"shape": []} says as well).
  pm::io::Json j = pm::io::layer_json(d.name, d.space, d.space, d.parameters, true, d.span);
  j["kind"] = "machine";
  j.erase("source");
  j.erase("target");
  j["space"] = pm::io::space_json(d.space);
  j["grading"] = detail::grading_json(d.grading);
  if (d.sigma.name == "polynomial") {
    pm::io::Json c = pm::io::Json::array();
    for (const pm::Rational &r : d.sigma.coefficients) c.push_back(pm::io::rational_json(r));
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
