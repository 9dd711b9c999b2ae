#pragma once
// Probe samples of a machine, for frameworks without bindings. `pmach probe
// MACHINE.json --out DIR` writes the inputs check_machine feeds an
// implementation (without the machine laws, whose shrinking asks for inputs
// no file can hold): the cases of CONF-MACHINE, small integers, and the
// basis probes w = e_p, y₀ = 0, z₀ = e_s of the linear-part recovery (|P|·|I|
// samples; none for a σ without rational values). One sample per row:
//   w.npy (batch, *parameters)          one weight vector per sample
//   y0.npy, z0.npy (batch, *space)      the inputs
//   gy.npy, gz.npy (batch, *space)      cotangents of a loss at (y, z)
//   probe.json                          the manifest (model, seed, cases)
// The framework computes, per sample b, the solution (y_b, z_b) of the
// machine at w_b, y0_b, z0_b, and optionally its backward pass at the
// cotangents gy_b, gz_b: grad_y0_b, grad_z0_b and grad_w_b (the weight
// gradient of that one sample); it writes y.npy, z.npy (and grad_y0.npy,
// grad_z0.npy, grad_w.npy) into DIR, float32 or float64. `pmach check
// MACHINE.json --against DIR` replays them through check_machine: each call
// is answered from the sample with its inputs, so the CONF-MACHINE rows
// compare the framework's passes with the reference, and its linear part is
// recovered exactly (σ with rational values, under the integer bound of
// docs/tolerances.md) and diffed with the model's cleaned span.
#include <map>

#include "pm/validate/conformance.hpp"
#include "pm/validate/probe.hpp"

namespace pm {

namespace validation {

// One probe sample: the inputs of one column of a call.
struct MachineProbe {
  Function<double> w, y0, z0, gy, gz;
};

inline std::vector<double> probe_key(const Function<double> &w, const Batch<double> &y0,
                                     const Batch<double> &z0, Index b) {
  std::vector<double> k(w.begin(), w.end());
  for (const Batch<double> *v : {&y0, &z0})
    for (Index i = 0; i < v->rows; ++i) k.push_back((*v)(i, b));
  return k;
}

// The reference machine in double, recording the samples of every call:
// one per column, forward-only ones with zero cotangents.
struct RecordingMachine {
  using scalar_type = double;
  GradedSpanMachine<double> m;
  mutable std::vector<MachineProbe> samples;
  mutable std::map<std::vector<double>, std::size_t> forwards; // key → sample

  void record(const Function<double> &w, const Batch<double> &y0, const Batch<double> &z0,
              const Batch<double> *gy, const Batch<double> *gz) const {
    for (Index b = 0; b < y0.cols; ++b) {
      const auto key = probe_key(w, y0, z0, b);
      const auto at = forwards.find(key);
      const Function<double> zero(m.size(), 0.0);
      MachineProbe p{w, y0.column(b), z0.column(b), gy ? gy->column(b) : zero,
                     gz ? gz->column(b) : zero};
      if (at == forwards.end()) {
        forwards.emplace(key, samples.size());
        samples.push_back(std::move(p));
      } else if (gy) {
        // The forward sample of these inputs gets the cotangents, unless it
        // has others already.
        MachineProbe &old = samples[at->second];
        if (old.gy == zero && old.gz == zero)
          old = std::move(p);
        else if (!(old.gy == p.gy && old.gz == p.gz))
          samples.push_back(std::move(p));
      }
    }
  }
  std::pair<Batch<double>, Batch<double>>
  forward(const Function<double> &w, const Batch<double> &y0, const Batch<double> &z0) const {
    record(w, y0, z0, nullptr, nullptr);
    MachineState<double> x = pm::forward(m, w, y0, z0);
    return {std::move(x.y), std::move(x.z)};
  }
  Gradients<double> backward(const Function<double> &w, const Batch<double> &y0,
                             const Batch<double> &z0, const Batch<double> &gy,
                             const Batch<double> &gz) const {
    record(w, y0, z0, &gy, &gz);
    return pm::backward(m, w, pm::forward(m, w, y0, z0), gy, gz);
  }
};

// Another framework's outputs on the probe samples, as an implementation:
// each column of a call is answered by the sample with its inputs.
struct ProbeOutputs {
  Batch<double> w, y0, z0, gy, gz; // inputs, one column per sample
  Batch<double> y, z;              // their solutions
  std::optional<Batch<double>> grad_y0, grad_z0, grad_w;
  double u = 0x1p-53; // the unit roundoff of their outputs' dtype
  std::string dir;
  std::map<std::vector<double>, Index> forwards;
  std::map<std::vector<double>, Index> backwards; // key with the cotangents

