#pragma once
// The models of the Python package: a layer (a parametric span between
// shaped spaces, pm::io::LayerDescription) or a machine (a seed machine or a
// graded span machine, pm::io::MachineDescription), exactly what a model file
// holds, with optional default weights. forward/backward evaluate the
// reference semantics (src/pm/category/, src/pm/machine/) in float, double or
// exactly over the rationals, or, with kernels = true, the fast kernels of
// src/pm/kernels/ through their dispatch.
#include <memory>
#include <mutex>
#include <random>

#include "arrays.hpp"
#include "pm/io/bounds.hpp"
#include "pm/io/machine_format.hpp"
#include "pm/kernels/dispatch.hpp"
#include "pm/train/init.hpp"

namespace pmach_py {

enum class Precision { float32, float64, exact };

inline Precision precision_of(const std::string &p) {
  if (p == "float") return Precision::float32;
  if (p == "double") return Precision::float64;
  if (p == "exact") return Precision::exact;
  pm::detail::fail("precision: is '", p, "', expected float, double or exact");
}

// One object of each scalar type, built on first use and kept: a model's
// span, kernel plan or seed machine is built once, not on every call.
// A copy starts empty (the objects are derived from the model and rebuilt).
template <template <class> class Of> struct PerScalar {
  PerScalar() = default;
  PerScalar(const PerScalar &) {}
  PerScalar &operator=(const PerScalar &) {
    std::lock_guard<std::mutex> lock(mutex);
    slots = {};
    return *this;
  }
  template <class S, class Make> const Of<S> &get(Make &&make) const {
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = std::get<std::shared_ptr<const Of<S>>>(slots);
    if (!slot) slot = std::make_shared<const Of<S>>(make());
    return *slot;
  }
  mutable std::mutex mutex;
  mutable std::tuple<std::shared_ptr<const Of<float>>, std::shared_ptr<const Of<double>>,
                     std::shared_ptr<const Of<pm::Rational>>>
      slots;
};

// Dispatches a generic lambda on the scalar type of a precision.
template <class F> decltype(auto) with_precision(Precision p, F &&f) {
  switch (p) {
  case Precision::float32:
    return f(float{});
  case Precision::exact:
    return f(pm::Rational{});
  default:
    return f(double{});
  }
}

// The bounds of a model file (docs/formats.md §5.2) on a layer's spaces:
// each 2^24 points in at most 16 axes, its parameters included. Sizes are
// products taken in double, so that extents whose product wraps in 64 bits
// (2^32 × 2^32) are refused, not read as 0 points. The edges need no bound
// here: a constructor holds its layer by its rule and lists the edges only
// up to pm::io::max_listed_edges (described_layer). The constructors call it
// with the sizes they will build, before building anything.
inline void require_layer_size(const std::string &who, double source_points, double target_points,
                               double parameter_points) {
  const double points = std::max(source_points, target_points);
  pm::require(points <= double(pm::io::max_space_size), who, ": the layer would have ", points,
              " points in a space, expected at most ", pm::io::max_space_size);
  pm::require(parameter_points <= double(pm::io::max_space_size), who, ": the layer would have ",
              parameter_points, " parameters, expected at most ", pm::io::max_space_size);
}

// The points of a space of these extents, as a double (no wrap-around).
inline double points_of(const Shape &s) {
  pm::require(s.rank() <= 16, "shape ", tuple_text(s.extents()), ": has ", s.rank(),
              " axes, expected at most 16");
  double p = 1;
  for (Index e : s.extents()) p *= double(e);
  return p;
}

// The bounds of `pmach eval` (docs/formats.md §5.2, pm/io/bounds.hpp) on
// evaluating a model on `batch` samples, checked before any result is
// allocated or any work done.
inline void require_call_bounds(const pm::io::ModelSize &size, std::uint64_t batch, bool exact,
                                const std::string &who) {
  using namespace pm::io;
  pm::require(batch <= max_batch, who, ": ", batch, " samples, expected at most ", max_batch,
              " per batch");
  const std::uint64_t values = exact ? max_values_exact : max_values_float;
  const char *precision = exact ? " with precision exact; use precision=\"double\"" : " per array";
  const std::uint64_t widest = std::max({size.in, size.out, std::uint64_t{1}});
  pm::require(size.parameters <= values, who, ": ", size.parameters,
              " parameters, expected at most ", values, precision);
  pm::require(batch <= values / widest, who, ": ", batch, " samples of up to ", widest,
              " values, expected at most ", values, " values", precision);
  const std::uint64_t work = exact ? max_work_exact : max_work_float;
  pm::require(batch <= work / size.per_sample(), who, ": ", batch, " samples × ", size.per_sample(),
              " (points + edges + parameters + levels) steps, expected at most ", work,
              exact ? " with precision exact; use precision=\"double\"" : " per call");
}

template <class S> using Span = pm::ParametricSpan<S>;
template <class S> using SpanPlan = pm::kernels::SpanPlan<S>;

// The model's default weights, or `w` when given, as a Function of S.
template <class S>
pm::Function<S> weights_of(const py::object &w, const std::optional<std::vector<double>> &stored,
                           const Shape &shape, bool has_parameters, const std::string &who) {
  if (!w.is_none()) return function_from<S>(real_array(w, "w"), shape, "w");
  pm::require(stored.has_value() || !has_parameters, who,
              ": /weights: expected the field, or the argument w");
  pm::Function<S> out;
  if (stored)
    for (double v : *stored) out.push_back(scalar_from<S>(v));
  else
    out.assign(shape.size(), S(1)); // no parameters: the one weight 1
  return out;
}

// The same for a kernel: a view of w when it already is a C-order array of S.
template <class S>
Array<S> kernel_weights(const py::object &w, const std::optional<std::vector<double>> &stored,
                        const Shape &shape, bool has_parameters, const std::string &who) {
  if (!w.is_none()) {
    Array<S> a = as_array<S>(w, "w");
    require_shape(a, shape, "w");
    return a;
  }
  const pm::Function<S> v = weights_of<S>(w, stored, shape, has_parameters, who);
  return Array<S>(shape.extents(), v.data());
}

inline std::optional<std::vector<double>> stored_weights(const py::object &w, const Shape &shape) {
  if (w.is_none()) return std::nullopt;
  return function_from<double>(real_array(w, "weights"), shape, "weights");
}

inline py::object weights_array(const std::optional<std::vector<double>> &w, const Shape &shape) {
  if (!w) return py::none();
  return to_numpy<double>(std::vector<double>(*w), shape.extents());
}

// Glorot-uniform weights (the authors' initialisation, src/pm/train/init.hpp)
// for parameters of shape (k…, fan_in, fan_out); other shapes: fan_in =
// fan_out = 1 per entry, i.e. uniform in ±√3.
inline std::vector<double> glorot(const Shape &shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (shape.rank() >= 2) return pm::glorot_uniform(shape, rng);
  return pm::glorot_uniform(Shape({shape.size(), 1}), rng);
}

struct LayerModel {
  pm::io::LayerDescription d;
  PerScalar<Span> spans;
  PerScalar<SpanPlan> plans;

