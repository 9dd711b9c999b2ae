#pragma once
// The pointwise nonlinearities σ of the kernels, with their derivative σ',
// applied to whole blocks of a batch. Each is evaluated by the same code for
// every element, so a result does not depend on where a block starts.
#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <utility>

#include "pm/category/finite_set.hpp"
#include "pm/kernels/eigen.hpp"

namespace pm::kernels {

enum class Activation { identity, tanh, sigmoid };

// Constants of σ used by the error bounds (docs/tolerances.md): sup|σ'|
// (the Lipschitz constant of σ) and sup|σ''| (that of σ').
struct ActivationBounds {
  long double slope;     // sup |σ'|
  long double curvature; // sup |σ''|
};

constexpr ActivationBounds bounds(Activation a) {
  switch (a) {
  case Activation::identity:
    return {1.0L, 0.0L};
  // |tanh''| = 2|tanh| sech² peaks at tanh² = 1/3: 4/(3√3).
  case Activation::tanh:
    return {1.0L, 0.769800358919501L};
  // σ(1−σ)(1−2σ) peaks at σ = 1/2 − 1/(2√3): 1/(6√3).
  case Activation::sigmoid:
    return {0.25L, 0.0962250448649376L};
  }
  return {0.0L, 0.0L};
}

// The absolute errors |σ̂(y) − σ(y)| and |σ̂'(y) − σ'(y)| of the evaluation
// below, in units of the unit roundoff u of T (σ and σ' are bounded by 1).
// float uses Eigen's rational approximation of tanh, double and long double the C
// library. Each constant is the next power of two above twice the maximum
// measured over a sweep of [−20, 20] and of tiny arguments; the sweep is a
// test (tests/kernels/activation.cpp), so a change of library that breaks a
// constant fails it.
struct SigmaError {
  long double value;
  long double derivative;
};

template <class T> constexpr SigmaError sigma_error(Activation a) {
  if (a == Activation::identity) return {0.0L, 0.0L}; // exact: σ' = 1, σ(y) = y
  if constexpr (std::is_same_v<T, float>) {
    return a == Activation::tanh ? SigmaError{16.0L, 32.0L} : SigmaError{8.0L, 8.0L};
  } else {
    return a == Activation::tanh ? SigmaError{4.0L, 8.0L} : SigmaError{4.0L, 4.0L};
  }
}

namespace detail {

// out_j[i] = op(in[i])_j for i < n, for I inputs and O outputs. Where T has a
// vectorised tanh, every element goes through the packet code, the last
// partial packet padded with zeros: Eigen's own assignment would peel
// unaligned elements into scalar code (slow, and in general other bits), so
// the bits of an element would depend on the buffer's alignment. Otherwise
// every element goes through the scalar code.
template <class T, std::size_t O, std::size_t I, class PacketOp, class ScalarOp>
void elementwise(const std::array<T *, O> &out, const std::array<const T *, I> &in, Index n,
                 PacketOp &&packet_op, ScalarOp &&scalar_op) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr Index w = ei::packet_traits<T>::size;
  // f(j) for j < N as the pack f(0), ..., f(N − 1).
  auto each = []<std::size_t N>(std::integral_constant<std::size_t, N>, auto &&f) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) { return std::array{f(J)...}; }
    (std::make_index_sequence<N>{});
  };
  if constexpr (w > 1 && ei::packet_traits<T>::HasTanh) {
    auto step = [&](auto &&load, auto &&store) {
      const auto r = packet_op(each(std::integral_constant<std::size_t, I>{}, load));
      for (std::size_t j = 0; j < O; ++j) store(j, r[j]);
    };
    Index i = 0;
    for (; i + w <= n; i += w)
      step([&](std::size_t j) { return ei::ploadu<P>(in[j] + i); },
           [&](std::size_t j, const P &v) { ei::pstoreu(out[j] + i, v); });
    if (i < n) {
      T tin[I][w] = {}, tout[O][w];
      for (std::size_t j = 0; j < I; ++j) std::copy(in[j] + i, in[j] + n, tin[j]);
      step([&](std::size_t j) { return ei::ploadu<P>(tin[j]); },
           [&](std::size_t j, const P &v) { ei::pstoreu(tout[j], v); });
      for (std::size_t j = 0; j < O; ++j) std::copy(tout[j], tout[j] + (n - i), out[j] + i);
    }
  } else {
    for (Index i = 0; i < n; ++i) {
      const auto r = scalar_op(
          each(std::integral_constant<std::size_t, I>{}, [&](std::size_t j) { return in[j][i]; }));
      for (std::size_t j = 0; j < O; ++j) out[j][i] = r[j];
    }
  }
}

