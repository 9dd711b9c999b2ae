#pragma once
// Writing models as model files (docs/formats.md) that pm::io::read_model
// reads back to the same description: a seed machine through
// pm::save_machine; a layer, or a graded span machine given by its parts,
// through pm::io::layer_json (an explicit, exact edge list), the grading as
// levels and the weights as "<stem>.W.npy" next to the file.
#include <cmath>
#include <filesystem>
#include <fstream>

#include "models.hpp"
#include "pm/io/model_writer.hpp"
#include "pm/io/output.hpp"
#include "pm/train/checkpoint.hpp"

namespace pmach_py {

// A path argument: a str, bytes or os.PathLike (pathlib.Path), as the bytes
// the operating system sees (os.fsencode: a non-UTF-8 name read from the
// file system round-trips). A NUL would cut the path short, so it is refused.
inline std::string path_arg(const py::handle &path, const char *who) {
  py::object bytes;
  try {
    bytes = py::module_::import("os").attr("fsencode")(path);
  } catch (const py::error_already_set &e) {
    if (!e.matches(PyExc_TypeError)) throw;
    throw py::type_error(std::string(who) + ": path is a " +
                         std::string(py::str(py::type::of(path).attr("__name__"))) +
                         ", expected a str or os.PathLike");
  }
  std::string p = bytes.cast<std::string>();
  pm::require(p.find('\0') == std::string::npos, who, ": path '", p.substr(0, p.find('\0')),
              "\\0…' contains a NUL character, expected a file name");
  return p;
}

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

// A model file reads back only finite weights: refused before anything is written.
inline void require_finite_weights(const std::optional<std::vector<double>> &w,
                                   const std::string &who) {
  if (!w) return;
  for (std::size_t k = 0; k < w->size(); ++k)
    pm::require(std::isfinite((*w)[k]), who, ": save: weight ", k, " (flat index) is ", (*w)[k],
                ", expected finite weights (a model file cannot hold nan or inf)");
}

// A folder created for the files of one save, removed with what is left in it.
class Staging {
public:
  explicit Staging(const std::filesystem::path &parent) {
    std::string t = (parent / ".pmach-save-XXXXXX").string();
    pm::require(::mkdtemp(t.data()) != nullptr, parent.string(),
                ": cannot create a temporary folder: ", std::strerror(errno));
    dir_ = t;
  }
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;
  ~Staging() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path &dir() const { return dir_; }

private:
  std::filesystem::path dir_;
};

// A file name as a model file may name it (printable ASCII): other bytes
// (a non-ASCII name in UTF-8) are written %XX, so that the weights of
// "modèle.json" are "mod%C3%A8le.W.npy" and the model reads back.
inline std::string ascii_name(const std::string &name) {
  static const char *hex = "0123456789ABCDEF";
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Runs `write` (which writes a model file at the path it is given, with its
// .npy files beside it) into a staging folder next to `path`, then moves the
// files into place, the .npy files first and the header last. Every step
// that can fail on bad input, a full disk or a path that is no regular file
// happens before the first move, so a failed save leaves the earlier
// PATH.json and PATH.W.npy as they were.
template <class Write> void save_all_or_nothing(const std::string &path, Write &&write) {
  const std::filesystem::path json(path);
  const std::filesystem::path parent = json.has_parent_path() ? json.parent_path() : ".";
  std::error_code ec;
  pm::require(std::filesystem::is_directory(parent, ec), path, ": save: the folder '",
              parent.string(), "' does not exist");
  const Staging staging(parent);
  const std::filesystem::path staged = staging.dir() / ascii_name(json.filename().string());
  write(staged);
  // Where each file goes: the header to `path`, the .npy files beside it
  // under the names the header gives them. All are checked before the first
  // one moves.
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> moves;
  for (const auto &e : std::filesystem::directory_iterator(staging.dir()))
    if (e.path() != staged) moves.emplace_back(e.path(), parent / e.path().filename());
  moves.emplace_back(staged, json);
  for (const auto &[from, to] : moves) {
    const auto k = std::filesystem::symlink_status(to, ec).type();
    pm::require(k == std::filesystem::file_type::not_found ||
                    k == std::filesystem::file_type::regular,
                to.string(),
                ": save: exists and is not a regular file (a link, folder or device): "
                "refusing to replace it");
  }
  for (const auto &[from, to] : moves) {
    std::filesystem::rename(from, to, ec);
    pm::require(!ec, to.string(), ": save: cannot move the new file into place: ", ec.message());
  }
}

// A layer too large to list, by name (docs/formats.md §2.5): the weights of
// a bias (after the layer's, flat) in a file of their own.
inline void write_named_layer(const pm::io::LayerDescription &d,
                              const std::filesystem::path &json) {
  pm::io::Json j = d.named;
  j["name"] = d.name;
  if (!d.weights) {
    write_model(json, std::move(j), std::nullopt, d.parameters);
    return;
  }
  std::vector<double> w = *d.weights;
  Shape shape = d.parameters;
  if (d.bias) {
    const pm::io::NamedLayer l = pm::io::read_named_layer(pm::io::Field(j, json.string()));
    const Index n = l.layer.parameters.size();
    const std::vector<double> b(w.begin() + n, w.end());
    w.resize(n);
    shape = l.layer.parameters;
    const std::string npy = json.stem().string() + ".b.npy";
    pm::io::write_npy((json.parent_path() / npy).string(), {Index(b.size())}, b);
    j["bias"]["weights"] = npy;
  }
  write_model(json, std::move(j), w, shape);
}

inline void write_layer(const LayerModel &m, const std::filesystem::path &json) {
  const pm::io::LayerDescription &d = m.d;
  if (!d.span_held && !d.named.is_null()) return write_named_layer(d, json);
  pm::io::Json j = pm::io::layer_json(d.name, d.source, d.target, d.parameters, d.has_parameters,
                                      pm::io::edges_of(d, "save"));
  if (d.source_grading)
    j["grading"] = {{"source", detail::grading_json(*d.source_grading)},
                    {"target", detail::grading_json(*d.target_grading)}};
  write_model(json, std::move(j), d.weights, d.parameters);
}

inline void write_machine(const MachineModel &m, const std::filesystem::path &json) {
  const pm::io::MachineDescription &d = m.d;
  if (d.seed) {
    pm::save_machine(json.string(), m.seed<double>(), *d.weights, d.name);
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
  write_model(json, std::move(j), d.weights, d.parameters);
}

} // namespace detail

inline void save_layer(const LayerModel &m, const std::string &path) {
  detail::checked_json_path(path, "save");
  detail::require_finite_weights(m.d.weights, m.who());
  detail::save_all_or_nothing(
      path, [&](const std::filesystem::path &json) { detail::write_layer(m, json); });
}

inline void save_machine(const MachineModel &m, const std::string &path) {
  detail::checked_json_path(path, "save");
  detail::require_finite_weights(m.d.weights, m.who());
  if (m.d.seed)
    pm::require(m.d.weights.has_value(), m.who(),
                ": save: the machine has no weights; set them first (weights=… or init_weights)");
  detail::save_all_or_nothing(
      path, [&](const std::filesystem::path &json) { detail::write_machine(m, json); });
}

// Pickling (and so torch.save of a module holding a model): the model file
// in memory, as the files of a save (name → bytes), with the weights apart
// (so that a model without weights, or with weights that are not finite,
// pickles too) and the file the model was read from, which names it in
// messages.
namespace detail {

inline void write_without_weights(const LayerModel &m, const std::filesystem::path &json) {
  LayerModel c = m;
  c.d.weights.reset();
  write_layer(c, json);
}

// A seed machine's file names its weights: zeros stand in for them.
inline void write_without_weights(const MachineModel &m, const std::filesystem::path &json) {
  MachineModel c = m;
  c.d.weights.reset();
  if (m.d.seed) c.d.weights = std::vector<double>(m.d.parameters.size(), 0.0);
  write_machine(c, json);
}

} // namespace detail

template <class Model> py::tuple model_state(const Model &m) {
  const detail::Staging staging(std::filesystem::temp_directory_path());
  detail::write_without_weights(m, staging.dir() / "model.json");
  py::dict files;
  for (const auto &e : std::filesystem::directory_iterator(staging.dir())) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    files[py::str(e.path().filename().string())] = py::bytes(bytes);
  }
  return py::make_tuple(files, weights_array(m.d.weights, m.d.parameters), m.d.file);
}

template <class Model> Model model_from_state(const py::tuple &state) {
  pm::require(state.size() == 3, "pickle: the state of a pmach model has ", state.size(),
              " entries, expected 3 (files, weights, file)");
  const detail::Staging staging(std::filesystem::temp_directory_path());
  for (const auto &item : state[0].cast<py::dict>()) {
    const std::string n = py::cast<std::string>(item.first);
    pm::require(n.find('/') == std::string::npos && n != "." && n != "..", "pickle: file name '", n,
                "' in the state, expected a name without '/'");
    std::ofstream out(staging.dir() / n, std::ios::binary);
    out << py::cast<std::string>(item.second);
    pm::require(bool(out), "pickle: cannot write '", n, "' to a temporary folder");
  }
  auto model = pm::io::read_model((staging.dir() / "model.json").string());
  Model m(std::get<decltype(Model::d)>(std::move(model)));
  m.d.weights = stored_weights(state[1], m.d.parameters);
  m.d.file = state[2].cast<std::string>();
  return m;
}

} // namespace pmach_py
