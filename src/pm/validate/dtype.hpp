#pragma once
// The precision an implementation computes in: what CONF-EQUAL sizes its
// probes by (docs/tolerances.md, "Exact probes"). A C++ implementation's
// scalar type names it; a foreign one (PyTorch, NumPy) says it, since its
// values reach the validator as float64 whatever it computed in.
#include <string>

#include "pm/category/scalar.hpp"
#include "pm/validate/cases.hpp"

namespace pm {

enum class Dtype { exact, float64, float32 };

inline const char *dtype_name(Dtype d) {
  switch (d) {
  case Dtype::exact:
    return "exact";
  case Dtype::float64:
    return "float64";
  case Dtype::float32:
    return "float32";
  }
  return "?";
}

// "float64" or "float32", the names NumPy and PyTorch use.
inline Dtype parse_dtype(const std::string &s, const std::string &what = "dtype") {
  require(s == "float64" || s == "float32", what, ": \"", s,
          "\", expected \"float64\" or \"float32\"");
  return s == "float64" ? Dtype::float64 : Dtype::float32;
}

template <class S> constexpr Dtype dtype_of() {
  if constexpr (validation::is_exact<S>)
    return Dtype::exact;
  else if constexpr (sizeof(S) <= 4)
    return Dtype::float32;
  else
    return Dtype::float64;
}

// Bits of the significand: integers of magnitude up to 2^bits are exact
// (0 for exact arithmetic, which has no limit).
inline int significand_bits(Dtype d) {
  return d == Dtype::float64 ? 53 : d == Dtype::float32 ? 24 : 0;
}

// u = 2^-bits (0 when exact).
inline double unit_roundoff(Dtype d) {
  return d == Dtype::exact ? 0.0 : std::ldexp(1.0, -significand_bits(d));
}

} // namespace pm
