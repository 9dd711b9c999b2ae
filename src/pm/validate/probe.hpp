#pragma once
// Probe samples: span recovery and CONF-EQUAL for frameworks without
// bindings. `pmach probe LAYER.json --out DIR` writes the inputs
// recover_span would feed a layer — for a layer whose recovery takes at most
// max_probe_recovery calls, the basis probes (w, φ) = (e_p, e_x), then
// apply(0, 0) and the random integer cases of its bilinearity check — and
// then the k probes of CONF-EQUAL (equal.hpp), as x.npy (batch, *source) and
// w.npy (batch, *parameters), one parameter vector per sample, with random
// integer cotangents g.npy (batch, *target) and a manifest probe.json. The
// framework computes, per sample b, y_b = L_{w_b} x_b, and optionally
// grad_x_b = L_{w_b}ᵀ g_b and grad_w = Σ_b ∇_w ⟨g_b, L_{w_b} x_b⟩.
// `pmach check LAYER.json --against DIR` then compares the tensors like any
// samples (per tensor, against the derived bound: exact for these integer
// inputs), and replays y.npy through recover_span: the calls are the same
// in the same order (recovery is deterministic for a seed and sizes), so
// the span the framework implements is recovered, exactly while the integer
// bound of docs/tolerances.md holds, and diffed with the model's; the last
// samples are replayed through check_equal the same way (CONF-EQUAL).
#include <random>

#include "pm/io/model_writer.hpp"
#include "pm/io/output.hpp"
#include "pm/numeric/uniform.hpp"
#include "pm/validate/conformance.hpp"
#include "pm/validate/rule_samples.hpp"

namespace pm {

namespace validation {

// A layer that records every call of span recovery and answers with the
// reference span.
struct RecordingLayer {
  using scalar_type = double;
  Index nx = 0, ny = 0, np = 0;
  ParametricSpan<double> span;
  mutable std::vector<std::pair<Function<double>, Function<double>>> calls;

  Index source_size() const { return nx; }
  Index target_size() const { return ny; }
  Index parameter_size() const { return np; }
  Function<double> apply(const Function<double> &w, const Function<double> &x) const {
    calls.emplace_back(w, x);
    return act(span, w, x);
  }
};

// A layer that answers the k-th call with the k-th sample of another
// framework's outputs, after checking that the call's inputs are the k-th
// sample's inputs.
struct ReplayLayer {
  using scalar_type = double;
  Index nx = 0, ny = 0, np = 0;
  const Batch<double> *x = nullptr, *w = nullptr, *y = nullptr;
  std::string dir;
  mutable Index next = 0;

