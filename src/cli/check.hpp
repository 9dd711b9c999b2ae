#pragma once
// pmach check: the conformance table of the built-in catalogue, or the
// validation of a user's layer or machine file.
#include <iostream>

#include "args.hpp"
#include "pm/io/machine_format.hpp"
#include "pm/validate/catalogue.hpp"
#include "pm/validate/lints.hpp"
#include "pm/validate/machine_samples.hpp"
#include "pm/validate/probe.hpp"
#include "pm/validate/same_as.hpp"

namespace pmach {

inline const char *check_help =
    "usage: pmach check [--cases N] [--seed S] [--json]\n"
    "       pmach check MODEL.json [--same-as OTHER.json] [--against DIR] [--cases N]\n"
    "                   [--seed S] [--json]\n"
    "\n"
    "Without a file: runs every law on every layer and machine of the built-in\n"
    "catalogue and prints the conformance table (law, subject, status, cases run,\n"
    "largest error against its bound, seed). With a file (a layer or a machine,\n"
    "see docs/formats.md): checks that it is well formed (indices in range, sizes\n"
    "consistent, grading raised by every edge), runs every applicable law,\n"
    "exactly over the rationals where possible and in double, printing shrunk\n"
    "counterexamples for failures, and prints lints (warnings with counts: edges\n"
    "dropped by range checks, unused or cleaned parameters, edges of weight 0).\n"
    "The laws hold for every span a file can describe (they are theorems): they\n"
    "check the reader and the reference, not your intent. Intent is checked by\n"
    "--same-as (against a file of `pmach make`, say) and by --against.\n"
    "\n"
    "  --same-as F    compare with another model file by span difference (for\n"
    "                 machines: spans, gradings, cleaned spans and sigma); the\n"
    "                 differing coefficients are printed in multi-index\n"
    "                 coordinates; exit 1 on a difference\n"
    "  --cases N      random cases per law (default 100, at least 1)\n"
    "  --seed S       seed of the random cases (default 1); the table prints it\n"
    "  --against DIR  also compare samples of another framework in DIR with the\n"
    "                 reference, per tensor, against the derived bound; layers:\n"
    "                 x.npy, w.npy, y.npy, g.npy, grad_x.npy, grad_w.npy;\n"
    "                 machines: y0.npy, z0.npy, w.npy, y.npy, z.npy, gy.npy,\n"
    "                 gz.npy, grad_y0.npy, grad_z0.npy, grad_w.npy; one row per\n"
    "                 expected output (compared or absent), a warning per unknown\n"
    "                 file, exit 1 when no output was compared. A directory\n"
    "                 written by `pmach probe` is read as probes: the span the\n"
    "                 framework implements is recovered exactly and diffed\n"
    "  --json         print the report as JSON\n"
    "\n"
    "Exit status: 0 all passed or not applicable, 1 a law failed or was too weak,\n"
    "2 bad input.\n";

// Rational arithmetic costs far more than double: spans with more edges than
// this are checked in double only (the table says so).
inline constexpr pm::Index max_exact_edges = pm::Index{1} << 16;

inline pm::LawResult exact_skipped(const std::string &subject, const std::string &why,
                                   const pm::ValidateOptions &opt) {
  return {"*", subject + " (exact)", pm::Status::not_applicable, 0, true, 0, 0, opt.seed, why};
}

inline std::string too_many_edges(pm::Index edges) {
  return std::to_string(edges) + " edges, more than " + std::to_string(max_exact_edges) +
         " for exact arithmetic: checked in double only";
}

inline pm::Report check_layer_file(const pm::io::LayerDescription &d,
                                   const pm::ValidateOptions &opt) {
  pm::Report rep;
  const std::string name = d.name.empty() ? d.file : d.name;
  if (d.source_grading)
    rep.results.push_back(pm::check_grading(d.span, *d.source_grading, *d.target_grading, name));
  if (d.span.apex() <= max_exact_edges)
    rep.append(pm::validate(d.span, name + " (exact)", opt));
  else
    rep.results.push_back(exact_skipped(name, too_many_edges(d.span.apex()), opt));
  rep.append(pm::validate(pm::io::with_scalar<double>(d.span), name + " (double)", opt));
  return rep;
}

inline pm::Report check_machine_file(const pm::io::MachineDescription &d,
                                     const pm::ValidateOptions &opt) {
  pm::Report rep;
  const std::string name = d.name.empty() ? d.file : d.name;
  const auto m = pm::io::make_machine<double>(d);
  if (!pm::io::is_rational_sigma(d.sigma))
    rep.results.push_back(
        exact_skipped(name, "sigma " + d.sigma.name + " has no exact rational values", opt));
  else if (m.span().apex() > max_exact_edges)
    rep.results.push_back(exact_skipped(name, too_many_edges(m.span().apex()), opt));
  else
    rep.append(pm::validate(pm::io::make_machine<pm::Rational>(d), name + " (exact)", opt));
  rep.append(pm::validate(m, name + " (double)", opt));
  return rep;
}

// Printed above the table of a model file: what its laws can and cannot tell.
inline const char *what_is_checked =
    "note: the laws below hold by construction for any span read from a file (proofs/Spans.v):\n"
    "they check the reader and the reference, not your intent; intent is checked by --same-as\n"
    "OTHER.json (e.g. from pmach make), --against DIR (e.g. from pmach probe) and\n"
    "pm::check_layer on code (docs/formats.md, \"What each check can catch\").\n";

inline int run_check(const Args &args) {
  const pm::ValidateOptions opt{args.number("cases", 100, 1000000), args.number("seed", 1, ~0ull)};
  pm::require(opt.cases > 0, "--cases: is 0, expected at least 1 (a law that runs no case "
                             "decides nothing)");
  pm::require(args.positional.size() <= 1, "check: expected at most one MODEL.json, found ",
              args.positional.size(), " arguments");
  pm::Report rep;
  if (args.positional.empty()) {
    pm::require(!args.has("against"), "check: --against needs a MODEL.json");
    pm::require(!args.has("same-as"), "check: --same-as needs a MODEL.json");
    for (const auto &entry : pm::catalogue()) rep.append(entry.run(opt));
  } else {
    const std::string file = args.positional[0];
    const pm::io::Json json = pm::io::read_json(file);
    const auto model = pm::io::parse_model(json, file);
    if (const auto *layer = std::get_if<pm::io::LayerDescription>(&model)) {
      const std::string name = layer->name.empty() ? layer->file : layer->name;
      rep = check_layer_file(*layer, opt);
      rep.append(pm::lint_layer(*layer, json, name));
      if (args.has("against")) {
        const std::string dir = args.get("against");
        rep.append(pm::is_probe_dir(dir) ? pm::compare_probes(*layer, dir, name)
                                         : pm::compare_samples(*layer, dir, name));
      }
    } else {
      const auto &machine = std::get<pm::io::MachineDescription>(model);
      const std::string name = machine.name.empty() ? machine.file : machine.name;
      rep = check_machine_file(machine, opt);
      rep.append(pm::lint_machine(machine, json, name));
      if (args.has("against"))
        rep.append(pm::compare_machine_samples(machine, args.get("against"), name));
    }
    if (args.has("same-as"))
      rep.append(pm::same_as(model, pm::io::read_model(args.get("same-as"))));
  }
  if (args.flag("json")) {
    nlohmann::json out = pm::to_json(rep);
    if (!args.positional.empty()) out["note"] = what_is_checked;
    std::cout << out.dump(2) << "\n";
  } else {
    if (!args.positional.empty()) std::cout << what_is_checked;
    std::cout << pm::to_text(rep);
  }
  return rep.passed() ? 0 : 1;
}

} // namespace pmach
