#pragma once
// Comparing another framework's samples with the reference semantics
// (`pmach check LAYER.json --against DIR`). DIR holds .npy files:
//   x.npy       the inputs φ, shape (batch, *source) or (*source)
//   w.npy       the parameters, shape (*parameters) (default: the layer's
//               weights), or (batch, *parameters): one per sample (probes)
//   y.npy       their outputs L_w φ, shape of x with source → target
//   g.npy       cotangents of the outputs, shape of y
//   grad_x.npy  their L_wᵀ g, shape of x
//   grad_w.npy  their Σ_batch ∇_w ⟨g, L_w φ⟩, shape (*parameters)
// The reference is computed exactly over the rationals from the very values
// in the files, so the only error is theirs. It is bounded by (T) of
// docs/tolerances.md with the unit roundoff of the file's dtype:
// |theirs − exact| ≤ γ_n M, M the same computation on absolute values and n
// the largest fan-in of the output plus 2 (a three-factor product, the sum,
// and the final store). Each expected output tensor gives one row: compared,
// or absent; any other file in DIR a warning row (not compared); and when no
// output was compared at all the row "SAMPLES" fails, so that a directory
// of the wrong files never passes. Where γ_n ≥ 1 (n u ≥ 1/2: float32 sums
// of 2^23 terms and more) the bound allows any answer of the right size and
// the row is "too weak", never passed or failed.
#include <algorithm>
#include <filesystem>

#include "pm/io/batch_npy.hpp"
#include "pm/io/layer_format.hpp"
#include "pm/io/output.hpp"
#include "pm/validate/cases.hpp"

