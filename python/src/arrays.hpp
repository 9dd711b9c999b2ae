#pragma once
// NumPy arrays in and out of the library's Function and Batch. A batch of n
// functions on a space of shape (d0, …) is the C-order array (n, d0, …),
// which is Batch's storage (docs/formats.md, "Layouts"); a machine's states
// may come channels first instead (StateLayout). Arrays of the kernel's
// dtype that are already C-contiguous are read in place, and results are
// handed to NumPy without a copy (the array owns the vector).
// Shape errors are the messages of the .npy readers, with the argument's
// name where the CLI names the file.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
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

// How a batch of states lies in an array. A machine's space is
// (*positions, N), its channels last (the library's layout, position-major);
// channels_first puts the last axis first, (N, *positions), channel-major as
// PyTorch's NCHW. A space of one axis (a dense machine's) is the same in both.
struct StateLayout {
  bool channels_first = false;

  // The shape of one sample on `space` in this layout.
  std::vector<Index> sample(const Shape &space) const {
    std::vector<Index> e = space.extents();
    if (channels_first && !e.empty()) std::rotate(e.begin(), e.end() - 1, e.end());
    return e;
  }
  // Said after a shape error, where the expected shape is this layout's.
  const char *note() const { return channels_first ? " with channels_first=True" : ""; }

  // The values of n samples on `space` (C order) from this layout to the
  // library's, and back: each sample's N × L matrix transposed.
  template <class T> std::vector<T> to_library(std::vector<T> &&v, const Shape &space) const {
    return transposed(std::move(v), space, true);
  }
  template <class T> std::vector<T> from_library(std::vector<T> &&v, const Shape &space) const {
    return transposed(std::move(v), space, false);
  }

private:
  template <class T>
  std::vector<T> transposed(std::vector<T> &&v, const Shape &space, bool to_library) const {
    if (!channels_first || space.rank() < 2 || space.size() == 0) return std::move(v);
    const Index channels = space.extents().back(), positions = space.size() / channels;
    const Index rows = to_library ? channels : positions, cols = to_library ? positions : channels;
    std::vector<T> out(v.size());
    for (Index b = 0; b < v.size(); b += rows * cols)
      for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c) out[b + c * rows + r] = std::move(v[b + r * cols + c]);
    return out;
  }
};

// The batch size of an array (n, *sample), sample the shape of one sample on
// `space` in `layout`, or 0 for an array of shape `sample` (one sample
// without the batch axis); `expected` = 0 accepts any n.
inline Index batch_size(const py::array &a, const Shape &space, const std::string &what,
                        Index expected = 0, bool *has_axis = nullptr, StateLayout layout = {}) {
  const std::vector<Index> s = shape_of(a), sample = layout.sample(space);
  Index n = 1;
  bool axis = false;
  if (s != sample) {
    axis = !s.empty() && std::vector<Index>(s.begin() + 1, s.end()) == sample;
    pm::require(axis, what, ": shape ", tuple_text(s), ", expected ", tuple_text(sample, "batch"),
                " or without the batch axis ", tuple_text(sample), layout.note());
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
                        Index expected = 0, StateLayout layout = {}) {
  pm::Batch<S> b;
  b.cols = batch_size(a, space, what, expected, nullptr, layout);
  b.rows = space.size();
  b.data = layout.to_library(values_from<S>(a, what), space);
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

inline std::vector<Index> batch_shape(Index n, const Shape &space, bool batch_axis,
                                      StateLayout layout = {}) {
  std::vector<Index> s;
  if (batch_axis) s.push_back(n);
  const std::vector<Index> sample = layout.sample(space);
  s.insert(s.end(), sample.begin(), sample.end());
  return s;
}

template <class S>
py::array batch_to_numpy(pm::Batch<S> &&b, const Shape &space, bool batch_axis,
                         StateLayout layout = {}) {
  const Index n = b.cols;
  return to_numpy<S>(layout.from_library(std::move(b.data), space),
                     batch_shape(n, space, batch_axis, layout));
}

} // namespace pmach_py
