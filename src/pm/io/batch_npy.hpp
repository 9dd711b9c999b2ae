#pragma once
// Functions and batches of functions on shaped spaces as .npy arrays. A batch
// of n functions on a space of shape (d_0, …) is the C-order array
// (n, d_0, …): sample b is row b, which is exactly Batch's column-major
// storage. An array of shape (d_0, …) alone is read as a batch of one.
// Values convert exactly into pm::Rational; into float they round to nearest.
#include "pm/category/batch.hpp"
#include "pm/io/bounds.hpp"
#include "pm/io/npy.hpp"

namespace pm::io {

template <class S> S from_double(double v) { return S(v); }

template <class S> double to_double(const S &v) {
  if constexpr (std::is_floating_point_v<S>)
    return double(v);
  else
    return v.template convert_to<double>();
}

// `expected_batch` = 0 accepts any batch size.
template <class S>
Batch<S> batch_from_npy(const NpyArray &a, const Shape &space, const std::string &path,
                        Index expected_batch = 0) {
  Index batch = 1;
  if (a.shape != space.extents()) {
    const bool ok = !a.shape.empty() &&
                    std::vector<Index>(a.shape.begin() + 1, a.shape.end()) == space.extents();
    std::string want = "(batch";
    for (Index e : space.extents()) want += ", " + std::to_string(e);
    require(ok, path, ": npy field 'shape': expected ", want, ") or without the batch axis");
    batch = a.shape[0];
  }
  require_batch(batch, space.size(), path);
  require(expected_batch == 0 || batch == expected_batch, path, ": npy field 'shape': has ", batch,
          " samples, expected ", expected_batch);
  Batch<S> out(space.size(), batch);
  for (Index k = 0; k < out.data.size(); ++k) out.data[k] = from_double<S>(a.data[k]);
  return out;
}

// `with_batch_axis` = false writes a single sample without the batch axis.
template <class S>
NpyArray batch_to_npy(const Batch<S> &b, const Shape &space, Dtype dtype, bool with_batch_axis) {
  NpyArray a;
  a.dtype = dtype;
  if (with_batch_axis) a.shape.push_back(b.cols);
  a.shape.insert(a.shape.end(), space.extents().begin(), space.extents().end());
  for (const S &v : b.data) a.data.push_back(to_double(v));
  return a;
}

template <class S>
Function<S> function_from_npy(const NpyArray &a, const Shape &space, const std::string &path) {
  std::string want = "(";
  for (Index e : space.extents()) want += std::to_string(e) + ", ";
  require(a.shape == space.extents(), path, ": npy field 'shape': expected ", want, ")");
  Function<S> f;
  for (double v : a.data) f.push_back(from_double<S>(v));
  return f;
}

template <class S> NpyArray function_to_npy(const Function<S> &f, const Shape &space, Dtype dtype) {
  NpyArray a{space.extents(), {}, dtype};
  for (const S &v : f) a.data.push_back(to_double(v));
  return a;
}

inline void write_npy(const std::string &path, const NpyArray &a) {
  write_npy(path, a.shape, a.data, a.dtype);
}

} // namespace pm::io
