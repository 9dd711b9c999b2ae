#pragma once
// Glorot-uniform initialisation as in the authors' code (from Flux): for a
// tensor of shape (k…, fan_in, fan_out) the entries are uniform in ±√(6/s)
// with s = Π k · (fan_in + fan_out). Deterministic for a given generator.
#include <cmath>
#include <random>

#include "pm/category/finite_set.hpp"
#include "pm/category/function.hpp"
#include "pm/numeric/uniform.hpp"

namespace pm {

inline Function<double> glorot_uniform(const Shape &shape, std::mt19937_64 &rng) {
  const auto &e = shape.extents();
  require(e.size() >= 2, "glorot_uniform: shape has ", e.size(), " axes, expected at least 2");
  double s = double(e[e.size() - 2] + e[e.size() - 1]);
  for (Index j = 0; j + 2 < e.size(); ++j) s *= double(e[j]);
  const double limit = std::sqrt(6.0 / s);
  UniformReal<double> u(-limit, limit);
  Function<double> w(shape.size());
  for (double &x : w) x = u(rng);
  return w;
}

} // namespace pm
