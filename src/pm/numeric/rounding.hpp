#pragma once
// Rounding-error constants for the floating-point bounds of docs/tolerances.md:
// the unit roundoff u of a type and γ_n = n u / (1 − n u), the relative error
// bound of a chain of n roundings (Higham, "Accuracy and Stability of
// Numerical Algorithms", §3.1).
#include <cstddef>
#include <limits>

namespace pm {

template <class T> T unit_roundoff() { return std::numeric_limits<T>::epsilon() / 2; }

template <class T> T gamma(T n, T u) { return n * u / (T(1) - n * u); }

template <class T> T gamma(std::size_t n) { return gamma(T(n), unit_roundoff<T>()); }

} // namespace pm
