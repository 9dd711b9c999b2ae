#pragma once
// Every cost bounded by what it costs, before anything is allocated or
// computed (docs/formats.md §5.2). The readers bound each size separately
// (points, edges, array elements, file bytes); the work of a command is a
// product of sizes, and these are the bounds on the products. Each refusal
// is one line naming the limit and, where one exists, the way around it.
#include <algorithm>
#include <cstdint>
#include <string>

#include "pm/category/error.hpp"
#include "pm/category/parametric_span.hpp"
#include "pm/category/scalar.hpp"
#include "pm/machine/grading.hpp"

namespace pm::io {

// Samples in one batch, whatever the size of the space: a zero-extent space
// holds no values, yet every sample still costs a column and a loop.
inline constexpr std::uint64_t max_batch = std::uint64_t{1} << 24;
// Values in one input, output or parameter array held during evaluation.
inline constexpr std::uint64_t max_values_float = std::uint64_t{1} << 24;
inline constexpr std::uint64_t max_values_exact = std::uint64_t{1} << 20;
// Work of one evaluation: samples × (points + edges + parameters + levels),
// the number of elementary steps of forward and backward up to a constant.
inline constexpr std::uint64_t max_work_float = std::uint64_t{1} << 31;
inline constexpr std::uint64_t max_work_exact = std::uint64_t{1} << 22;
// Estimated bits of one exact rational (numerator and denominator) along
// the levels of a machine; beyond it, exact arithmetic would take hours.
inline constexpr std::uint64_t max_exact_bits = std::uint64_t{1} << 17;
// pmach check: cases per law, and cases × (points + edges + parameters +
// levels + 1) × (levels + 1) for the run of all laws on one file (the
// causality law runs a forward pass per level: ModelSize::per_check_case),
// in double (refused beyond) and exactly (beyond, the laws run in double
// only). Measured: a case of 2^22 parameters takes 2.7 s in double for all
// laws, so 2^25 is ~20 s.
inline constexpr std::uint64_t max_cases = 100000;
inline constexpr std::uint64_t max_check_work = std::uint64_t{1} << 25;
inline constexpr std::uint64_t max_check_work_exact = std::uint64_t{1} << 21;
// pmach dot: points + edges drawn one by one; larger models are drawn in
// summary (a few bytes per group of levels).
inline constexpr std::uint64_t max_dot_items = std::uint64_t{1} << 15;

// The sizes that the cost of running a model on a batch depends on.
struct ModelSize {
  std::uint64_t in = 0, out = 0; // points of the input and output spaces
  std::uint64_t edges = 0, parameters = 0, levels = 0;

  std::uint64_t per_sample() const { return in + out + edges + parameters + levels + 1; }
  // One case of the laws of pmach check: a forward pass per level for the
  // causality law (MACH-CAUSALITY, O(levels²) for a machine), and the other
  // laws' passes; a layer has no levels.
  std::uint64_t per_check_case() const {
    const std::uint64_t passes = levels + 1;
    return per_sample() <= ~std::uint64_t{0} / passes ? per_sample() * passes : ~std::uint64_t{0};
  }
};

// A batch of `batch` samples on a space of `points` points, from `file`.
inline void require_batch(std::uint64_t batch, std::uint64_t points, const std::string &file) {
  require(batch <= max_batch, file, ": npy field 'shape': ", batch, " samples, expected at most ",
          max_batch, " per batch");
  require(batch <= max_values_float / std::max<std::uint64_t>(points, 1), file,
          ": npy field 'shape': ", batch, " samples of ", points, " values, expected at most ",
          max_values_float, " values per array");
}

// Evaluating a model of `size` on `batch` samples, exactly or in floating point.
inline void require_evaluation(const ModelSize &size, std::uint64_t batch, bool exact,
                               const std::string &file) {
  const std::uint64_t values = exact ? max_values_exact : max_values_float;
  const char *precision = exact ? "with --precision exact" : "per array";
  const std::uint64_t widest = std::max({size.in, size.out, std::uint64_t{1}});
  require(size.parameters <= values, file, ": ", size.parameters, " parameters, expected at most ",
          values, " ", precision, exact ? "; use --precision double" : "");
  require(batch <= values / widest, file, ": ", batch, " samples of up to ", widest,
          " values, expected at most ", values, " values ", precision,
          exact ? "; use --precision double" : "");
  const std::uint64_t work = exact ? max_work_exact : max_work_float;
  require(batch <= work / size.per_sample(), file, ": ", batch, " samples × ", size.per_sample(),
          " (points + edges + parameters + levels) steps, expected at most ", work, " ",
          exact ? "with --precision exact; use --precision double" : "per evaluation");
}

// pmach check --against on a layer: the reference of the samples is computed
// exactly (forward, transpose and gradient of every sample), so its work is
// bounded as an exact evaluation's.
inline void require_exact_reference(const ModelSize &size, std::uint64_t batch,
                                    const std::string &file) {
  require(batch <= max_work_exact / size.per_sample(), file, ": ", batch, " samples × ",
          size.per_sample(),
          " (points + edges + parameters + 1) steps of the exact reference, expected at most ",
          max_work_exact, "; compare fewer samples");
}

// Bits of a rational: of its numerator and of its denominator.
inline std::uint64_t bits(const Rational &r) {
  using boost::multiprecision::msb;
  const auto &n = boost::multiprecision::numerator(r);
  const auto &d = boost::multiprecision::denominator(r);
  return (n == 0 ? 0 : msb(n < 0 ? boost::multiprecision::cpp_int(-n) : n) + 1) + msb(d) + 1;
}

// An estimate of the bits of the exact state of a machine, level by level:
// at level k, y = y0 + Σ μ w z adds the bits of μ and w to those of the
// earlier z (plus one per doubling of the fan-in), and z = z0 + σ(y) with σ
// a polynomial of degree d multiplies them by d. `input_bits` bounds the
// bits of y0, z0 and w, `sigma_bits` those of σ's coefficients or slopes.
// The estimate stops growing once it passes max_exact_bits.
inline std::uint64_t exact_bits_estimate(const Grading &grading, const ParametricSpan<Rational> &a,
                                         std::uint64_t degree, std::uint64_t input_bits,
                                         std::uint64_t sigma_bits) {
  auto log2_up = [](std::uint64_t n) {
    std::uint64_t b = 0;
    while ((std::uint64_t{1} << b) < n && b < 63) ++b;
    return b;
  };
  std::uint64_t mu_bits = 0;
  std::vector<std::uint64_t> fan_in(a.span.t.codomain, 0), level_fan(grading.levels(), 0);
  for (Index e = 0; e < a.apex(); ++e) {
    if (grading(a.span.s(e)) >= grading(a.span.t(e))) continue; // cleaned away
    mu_bits = std::max(mu_bits, bits(a.span.mu[e]));
    const Index t = a.span.t(e);
    level_fan[grading(t) - 1] = std::max(level_fan[grading(t) - 1], ++fan_in[t]);
  }
  const std::uint64_t d = std::max<std::uint64_t>(degree, 1);
  std::uint64_t z_bits = input_bits, widest = input_bits;
  for (Index k = 0; k < grading.levels() && widest <= max_exact_bits; ++k) {
    const std::uint64_t y =
        std::max(input_bits, mu_bits + input_bits + z_bits) + log2_up(level_fan[k] + 1);
    const std::uint64_t z =
        std::max(input_bits, sigma_bits + std::min(d * y, max_exact_bits + 1)) + log2_up(d + 1);
    z_bits = std::max(z_bits, z);
    widest = std::max({widest, y, z});
  }
  return widest;
}

} // namespace pm::io
