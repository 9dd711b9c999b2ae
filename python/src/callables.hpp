#pragma once
// Python callables as implementations under test: a layer given by its
// forward (and, when supplied, its transpose and parameter gradient) as a
// pm::Layer over double, and a machine given by its forward (and backward).
// The callables take and return NumPy arrays in the model's shapes (batch
// axis first); pmach/_adapters.py turns PyTorch functions into such
// callables. Every call checks the returned shape, so a wrong shape is a
// one-line error naming the callable, never a silent misreading.
#include "arrays.hpp"
#include "pm/validate/layer.hpp"

namespace pmach_py {

inline std::string callable_name(const py::object &f, const char *fallback) {
  if (py::hasattr(f, "__qualname__")) return py::str(f.attr("__qualname__"));
  return fallback;
}

// The result of a call as n samples on `space`.
inline pm::Batch<double> returned_batch(const py::object &r, const Shape &space, Index n,
                                        const std::string &what) {
  const std::vector<Index> want = batch_shape(n, space, true);
  const Array<double> a = as_array<double>(r, what + " returned");
  pm::require(shape_of(a) == want, what, ": returned shape ", tuple_text(shape_of(a)),
              ", expected ", tuple_text(want));
  pm::Batch<double> b(space.size(), n);
  std::copy_n(a.data(), b.data.size(), b.data.begin());
  return b;
}

template <class S> py::array batch_arg(const pm::Batch<S> &b, const Shape &space) {
  return to_numpy<S>(std::vector<S>(b.data), batch_shape(b.cols, space, true));
}

inline py::array function_arg(const pm::Function<double> &f, const Shape &shape) {
  return to_numpy<double>(pm::Function<double>(f), shape.extents());
}

// A layer implemented in Python: forward(w, x) → y, and optionally
// transpose(w, g) → x-shaped and gradient(x, g) → w-shaped (summed over
// the batch). Without transpose and gradient it is only a forward layer.
struct PyLayer {
  using scalar_type = double;
  Shape source, target, parameters;
  py::object forward, transpose, gradient; // transpose, gradient: None when absent
  std::string name;

  Index source_size() const { return source.size(); }
  Index target_size() const { return target.size(); }
  Index parameter_size() const { return parameters.size(); }

  pm::Batch<double> apply_batch(const pm::Function<double> &w, const pm::Batch<double> &xs) const {
    return returned_batch(forward(function_arg(w, parameters), batch_arg(xs, source)), target,
                          xs.cols, name + "(w, x)");
  }
  pm::Function<double> apply(const pm::Function<double> &w, const pm::Function<double> &x) const {
    return apply_batch(w, pm::Batch<double>::from_columns(source.size(), {x})).data;
  }
  pm::Function<double> apply_transpose(const pm::Function<double> &w,
                                       const pm::Function<double> &g) const {
    require_given(transpose, "transpose");
    const pm::Batch<double> gb = pm::Batch<double>::from_columns(target.size(), {g});
    return returned_batch(transpose(function_arg(w, parameters), batch_arg(gb, target)), source, 1,
                          "transpose(w, g)")
        .data;
  }
  pm::Function<double> parameter_gradient(const pm::Function<double> &x,
                                          const pm::Function<double> &g) const {
    require_given(gradient, "gradient");
    const pm::Batch<double> xb = pm::Batch<double>::from_columns(source.size(), {x}),
                            gb = pm::Batch<double>::from_columns(target.size(), {g});
    const py::object r = gradient(batch_arg(xb, source), batch_arg(gb, target));
    const Array<double> a = as_array<double>(r, "gradient(x, g) returned");
    pm::require(shape_of(a) == parameters.extents(), "gradient(x, g): returned shape ",
                tuple_text(shape_of(a)), ", expected ", tuple_text(parameters.extents()));
    return pm::Function<double>(a.data(), a.data() + a.size());
  }

  void require_given(const py::object &f, const char *what) const {
    pm::require(!f.is_none(), name, ": no ", what, " was given");
  }
};

static_assert(pm::Layer<PyLayer>);

} // namespace pmach_py
