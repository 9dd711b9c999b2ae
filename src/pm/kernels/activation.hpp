#pragma once
// The pointwise nonlinearities σ of the kernels, with their derivative σ',
// applied to whole blocks of a batch. Each is evaluated by the same code for
// every element, so a result does not depend on where a block starts.
#include <algorithm>
#include <cmath>
#include <type_traits>

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

// out[i] = op(a[i], b[i], c[i]) for i < n. Where T has a vectorised tanh,
// every element goes through the packet code, the last partial packet
// padded with zeros: Eigen's own assignment would peel unaligned elements
// into scalar code (slow, and in general other bits), so the bits of an
// element would depend on the buffer's alignment. Otherwise every element
// goes through the scalar code.
template <class T, class PacketOp, class ScalarOp>
void elementwise(T *out, const T *a, const T *b, const T *c, Index n, PacketOp &&packet_op,
                 ScalarOp &&scalar_op) {
  namespace ei = Eigen::internal;
  using P = typename ei::packet_traits<T>::type;
  constexpr Index w = ei::packet_traits<T>::size;
  if constexpr (w > 1 && ei::packet_traits<T>::HasTanh) {
    Index i = 0;
    for (; i + w <= n; i += w)
      ei::pstoreu(out + i,
                  packet_op(ei::ploadu<P>(a + i), ei::ploadu<P>(b + i), ei::ploadu<P>(c + i)));
    if (i < n) {
      T ta[w] = {}, tb[w] = {}, tc[w] = {}, to[w];
      std::copy(a + i, a + n, ta);
      std::copy(b + i, b + n, tb);
      std::copy(c + i, c + n, tc);
      ei::pstoreu(to, packet_op(ei::ploadu<P>(ta), ei::ploadu<P>(tb), ei::ploadu<P>(tc)));
      std::copy(to, to + (n - i), out + i);
    }
  } else {
    for (Index i = 0; i < n; ++i) out[i] = scalar_op(a[i], b[i], c[i]);
  }
}

// Each σ as packet and scalar code: σ(y) and σ'(y). sigmoid is
// (1 + tanh(y/2))/2, through the same tanh as Activation::tanh.
struct IdentityOp {
  template <class T, class V> static V packet(const V &y) { return y; }
  template <class T, class V> static V packet_derivative(const V &) {
    return Eigen::internal::pset1<V>(T(1));
  }
  template <class T> static T scalar(T y) { return y; }
  template <class T> static T scalar_derivative(T) { return T(1); }
};

struct TanhOp {
  template <class T, class V> static V packet(const V &y) { return Eigen::internal::ptanh(y); }
  template <class T, class V> static V packet_derivative(const V &y) {
    namespace ei = Eigen::internal;
    const V t = ei::ptanh(y);
    return ei::psub(ei::pset1<V>(T(1)), ei::pmul(t, t));
  }
  template <class T> static T scalar(T y) { return std::tanh(y); }
  template <class T> static T scalar_derivative(T y) {
    const T t = std::tanh(y);
    return T(1) - t * t;
  }
};

struct SigmoidOp {
  template <class T, class V> static V packet(const V &y) {
    namespace ei = Eigen::internal;
    const V half = ei::pset1<V>(T(0.5));
    return ei::pmadd(half, ei::ptanh(ei::pmul(half, y)), half);
  }
  template <class T, class V> static V packet_derivative(const V &y) {
    namespace ei = Eigen::internal;
    const V g = packet<T>(y);
    return ei::pmul(g, ei::psub(ei::pset1<V>(T(1)), g));
  }
  template <class T> static T scalar(T y) { return T(0.5) + T(0.5) * std::tanh(T(0.5) * y); }
  template <class T> static T scalar_derivative(T y) {
    const T g = scalar(y);
    return g * (T(1) - g);
  }
};

// z = z0 + σ(y) and ybar = ybar0 + σ'(y) ⊙ zbar for one σ, column by column.
template <class Op, class T>
void add_value(Index rows, Index cols, Index stride, T *z, const T *z0, const T *y) {
  namespace ei = Eigen::internal;
  for (Index b = 0; b < cols; ++b) {
    const Index o = b * stride;
    elementwise(
        z + o, z0 + o, y + o, y + o, rows,
        [](auto p, auto q, auto) { return ei::padd(p, Op::template packet<T>(q)); },
        [](T p, T q, T) { return p + Op::scalar(q); });
  }
}

template <class Op, class T>
void add_derivative(Index rows, Index cols, Index stride, T *ybar, const T *ybar0, const T *y,
                    const T *zbar) {
  namespace ei = Eigen::internal;
  for (Index b = 0; b < cols; ++b) {
    const Index o = b * stride;
    elementwise(
        ybar + o, ybar0 + o, y + o, zbar + o, rows,
        [](auto p, auto q, auto r) {
          return ei::padd(p, ei::pmul(Op::template packet_derivative<T>(q), r));
        },
        [](T p, T q, T r) { return p + Op::scalar_derivative(q) * r; });
  }
}

} // namespace detail

// A block of a batch: `rows` consecutive channels of `cols` samples, column
// b starting at offset b · stride.
struct BlockShape {
  Index rows, cols, stride;
};

// z = z0 + σ(y) on a block.
template <class T>
void add_activation(Activation a, const BlockShape &s, T *z, const T *z0, const T *y) {
  switch (a) {
  case Activation::identity:
    return detail::add_value<detail::IdentityOp>(s.rows, s.cols, s.stride, z, z0, y);
  case Activation::tanh:
    return detail::add_value<detail::TanhOp>(s.rows, s.cols, s.stride, z, z0, y);
  case Activation::sigmoid:
    return detail::add_value<detail::SigmoidOp>(s.rows, s.cols, s.stride, z, z0, y);
  }
}

// ybar = ybar0 + σ'(y) ⊙ zbar on a block; σ' is recomputed from y
// (tanh' = 1 − tanh², sigmoid' = σ(1 − σ)).
template <class T>
void add_activation_derivative(Activation a, const BlockShape &s, T *ybar, const T *ybar0,
                               const T *y, const T *zbar) {
  switch (a) {
  case Activation::identity:
    return detail::add_derivative<detail::IdentityOp>(s.rows, s.cols, s.stride, ybar, ybar0, y,
                                                      zbar);
  case Activation::tanh:
    return detail::add_derivative<detail::TanhOp>(s.rows, s.cols, s.stride, ybar, ybar0, y, zbar);
  case Activation::sigmoid:
    return detail::add_derivative<detail::SigmoidOp>(s.rows, s.cols, s.stride, ybar, ybar0, y,
                                                     zbar);
  }
}

} // namespace pm::kernels
