#pragma once
// pmach check: the conformance table of the built-in catalogue, or the
// validation of a user's layer or machine file.
#include <fnmatch.h>

#include <iostream>
#include <set>

#include "args.hpp"
#include "pm/io/bounds.hpp"
#include "pm/io/machine_format.hpp"
#include "pm/io/output.hpp"
#include "pm/validate/catalogue.hpp"
#include "pm/validate/kernel_checks.hpp"
#include "pm/validate/lints.hpp"
#include "pm/validate/machine_probe.hpp"
#include "pm/validate/machine_samples.hpp"
#include "pm/validate/same_as.hpp"
#include "progress.hpp"

namespace pmach {

inline const char *check_help =
    "usage: pmach check [--cases N] [--seed S] [--kernels] [--law PATTERN]\n"
    "                   [--subject PATTERN] [--json] [--junit FILE] [--progress]\n"
    "       pmach check MODEL.json [--same-as OTHER.json] [--against DIR] [--cases N]\n"
    "                   [--seed S] [--kernels] [--law PATTERN] [--subject PATTERN]\n"
    "                   [--json] [--junit FILE] [--progress]\n"
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
    "--same-as (MODEL.json a file of `pmach make`, say) and by --against; with\n"
    "either, the laws on MODEL.json are not run unless --law selects them (its\n"
    "well-formedness and lints are).\n"
    "\n"
    "  --same-as F    compare MODEL.json, the intended layer or machine, with F,\n"
    "                 the implemented one, by span difference (for machines:\n"
    "                 spans, gradings, cleaned spans and sigma); the differing\n"
    "                 coefficients are printed in multi-index coordinates, and\n"
    "                 are the row's counterexample in --json (implemented −\n"
    "                 intended on target × source × parameter axes); exit 1 on\n"
    "                 a difference\n"
    "  --cases N      random cases per law (default 100, at least 1)\n"
    "  --seed S       seed of the random cases (default 1); the table prints it\n"
    "  --against DIR  also compare samples of another framework in DIR with the\n"
    "                 reference, per tensor, against the derived bound; layers:\n"
    "                 x.npy, w.npy, y.npy, g.npy, grad_x.npy, grad_w.npy;\n"
    "                 machines: y0.npy, z0.npy, w.npy, y.npy, z.npy, gy.npy,\n"
    "                 gz.npy, grad_y0.npy, grad_z0.npy, grad_w.npy; one row per\n"
    "                 expected output (compared or absent), a warning per unknown\n"
    "                 file, exit 1 when no output was compared. A directory\n"
    "                 written by `pmach probe` is read as probes: the layer is\n"
    "                 compared at full size (CONF-EQUAL) and, when small, the\n"
    "                 span the framework implements (of a machine: its passes,\n"
    "                 and its linear part) is recovered exactly and diffed\n"
    "  --kernels      also validate the fast kernels (src/pm/kernels/) on this CPU:\n"
    "                 without a file every kernel (dense, convolution 1/2/3-D and\n"
    "                 recurrent machines, the span and graph kernels; forward,\n"
    "                 dual or transpose, weight gradient; float and double) on\n"
    "                 generated cases, with a file the model's own kernel; each\n"
    "                 against the reference in long double within the bounds of\n"
    "                 docs/tolerances.md (laws KERNEL-*), and with 1 and all\n"
    "                 available threads, which must give the same bits; a\n"
    "                 failure prints the case and its one-line reproduction\n"
    "  --law P        keep only the rows whose law matches the pattern P (a shell\n"
    "                 pattern: * any text, ? one character); the laws left out\n"
    "                 are not run (lints and comparisons with files are run,\n"
    "                 then filtered); exit 2 when no row matches\n"
    "  --subject P    likewise for the subject (e.g. 'conv1d (exact)')\n"
    "  --json         print the report as JSON (docs/report.schema.json)\n"
    "  --junit FILE   also write the report as JUnit XML to FILE, for CI systems\n"
    "  --progress     name on stderr each step as it starts and each row as it\n"
    "                 finishes (with its status and seconds), one line each (on a\n"
    "                 terminal it is shown anyway, on one line rewritten in place\n"
    "                 and erased before the report)\n"
    "\n"
    "A failing row prints its counterexample sparsely, in multi-index\n"
    "coordinates (w[1, 0, 2] = 1/6: only the non-zero or differing entries),\n"
    "and a repro line: the one command that runs it again.\n"
    "\n"
    "Exit status: 0 all passed or not applicable, 1 a law failed or was too weak,\n"
    "2 bad input.\n";

inline void add_exact_skipped(pm::Report &rep, const std::string &subject, const std::string &why,
                              const pm::ValidateOptions &opt) {
  pm::add_row(rep, opt, "*", subject + " (exact)", [&]() -> pm::LawResult {
    return {"*", subject + " (exact)", pm::Status::not_applicable, 0, true, 0, 0, opt.seed, why};
  });
}

// Rational arithmetic costs far more than double: beyond max_check_work_exact
// (cases × the model's size, pm/io/bounds.hpp) the laws run in double only,
// and the table says so.
inline bool exact_affordable(const pm::io::ModelSize &size, const pm::ValidateOptions &opt) {
  return opt.cases <= pm::io::max_check_work_exact / size.per_check_case();
}

inline std::string too_large(const pm::io::ModelSize &size, const pm::ValidateOptions &opt) {
  return std::to_string(opt.cases) + " cases × " + std::to_string(size.per_check_case()) +
         " steps (points, edges, parameters and levels, times levels + 1), more than " +
         std::to_string(pm::io::max_check_work_exact) +
         " for exact arithmetic: checked in double only";
}

// The laws run `cases` cases, each costing about the model's size.
inline void require_check_work(const pm::io::ModelSize &size, const pm::ValidateOptions &opt,
                               const std::string &file) {
  pm::require(opt.cases <= pm::io::max_check_work / size.per_check_case(), file, ": ", opt.cases,
              " cases × ", size.per_check_case(),
              " steps (points, edges, parameters and levels, times levels + 1), expected at most ",
              pm::io::max_check_work,
              opt.cases > 1 ? "; use fewer --cases" : ": too large to check");
}

inline pm::Report check_layer_file(const pm::io::LayerDescription &d, pm::ValidateOptions opt) {
  pm::Report rep;
  opt.shapes = pm::case_shapes(d);
  const std::string name = d.name.empty() ? d.file : d.name;
  if (!d.span_held) { // a named layer too large to list: its rule is the constructor's
    pm::add_row(rep, opt, "*", name, [&]() -> pm::LawResult {
      return {"*",
              name,
              pm::Status::not_applicable,
              0,
              true,
              0,
              0,
              opt.seed,
              "the layer has more than " + std::to_string(pm::io::max_listed_edges) +
                  " edges and is held by its constructor's rule, whose laws are tested at small "
                  "sizes (tests/layers/) and not re-run at this size; --against DIR (from pmach "
                  "probe) compares an implementation with it at full size (CONF-EQUAL)"};
    });
    return rep;
  }
  const pm::io::ModelSize size{d.source.size(), d.target.size(), d.span.apex(), d.parameters.size(),
                               0};
  require_check_work(size, opt, d.file);
  if (d.source_grading)
    pm::add_row(rep, opt, "WF-GRADING", name, [&] {
      return pm::check_grading(d.span, *d.source_grading, *d.target_grading, name);
    });
  if (exact_affordable(size, opt))
    rep.append(pm::validate(d.span, name + " (exact)", opt));
  else
    add_exact_skipped(rep, name, too_large(size, opt), opt);
  rep.append(pm::validate(pm::io::with_scalar<double>(d.span), name + " (double)", opt));
  return rep;
}

inline pm::Report check_machine_file(const pm::io::MachineDescription &d, pm::ValidateOptions opt) {
  pm::Report rep;
  opt.shapes = pm::case_shapes(d);
  const std::string name = d.name.empty() ? d.file : d.name;
  const auto m = pm::io::make_machine<double>(d);
  const pm::io::ModelSize size{d.space.size(), d.space.size(), m.span().apex(), d.parameters.size(),
                               m.levels()};
  require_check_work(size, opt, d.file);
  if (!pm::io::is_rational_sigma(d.sigma))
    add_exact_skipped(rep, name, "sigma " + d.sigma.name + " has no exact rational values", opt);
  else if (!exact_affordable(size, opt))
    add_exact_skipped(rep, name, too_large(size, opt), opt);
  // The cases' scalars are k/6 with |k| ≤ 12: at most 8 bits.
  else if (const std::uint64_t bits =
               pm::io::exact_state_bits(d, pm::io::make_machine<pm::Rational>(d), 8);
           bits > pm::io::max_exact_bits)
    add_exact_skipped(rep, name,
                      "exact rationals would grow to about " + std::to_string(bits) +
                          " bits over " + std::to_string(m.levels()) + " levels, more than " +
                          std::to_string(pm::io::max_exact_bits) + ": checked in double only",
                      opt);
  else
    rep.append(pm::validate(pm::io::make_machine<pm::Rational>(d), name + " (exact)", opt));
  rep.append(pm::validate(m, name + " (double)", opt));
  return rep;
}

// A word as the shell reads it back: quoted unless it is plain.
inline std::string shell_quoted(const std::string &s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_./=:+-") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A name as a pattern that matches only itself.
inline std::string pattern_of(const std::string &name) {
  std::string p;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') p += '\\';
    p += c;
  }
  return p;
}

inline bool matches(const std::string &pattern, const std::string &name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// The rows --law and --subject select; the law runners compute only those.
inline pm::RowSelection row_selection(const Args &args) {
  if (!args.has("law") && !args.has("subject")) return {};
  return [law = args.get("law", "*"), subject = args.get("subject", "*")](const std::string &l,
                                                                          const std::string &s) {
    return matches(law, l) && matches(subject, s);
  };
}

// Keeps the rows selected by --law and --subject (the lints and comparisons
// with other files are computed whole, then filtered here); a filter that
// keeps nothing is bad input (a report of no row would pass vacuously).
inline void filter_rows(pm::Report &rep, const Args &args) {
  if (!args.has("law") && !args.has("subject")) return;
  const std::string law = args.get("law", "*"), subject = args.get("subject", "*");
  std::set<std::string> laws, subjects;
  for (const auto &[l, s] : rep.left_out) {
    laws.insert(l);
    subjects.insert(s);
  }
  std::vector<pm::LawResult> kept;
  for (auto &r : rep.results) {
    laws.insert(r.law);
    subjects.insert(r.subject);
    if (matches(law, r.law) && matches(subject, r.subject)) kept.push_back(std::move(r));
  }
  auto some = [](const std::set<std::string> &names) {
    std::string list;
    std::size_t k = 0;
    for (const auto &n : names)
      if (k++ < 8) list += (list.empty() ? "" : ", ") + n;
    return list + (names.size() > 8 ? ", … (" + std::to_string(names.size()) + " in all)" : "");
  };
  pm::require(!kept.empty(),
              "check: ", args.has("law") ? "--law " + pm::io::printable(law) + " " : std::string(),
              args.has("subject") ? "--subject " + pm::io::printable(subject) + " " : std::string(),
              "selects none of the ", rep.results.size() + rep.left_out.size(),
              " rows; expected a pattern matching a law (", some(laws), ") and a subject (",
              some(subjects), ")");
  rep.results = std::move(kept);
  rep.left_out.clear();
}

// The command that runs a failing row again: the same file, comparisons,
// seed and cases, filtered to the row.
inline void add_repro_lines(pm::Report &rep, const Args &args, const pm::ValidateOptions &opt) {
  std::string base = "pmach check";
  if (!args.positional.empty()) base += " " + shell_quoted(args.positional[0]);
  for (const char *o : {"same-as", "against"})
    if (args.has(o)) base += std::string(" --") + o + " " + shell_quoted(args.get(o));
  if (args.flag("kernels")) base += " --kernels";
  for (auto &r : rep.results)
    if (r.status == pm::Status::failed || r.status == pm::Status::too_weak)
      r.repro = base + " --law " + shell_quoted(pattern_of(r.law)) + " --subject " +
                shell_quoted(pattern_of(r.subject)) + " --seed " + std::to_string(opt.seed) +
                " --cases " + std::to_string(opt.cases);
}

// Printed above the table of a model file: what its laws can and cannot tell.
inline const char *what_is_checked =
    "note: the laws below hold by construction for any span read from a file (proofs/Spans.v):\n"
    "they check the reader and the reference, not your intent; intent is checked by --same-as\n"
    "OTHER.json (this file intended, e.g. from pmach make), --against DIR (e.g. from pmach\n"
    "probe) and pm::check_layer on code (docs/formats.md, \"What each check can catch\").\n";

// With --against or --same-as the question is the user's intent: the laws
// on MODEL.json itself (theorems for any span a file describes, so they
// check pmach's reader and reference) cost seconds even on a tiny layer and
// say nothing of the implementation; they run when --law selects them.
inline bool intent_only(const Args &args) {
  return (args.has("against") || args.has("same-as")) && !args.has("law");
}

inline const char *intent_note =
    "note: --against and --same-as compare an implementation with MODEL.json; the laws on\n"
    "MODEL.json itself (theorems for any span read from a file: they check the reader and the\n"
    "reference, not your intent) are not run: --law 'PSPAN-*' (a machine: 'MACH-*') runs them.\n";

// opt keeping only the well-formedness rows (WF-*) of those it selects.
inline pm::ValidateOptions well_formedness_only(pm::ValidateOptions opt) {
  opt.select = [all = opt](const std::string &law, const std::string &subject) {
    return law.rfind("WF-", 0) == 0 && all.selects(law, subject);
  };
  return opt;
}

inline int run_check(const Args &args) {
  const pm::ValidateOptions opt{args.number("cases", 100, pm::io::max_cases),
                                args.number("seed", 1, ~0ull),
                                {},
                                row_selection(args)};
  pm::require(opt.cases > 0, "--cases: is 0, expected at least 1 (a law that runs no case "
                             "decides nothing)");
  pm::require(args.positional.size() <= 1, "check: expected at most one MODEL.json, found ",
              args.positional.size(), " arguments");
  pm::Report rep;
  Progress progress(args.flag("progress"));
  std::string current;
  auto step = [&](const std::string &what) {
    current = what;
    progress.show("pmach check: " + what);
  };
  // Within a step, each row as it finishes: a long step (the catalogue at
  // --cases 1000, --kernels, a full-size CONF-EQUAL) shows where it is.
  const pm::RowStream stream([&](const pm::LawResult &r) {
    std::ostringstream line;
    line << "pmach check: " << current << ": " << r.law << " on " << r.subject << " "
         << pm::status_name(r.status) << " (" << std::fixed << std::setprecision(2) << r.seconds
         << " s)";
    progress.show(line.str());
  });
  if (args.positional.empty()) {
    pm::require(!args.has("against"), "check: --against needs a MODEL.json");
    pm::require(!args.has("same-as"), "check: --same-as needs a MODEL.json");
    const auto &entries = pm::catalogue();
    for (std::size_t k = 0; k < entries.size(); ++k) {
      step(std::to_string(k + 1) + "/" + std::to_string(entries.size()) + " " + entries[k].name);
      rep.append(entries[k].run(opt));
    }
    if (args.flag("kernels")) {
      step("the kernels (--kernels)");
      rep.append(pm::check_kernels(opt));
    }
  } else {
    const std::string file = args.positional[0];
    const pm::io::Json json = pm::io::read_json(file);
    const auto model = pm::io::parse_model(json, file);
    step("the laws on " + pm::io::printable(file));
    const pm::ValidateOptions model_opt = intent_only(args) ? well_formedness_only(opt) : opt;
    if (const auto *layer = std::get_if<pm::io::LayerDescription>(&model)) {
      const std::string name = layer->name.empty() ? layer->file : layer->name;
      rep = check_layer_file(*layer, model_opt);
      rep.append(pm::lint_layer(*layer, json, name));
      if (args.flag("kernels")) {
        step("the kernels (--kernels)");
        rep.append(pm::check_kernels(*layer, name, opt));
      }
      if (args.has("against")) {
        const std::string dir = args.get("against");
        step("the samples of --against " + pm::io::printable(dir));
        pm::require(!layer->bias, file, ": --against compares layers without a bias; check the ",
                    "layer without its 'bias' field");
        rep.append(pm::is_probe_dir(dir) ? pm::compare_probes(*layer, dir, name)
                                         : pm::compare_layer_samples(*layer, dir, name));
      }
      // Nothing ran on a layer held by its rule unless an implementation
      // was compared with it: never a vacuous pass.
      if (!layer->span_held)
        pm::validation::require_comparison(
            rep, {"CONF-EQUAL forward", "SAMPLE y", "SAMPLE grad_x", "SAMPLE grad_w"}, name,
            opt.seed);
    } else {
      const auto &machine = std::get<pm::io::MachineDescription>(model);
      const std::string name = machine.name.empty() ? machine.file : machine.name;
      rep = check_machine_file(machine, model_opt);
      rep.append(pm::lint_machine(machine, json, name));
      if (args.flag("kernels")) {
        step("the kernels (--kernels)");
        rep.append(pm::check_kernels(machine, name, opt));
      }
      if (args.has("against")) {
        const std::string dir = args.get("against");
        step("the samples of --against " + pm::io::printable(dir));
        rep.append(pm::is_probe_dir(dir) ? pm::compare_machine_probes(machine, dir, name)
                                         : pm::compare_machine_samples(machine, dir, name));
      }
    }
    if (args.has("same-as")) {
      step("the span difference with --same-as " + pm::io::printable(args.get("same-as")));
      rep.append(pm::same_as(model, pm::io::read_model(args.get("same-as"))));
    }
  }
  progress.clear();
  filter_rows(rep, args);
  add_repro_lines(rep, args, opt);
  if (args.has("junit"))
    pm::io::write_file_atomically(
        args.get("junit"),
        pm::to_junit(rep, args.positional.empty() ? "catalogue" : args.positional[0]));
  if (args.flag("json")) {
    nlohmann::json out = pm::to_json(rep);
    if (!args.positional.empty()) out["note"] = intent_only(args) ? intent_note : what_is_checked;
    std::cout << out.dump(2) << "\n";
  } else {
    if (!args.positional.empty()) std::cout << (intent_only(args) ? intent_note : what_is_checked);
    std::cout << pm::to_text(rep);
  }
  return rep.passed() ? 0 : 1;
}

} // namespace pmach
