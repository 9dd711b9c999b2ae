// The portable distributions of pm/numeric/uniform.hpp: exact outputs for
// scripted engine outputs, worked out by hand, and the shape of long runs
// from a standard engine.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pm/numeric/uniform.hpp"

using namespace pm;

namespace {
// An engine that returns the given outputs in turn (then repeats them).
template <class U> struct Scripted {
  using result_type = U;
  std::vector<U> outputs;
  std::size_t next = 0;
  static constexpr U min() { return 0; }
  static constexpr U max() { return std::numeric_limits<U>::max(); }
  U operator()() { return outputs[next++ % outputs.size()]; }
};
using Scripted64 = Scripted<std::uint64_t>;
constexpr std::uint64_t all_ones = std::numeric_limits<std::uint64_t>::max();
} // namespace

TEST_CASE("UniformInt: x mod n, rejecting the last 2^64 mod n values") {
  // n = 3: 2^64 ≡ 1 (mod 3), so only 2^64 − 1 is rejected.
  Scripted64 g{{0, 1, 7, all_ones, 5}};
  const UniformInt<int> d(0, 2);
  CHECK(d(g) == 0);
  CHECK(d(g) == 1);
  CHECK(d(g) == 1); // 7 mod 3
  CHECK(d(g) == 2); // 2^64 − 1 skipped, 5 mod 3
  CHECK(g.next == 5);

  // −8..8: n = 17 and 2^64 ≡ 1 (mod 17) (2^8 = 15·17 + 1); 2^64 − 2 ≡ 16.
  Scripted64 h{{all_ones, all_ones - 1, 20, 0}};
  const UniformInt<int> k(-8, 8);
  CHECK(k(h) == 8);
  CHECK(k(h) == -5);
  CHECK(k(h) == -8);
  CHECK(h.next == 4);
}

TEST_CASE("UniformInt: the whole 64-bit range takes the draw as it is") {
  Scripted64 g{{0, all_ones}};
  const UniformInt<std::int64_t> d(std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
  CHECK(d(g) == std::numeric_limits<std::int64_t>::min());
  CHECK(d(g) == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("a 32-bit engine gives 64 bits from two draws, the first one high") {
  Scripted<std::uint32_t> g{{1, 2}};
  const UniformInt<std::uint64_t> d(0, (std::uint64_t(1) << 40) - 1); // 2^40 divides 2^64
  CHECK(d(g) == (std::uint64_t(1) << 32) + 2);
}

TEST_CASE("UniformReal: the top bits of a draw as a fraction of T's precision") {
  Scripted64 g{{0, std::uint64_t(1) << 63, all_ones}};
  const UniformReal<double> d(-1.0, 3.0);
  CHECK(d(g) == -1.0);
  CHECK(d(g) == 1.0);                        // u = 1/2
  CHECK(d(g) == 3.0 - std::ldexp(1.0, -51)); // u = 1 − 2^−53: below hi
  Scripted64 f{{all_ones}};
  CHECK(UniformReal<float>(0.0f, 1.0f)(f) == 1.0f - std::ldexp(1.0f, -24));
}

TEST_CASE("Normal: Box-Muller from two uniform draws") {
  // u1 = 1 (first draw 0): ln u1 = 0, the mean itself.
  Scripted64 g{{0, 12345}};
  CHECK(Normal<double>(5.0, 2.0)(g) == 5.0);
  // u1 = 1/2, u2 = 0: √(2 ln 2) = 1.17741002251547469…
  Scripted64 h{{std::uint64_t(1) << 63, 0}};
  CHECK(Normal<double>()(h) == Approx(1.1774100225154747).epsilon(1e-15));
  // The smallest u1 (2^−53) stays finite: √(106 ln 2) = 8.5717…
  Scripted64 e{{all_ones, 0}};
  CHECK(Normal<double>()(e) == Approx(8.571674).epsilon(1e-6));
}

TEST_CASE("long runs from std::mt19937_64 look uniform and normal") {
  // 5 standard deviations of each statistic over N draws.
  constexpr int N = 100000;
  std::mt19937_64 rng(42);
  const UniformInt<int> k(-8, 8);
  std::vector<int> count(17, 0);
  int outside = 0;
  for (int i = 0; i < N; ++i) {
    const int x = k(rng);
    if (x < -8 || x > 8)
      ++outside;
    else
      ++count[x + 8];
  }
  CHECK(outside == 0);
  const double p = 1.0 / 17, sigma = std::sqrt(N * p * (1 - p));
  for (int c : count) CHECK(std::abs(c - N * p) < 5 * sigma);

  const Normal<double> n;
  double sum = 0, squares = 0;
  for (int i = 0; i < N; ++i) {
    const double x = n(rng);
    sum += x;
    squares += x * x;
  }
  const double mean = sum / N, variance = squares / N - mean * mean;
  CHECK(std::abs(mean) < 5 / std::sqrt(double(N)));
  CHECK(std::abs(variance - 1) < 5 * std::sqrt(2.0 / N));
}

TEST_CASE("empty ranges are errors") {
  CHECK_THROWS_AS(UniformInt<int>(3, 2), Error);
  CHECK_THROWS_AS(UniformReal<double>(1.0, 0.0), Error);
  CHECK_THROWS_AS(Normal<double>(0.0, -1.0), Error);
}
