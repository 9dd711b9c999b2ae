#pragma once
// Small dense matrices for the oracles: explicit Jacobians and an exact
// linear solve. Gaussian elimination with row pivoting is exact over
// rationals (any nonzero pivot will do); over floating types it pivots on the
// largest magnitude. Meant for the small machines of tests, not for speed.
#include <cmath>
#include <utility>

#include "pm/category/span.hpp"

namespace pm {

template <class S> struct Matrix {
  Index rows = 0;
  Index cols = 0;
  std::vector<S> data; // row-major

  Matrix() = default;
  Matrix(Index r, Index c) : rows(r), cols(c), data(r * c, S(0)) {}

  static Matrix identity(Index n) {
    Matrix m(n, n);
    for (Index i = 0; i < n; ++i) m(i, i) = S(1);
    return m;
  }

  S &operator()(Index i, Index j) { return data[i * cols + j]; }
  const S &operator()(Index i, Index j) const { return data[i * cols + j]; }

  friend bool operator==(const Matrix &, const Matrix &) = default;
};

template <class S> Matrix<S> transpose(const Matrix<S> &a) {
  Matrix<S> t(a.cols, a.rows);
  for (Index i = 0; i < a.rows; ++i)
    for (Index j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

template <class S> Function<S> act(const Matrix<S> &a, const Function<S> &v) {
  require_size(v, a.cols, "act: matrix argument");
  Function<S> out(a.rows, S(0));
  for (Index i = 0; i < a.rows; ++i)
    for (Index j = 0; j < a.cols; ++j) out[i] += a(i, j) * v[j];
  return out;
}

// The matrix of L = t_!^μ ∘ s*: entry (y, x) = Σ_{s(e)=x, t(e)=y} μ(e).
template <class S> Matrix<S> matrix(const Span<S> &a) {
  a.validate("matrix: span");
  Matrix<S> m(a.target(), a.source());
  for (Index e = 0; e < a.apex(); ++e) m(a.t(e), a.s(e)) += a.mu[e];
  return m;
}

// id − A for a square A.
template <class S> Matrix<S> identity_minus(const Matrix<S> &a) {
  require(a.rows == a.cols, "identity_minus: matrix is ", a.rows, " x ", a.cols,
          ", expected square");
  Matrix<S> m = Matrix<S>::identity(a.rows);
  for (Index k = 0; k < m.data.size(); ++k) m.data[k] -= a.data[k];
  return m;
}

// The solution x of A x = b; throws when A is singular.
template <class S> Function<S> solve(Matrix<S> a, Function<S> b) {
  require(a.rows == a.cols, "solve: matrix is ", a.rows, " x ", a.cols, ", expected square");
  require_size(b, a.rows, "solve: right-hand side");
  const Index n = a.rows;
  auto magnitude = [](const S &v) {
    using std::abs;
    return S(abs(v));
  };
  for (Index c = 0; c < n; ++c) {
    Index pivot = c;
    for (Index r = c + 1; r < n; ++r)
      if (magnitude(a(r, c)) > magnitude(a(pivot, c))) pivot = r;
    require(a(pivot, c) != S(0), "solve: matrix is singular (no pivot in column ", c, ")");
    if (pivot != c) {
      for (Index j = 0; j < n; ++j) std::swap(a(c, j), a(pivot, j));
      std::swap(b[c], b[pivot]);
    }
    for (Index r = c + 1; r < n; ++r) {
      const S factor = a(r, c) / a(c, c);
      if (factor == S(0)) continue;
      for (Index j = c; j < n; ++j) a(r, j) -= factor * a(c, j);
      b[r] -= factor * b[c];
    }
  }
  Function<S> x(n, S(0));
  for (Index r = n; r-- > 0;) {
    S acc = b[r];
    for (Index j = r + 1; j < n; ++j) acc -= a(r, j) * x[j];
    x[r] = acc / a(r, r);
  }
  return x;
}

} // namespace pm
