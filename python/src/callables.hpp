#pragma once
// Python callables as implementations under test: a layer given by its
// forward (and, when supplied, its transpose and parameter gradient) as a
// pm::Layer over double, and a machine given by its forward (and backward).
// The callables take and return NumPy arrays in the model's shapes (batch
// axis first); pmach/_adapters.py turns PyTorch functions into such
// callables. Every call checks the returned shape, so a wrong shape is a
// one-line error naming the callable, never a silent misreading. Each call
// goes through call_python: a pending signal stops the run between calls,
// and a KeyboardInterrupt or SystemExit raised inside reaches Python as
// raised, not as the implementation's failure (interrupt.hpp).
#include "arrays.hpp"
#include "interrupt.hpp"
#include "pm/machine/backward.hpp"
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

// A returned tuple (or list) of `size` entries.
inline py::tuple returned_tuple(const py::object &r, std::size_t size, const std::string &what,
                                const char *expected) {
  pm::require(py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r), what, ": returned ",
              std::string(py::str(py::type::of(r).attr("__name__"))), ", expected a tuple ",
              expected);
  const py::tuple t = py::tuple(r);
  pm::require(t.size() == size, what, ": returned ", t.size(), " values, expected ", expected);
  return t;
}

template <class S> py::array batch_arg(const pm::Batch<S> &b, const Shape &space) {
  return to_numpy<S>(std::vector<S>(b.data), batch_shape(b.cols, space, true));
}

inline py::array function_arg(const pm::Function<double> &f, const Shape &shape) {
  return to_numpy<double>(pm::Function<double>(f), shape.extents());
}

// A layer implemented in Python by its forward(w, x) → y alone: what span
// recovery needs (pm::ForwardLayer). One call per batch of probes.
struct PyForwardLayer {
  using scalar_type = double;
  Shape source, target, parameters;
  py::object forward;
  std::string name;

  Index source_size() const { return source.size(); }
  Index target_size() const { return target.size(); }
  Index parameter_size() const { return parameters.size(); }

  pm::Batch<double> apply_batch(const pm::Function<double> &w, const pm::Batch<double> &xs) const {
    return returned_batch(call_python(forward, function_arg(w, parameters), batch_arg(xs, source)),
                          target, xs.cols, name + "(w, x)");
  }
  pm::Function<double> apply(const pm::Function<double> &w, const pm::Function<double> &x) const {
    return apply_batch(w, pm::Batch<double>::from_columns(source.size(), {x})).data;
  }
};

// With transpose(w, g) → x-shaped and gradient(x, g) → w-shaped (summed
// over the batch) it is a pm::Layer, and the adjoint laws apply.
struct PyLayer : PyForwardLayer {
  py::object transpose, gradient;

  pm::Function<double> apply_transpose(const pm::Function<double> &w,
                                       const pm::Function<double> &g) const {
    const pm::Batch<double> gb = pm::Batch<double>::from_columns(target.size(), {g});
    return returned_batch(
               call_python(transpose, function_arg(w, parameters), batch_arg(gb, target)), source,
               1, "transpose(w, g)")
        .data;
  }
  pm::Function<double> parameter_gradient(const pm::Function<double> &x,
                                          const pm::Function<double> &g) const {
    const pm::Batch<double> xb = pm::Batch<double>::from_columns(source.size(), {x}),
                            gb = pm::Batch<double>::from_columns(target.size(), {g});
    const py::object r = call_python(gradient, batch_arg(xb, source), batch_arg(gb, target));
    const Array<double> a = as_array<double>(r, "gradient(x, g) returned");
    pm::require(shape_of(a) == parameters.extents(), "gradient(x, g): returned shape ",
                tuple_text(shape_of(a)), ", expected ", tuple_text(parameters.extents()));
    return pm::Function<double>(a.data(), a.data() + a.size());
  }
};

static_assert(pm::Layer<PyLayer>);

// A machine implemented in Python: forward(w, y0, z0) → (y, z) on arrays
// (n, *space), and optionally backward(w, y0, z0, ybar, zbar) →
// (grad_y0, grad_z0, grad_w) with grad_w summed over the batch.
struct PyMachine {
  using scalar_type = double;
  Shape space, parameters;
  py::object forward_fn, backward_fn;
  std::string name;

  std::pair<pm::Batch<double>, pm::Batch<double>> forward(const pm::Function<double> &w,
                                                          const pm::Batch<double> &y0,
                                                          const pm::Batch<double> &z0) const {
    const std::string what = name + "(w, y0, z0)";
    const py::tuple yz = returned_tuple(call_python(forward_fn, function_arg(w, parameters),
                                                    batch_arg(y0, space), batch_arg(z0, space)),
                                        2, what, "(y, z)");
    return {returned_batch(yz[0], space, y0.cols, what + "[0]"),
            returned_batch(yz[1], space, y0.cols, what + "[1]")};
  }
};

struct PyMachineWithBackward : PyMachine {
  pm::Gradients<double> backward(const pm::Function<double> &w, const pm::Batch<double> &y0,
                                 const pm::Batch<double> &z0, const pm::Batch<double> &gy,
                                 const pm::Batch<double> &gz) const {
    const std::string what = "backward(w, y0, z0, ybar, zbar)";
    const py::tuple g = returned_tuple(call_python(backward_fn, function_arg(w, parameters),
                                                   batch_arg(y0, space), batch_arg(z0, space),
                                                   batch_arg(gy, space), batch_arg(gz, space)),
                                       3, what, "(grad_y0, grad_z0, grad_w)");
    const Array<double> gw = as_array<double>(g[2], what + "[2]");
    pm::require(shape_of(gw) == parameters.extents(), what, "[2]: returned shape ",
                tuple_text(shape_of(gw)), ", expected ", tuple_text(parameters.extents()));
    return {returned_batch(g[0], space, y0.cols, what + "[0]"),
            returned_batch(g[1], space, y0.cols, what + "[1]"),
            pm::Function<double>(gw.data(), gw.data() + gw.size()), pm::Batch<double>()};
  }
};

} // namespace pmach_py