// Each σ as packet and scalar code: σ(y), σ'(y), and both from one
// evaluation of σ. σ' is computed from σ(y) by the same code in both, so the
// slope a forward sweep keeps has the bits of the one a dual sweep would
// recompute. sigmoid is (1 + tanh(y/2))/2, through the same tanh as
// Activation::tanh.
template <class Self> struct SlopeFromBoth {
  template <class T, class V> static V packet_derivative(const V &y) {
    return Self::template packet_both<T>(y)[1];
  }
  template <class T> static T scalar_derivative(T y) { return Self::scalar_both(y)[1]; }
};

struct IdentityOp : SlopeFromBoth<IdentityOp> {
  template <class T, class V> static V packet(const V &y) { return y; }
  template <class T, class V> static std::array<V, 2> packet_both(const V &y) {
    return {y, Eigen::internal::pset1<V>(T(1))};
  }
  template <class T> static T scalar(T y) { return y; }
  template <class T> static std::array<T, 2> scalar_both(T y) { return {y, T(1)}; }
};

struct TanhOp : SlopeFromBoth<TanhOp> {
  template <class T, class V> static V packet(const V &y) { return Eigen::internal::ptanh(y); }
  template <class T, class V> static std::array<V, 2> packet_both(const V &y) {
    namespace ei = Eigen::internal;
    const V t = ei::ptanh(y);
    return {t, ei::psub(ei::pset1<V>(T(1)), ei::pmul(t, t))};
  }
  template <class T> static T scalar(T y) { return std::tanh(y); }
  template <class T> static std::array<T, 2> scalar_both(T y) {
    const T t = std::tanh(y);
    return {t, T(1) - t * t};
  }
};

struct SigmoidOp : SlopeFromBoth<SigmoidOp> {
  template <class T, class V> static V packet(const V &y) {
    namespace ei = Eigen::internal;
    const V half = ei::pset1<V>(T(0.5));
    return ei::pmadd(half, ei::ptanh(ei::pmul(half, y)), half);
  }
  template <class T, class V> static std::array<V, 2> packet_both(const V &y) {
    namespace ei = Eigen::internal;
    const V g = packet<T>(y);
    return {g, ei::pmul(g, ei::psub(ei::pset1<V>(T(1)), g))};
  }
  template <class T> static T scalar(T y) { return T(0.5) + T(0.5) * std::tanh(T(0.5) * y); }
  template <class T> static std::array<T, 2> scalar_both(T y) {
    const T g = scalar(y);
    return {g, g * (T(1) - g)};
  }
};

// Column by column: z = z0 + σ(y); the same and slope = σ'(y); ybar = ybar0 +
// σ'(y) ⊙ zbar; ybar = ybar0 + slope ⊙ zbar.
template <class Op, class T>
void add_value(Index rows, Index cols, Index stride, T *z, const T *z0, const T *y) {
  namespace ei = Eigen::internal;
  for (Index b = 0, o = 0; b < cols; ++b, o += stride)
    elementwise<T, 1, 2>(
        {z + o}, {z0 + o, y + o}, rows,
        [](auto v) { return std::array{ei::padd(v[0], Op::template packet<T>(v[1]))}; },
        [](auto v) { return std::array{v[0] + Op::scalar(v[1])}; });
}

