#pragma once
// Rounding-error constants for the floating-point bounds of docs/tolerances.md:
// the unit roundoff u of a type and γ_n = n u / (1 − n u), the relative error
// bound of a chain of n roundings (Higham, "Accuracy and Stability of
// Numerical Algorithms", §3.1). The bound holds only for n u < 1; beyond it
// (float32 sums of 2^24 terms, say) there is no bound, and γ_n is +∞ rather
// than the negative number the formula gives, so that no comparison can pass
// on it: callers report such a check as "too weak" (bound_is_meaningful).
#include <cstddef>
#include <limits>

namespace pm {

template <class T> T unit_roundoff() { return std::numeric_limits<T>::epsilon() / 2; }

template <class T> T gamma(T n, T u) {
  const T nu = n * u;
  if (!(nu < T(1))) return std::numeric_limits<T>::infinity();
  return nu / (T(1) - nu);
}

template <class T> T gamma(std::size_t n) { return gamma(T(n), unit_roundoff<T>()); }

// A relative bound γ ≥ 1 allows an error as large as the magnitude of the
// terms itself, so that even 0 would pass: it decides nothing.
template <class T> bool bound_is_meaningful(T gamma_n) { return gamma_n < T(1); }

} // namespace pm
