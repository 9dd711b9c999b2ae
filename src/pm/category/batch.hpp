#pragma once
// A batch of functions on X: a |X| × n matrix whose column b is the b-th
// sample, stored column after column. A layer acts on a batch column-wise.
#include <functional>

#include "pm/category/parametric_span.hpp"

namespace pm {

template <class S> struct Batch {
  Index rows = 0; // |X|
  Index cols = 0; // batch size
  std::vector<S> data;

  Batch() = default;
  Batch(Index r, Index c, const S &fill = S(0)) : rows(r), cols(c), data(r * c, fill) {}

  static Batch from_columns(Index r, const std::vector<Function<S>> &columns) {
    Batch m(r, columns.size());
    for (Index b = 0; b < columns.size(); ++b) m.set_column(b, columns[b]);
    return m;
  }

  S &operator()(Index i, Index b) { return data[b * rows + i]; }
  const S &operator()(Index i, Index b) const { return data[b * rows + i]; }

  Function<S> column(Index b) const {
    require(b < cols, "Batch::column: column ", b, ", expected < ", cols);
    return Function<S>(data.begin() + b * rows, data.begin() + (b + 1) * rows);
  }
  void set_column(Index b, const Function<S> &v) {
    require(b < cols, "Batch::set_column: column ", b, ", expected < ", cols);
    require_size(v, rows, "Batch::set_column: column");
    std::copy(v.begin(), v.end(), data.begin() + b * rows);
  }

  friend bool operator==(const Batch &, const Batch &) = default;
};

// Applies a function-to-function operator to every column of a batch.
template <class S, class Op> Batch<S> map_columns(const Batch<S> &in, Index out_rows, Op &&op) {
  Batch<S> out(out_rows, in.cols);
  for (Index b = 0; b < in.cols; ++b) out.set_column(b, op(in.column(b)));
  return out;
}

template <class S> Batch<S> act(const Span<S> &a, const Batch<S> &phi) {
  require(phi.rows == a.source(), "act: batch has ", phi.rows,
          " rows, expected the span source size ", a.source());
  return map_columns(phi, a.target(), [&](const Function<S> &x) { return act(a, x); });
}

template <class S>
Batch<S> act(const ParametricSpan<S> &a, const Function<S> &w, const Batch<S> &phi) {
  require(phi.rows == a.source(), "act: batch has ", phi.rows,
          " rows, expected the span source size ", a.source());
  return map_columns(phi, a.target(), [&](const Function<S> &x) { return act(a, w, x); });
}

// Σ_b ∇_w ⟨g_b, L_w φ_b⟩: the parameter gradient of a batch, summed over its
// columns in order.
template <class S>
Function<S> parameter_gradient(const ParametricSpan<S> &a, const Batch<S> &phi, const Batch<S> &g) {
  require(phi.rows == a.source() && g.rows == a.target() && phi.cols == g.cols,
          "parameter_gradient: batches of ", phi.rows, " × ", phi.cols, " and ", g.rows, " × ",
          g.cols, ", expected ", a.source(), " and ", a.target(), " rows and equal columns");
  Function<S> gw(a.parameters(), S(0));
  for (Index b = 0; b < phi.cols; ++b)
    gw = add(gw, parameter_gradient(a, phi.column(b), g.column(b)));
  return gw;
}

} // namespace pm