namespace pm {

namespace validation {

// The samples of a tensor on `space`, one function per sample.
inline std::vector<Function<Rational>> sample_columns(const io::NpyArray &a, const Shape &space,
                                                      const std::string &path,
                                                      Index expected_batch = 0) {
  const Batch<Rational> b = io::batch_from_npy<Rational>(a, space, path, expected_batch);
  std::vector<Function<Rational>> cols;
  for (Index k = 0; k < b.cols; ++k) cols.push_back(b.column(k));
  return cols;
}

// The sample of element k: theirs, the reference and their difference (the
// differing entries, printed) on the space, or flat when it is unknown.
template <class S>
Counterexample sample_counterexample(const std::string &name, const io::NpyArray &theirs,
                                     const std::vector<S> &reference, std::size_t k,
                                     std::size_t per_sample, const Shape *space) {
  const std::size_t b = k / per_sample, first = b * per_sample;
  std::vector<std::size_t> shape{per_sample};
  if (space && space->size() == per_sample) shape = space->extents();
  std::vector<S> mine(per_sample), ref(per_sample), diff(per_sample);
  for (std::size_t i = 0; i < per_sample; ++i) {
    mine[i] = S(theirs.data[first + i]);
    ref[i] = reference[first + i];
    diff[i] = S(mine[i] - ref[i]);
  }
  Counterexample c;
  c.tensors.push_back(sparse_tensor(name + " − reference", shape, diff));
  c.tensors.push_back(sparse_tensor(name, shape, mine));
  c.tensors.push_back(sparse_tensor(name + " reference", shape, ref));
  c.tensors[1].in_text = c.tensors[2].in_text = false;
  c.scalars = {{"sample", std::to_string(b)},
               {"element", std::to_string(k)},
               {"theirs", show(theirs.data[k])},
               {"reference", show(reference[k])}};
  return c;
}

// One row: their tensor against the reference, element by element, each
// within its bound; both flat in the file's order, `per_sample` elements per
// sample (for the message).
template <class S>
LawResult compare_to_bound(const std::string &name, const std::string &subject,
                           const io::NpyArray &theirs, const std::vector<S> &reference,
                           const std::vector<double> &bound, std::size_t per_sample,
                           const Shape *space = nullptr) {
  LawResult r{"SAMPLE " + name, subject, Status::passed, 0, false, 0, 0, 0, ""};
  require(theirs.data.size() == reference.size(), "SAMPLE ", name, ": ", theirs.data.size(),
          " values, expected ", reference.size());
  if (reference.empty()) {
    r.status = Status::too_weak;
    r.detail = "the tensor is empty: nothing was compared";
    return r;
  }
  double worst = -1;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    const double err = to_double(magnitude(S(S(theirs.data[k]) - reference[k])));
    const double ratio = bound[k] > 0 ? err / bound[k] : (err > 0 ? 1e300 : 0);
    ++r.cases;
    if (ratio > worst) {
      worst = ratio;
      r.max_error = err;
      r.bound = bound[k];
    }
    // A bound that is not finite (∞, or ∞ · 0 in a propagated bound)
    // decides nothing: the row ends "too weak" unless another element fails.
    if (std::isfinite(bound[k]) && !(err <= bound[k]) && r.status == Status::passed) {
      r.status = Status::failed;
      // Where, in the user's coordinates: the sample (when there are
      // several) and the multi-index in the space.
      std::string at = "index " + std::to_string(k % per_sample);
      if (space && space->size() == per_sample) {
        at = "at (";
        const auto m = space->multi(k % per_sample);
        for (std::size_t j = 0; j < m.size(); ++j) at += (j ? ", " : "") + std::to_string(m[j]);
        at += ")";
      }
      r.detail = "element " + std::to_string(k) + " (" +
                 (reference.size() > per_sample ? "sample " + std::to_string(k / per_sample) + ", "
                                                : std::string()) +
                 at + "): theirs " + show(theirs.data[k]) + ", reference " +
                 show(to_double(reference[k])) + ", error " + show(err) + " > bound " +
                 show(bound[k]);
      r.counterexample = sample_counterexample(name, theirs, reference, k, per_sample, space);
      r.counterexample.scalars.push_back({"error", show(err)});
      r.counterexample.scalars.push_back({"bound", show(bound[k])});
    }
  }
  if (r.status == Status::passed)
    for (double b : bound)
      if (!std::isfinite(b)) {
        r.status = Status::too_weak;
        r.detail = "no finite bound: a rounding-error chain n has γ_n ≥ 1 (n·u ≥ 1/2) (" +
                   std::to_string(reference.size()) + " values; see docs/tolerances.md)";
        break;
      }
  return r;
}

inline double unit_roundoff(io::Dtype d) { return d == io::Dtype::float32 ? 0x1p-24 : 0x1p-53; }

// Their tensor against the exact result, within γ_n M for their dtype; M is
// rounded up by one ulp, so that the bound stays an upper bound.
inline LawResult compare_tensor(const std::string &name, const std::string &subject,
                                const io::NpyArray &theirs,
                                const std::vector<Function<Rational>> &exact,
                                const std::vector<Function<Rational>> &magnitude_of, std::size_t n,
                                const Shape *space = nullptr) {
  const double u = unit_roundoff(theirs.dtype);
  const double gamma_n = gamma(double(n), u);
  if (!bound_is_meaningful(gamma_n)) {
    LawResult r{"SAMPLE " + name, subject, Status::too_weak, 0, false, 0, gamma_n, 0, ""};
    r.detail = "the derived bound γ_n with n = " + std::to_string(n) + " terms and u = " + show(u) +
               " (" + (theirs.dtype == io::Dtype::float32 ? "float32" : "float64") + ") is " +
               show(gamma_n) +
               " ≥ 1: it would accept any value of the right size, so nothing is decided; "
               "use float64 samples or a smaller batch";
    return r;
  }
  std::vector<Rational> ref;
  std::vector<double> bound;
  for (std::size_t b = 0; b < exact.size(); ++b)
    for (Index i = 0; i < exact[b].size(); ++i) {
      ref.push_back(exact[b][i]);
      bound.push_back(gamma_n * std::nextafter(to_double(magnitude_of[b][i]), 1e308));
    }
  return compare_to_bound(name, subject, theirs, ref, bound,
                          exact.empty() ? 1 : std::max<std::size_t>(exact[0].size(), 1), space);
}

// The files a layer's sample directory may hold.
inline constexpr const char *layer_sample_files[] = {
    "x.npy", "w.npy", "y.npy", "probe.json", "g.npy", "grad_x.npy", "grad_w.npy"};

// One warning row per file of `dir` not in `known`: present, but not compared.
template <std::size_t N>
void unknown_files(Report &rep, const std::string &dir, const char *const (&known)[N],
                   const std::string &subject) {
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end()); // directory order is not deterministic
  for (const std::string &f : names) {
    if (f == io::run_manifest) continue; // written by pmach probe with the files of its run
    if (std::find(std::begin(known), std::end(known), f) != std::end(known)) continue;
    rep.add({"SAMPLE " + f, subject, Status::warning, 0, false, 0, 0, 0,
             "unknown file in " + dir + ", not compared"});
  }
}

// Rows for the expected outputs that are absent, and the failing SAMPLES row
// when none was compared.
inline void sample_verdicts(Report &rep, const std::vector<std::string> &absent,
                            std::size_t compared, const std::string &dir,
                            const std::string &subject) {
  for (const std::string &t : absent)
    rep.add({"SAMPLE " + t, subject, Status::not_applicable, 0, false, 0, 0, 0,
             "absent: " + t + ".npy is not in " + dir});
  if (compared == 0)
    rep.add({"SAMPLES", subject, Status::failed, 0, false, 0, 0, 0,
             "no output tensor was compared: " + dir +
                 " has none of the expected "
                 "outputs"});
}

} // namespace validation

