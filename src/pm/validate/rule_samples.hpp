#pragma once
// The samples of a layer held by its rule (a named layer of more than
// io::max_listed_edges edges, docs/formats.md §2.2): the exact reference of
// each tensor from the rows, one pass over them per group of samples, as
// CONF-EQUAL evaluates its probes (span_probes.hpp). This needs every value
// of x, w and g to be an integer small enough for int64 sums, as the files
// of `pmach probe` are; the tensors of other samples are named as not
// compared at this size, never passed.
#include <optional>

#include "pm/validate/samples.hpp"
#include "pm/validate/span_probes.hpp"

namespace pm {

namespace validation {

// A batch's values point-major (value of sample j at point i at i·k + j),
// or nullopt when one is not an integer of magnitude at most 2^31; `most`
// grows to the largest magnitude.
inline std::optional<std::vector<long long>> integer_batch(const Batch<double> &b,
                                                           long long &most) {
  std::vector<long long> out(b.rows * b.cols);
  for (Index i = 0; i < b.rows; ++i)
    for (Index j = 0; j < b.cols; ++j) {
      const double v = b(i, j);
      if (!(std::abs(v) <= 0x1p31) || v != std::floor(v)) return std::nullopt;
      out[i * b.cols + j] = (long long)v;
      most = std::max(most, (long long)std::abs(v));
    }
  return out;
}

// The k samples' columns j of point-major values, divided by the scale.
inline void add_columns(std::vector<Function<Rational>> &out, const std::vector<long long> &v,
                        Index points, std::size_t first, std::size_t n, const Rational &scale) {
  for (std::size_t j = 0; j < n; ++j) {
    Function<Rational> &f = out[first + j];
    f.resize(points);
    for (Index i = 0; i < points; ++i) f[i] = Rational(v[i * n + j]) / scale;
  }
}

} // namespace validation

inline Report rule_samples(const io::LayerDescription &d, const std::string &dir,
                           const std::string &subject) {
  using namespace validation;
  namespace fs = std::filesystem;
  auto path = [&](const char *f) { return (fs::path(dir) / f).string(); };
  auto present = [&](const char *f) { return fs::exists(path(f)); };
  require(fs::is_directory(dir), dir, ": expected a directory of .npy samples");
  require(present("x.npy"), path("x.npy"), ": expected the inputs of the samples");
  const SpanRows &rows = *io::rows_of(d);
  const Index nx = d.source.size(), ny = d.target.size(), np = d.parameters.size();
  const Batch<double> x =
      io::batch_from_npy<double>(io::read_npy(path("x.npy")), d.source, path("x.npy"));
  const std::size_t k = x.cols;
  // The parameters: one vector per sample, one for all, or the file's.
  Batch<double> w(np, k);
  std::optional<io::NpyArray> wa;
  if (present("w.npy")) wa = io::read_npy(path("w.npy"));
  require(wa || !d.has_parameters || d.weights, path("w.npy"),
          ": expected the parameters (the layer file has no 'weights')");
  if (wa && wa->shape != d.parameters.extents()) {
    w = io::batch_from_npy<double>(*wa, d.parameters, path("w.npy"), k);
  } else {
    const std::vector<double> one = wa ? wa->data : d.weights.value_or(std::vector<double>{1.0});
    for (Index p = 0; p < np; ++p)
      for (std::size_t j = 0; j < k; ++j) w(p, j) = one[p];
  }
  const bool have_g = present("g.npy");
  require(have_g || (!present("grad_x.npy") && !present("grad_w.npy")), path("g.npy"),
          ": expected the cotangents g of grad_x.npy and grad_w.npy");
  const Batch<double> g =
      have_g ? io::batch_from_npy<double>(io::read_npy(path("g.npy")), d.target, path("g.npy"), k)
             : Batch<double>(ny, k, 0.0);
  // Integer samples whose sums fit int64 (fan · max|μ| · L · r² < 2^62, as
  // CONF-EQUAL's probes) are evaluated exactly; others are not, here.
  long long r = 1;
  const auto xi = integer_batch(x, r), wi = integer_batch(w, r), gi = integer_batch(g, r);
  const RowsProfile pf = profile(rows);
  const bool fits = xi && wi && gi && pf.scale != 0 &&
                    Rational(pf.fan) * std::max(pf.max_weight, Rational(1)) * pf.scale * r * r <
                        Rational(boost::multiprecision::cpp_int(1) << 62);
  Report rep;
  if (!fits) {
    for (const char *t : {"y", "grad_x", "grad_w"})
      if (present((std::string(t) + ".npy").c_str()))
        rep.add({"SAMPLE " + std::string(t), subject, Status::not_applicable, 0, false, 0, 0, 0,
                 d.file + " has more than " + std::to_string(io::max_listed_edges) +
                     " edges and is held by its rule, whose samples are evaluated exactly only "
                     "when x, w and g are integers small enough for int64 sums (as pmach "
                     "probe writes them)"});
    unknown_files(rep, dir, layer_sample_files, subject);
    return rep;
  }
  std::vector<Function<Rational>> y(k), y_mag(k), gx(k), gx_mag(k);
  // The weight gradient summed over the samples, as a framework sums it:
  // each term is below 2^62, so k of them fit 128 bits.
  std::vector<__int128> gw_sum(have_g ? np : 0, 0), gw_abs(have_g ? np : 0, 0);
  const std::size_t per = probes_per_pass(nx, ny, np, k);
  SpecValues<long long> v;
  for (std::size_t first = 0; first < k; first += per) {
    const std::size_t n = std::min(per, k - first);
    Probes pr{n, r, {}, {}, {}};
    auto slice = [&](const std::vector<long long> &all, Index points) {
      std::vector<long long> out(points * n);
      for (Index i = 0; i < points; ++i)
        for (std::size_t j = 0; j < n; ++j) out[i * n + j] = all[i * k + first + j];
      return out;
    };
    pr.w = slice(*wi, np), pr.x = slice(*xi, nx), pr.g = slice(*gi, ny);
    evaluate(v, rows, pr, pf.scale, have_g);
    add_columns(y, v.y, ny, first, n, pf.scale);
    add_columns(y_mag, v.y_abs, ny, first, n, pf.scale);
    if (!have_g) continue;
    add_columns(gx, v.x, nx, first, n, pf.scale);
    add_columns(gx_mag, v.x_abs, nx, first, n, pf.scale);
    for (Index p = 0; p < np; ++p)
      for (std::size_t j = 0; j < n; ++j) {
        gw_sum[p] += v.p[p * n + j];
        gw_abs[p] += v.p_abs[p * n + j];
      }
  }
  Function<Rational> gw(gw_sum.size()), gw_mag(gw_sum.size());
  for (std::size_t p = 0; p < gw_sum.size(); ++p) {
    gw[p] = Rational(boost::multiprecision::cpp_int(gw_sum[p])) / pf.scale;
    gw_mag[p] = Rational(boost::multiprecision::cpp_int(gw_abs[p])) / pf.scale;
  }
  std::vector<std::string> absent;
  std::size_t compared = 0;
  auto compare = [&](const char *name, const Shape &space,
                     const std::vector<Function<Rational>> &ref,
                     const std::vector<Function<Rational>> &mag, std::size_t terms) {
    const std::string file = std::string(name) + ".npy";
    if (!present(file.c_str()) || (std::string(name) != "y" && !have_g)) {
      absent.push_back(name);
      return;
    }
    const io::NpyArray t = io::read_npy(path(file.c_str()));
    if (std::string(name) == "grad_w")
      require(t.shape == space.extents(), path(file.c_str()),
              ": npy field 'shape': expected the parameter shape of ", d.file);
    else
      io::batch_from_npy<double>(t, space, path(file.c_str()), k); // checks the shape
    rep.add(compare_tensor(name, subject, t, ref, mag, terms, &space));
    ++compared;
  };
  compare("y", d.target, y, y_mag, rows.max_row() + 2);
  compare("grad_x", d.source, gx, gx_mag, rows.max_column() + 2);
  compare("grad_w", d.parameters, {gw}, {gw_mag}, k * rows.max_parameter_use() + 2);
  sample_verdicts(rep, absent, compared, dir, subject);
  unknown_files(rep, dir, layer_sample_files, subject);
  return rep;
}

// The samples of any layer: by its edge list when listed, else by its rule.
inline Report compare_layer_samples(const io::LayerDescription &d, const std::string &dir,
                                    const std::string &subject) {
  return d.span_held ? compare_samples(d, dir, subject) : rule_samples(d, dir, subject);
}

} // namespace pm
