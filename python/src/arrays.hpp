#pragma once
// NumPy arrays in and out of the library's Function and Batch. A batch of n
// functions on a space of shape (d0, …) is the C-order array (n, d0, …),
// which is Batch's storage (docs/formats.md, "Layouts"): arrays of the
// kernel's dtype that are already C-contiguous are read in place, and
// results are handed to NumPy without a copy (the array owns the vector).
// Shape errors are the messages of the .npy readers, with the argument's
// name where the CLI names the file.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <span>

#include "pm/io/batch_npy.hpp"

namespace pmach_py {

namespace py = pybind11;
using pm::Index;
using pm::Shape;

// An array of T in C order: a view when the input already is one, else a
// converted copy.
template <class T> using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

// Real numbers only: NumPy's cast would drop a complex value's imaginary
// part, or read a string's digits, without a word.
inline void require_real(const py::handle &h, const std::string &what) {
  const py::array a = py::array::ensure(h);
  if (!a)
    throw pm::Error(what + ": expected an array of numbers, found " +
                    std::string(py::str(py::type::of(h).attr("__name__"))));
  const char kind = a.dtype().kind();
  if (kind == 'c')
    throw pm::Error(what + ": has complex values (dtype " + std::string(py::str(a.dtype())) +
                    "), expected real numbers");
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f')
    throw pm::Error(what + ": has dtype " + std::string(py::str(a.dtype())) +
                    ", expected an array of real numbers");
}

// Anything NumPy reads as an array of real numbers (lists, tensors), named
// `what` in the error otherwise.
inline py::array real_array(const py::handle &h, const std::string &what) {
  require_real(h, what);
  return py::array::ensure(h);
}

template <class T> Array<T> as_array(const py::handle &h, const std::string &what) {
  require_real(h, what);
  return Array<T>::ensure(h);
}

// The elements of an array in C order, for the kernels.
template <class T> std::span<const T> view(const Array<T> &a) {
  return {a.data(), std::size_t(a.size())};
}
template <class T> std::span<T> view(py::array_t<T> &a) {
  return {a.mutable_data(), std::size_t(a.size())};
}

inline std::vector<Index> shape_of(const py::array &a) {
  return std::vector<Index>(a.shape(), a.shape() + a.ndim());
}

inline std::string tuple_text(const std::vector<Index> &e, const char *first = nullptr) {
  std::string s = "(";
  if (first) s += first;
  for (Index k = 0; k < e.size(); ++k) s += (k || first ? ", " : "") + std::to_string(e[k]);
  return s + (e.size() == 1 && !first ? ",)" : ")");
}

// The batch size of an array (n, *space), or 0 for an array of shape
// `space` (one sample without the batch axis); `expected` = 0 accepts any n.
inline Index batch_size(const py::array &a, const Shape &space, const std::string &what,
                        Index expected = 0, bool *has_axis = nullptr) {
  const std::vector<Index> s = shape_of(a);
  Index n = 1;
  bool axis = false;
  if (s != space.extents()) {
    axis = !s.empty() && std::vector<Index>(s.begin() + 1, s.end()) == space.extents();
    pm::require(axis, what, ": shape ", tuple_text(s), ", expected ",
                tuple_text(space.extents(), "batch"), " or without the batch axis ",
                tuple_text(space.extents()));
    n = s[0];
  }
  pm::require(expected == 0 || n == expected, what, ": has ", n, " samples, expected ", expected);
  if (has_axis) *has_axis = axis;
  return n;
}

inline void require_shape(const py::array &a, const Shape &shape, const std::string &what) {
  pm::require(shape_of(a) == shape.extents(), what, ": shape ", tuple_text(shape_of(a)),
              ", expected ", tuple_text(shape.extents()));
}

// The scalar of a NumPy value: exact for pm::Rational (a double is the dyadic
// rational it is), rounded to nearest for float.
template <class S> S scalar_from(double v) { return pm::io::from_double<S>(v); }

template <class S> std::vector<S> values_from(const py::array &a, const std::string &what) {
  const Array<double> d = as_array<double>(a, what);
  std::vector<S> out(d.size());
  const double *p = d.data();
  for (Index k = 0; k < out.size(); ++k) out[k] = scalar_from<S>(p[k]);
  return out;
}

template <class S>
pm::Batch<S> batch_from(const py::array &a, const Shape &space, const std::string &what,
                        Index expected = 0) {
  pm::Batch<S> b;
  b.cols = batch_size(a, space, what, expected);
  b.rows = space.size();
  b.data = values_from<S>(a, what);
  return b;
}

template <class S>
pm::Function<S> function_from(const py::array &a, const Shape &shape, const std::string &what) {
  require_shape(a, shape, what);
  return values_from<S>(a, what);
}

// A vector handed to NumPy without a copy: the array keeps it alive.
template <class T>
py::array_t<T> owning_array(std::vector<T> &&v, const std::vector<Index> &shape) {
  auto *owned = new std::vector<T>(std::move(v));
  py::capsule keep(owned, [](void *p) { delete static_cast<std::vector<T> *>(p); });
  return py::array_t<T>(std::vector<py::ssize_t>(shape.begin(), shape.end()), owned->data(), keep);
}

// Results are float32 for float, else float64 (exact values rounded once).
template <class S> py::array to_numpy(std::vector<S> &&v, const std::vector<Index> &shape) {
  if constexpr (std::is_floating_point_v<S>) {
    return owning_array<S>(std::move(v), shape);
  } else {
    std::vector<double> d;
    d.reserve(v.size());
    for (const S &x : v) d.push_back(pm::io::to_double(x));
    return owning_array<double>(std::move(d), shape);
  }
}

inline std::vector<Index> batch_shape(Index n, const Shape &space, bool batch_axis) {
  std::vector<Index> s;
  if (batch_axis) s.push_back(n);
  s.insert(s.end(), space.extents().begin(), space.extents().end());
  return s;
}

template <class S> py::array batch_to_numpy(pm::Batch<S> &&b, const Shape &space, bool batch_axis) {
  const Index n = b.cols;
  return to_numpy<S>(std::move(b.data), batch_shape(n, space, batch_axis));
}

} // namespace pmach_py