  // The spaces' points in double: extents whose product wrapped to a small
  // size are refused here whatever built them. (The edges exist already;
  // their bound is for the builder to check first.)
  LayerModel(pm::io::LayerDescription desc) : d(std::move(desc)) {
    require_layer_size(who(), points_of(d.source), points_of(d.target), points_of(d.parameters));
  }
  std::string who() const { return d.file.empty() ? d.name : d.file; }

  pm::io::ModelSize size() const {
    return {d.source.size(), d.target.size(), d.span.apex(), d.parameters.size(), 0};
  }

  template <class S> const Span<S> &span() const {
    return spans.get<S>([&] { return pm::io::with_scalar<S>(pm::io::edges_of(d, who())); });
  }
  template <class S> const SpanPlan<S> &plan() const {
    return plans.get<S>([&] { return pm::kernels::span_plan(span<S>()); });
  }
  template <class S> pm::Function<S> weights(const py::object &w) const {
    return weights_of<S>(w, d.weights, d.parameters, d.has_parameters, who());
  }
  template <class S> Array<S> weight_view(const py::object &w) const {
    return kernel_weights<S>(w, d.weights, d.parameters, d.has_parameters, who());
  }

  // L_w x for x of shape (n, *source) or (*source).
  template <class S>
  py::array forward(const py::array &x, const py::object &w, bool kernels) const {
    bool axis = false;
    const Index n = batch_size(x, d.source, "x", 0, &axis);
    require_call_bounds(size(), n, !std::is_floating_point_v<S>, who());
    if constexpr (std::is_floating_point_v<S>) {
      if (kernels) {
        const Array<S> wa = weight_view<S>(w);
        const std::span<const S> wv = view(wa);
        const Array<S> xa = as_array<S>(x, "x");
        py::array_t<S> out(batch_shape(n, d.target, axis));
        const SpanPlan<S> &p = plan<S>();
        const std::span<S> os = view(out);
        {
          py::gil_scoped_release unlocked;
          const std::vector<S> xs = span_source<S>(view(xa), n);
          pm::kernels::span_forward<S>(p, wv, d.bias ? std::span<const S>(xs) : view(xa), n, os);
        }
        return out;
      }
    }
    require_reference<S>(kernels);
    const pm::Function<S> wv = weights<S>(w);
    const pm::Batch<S> xb = pm::io::span_input(d, batch_from<S>(x, d.source, "x"));
    pm::Batch<S> y;
    {
      py::gil_scoped_release unlocked;
      y = pm::act(span<S>(), wv, xb);
    }
    return batch_to_numpy(std::move(y), d.target, axis);
  }

