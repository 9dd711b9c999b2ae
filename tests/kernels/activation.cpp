// The accuracy constants of the kernels' σ and σ' (sigma_error in
// src/pm/kernels/activation.hpp), on which the differential tolerances rest:
// a sweep over [−20, 20] and over tiny arguments against a more precise
// evaluation (long double for float and double, 50 digits for long double).
#include "pm/kernels.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "pm/category/scalar.hpp"

using namespace pm;
using kernels::Activation;

namespace {

// Arguments: an even grid of [−20, 20] and ± 2^−40 … 2^−1.
template <class T> std::vector<T> arguments(int grid) {
  std::vector<T> y;
  for (int i = 0; i < grid; ++i) y.push_back(T(-20.0L + 40.0L * i / (grid - 1)));
  for (int e = -40; e < 0; ++e)
    for (int k = 0; k < 64; ++k) {
      const T v = T(std::ldexp(1.0L + k / 64.0L, e));
      y.push_back(v);
      y.push_back(-v);
    }
  return y;
}

// σ and σ' in the precision R (tanh, or the logistic function).
template <class R> std::pair<R, R> exact(Activation a, R y) {
  using std::exp;
  using std::tanh;
  const R s = a == Activation::tanh ? R(tanh(y)) : R(R(1) / (R(1) + R(exp(-y))));
  return {s, a == Activation::tanh ? R(R(1) - s * s) : R(s * (R(1) - s))};
}

// The largest absolute errors of σ̂ and σ̂', in units of u; a mutant adds
// `shift` units of u to both.
template <class T, class R> std::pair<R, R> measured(Activation a, int grid, T shift = T(0)) {
  const std::vector<T> y = arguments<T>(grid);
  const Index n = y.size();
  const std::vector<T> zero(n, T(0)), one(n, T(1));
  std::vector<T> s(n), d(n);
  kernels::add_activation<T>(a, {n, 1, n}, s.data(), zero.data(), y.data());
  kernels::add_activation_derivative<T>(a, {n, 1, n}, d.data(), zero.data(), y.data(), one.data());
  const R u = R(std::numeric_limits<T>::epsilon()) / 2;
  for (Index k = 0; k < n; ++k) {
    s[k] += shift * T(u);
    d[k] += shift * T(u);
  }
  R es = 0, ed = 0;
  for (Index k = 0; k < n; ++k) {
    const auto [vs, vd] = exact<R>(a, R(y[k]));
    es = std::max<R>(es, R(abs(R(s[k]) - vs) / u));
    ed = std::max<R>(ed, R(abs(R(d[k]) - vd) / u));
  }
  return {es, ed};
}

template <class T, class R> void check_constants(Activation a, int grid) {
  const auto [es, ed] = measured<T, R>(a, grid);
  const kernels::SigmaError c = kernels::sigma_error<T>(a);
  INFO("measured |σ̂ − σ| = " << double(es) << " u, |σ̂' − σ'| = " << double(ed) << " u");
  CHECK(es <= R(c.value));
  CHECK(ed <= R(c.derivative));
}

} // namespace

TEST_CASE("KERNEL-SIGMA-ACCURACY: tanh and sigmoid are within their documented error") {
  for (Activation a : {Activation::tanh, Activation::sigmoid}) {
    check_constants<float, long double>(a, 1000001);
    check_constants<double, long double>(a, 1000001);
    check_constants<long double, BinFloat50>(a, 2001);
  }
}

TEST_CASE("KERNEL-SIGMA-ACCURACY mutant: an evaluation off by twice the constant is caught") {
  const kernels::SigmaError c = kernels::sigma_error<float>(Activation::tanh);
  const auto [es, ed] = measured<float, long double>(Activation::tanh, 10001, float(2 * c.value));
  CHECK_FALSE(es <= c.value);
  const auto [fs, fd] =
      measured<float, long double>(Activation::tanh, 10001, float(2 * c.derivative));
  CHECK_FALSE(fd <= c.derivative);
}
