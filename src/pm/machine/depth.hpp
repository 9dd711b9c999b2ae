#pragma once
// Depth checks. f has depth ≤ D for a grading d when π_k f = π_k f π_{k−1}
// for every k: outputs of grade ≤ k depend only on inputs of grade < k.
//  - Exactly, for a linear map given by a matrix (or a span, parametric or
//    not): every nonzero entry (y, x) has d(x) < d(y), i.e. the matrix is
//    strictly block-triangular for the grading.
//  - Randomly, for a black-box machine: for each level k, random x and x′
//    that agree below grade k must give outputs that are bit-identical at
//    every grade ≤ k.
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>

#include "pm/category/parametric_span.hpp"
#include "pm/machine/grading.hpp"
#include "pm/machine/machine.hpp"
#include "pm/numeric/uniform.hpp"

namespace pm {

// Equality of representations: == for exact scalars, equal bytes for floats
// (so that 0.0 and −0.0 differ and a NaN equals itself).
template <class S> bool bit_identical(const S &a, const S &b) {
  if constexpr (std::is_floating_point_v<S>)
    return std::memcmp(&a, &b, sizeof(S)) == 0;
  else
    return a == b;
}

template <class S> bool has_depth(const Matrix<S> &a, const Grading &d) {
  d.require_covers(a.rows, "has_depth: matrix rows");
  d.require_covers(a.cols, "has_depth: matrix columns");
  for (Index y = 0; y < a.rows; ++y)
    for (Index x = 0; x < a.cols; ++x)
      if (a(y, x) != S(0) && d(x) >= d(y)) return false;
  return true;
}

template <class S> bool has_depth(const Span<S> &a, const Grading &d) {
  return has_depth(matrix(a), d);
}

// The layer L_w as a span: weights μ(e) w(π(e)).
template <class S> Span<S> weighted_span(const ParametricSpan<S> &a, const Function<S> &w) {
  a.validate("weighted_span");
  return Span<S>{a.span.s, a.span.t, hadamard(a.span.mu, pullback(a.pi, w))};
}

template <class S>
bool has_depth(const ParametricSpan<S> &a, const Function<S> &w, const Grading &d) {
  return has_depth(weighted_span(a, w), d);
}

// Random inputs are k/4 with k uniform in −8..8, drawn from a generator seeded
// with `seed`, so the check is deterministic.
template <class S>
bool has_depth_randomized(const Machine<S> &m, const Grading &d, Index trials, std::uint64_t seed) {
  d.require_covers(m.n, "has_depth_randomized: machine");
  std::mt19937_64 rng(seed);
  UniformInt<int> k(-8, 8);
  auto draw = [&] { return S(k(rng)) / S(4); };
  for (Index level = 1; level <= d.levels(); ++level)
    for (Index trial = 0; trial < trials; ++trial) {
      Function<S> x(m.n), x2(m.n);
      for (Index i = 0; i < m.n; ++i) {
        x[i] = draw();
        x2[i] = d(i) >= level ? draw() : x[i];
      }
      const Function<S> fx = m(x), fx2 = m(x2);
      for (Index i = 0; i < m.n; ++i)
        if (d(i) <= level && !bit_identical(fx[i], fx2[i])) return false;
    }
  return true;
}

} // namespace pm