inline Report compare_samples(const io::LayerDescription &d, const std::string &dir,
                              const std::string &subject) {
  using namespace validation;
  using Q = Rational;
  namespace fs = std::filesystem;
  auto path = [&](const char *f) { return (fs::path(dir) / f).string(); };
  auto present = [&](const char *f) { return fs::exists(path(f)); };
  require(fs::is_directory(dir), dir, ": expected a directory of .npy samples");
  require(present("x.npy"), path("x.npy"), ": expected the inputs of the samples");
  const io::NpyArray xa = io::read_npy(path("x.npy"));
  // Bounded before any rational is computed (docs/formats.md §5.2): the
  // batch, then the work of the exact reference on it.
  const std::uint64_t batch = xa.shape == d.source.extents() || xa.shape.empty() ? 1 : xa.shape[0];
  io::require_batch(batch, d.source.size(), path("x.npy"));
  io::require_exact_reference(
      {d.source.size(), d.target.size(), d.span.apex(), d.parameters.size(), 0}, batch,
      path("x.npy"));
  const auto x = sample_columns(xa, d.source, path("x.npy"));
  // The parameters: one vector for all samples, or one per sample.
  std::vector<Function<Q>> ws;
  if (present("w.npy")) {
    const io::NpyArray a = io::read_npy(path("w.npy"));
    if (a.shape == d.parameters.extents()) {
      ws.push_back({});
      for (double v : a.data) ws[0].push_back(Q(v));
    } else {
      ws = sample_columns(a, d.parameters, path("w.npy"), x.size());
    }
  } else {
    require(!d.has_parameters || d.weights.has_value(), path("w.npy"),
            ": expected the parameters (the layer file has no 'weights')");
    ws.push_back({});
    if (d.weights)
      for (double v : *d.weights) ws[0].push_back(Q(v));
    else
      ws[0] = {Q(1)};
  }
  auto w_of = [&](std::size_t b) -> const Function<Q> & { return ws[ws.size() == 1 ? 0 : b]; };
  const ParametricSpan<Q> &a = d.span;
  ParametricSpan<Q> abs_a = a;
  abs_a.span.mu = magnitude(abs_a.span.mu);
  Report rep;
  std::vector<std::string> absent;
  std::size_t compared = 0;
  auto expect_batch = [&](const io::NpyArray &t, const Shape &space, const char *file) {
    sample_columns(t, space, path(file), x.size());
  };
  if (present("y.npy")) {
    const io::NpyArray t = io::read_npy(path("y.npy"));
    expect_batch(t, d.target, "y.npy");
    std::vector<Function<Q>> ref, mag;
    for (std::size_t b = 0; b < x.size(); ++b) {
      ref.push_back(act(a, w_of(b), x[b]));
      mag.push_back(act(abs_a, magnitude(w_of(b)), magnitude(x[b])));
    }
    rep.add(compare_tensor("y", subject, t, ref, mag, max_fibre(a.span.t) + 2, &d.target));
    ++compared;
  } else {
    absent.push_back("y");
  }
  const bool have_g = present("g.npy");
  require(have_g || (!present("grad_x.npy") && !present("grad_w.npy")), path("g.npy"),
          ": expected the cotangents g of grad_x.npy and grad_w.npy");
  std::vector<Function<Q>> g;
  if (have_g) g = sample_columns(io::read_npy(path("g.npy")), d.target, path("g.npy"), x.size());
  if (have_g && present("grad_x.npy")) {
    const io::NpyArray t = io::read_npy(path("grad_x.npy"));
    expect_batch(t, d.source, "grad_x.npy");
    std::vector<Function<Q>> ref, mag;
    const ParametricSpan<Q> at = transpose(a), abs_at = transpose(abs_a);
    for (std::size_t b = 0; b < g.size(); ++b) {
      ref.push_back(act(at, w_of(b), g[b]));
      mag.push_back(act(abs_at, magnitude(w_of(b)), magnitude(g[b])));
    }
    rep.add(compare_tensor("grad_x", subject, t, ref, mag, max_fibre(a.span.s) + 2, &d.source));
    ++compared;
  } else {
    absent.push_back("grad_x");
  }
  if (have_g && present("grad_w.npy")) {
    const io::NpyArray t = io::read_npy(path("grad_w.npy"));
    require(t.shape == d.parameters.extents(), path("grad_w.npy"),
            ": npy field 'shape': expected the parameter shape of ", d.file);
    Function<Q> ref(a.parameters(), Q(0)), mag(a.parameters(), Q(0));
    for (std::size_t b = 0; b < x.size(); ++b) {
      ref = add(ref, parameter_gradient(a, x[b], g[b]));
      mag = add(mag, parameter_gradient(abs_a, magnitude(x[b]), magnitude(g[b])));
    }
    rep.add(compare_tensor("grad_w", subject, t, {ref}, {mag}, x.size() * max_fibre(a.pi) + 2,
                           &d.parameters));
    ++compared;
  } else {
    absent.push_back("grad_w");
  }
  sample_verdicts(rep, absent, compared, dir, subject);
  unknown_files(rep, dir, layer_sample_files, subject);
  return rep;
}

} // namespace pm
