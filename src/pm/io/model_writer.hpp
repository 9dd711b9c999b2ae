#pragma once
// Writing model files and probe inputs (`pmach make`, `pmach probe`). Every
// output file goes through write_output_file, the one place that touches
// the file system. A layer is written with an explicit edge list of flat
// indices (s, t, pi, mu), which every reader of docs/formats.md accepts and
// which holds any span exactly (μ as "p/q" when not an integer).
#include <fstream>
#include <sstream>

#include "pm/io/layer_format.hpp"
#include "pm/layers/seed_machine.hpp"

namespace pm::io {

inline void write_output_file(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  require(bool(out), path, ": cannot open the file for writing");
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  require(bool(out), path, ": write error");
}

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