  void index() {
    for (Index b = 0; b < y0.cols; ++b) {
      const Function<double> wb = w.column(b);
      std::vector<double> key = probe_key(wb, y0, z0, b);
      forwards.emplace(key, b);
      for (const Batch<double> *v : {&gy, &gz})
        for (Index i = 0; i < v->rows; ++i) key.push_back((*v)(i, b));
      backwards.emplace(std::move(key), b);
    }
  }
  Index find(const std::map<std::vector<double>, Index> &in, const std::vector<double> &key) const {
    const auto at = in.find(key);
    require(at != in.end(), dir,
            ": no probe sample has the inputs check_machine asks for (was it written by pmach "
            "probe for this model and seed?)");
    return at->second;
  }
};

template <bool WithBackward> struct ReplayMachine {
  using scalar_type = double;
  const ProbeOutputs *out;

  double unit_roundoff() const { return out->u; }
  std::pair<Batch<double>, Batch<double>>
  forward(const Function<double> &w, const Batch<double> &y0, const Batch<double> &z0) const {
    Batch<double> y(y0.rows, y0.cols), z(y0.rows, y0.cols);
    for (Index b = 0; b < y0.cols; ++b) {
      const Index k = out->find(out->forwards, probe_key(w, y0, z0, b));
      for (Index i = 0; i < y0.rows; ++i) {
        y(i, b) = out->y(i, k);
        z(i, b) = out->z(i, k);
      }
    }
    return {std::move(y), std::move(z)};
  }
  // Their per-sample weight gradients, summed over the call's batch.
  Gradients<double> backward(const Function<double> &w, const Batch<double> &y0,
                             const Batch<double> &z0, const Batch<double> &gy,
                             const Batch<double> &gz) const requires WithBackward {
    Gradients<double> g{Batch<double>(y0.rows, y0.cols),
                        Batch<double>(y0.rows, y0.cols),
                        Function<double>(w.size(), 0.0),
                        {}};
    for (Index b = 0; b < y0.cols; ++b) {
      std::vector<double> key = probe_key(w, y0, z0, b);
      for (const Batch<double> *v : {&gy, &gz})
        for (Index i = 0; i < v->rows; ++i) key.push_back((*v)(i, b));
      const Index k = out->find(out->backwards, key);
      for (Index i = 0; i < y0.rows; ++i) {
        g.y0(i, b) = (*out->grad_y0)(i, k);
        g.z0(i, b) = (*out->grad_z0)(i, k);
      }
      g.w = add(g.w, out->grad_w->column(k));
    }
    return g;
  }
};

inline constexpr const char *machine_probe_files[] = {
    "w.npy", "y0.npy",      "z0.npy",      "gy.npy",     "gz.npy",    "y.npy",
    "z.npy", "grad_y0.npy", "grad_z0.npy", "grad_w.npy", "probe.json"};

} // namespace validation

// Writes the probe inputs of machine `d` for `cases` cases as the files of
// one run of `dir` (docs/formats.md §5.1); returns the number of samples.
inline std::size_t write_machine_probes(const io::MachineDescription &d, const std::string &dir,
                                        std::size_t cases, std::uint64_t seed) {
  using namespace validation;
  const RecordingMachine rec{io::make_machine<double>(d), {}, {}};
  // Every case asked for is written, whatever the machine's size.
  ValidateOptions opt{cases, seed};
  opt.value_budget = no_value_budget;
  const Report r = check_machine(d, rec, opt, "probe", false);
  for (const LawResult &row : r.results)
    require(row.status != Status::not_applicable || row.law != "CONF-RECOVER" ||
                row.detail.find("above the bound") == std::string::npos,
            d.file, ": ", row.detail);
  const std::size_t n = rec.samples.size();
  std::vector<double> ws, y0s, z0s, gys, gzs;
  for (const MachineProbe &p : rec.samples) {
    ws.insert(ws.end(), p.w.begin(), p.w.end());
    for (const auto &[to, from] : {std::pair{&y0s, &p.y0}, std::pair{&z0s, &p.z0},
                                   std::pair{&gys, &p.gy}, std::pair{&gzs, &p.gz}})
      to->insert(to->end(), from->begin(), from->end());
  }
  auto with_batch = [&](const Shape &s) {
    std::vector<std::size_t> e{n};
    e.insert(e.end(), s.extents().begin(), s.extents().end());
    return e;
  };
  const Shape space = d.space.size() == rec.m.size() ? d.space : Shape({rec.m.size()});
  const Shape params =
      d.parameters.size() == rec.m.parameters() ? d.parameters : Shape({rec.m.parameters()});
  io::RunOutput out(dir);
  out.add("w.npy", io::format_npy(with_batch(params), ws));
  out.add("y0.npy", io::format_npy(with_batch(space), y0s));
  out.add("z0.npy", io::format_npy(with_batch(space), z0s));
  out.add("gy.npy", io::format_npy(with_batch(space), gys));
  out.add("gz.npy", io::format_npy(with_batch(space), gzs));
  const io::Json manifest{{"pmach", io::format_version},
                          {"kind", "probe"},
                          {"model", d.file},
                          {"seed", seed},
                          {"cases", cases},
                          {"samples", n}};
  out.add("probe.json", manifest.dump(2) + "\n");
  out.commit();
  return n;
}

// The framework's outputs on the probes of `dir`, replayed through
// check_machine; a failing SAMPLES row when y.npy or z.npy is absent.
inline Report compare_machine_probes(const io::MachineDescription &d, const std::string &dir,
                                     const std::string &subject) {
  using namespace validation;
  namespace fs = std::filesystem;
  auto file = [&](const char *f) { return (fs::path(dir) / f).string(); };
  auto present = [&](const char *f) { return fs::exists(file(f)); };
  const io::Json mj = io::read_json(file("probe.json"));
  const io::Field m(mj, file("probe.json"));
  const std::uint64_t seed = probe_seed(m, true);
  const std::size_t cases = std::size_t(m.at("cases").as_int(1, io::max_cases));
  Report rep;
  std::vector<std::string> absent;
  for (const char *t : {"y", "z"})
    if (!present((std::string(t) + ".npy").c_str())) absent.push_back(t);
  if (!absent.empty()) {
    sample_verdicts(rep, absent, 0, dir, subject);
    unknown_files(rep, dir, machine_probe_files, subject);
    return rep;
  }
  const GradedSpanMachine<double> md = io::make_machine<double>(d);
  const Shape space = d.space.size() == md.size() ? d.space : Shape({md.size()});
  const Shape params =
      d.parameters.size() == md.parameters() ? d.parameters : Shape({md.parameters()});
  ProbeOutputs out;
  out.dir = dir;
  const io::NpyArray ya = io::read_npy(file("y.npy"));
  out.u = unit_roundoff(ya.dtype);
  out.y = io::batch_from_npy<double>(ya, space, file("y.npy"));
  const Index batch = out.y.cols;
  auto read = [&](const char *f, const Shape &s) {
    return io::batch_from_npy<double>(io::read_npy(file(f)), s, file(f), batch);
  };
  out.z = read("z.npy", space);
  out.w = read("w.npy", params);
  out.y0 = read("y0.npy", space);
  out.z0 = read("z0.npy", space);
  out.gy = read("gy.npy", space);
  out.gz = read("gz.npy", space);
  const bool backward = present("grad_y0.npy") || present("grad_z0.npy") || present("grad_w.npy");
  if (backward) {
    out.grad_y0 = read("grad_y0.npy", space);
    out.grad_z0 = read("grad_z0.npy", space);
    out.grad_w = read("grad_w.npy", params);
  }
  out.index();
  // Every sample of the files is compared, whatever the machine's size.
  ValidateOptions opt{cases, seed};
  opt.value_budget = no_value_budget;
  rep = backward ? check_machine(d, ReplayMachine<true>{&out}, opt, subject, false)
                 : check_machine(d, ReplayMachine<false>{&out}, opt, subject, false);
  unknown_files(rep, dir, machine_probe_files, subject);
  return rep;
}

} // namespace pm
