#pragma once
// Random draws that are the same with every standard library. The engines
// (std::mt19937, std::mt19937_64) are specified to the bit by the C++
// standard, but the distributions are not: std::uniform_int_distribution,
// std::uniform_real_distribution and std::normal_distribution give other
// numbers with libc++ than with libstdc++ from the same engine state, so a
// seed would name other cases. These three are written out here, each a
// fixed function of the engine's output, with the interface of the standard
// ones (construct with the range, call with the engine).
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include "pm/category/error.hpp"

namespace pm {

namespace detail {

// 64 bits from an engine whose outputs are all the values of 32 or 64 bits:
// one draw of a 64-bit engine, or two of a 32-bit one (the first is the high
// half).
template <class G> std::uint64_t random_bits64(G &g) {
  static_assert(G::min() == 0, "engine must start at 0");
  if constexpr (G::max() == std::numeric_limits<std::uint64_t>::max()) {
    return std::uint64_t(g());
  } else {
    static_assert(G::max() == std::numeric_limits<std::uint32_t>::max(),
                  "engine must produce 32 or 64 random bits");
    const std::uint64_t high = std::uint64_t(g());
    return (high << 32) | std::uint64_t(g());
  }
}

} // namespace detail

// Uniform on the integers lo..hi (both included). Rejection keeps it exactly
// uniform: a draw x of 64 bits is kept when x < 2^64 − (2^64 mod n), with
// n = hi − lo + 1, and gives lo + x mod n.
template <class I> class UniformInt {
  static_assert(std::is_integral_v<I>);

public:
  UniformInt(I lo, I hi) : lo_(lo), hi_(hi) {
    require(lo <= hi, "UniformInt: empty range [", lo, ", ", hi, "]");
  }

  template <class G> I operator()(G &g) const {
    const std::uint64_t n = std::uint64_t(hi_) - std::uint64_t(lo_) + 1; // 0: all 2^64 values
    const std::uint64_t rejected = n == 0 ? 0 : (0 - n) % n;             // 2^64 mod n
    for (;;) {
      const std::uint64_t x = detail::random_bits64(g);
      if (rejected != 0 && x >= 0 - rejected) continue;
      return I(std::uint64_t(lo_) + (n == 0 ? x : x % n));
    }
  }

private:
  I lo_, hi_;
};

// Uniform on [lo, hi): the top `digits` bits of a 64-bit draw as a fraction
// u = k / 2^digits of T's precision (exact in T), mapped to lo + (hi − lo) u.
template <class T> class UniformReal {
  static_assert(std::is_floating_point_v<T> && std::numeric_limits<T>::digits <= 64);

public:
  UniformReal(T lo, T hi) : lo_(lo), hi_(hi) {
    require(lo <= hi, "UniformReal: empty range [", lo, ", ", hi, ")");
  }

  template <class G> T operator()(G &g) const { return lo_ + (hi_ - lo_) * unit(g); }

  // k / 2^digits with k uniform in 0 .. 2^digits − 1.
  template <class G> static T unit(G &g) {
    constexpr int digits = std::numeric_limits<T>::digits;
    return T(detail::random_bits64(g) >> (64 - digits)) * std::ldexp(T(1), -digits);
  }

private:
  T lo_, hi_;
};

// Normal with the given mean and standard deviation, by the Box–Muller
// transform of two uniform draws: √(−2 ln u₁) cos(2π u₂), u₁ ∈ (0, 1].
template <class T> class Normal {
public:
  explicit Normal(T mean = T(0), T stddev = T(1)) : mean_(mean), stddev_(stddev) {
    require(stddev >= T(0), "Normal: negative standard deviation ", stddev);
  }

  template <class G> T operator()(G &g) const {
    const T u1 = T(1) - UniformReal<T>::unit(g), u2 = UniformReal<T>::unit(g);
    return mean_ +
           stddev_ * std::sqrt(T(-2) * std::log(u1)) * std::cos(T(2) * std::numbers::pi_v<T> * u2);
  }

private:
  T mean_, stddev_;
};

} // namespace pm