  // (L_wᵀ g, Σ_b ∇_w ⟨g_b, L_w x_b⟩) for x of shape (n, *source) and g (n, *target).
  template <class S>
  py::tuple backward(const py::array &x, const py::array &g, const py::object &w,
                     bool kernels) const {
    bool axis = false;
    const Index n = batch_size(x, d.source, "x", 0, &axis);
    batch_size(g, d.target, "g", n);
    require_call_bounds(size(), n, !std::is_floating_point_v<S>, who());
    if constexpr (std::is_floating_point_v<S>) {
      if (kernels) {
        const Array<S> wa = weight_view<S>(w);
        const std::span<const S> wv = view(wa);
        const Array<S> xa = as_array<S>(x, "x"), ga = as_array<S>(g, "g");
        py::array_t<S> gx(batch_shape(n, d.source, axis));
        std::vector<S> gw(wv.size());
        const SpanPlan<S> &p = plan<S>();
        const std::span<S> gxs = view(gx);
        {
          py::gil_scoped_release unlocked;
          const std::vector<S> xs = span_source<S>(view(xa), n);
          std::vector<S> gxe(d.bias ? gxs.size() + n : 0);
          pm::kernels::span_transpose<S>(p, wv, view(ga), n, d.bias ? std::span<S>(gxe) : gxs);
          pm::kernels::span_parameter_gradient<S>(p, d.bias ? std::span<const S>(xs) : view(xa),
                                                  view(ga), n, gw);
          const Index nx = d.source.size(); // the bias point's row dropped
          for (Index b = 0; d.bias && b < n; ++b)
            std::copy_n(gxe.begin() + b * (nx + 1), nx, gxs.begin() + b * nx);
        }
        return py::make_tuple(gx, to_numpy<S>(std::move(gw), d.parameters.extents()));
      }
    }
    require_reference<S>(kernels);
    const pm::Function<S> wv = weights<S>(w);
    const pm::Batch<S> xb = pm::io::span_input(d, batch_from<S>(x, d.source, "x")),
                       gb = batch_from<S>(g, d.target, "g");
    pm::Batch<S> gx;
    pm::Function<S> gw;
    {
      py::gil_scoped_release unlocked;
      const Span<S> &a = span<S>();
      gx = pm::io::source_part(d, pm::act(pm::transpose(a), wv, gb));
      gw = pm::parameter_gradient(a, xb, gb);
    }
    return py::make_tuple(batch_to_numpy(std::move(gx), d.source, axis),
                          to_numpy<S>(std::move(gw), d.parameters.extents()));
  }

  // With a bias, the span's source is X ⊔ {•}: each sample of x (n
  // columns of |X| values) followed by • = 1, as io::span_input sets it.
  // Empty without a bias (x is the span's input as it is).
  template <class S> std::vector<S> span_source(std::span<const S> x, Index n) const {
    if (!d.bias) return {};
    const Index nx = d.source.size();
    std::vector<S> out(n * (nx + 1), S(1));
    for (Index b = 0; b < n; ++b) std::copy_n(x.begin() + b * nx, nx, out.begin() + b * (nx + 1));
    return out;
  }