template <class Op, class T>
void add_value_and_slope(Index rows, Index cols, Index stride, T *z, T *slope, const T *z0,
                         const T *y) {
  namespace ei = Eigen::internal;
  for (Index b = 0, o = 0; b < cols; ++b, o += stride)
    elementwise<T, 2, 2>(
        {z + o, slope + o}, {z0 + o, y + o}, rows,
        [](auto v) {
          const auto s = Op::template packet_both<T>(v[1]);
          return std::array{ei::padd(v[0], s[0]), s[1]};
        },
        [](auto v) {
          const auto s = Op::scalar_both(v[1]);
          return std::array{v[0] + s[0], s[1]};
        });
}

template <class Op, class T>
void add_derivative(Index rows, Index cols, Index stride, T *ybar, const T *ybar0, const T *y,
                    const T *zbar) {
  namespace ei = Eigen::internal;
  for (Index b = 0, o = 0; b < cols; ++b, o += stride)
    elementwise<T, 1, 3>(
        {ybar + o}, {ybar0 + o, y + o, zbar + o}, rows,
        [](auto v) {
          return std::array{
              ei::padd(v[0], ei::pmul(Op::template packet_derivative<T>(v[1]), v[2]))};
        },
        [](auto v) { return std::array{v[0] + Op::scalar_derivative(v[1]) * v[2]}; });
}

template <class T>
void add_product(Index rows, Index cols, Index stride, T *ybar, const T *ybar0, const T *slope,
                 const T *zbar) {
  namespace ei = Eigen::internal;
  for (Index b = 0, o = 0; b < cols; ++b, o += stride)
    elementwise<T, 1, 3>(
        {ybar + o}, {ybar0 + o, slope + o, zbar + o}, rows,
        [](auto v) { return std::array{ei::padd(v[0], ei::pmul(v[1], v[2]))}; },
        [](auto v) { return std::array{v[0] + v[1] * v[2]}; });
}

} // namespace detail

// A block of a batch: `rows` consecutive channels of `cols` samples, column
// b starting at offset b · stride.
struct BlockShape {
  Index rows, cols, stride;
};

namespace detail {

// f(Op{}) for the pointwise op of σ = a: one switch for every pass below.
template <class F> void with_op(Activation a, F &&f) {
  switch (a) {
  case Activation::identity:
    return f(IdentityOp{});
  case Activation::tanh:
    return f(TanhOp{});
  case Activation::sigmoid:
    return f(SigmoidOp{});
  }
}

} // namespace detail

// z = z0 + σ(y) on a block.
template <class T>
void add_activation(Activation a, const BlockShape &s, T *z, const T *z0, const T *y) {
  detail::with_op(
      a, [&](auto op) { detail::add_value<decltype(op)>(s.rows, s.cols, s.stride, z, z0, y); });
}

// z = z0 + σ(y) and slope = σ'(y) on a block, from one evaluation of σ: the
// slope a dual sweep reads instead of recomputing σ' (add_slope_product).
template <class T>
void add_activation(Activation a, const BlockShape &s, T *z, T *slope, const T *z0, const T *y) {
  detail::with_op(a, [&](auto op) {
    detail::add_value_and_slope<decltype(op)>(s.rows, s.cols, s.stride, z, slope, z0, y);
  });
}

// ybar = ybar0 + slope ⊙ zbar on a block, at the slope σ'(y) a forward sweep
// kept: the bits of add_activation_derivative at the same y.
template <class T>
void add_slope_product(const BlockShape &s, T *ybar, const T *ybar0, const T *slope,
                       const T *zbar) {
  detail::add_product(s.rows, s.cols, s.stride, ybar, ybar0, slope, zbar);
}

// ybar = ybar0 + σ'(y) ⊙ zbar on a block; σ' is recomputed from y
// (tanh' = 1 − tanh², sigmoid' = σ(1 − σ)).
template <class T>
void add_activation_derivative(Activation a, const BlockShape &s, T *ybar, const T *ybar0,
                               const T *y, const T *zbar) {
  detail::with_op(a, [&](auto op) {
    detail::add_derivative<decltype(op)>(s.rows, s.cols, s.stride, ybar, ybar0, y, zbar);
  });
}

} // namespace pm::kernels
