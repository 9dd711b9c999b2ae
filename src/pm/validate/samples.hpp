#pragma once
// Comparing another framework's samples with the reference semantics
// (`pmach check LAYER.json --against DIR`). DIR holds .npy files:
//   x.npy       the inputs φ, shape (batch, *source) or (*source)
//   w.npy       the parameters, shape (*parameters) (default: the layer's weights)
//   y.npy       their outputs L_w φ, shape of x with source → target
//   g.npy       cotangents of the outputs, shape of y
//   grad_x.npy  their L_wᵀ g, shape of x
//   grad_w.npy  their Σ_batch ∇_w ⟨g, L_w φ⟩, shape (*parameters)
// The reference is computed exactly over the rationals from the very values
// in the files, so the only error is theirs. It is bounded by (T) of
// docs/tolerances.md with the unit roundoff of the file's dtype:
// |theirs − exact| ≤ γ_n M, M the same computation on absolute values and n
// the largest fan-in of the output plus 2 (a three-factor product, the sum,
// and the final store). Each tensor gives one result row.
#include <filesystem>

#include "pm/io/batch_npy.hpp"
#include "pm/io/layer_format.hpp"
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

// One row: their tensor against the reference, element by element, each
// within its bound; both flat in the file's order, `per_sample` elements per
// sample (for the message).
template <class S>
LawResult compare_to_bound(const std::string &name, const std::string &subject,
                           const io::NpyArray &theirs, const std::vector<S> &reference,
                           const std::vector<double> &bound, std::size_t per_sample) {
  LawResult r{"SAMPLE " + name, subject, Status::passed, 0, false, 0, 0, 0, ""};
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
    if (!(err <= bound[k]) && r.status == Status::passed) {
      r.status = Status::failed;
      r.detail = "element " + std::to_string(k) + " (sample " + std::to_string(k / per_sample) +
                 ", index " + std::to_string(k % per_sample) + "): theirs " + show(theirs.data[k]) +
                 ", reference " + show(to_double(reference[k])) + ", error " + show(err) +
                 " > bound " + show(bound[k]);
    }
  }
  return r;
}

inline double unit_roundoff(io::Dtype d) { return d == io::Dtype::float32 ? 0x1p-24 : 0x1p-53; }

// Their tensor against the exact result, within γ_n M for their dtype; M is
// rounded up by one ulp, so that the bound stays an upper bound.
inline LawResult compare_tensor(const std::string &name, const std::string &subject,
                                const io::NpyArray &theirs,
                                const std::vector<Function<Rational>> &exact,
                                const std::vector<Function<Rational>> &magnitude_of,
                                std::size_t n) {
  const double u = unit_roundoff(theirs.dtype);
  const double gamma_n = gamma(double(n), u);
  std::vector<Rational> ref;
  std::vector<double> bound;
  for (std::size_t b = 0; b < exact.size(); ++b)
    for (Index i = 0; i < exact[b].size(); ++i) {
      ref.push_back(exact[b][i]);
      bound.push_back(gamma_n * std::nextafter(to_double(magnitude_of[b][i]), 1e308));
    }
  return compare_to_bound(name, subject, theirs, ref, bound,
                          exact.empty() ? 1 : std::max<std::size_t>(exact[0].size(), 1));
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
  const auto x = sample_columns(io::read_npy(path("x.npy")), d.source, path("x.npy"));
  Function<Q> w;
  if (present("w.npy")) {
    const io::NpyArray a = io::read_npy(path("w.npy"));
    require(a.shape == d.parameters.extents(), path("w.npy"),
            ": npy field 'shape': expected the parameter shape of ", d.file);
    for (double v : a.data) w.push_back(Q(v));
  } else {
    require(!d.has_parameters || d.weights.has_value(), path("w.npy"),
            ": expected the parameters (the layer file has no 'weights')");
    if (d.weights)
      for (double v : *d.weights) w.push_back(Q(v));
    else
      w = {Q(1)};
  }
  const ParametricSpan<Q> &a = d.span;
  ParametricSpan<Q> abs_a = a;
  abs_a.span.mu = magnitude(abs_a.span.mu);
  const Function<Q> abs_w = magnitude(w);
  Report rep;
  auto expect_batch = [&](const io::NpyArray &t, const Shape &space, const char *file) {
    sample_columns(t, space, path(file), x.size());
  };
  if (present("y.npy")) {
    const io::NpyArray t = io::read_npy(path("y.npy"));
    expect_batch(t, d.target, "y.npy");
    std::vector<Function<Q>> ref, mag;
    for (const auto &phi : x) {
      ref.push_back(act(a, w, phi));
      mag.push_back(act(abs_a, abs_w, magnitude(phi)));
    }
    rep.results.push_back(compare_tensor("y", subject, t, ref, mag, max_fibre(a.span.t) + 2));
  }
  if (!present("g.npy")) return rep;
  const auto g = sample_columns(io::read_npy(path("g.npy")), d.target, path("g.npy"), x.size());
  if (present("grad_x.npy")) {
    const io::NpyArray t = io::read_npy(path("grad_x.npy"));
    expect_batch(t, d.source, "grad_x.npy");
    std::vector<Function<Q>> ref, mag;
    const ParametricSpan<Q> at = transpose(a), abs_at = transpose(abs_a);
    for (const auto &gb : g) {
      ref.push_back(act(at, w, gb));
      mag.push_back(act(abs_at, abs_w, magnitude(gb)));
    }
    rep.results.push_back(compare_tensor("grad_x", subject, t, ref, mag, max_fibre(a.span.s) + 2));
  }
  if (present("grad_w.npy")) {
    const io::NpyArray t = io::read_npy(path("grad_w.npy"));
    require(t.shape == d.parameters.extents(), path("grad_w.npy"),
            ": npy field 'shape': expected the parameter shape of ", d.file);
    Function<Q> ref(a.parameters(), Q(0)), mag(a.parameters(), Q(0));
    for (std::size_t b = 0; b < x.size(); ++b) {
      ref = add(ref, parameter_gradient(a, x[b], g[b]));
      mag = add(mag, parameter_gradient(abs_a, magnitude(x[b]), magnitude(g[b])));
    }
    rep.results.push_back(
        compare_tensor("grad_w", subject, t, {ref}, {mag}, x.size() * max_fibre(a.pi) + 2));
  }
  return rep;
}

} // namespace pm