  template <class S> void require_reference(bool kernels) const {
    pm::require(!kernels || std::is_floating_point_v<S>, who(),
                ": kernels=True runs in float or double, not with precision exact");
  }
};

template <class S> using Machine = pm::GradedSpanMachine<S>;
template <class S> using Seed = pm::SeedMachine<S>;

struct MachineModel {
  pm::io::MachineDescription d;
  PerScalar<Machine> machines;
  PerScalar<Seed> seeds;

  MachineModel(pm::io::MachineDescription desc) : d(std::move(desc)) {}
  std::string who() const { return d.file.empty() ? d.name : d.file; }

  // A seed machine's span is not held: its edges are at most one per
  // parameter and position (N² per position of a dense, convolution or
  // recurrent machine), the bound used without building it.
  pm::io::ModelSize size() const {
    Index edges = d.span.apex();
    if (d.seed) {
      edges = d.parameters.size();
      for (Index p : d.seed->positions) edges *= p;
    }
    return {d.space.size(), d.space.size(), edges, d.parameters.size(), Index(d.grading.levels())};
  }

  template <class S> const Machine<S> &machine() const {
    return machines.get<S>([&] { return pm::io::make_machine<S>(d); });
  }
  template <class S> const Seed<S> &seed() const {
    return seeds.get<S>(
        [&] { return pm::make_seed_machine<S>(*d.seed, pm::io::make_sigma<S>(d.sigma)); });
  }
  template <class S> pm::Function<S> weights(const py::object &w) const {
    return weights_of<S>(w, d.weights, d.parameters, true, who());
  }
  template <class S> Array<S> weight_view(const py::object &w) const {
    return kernel_weights<S>(w, d.weights, d.parameters, true, who());
  }

  // Exact evaluation: the estimated bits of the state's rationals, from the
  // bits of the inputs given, bounded as for pmach eval (docs/formats.md
  // §5.2): beyond, the exact arithmetic would take hours.
  template <class S>
  void require_exact_bits(std::initializer_list<const std::vector<S> *> inputs) const {
    if constexpr (!std::is_floating_point_v<S>) {
      std::uint64_t in = 0;
      for (const auto *v : inputs)
        for (const S &x : *v) in = std::max(in, pm::io::bits(x));
      const std::uint64_t est = pm::io::exact_state_bits(d, machine<S>(), in);
      pm::require(est <= pm::io::max_exact_bits, who(),
                  ": exact evaluation would need rationals of about ", est, " bits or more over ",
                  d.grading.levels(), " levels, expected at most ", pm::io::max_exact_bits,
                  "; use precision=\"double\"");
    }
  }

  template <class S> void require_precision(bool kernels) const {
    if constexpr (!std::is_floating_point_v<S>) {
      pm::require(!kernels, who(),
                  ": kernels=True runs in float or double, not with precision exact");
      pm::require(pm::io::is_rational_sigma(d.sigma), who(),
                  ": /sigma: precision exact needs a sigma with rational values (identity, relu, "
                  "polynomial, array), found ",
                  d.sigma.name, "; use precision double");
    }
  }

  // The plan of a convolution or recurrent machine's kernels on n samples
  // whose states are in `layout`.
  template <class S> pm::kernels::SequencePlan sequence_plan(Index n, StateLayout layout) const {
    pm::kernels::SequencePlan p = pm::kernels::detail::sequence_plan<S>(d.seed.value(), n);
    p.channels_first = layout.channels_first;
    return p;
  }

  // The kernel that runs a seed machine, or nullopt for the generic solver.
  template <class S> std::optional<pm::kernels::Path> fast_path(bool kernels) const {
    if constexpr (std::is_floating_point_v<S>) {
      if (kernels && d.seed) {
        const pm::kernels::Path p = pm::kernels::path(seed<S>());
        if (p != pm::kernels::Path::generic) return p;
      }
    }
    return std::nullopt;
  }

