// The bounds of `--against` where the rounding-error analysis breaks down:
// γ_n has no meaning for n·u ≥ 1 (it used to turn negative, failing correct
// float32 samples, and to grow without bound just below, passing a grad_w
// multiplied by −1000); a bound with γ_n ≥ 1 decides nothing. Such a row is
// "too weak", never passed or failed. The exact values are integers, so the
// expected verdicts do not depend on the code under test.
#include <catch2/catch.hpp>

#include "pm/validate/machine_samples.hpp"
#include "pm/validate/samples.hpp"

using pm::Rational;
using pm::Status;

namespace {

pm::LawResult row(double theirs, std::size_t n) {
  const pm::io::NpyArray t{{1}, {theirs}, pm::io::Dtype::float32};
  return pm::validation::compare_tensor("grad_w", "s", t, {{Rational(781)}}, {{Rational(781)}}, n);
}

} // namespace

TEST_CASE("gamma: no bound for n·u >= 1, never a negative one") {
  const double u = 0x1p-24;
  CHECK(pm::gamma(double(1 << 23), u) == 1); // n u = 1/2
  CHECK(std::isinf(pm::gamma(double(1 << 24), u)));
  CHECK(std::isinf(pm::gamma(double((1 << 24) + 2), u)));
  CHECK(pm::gamma(double((1 << 24) - 2), u) > 1e6);
  CHECK(pm::bound_is_meaningful(pm::gamma(100.0, u)));
  CHECK_FALSE(pm::bound_is_meaningful(pm::gamma(double(1 << 23), u)));
}

TEST_CASE("--against: float32 rows with batch × fan-in near 2^24 are too weak") {
  // A correct value, and one multiplied by −1000, with n·u at 1 − 2^-23,
  // exactly 1 and above 1: no verdict, either way.
  for (std::size_t n :
       {(std::size_t{1} << 24) - 2, std::size_t{1} << 24, (std::size_t{1} << 24) + 2}) {
    INFO(n);
    CHECK(row(781, n).status == Status::too_weak);
    CHECK(row(-781000, n).status == Status::too_weak);
    CHECK(row(-781000, n).detail.find("≥ 1") != std::string::npos);
  }
  // Far below, the bound decides: the correct value passes, the wrong fails.
  CHECK(row(781, 1000).status == Status::passed);
  CHECK(row(-781000, 1000).status == Status::failed);
}

TEST_CASE("--against on a machine: every γ_n ≥ 1 makes its bounds infinite") {
  // docs/formats.md §4: a bound with γ_n ≥ 1 (n·u ≥ 1/2) is "too weak"; the
  // machine's bounds gave up only at n·u ≥ 1, so that at n·u = 3/4 (γ = 3)
  // a grad_w of the wrong sign passed. Not finite, compare_to_bound makes
  // the row too weak (above).
  using pm::validation::MachineBound;
  const double u = 0x1p-24;
  CHECK(std::isinf(MachineBound::bounding_gamma(double(3 << 22), u))); // n·u = 3/4
  CHECK(std::isinf(MachineBound::bounding_gamma(double(1 << 23), u))); // n·u = 1/2: γ = 1
  CHECK(MachineBound::bounding_gamma(double(1 << 22), u) == 1.0 / 3);  // n·u = 1/4
  const pm::io::NpyArray t{{1}, {-781000}, pm::io::Dtype::float32};
  const double bound = MachineBound::bounding_gamma(double(3 << 22), u) * 781;
  CHECK(pm::validation::compare_to_bound("grad_w", "s", t, std::vector<double>{781},
                                         std::vector<double>{bound}, 1)
            .status == Status::too_weak);
}
