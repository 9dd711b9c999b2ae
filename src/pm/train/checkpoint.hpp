#pragma once
// Saving and loading a seed machine with its parameters, in the machine file
// format of docs/formats.md (kind "machine", read by pm::io::read_model):
//   <name>.json   {"pmach": 1, "kind": "machine", "name": …,
//                  "machine": "ConvMachine", "dims": […], "sigma": "sigmoid",
//                  "spatial": […], "pad": [[lo, hi], …],         (ConvMachine)
//                  "length": n, "pad": p, "timeblock": b,         (RecurMachine)
//                  "weights": "<name>.W.npy"}
//   <name>.W.npy  W as float64 in the machine's parameter_shape(), row-major.
// The weights path is relative to the JSON file. Loading reads and checks
// everything (header, σ, sizes, .npy shape and length) before it builds the
// machine, so a bad file raises pm::Error and never yields a partly loaded
// machine; doubles round-trip exactly, so the loaded machine reproduces the
// outputs bit for bit. Only named σ are saved (polynomial and array σ carry
// data of their own).
#include <filesystem>
#include <fstream>

#include "pm/io/machine_format.hpp"
#include "pm/io/npy.hpp"
#include "pm/layers/seed_machines.hpp"

namespace pm {

struct LoadedMachine {
  SeedMachine<double> machine;
  Function<double> weights;
};

inline void save_machine(const std::string &json_path, const SeedMachine<double> &m,
                         const Function<double> &w, const std::string &name = "") {
  require_size(w, m.parameters(), "save_machine: weights");
  const SeedDescription &d = m.description();
  sigma_named<double>(d.sigma); // only named σ can be written
  const std::filesystem::path json(json_path);
  require(json.extension() == ".json", "save_machine: path '", json_path,
          "', expected a file name ending in .json");
  const std::string npy_name = json.stem().string() + ".W.npy";
  io::Json j = {{"pmach", io::format_version}, {"kind", "machine"}, {"name", name},
                {"machine", d.kind},           {"dims", d.dims},    {"sigma", d.sigma}};
  if (d.kind == "ConvMachine") {
    j["spatial"] = d.positions;
    io::Json pads = io::Json::array();
    for (Index k = 0; k + 1 < d.pad.size(); k += 2) pads.push_back({d.pad[k], d.pad[k + 1]});
    j["pad"] = pads;
  } else if (d.kind == "RecurMachine") {
    j["length"] = d.positions[0];
    j["pad"] = d.pad[0];
    j["timeblock"] = d.timeblock;
  }
  j["weights"] = npy_name;
  // The weights first, the header last: a header on disk names a complete .npy.
  io::write_npy((json.parent_path() / npy_name).string(), m.parameter_shape().extents(), w);
  std::ofstream out(json_path, std::ios::trunc);
  require(bool(out), json_path, ": cannot open the file for writing");
  out << j.dump(2) << '\n';
  require(bool(out), json_path, ": write error");
}

inline LoadedMachine load_machine(const std::string &json_path) {
  const auto model = io::read_model(json_path);
  const auto *d = std::get_if<io::MachineDescription>(&model);
  require(d != nullptr, json_path, ": kind is \"layer\", expected \"machine\"");
  require(d->seed.has_value(), json_path,
          ": expected a seed machine (the field 'machine'), found a machine given by its parts");
  require(d->weights.has_value(), json_path, ": expected the field 'weights'");
  return LoadedMachine{make_seed_machine<double>(*d->seed, io::make_sigma<double>(d->sigma)),
                       *d->weights};
}

} // namespace pm