  // (y, z) solving y = y0 + L_w̃ z, z = z0 + σ(y); z0 = None is zero. With
  // keep_slope, (y, z, slope): σ'(y) where the kernel keeps it for backward
  // (keeps_slope of a dense machine or a sequence plan), else None. A
  // sequence machine's slope is in the kernel's own order (each piece of
  // samples time-major), for backward only. States are in `layout`; the
  // kernels read it in place, the generic solver through a copy in the
  // library's layout.
  template <class S>
  py::tuple forward(const py::array &y0, const py::object &z0, const py::object &w, bool kernels,
                    bool keep_slope, StateLayout layout) const {
    require_precision<S>(kernels);
    bool axis = false;
    const Index n = batch_size(y0, d.space, "y0", 0, &axis, layout);
    if (!z0.is_none()) batch_size(real_array(z0, "z0"), d.space, "z0", n, nullptr, layout);
    require_call_bounds(size(), n, !std::is_floating_point_v<S>, who());
    if constexpr (std::is_floating_point_v<S>) {
      if (const auto p = fast_path<S>(kernels)) {
        const Array<S> wa = weight_view<S>(w);
        const std::span<const S> wv = view(wa);
        const Array<S> a = as_array<S>(y0, "y0");
        const std::vector<Index> shape = batch_shape(n, d.space, axis, layout);
        Array<S> b = z0.is_none() ? Array<S>(shape) : as_array<S>(z0, "z0");
        if (z0.is_none()) std::fill_n(b.mutable_data(), b.size(), S(0));
        py::array_t<S> y(shape), z(shape);
        const Seed<S> &m = seed<S>();
        const bool is_dense = *p == pm::kernels::Path::dense;
        const pm::kernels::DenseMachineShape dense{m.dims(), n};
        const pm::kernels::SequencePlan plan =
            is_dense ? pm::kernels::SequencePlan{} : sequence_plan<S>(n, layout);
        const bool slope_kept =
            keep_slope && (is_dense ? dense.keeps_slope() : pm::kernels::keeps_slope(plan));
        py::array_t<S> slope(slope_kept ? shape : std::vector<Index>{0});
        const pm::kernels::Activation sigma = *pm::kernels::activation_of(m.machine().sigma());
        const std::span<const S> as = view(a), bs = view(b);
        const std::span<S> ys = view(y), zs = view(z);
        {
          py::gil_scoped_release unlocked;
          const std::span<S> ss = slope_kept ? view(slope) : std::span<S>();
          if (is_dense)
            pm::kernels::dense_forward<S>(dense, sigma, wv, as, bs, ys, zs, ss);
          else
            pm::kernels::sequence_forward<S>(plan, sigma, wv, as, bs, ys, zs, ss);
        }
        if (keep_slope) return py::make_tuple(y, z, slope_kept ? py::object(slope) : py::none());
        return py::make_tuple(y, z);
      }
    }
    const pm::Function<S> wv = weights<S>(w);
    const pm::Batch<S> a = batch_from<S>(y0, d.space, "y0", 0, layout);
    const pm::Batch<S> b = z0.is_none()
                               ? pm::Batch<S>(a.rows, a.cols)
                               : batch_from<S>(real_array(z0, "z0"), d.space, "z0", n, layout);
    require_exact_bits<S>({&wv, &a.data, &b.data});
    pm::MachineState<S> x;
    {
      py::gil_scoped_release unlocked;
      x = pm::forward(machine<S>(), wv, a, b);
    }
    py::array y = batch_to_numpy(std::move(x.y), d.space, axis, layout),
              z = batch_to_numpy(std::move(x.z), d.space, axis, layout);
    if (keep_slope) return py::make_tuple(y, z, py::none());
    return py::make_tuple(y, z);
  }