  Index source_size() const { return nx; }
  Index target_size() const { return ny; }
  Index parameter_size() const { return np; }
  Function<double> apply(const Function<double> &wk, const Function<double> &xk) const {
    require(next < y->cols, dir, ": expected at least ", next + 1,
            " probe samples (was it written by pmach probe for this model?)");
    require(wk == w->column(next) && xk == x->column(next), dir, ": probe sample ", next,
            " is not the input recovery expects (was it written by pmach probe for this model "
            "and seed?)");
    return y->column(next++);
  }
};

// Probe files hold the basis probes of recovery only for small layers; every
// layer gets CONF-EQUAL's probes, sized for float32 (so that they are exact
// in a float32 or a float64 framework) and not localised.
inline constexpr std::size_t max_probe_recovery = 2048;

inline EqualOptions probe_equal_options() {
  EqualOptions o;
  o.dtype = Dtype::float32;
  o.localise = false;
  return o;
}

inline RecoverOptions probe_options(std::uint64_t seed, double u = 0) {
  RecoverOptions o;
  o.seed = seed;
  o.unit_roundoff = u;
  o.max_values = std::size_t{1} << 24; // every value is written to a file
  return o;
}

} // namespace validation

// The seed of a probe manifest (probe.json), after checking its fields; a
// machine's names its cases, a layer's its recovery.
inline std::uint64_t probe_seed(const io::Field &m, bool machine) {
  if (machine)
    m.allow_only({"pmach", "kind", "model", "seed", "samples", "cases"});
  else
    m.allow_only({"pmach", "kind", "model", "seed", "samples", "recovery", "equal"});
  m.at("pmach").as_int(io::format_version, io::format_version);
  if (m.at("kind").as_string() != "probe") m.at("kind").fail("\"probe\"");
  return std::uint64_t(m.at("seed").as_int(0, std::numeric_limits<long long>::max()));
}

inline bool is_probe_dir(const std::string &dir) {
  return std::filesystem::exists(std::filesystem::path(dir) / "probe.json");
}

// Writes the probe inputs of `d` as the files of one run of `dir` (replaced
// as a whole, docs/formats.md §5.1: absent, empty or an earlier run); returns the
// number of samples.
inline std::size_t write_probes(const io::LayerDescription &d, const std::string &dir,
                                std::uint64_t seed) {
  using namespace validation;
  std::vector<std::pair<Function<double>, Function<double>>> calls;
  std::string via = "none";
  if (d.span_held) {
    RecordingLayer rec{
        d.source.size(), d.target.size(), d.parameters.size(), io::with_scalar<double>(d.span), {}};
    if (recovery_cost(rec).first <= max_probe_recovery) {
      const auto r = recover_span(rec, probe_options(seed));
      require(r.status != RecoveryStatus::refused, d.file, ": ", r.detail);
      via = r.via;
      calls = std::move(rec.calls);
    }
  }
  const std::size_t recovery_samples = calls.size();
  // CONF-EQUAL's probes, as check_equal draws them (without evaluating the
  // specification: a framework answers them).
  equal_probes(
      d, *io::rows_of(d), seed, probe_equal_options(),
      [&](const Function<double> &w, const Function<double> &x) { calls.emplace_back(w, x); });
  const std::size_t n = calls.size();
  std::vector<double> xs, ws, gs;
  std::mt19937_64 rng(seed ^ fnv1a("probe g"));
  UniformInt<int> code(-8, 8);
  for (const auto &[w, x] : calls) {
    ws.insert(ws.end(), w.begin(), w.end());
    xs.insert(xs.end(), x.begin(), x.end());
    for (Index k = 0; k < d.target.size(); ++k) gs.push_back(code(rng));
  }
  auto with_batch = [&](const Shape &s) {
    std::vector<std::size_t> e{n};
    e.insert(e.end(), s.extents().begin(), s.extents().end());
    return e;
  };
  // The probes of one run replace DIR as a whole (docs/formats.md §5.1).
  io::RunOutput out(dir);
  out.add("x.npy", io::format_npy(with_batch(d.source), xs));
  out.add("w.npy", io::format_npy(with_batch(d.parameters), ws));
  out.add("g.npy", io::format_npy(with_batch(d.target), gs));
  const io::Json manifest{{"pmach", io::format_version},
                          {"kind", "probe"},
                          {"model", d.file},
                          {"seed", seed},
                          {"samples", n},
                          {"recovery", via},
                          {"equal", n - recovery_samples}};
  out.add("probe.json", manifest.dump(2) + "\n");
  out.commit();
  return n;
}

// The samples of a probe directory, then the span recovered from y.npy
// against the model's.
inline Report compare_probes(const io::LayerDescription &d, const std::string &dir,
                             const std::string &subject) {
  using namespace validation;
  namespace fs = std::filesystem;
  auto file = [&](const char *f) { return (fs::path(dir) / f).string(); };
  const io::Json mj = io::read_json(file("probe.json"));
  const std::uint64_t seed = probe_seed(io::Field(mj, file("probe.json")), false);
  Report rep = compare_layer_samples(d, dir, subject);
  if (!fs::exists(file("y.npy"))) return rep;
  const io::NpyArray ya = io::read_npy(file("y.npy"));
  const Batch<double> y = io::batch_from_npy<double>(ya, d.target, file("y.npy"));
  const Batch<double> x =
      io::batch_from_npy<double>(io::read_npy(file("x.npy")), d.source, file("x.npy"), y.cols);
  const Batch<double> w =
      io::batch_from_npy<double>(io::read_npy(file("w.npy")), d.parameters, file("w.npy"), y.cols);
  const io::Field manifest(mj, file("probe.json"));
  const std::size_t equal =
      manifest.has("equal") ? std::size_t(manifest.at("equal").as_int(0, y.cols)) : 0;
  const bool recovery = !manifest.has("recovery") || manifest.at("recovery").as_string() != "none";
  // CONF-EQUAL's probes are the last `equal` samples, in the order it calls.
  const ReplayLayer equal_replay{
      d.source.size(), d.target.size(), d.parameters.size(), &x, &w, &y, dir, y.cols - equal};
  if (equal > 0) rep.append(check_equal(d, equal_replay, seed, subject, probe_equal_options()));
  if (recovery) {
    const ReplayLayer replay{
        d.source.size(), d.target.size(), d.parameters.size(), &x, &w, &y, dir};
    const auto r = recover_span(replay, probe_options(seed, unit_roundoff(ya.dtype)));
    conformance_rows(rep, r, d.span, shapes_of(d), subject, ValidateOptions{1, seed},
                     "recovered from " + file("y.npy") + ": ");
  } else {
    rep.add(row("CONF-RECOVER", subject, Status::not_applicable, 0, seed,
                "the probe files hold no basis probes (recovery would need more "
                "than " +
                    std::to_string(max_probe_recovery) +
                    " samples): CONF-EQUAL compares at full size"));
  }
  require_comparison(rep, {"CONF-EQUAL forward", "CONF-SPAN-DIFF"}, subject, seed);
  return rep;
}

} // namespace pm