  // (∂/∂y0, ∂/∂z0, ∂/∂w) of a loss with gradients (ybar, zbar) at the state
  // (y, z) of forward(y0, z0, w); `state` = (y, z) skips recomputing it.
  template <class S>
  py::tuple backward(const py::object &y0, const py::object &z0, const py::object &ybar,
                     const py::object &zbar, const py::object &w, const py::object &state,
                     bool kernels, StateLayout layout) const {
    require_precision<S>(kernels);
    py::array y, z;
    py::object slope = py::none(); // σ'(y) from forward(keep_slope=True), if given
    if (state.is_none()) {
      pm::require(!y0.is_none(), who(), ": backward: expected y0, or state=(y, z)");
      const py::tuple yz = forward<S>(real_array(y0, "y0"), z0, w, kernels, false, layout);
      y = yz[0];
      z = yz[1];
    } else {
      pm::require(py::isinstance<py::tuple>(state) || py::isinstance<py::list>(state), who(),
                  ": backward: state is a ",
                  std::string(py::str(py::type::of(state).attr("__name__"))),
                  ", expected a tuple (y, z) or (y, z, slope)");
      const py::tuple yz = py::tuple(state);
      pm::require(yz.size() == 2 || yz.size() == 3, who(), ": backward: state has ", yz.size(),
                  " entries, expected (y, z) or (y, z, slope)");
      y = real_array(yz[0], "y");
      z = real_array(yz[1], "z");
      if (yz.size() == 3) slope = yz[2];
    }
    bool axis = false;
    const Index n = batch_size(y, d.space, "y", 0, &axis, layout);
    batch_size(z, d.space, "z", n, nullptr, layout);
    for (const auto &[g, what] : {std::pair{ybar, "ybar"}, std::pair{zbar, "zbar"}})
      if (!g.is_none()) batch_size(real_array(g, what), d.space, what, n, nullptr, layout);
    require_call_bounds(size(), n, !std::is_floating_point_v<S>, who());
    if constexpr (std::is_floating_point_v<S>) {
      if (const auto p = fast_path<S>(kernels)) {
        const Array<S> wa = weight_view<S>(w);
        const std::span<const S> wv = view(wa);
        const std::vector<Index> shape = batch_shape(n, d.space, axis, layout);
        auto zero_or = [&](const py::object &g, const char *what) {
          if (!g.is_none()) return as_array<S>(g, what);
          Array<S> a(shape);
          std::fill_n(a.mutable_data(), a.size(), S(0));
          return a;
        };
        const Array<S> ya = as_array<S>(y, "y"), za = as_array<S>(z, "z");
        if (!slope.is_none())
          batch_size(real_array(slope, "slope"), d.space, "slope", n, nullptr, layout);
        const Array<S> sa =
            slope.is_none() ? Array<S>(std::vector<Index>{0}) : as_array<S>(slope, "slope");
        const Array<S> gy = zero_or(ybar, "ybar"), gz = zero_or(zbar, "zbar");
        py::array_t<S> gy0(shape), gz0(shape);
        std::vector<S> gw(wv.size());
        const Seed<S> &m = seed<S>();
        const pm::kernels::Activation sigma = *pm::kernels::activation_of(m.machine().sigma());
        const std::span<S> gy0s = view(gy0), gz0s = view(gz0);
        {
          py::gil_scoped_release unlocked;
          if (*p == pm::kernels::Path::dense) {
            const pm::kernels::DenseMachineShape s{m.dims(), n};
            if (slope.is_none())
              pm::kernels::dense_dual<S>(s, sigma, wv, view(ya), view(gy), view(gz), gy0s, gz0s);
            else
              pm::kernels::dense_dual<S>(s, wv, view(sa), view(gy), view(gz), gy0s, gz0s);
            pm::kernels::dense_weight_gradient<S>(s, view(za), gy0s, gw);
          } else {
            const pm::kernels::SequencePlan s = sequence_plan<S>(n, layout);
            if (slope.is_none())
              pm::kernels::sequence_dual<S>(s, sigma, wv, view(ya), view(gy), view(gz), gy0s, gz0s);
            else
              pm::kernels::sequence_dual<S>(s, wv, view(sa), view(gy), view(gz), gy0s, gz0s);
            pm::kernels::sequence_weight_gradient<S>(s, view(za), gy0s, gw);
          }
        }
        return py::make_tuple(gy0, gz0, to_numpy<S>(std::move(gw), d.parameters.extents()));
      }
    }
    auto batch_or_zero = [&](const py::object &g, const char *what) {
      if (g.is_none()) return pm::Batch<S>(d.space.size(), n);
      return batch_from<S>(real_array(g, what), d.space, what, n, layout);
    };
    const pm::Function<S> wv = weights<S>(w);
    const pm::MachineState<S> x{batch_from<S>(y, d.space, "y", 0, layout),
                                batch_from<S>(z, d.space, "z", 0, layout)};
    const pm::Batch<S> gy = batch_or_zero(ybar, "ybar"), gz = batch_or_zero(zbar, "zbar");
    require_exact_bits<S>({&wv, &x.y.data, &x.z.data, &gy.data, &gz.data});
    pm::Gradients<S> g;
    {
      py::gil_scoped_release unlocked;
      g = pm::backward(machine<S>(), wv, x, gy, gz);
    }
    return py::make_tuple(batch_to_numpy(std::move(g.y0), d.space, axis, layout),
                          batch_to_numpy(std::move(g.z0), d.space, axis, layout),
                          to_numpy<S>(std::move(g.w), d.parameters.extents()));
  }
};

} // namespace pmach_py
