// An outside program: composes two spans, applies the composite and compares
// it with the values worked out by hand; checks the library's version.
#include <cstring>
#include <iostream>

#include "pm/category.hpp"
#include "pm/version.hpp"

int main() {
  using pm::FinMap;
  using Q = pm::Rational;
  // a : [3] → [2], average pooling of width 2; b : [2] → [2], y0 = x0 − x1, y1 = 3 x1.
  const pm::Span<Q> a{FinMap(3, {0, 1, 1, 2}), FinMap(2, {0, 0, 1, 1}),
                      {Q(1, 2), Q(1, 2), Q(1, 2), Q(1, 2)}};
  const pm::Span<Q> b{FinMap(2, {0, 1, 1}), FinMap(2, {0, 0, 1}), {Q(1), Q(-1), Q(3)}};
  // φ = (1, 2, 4): L(a) φ = (3/2, 3), then L(b) gives (3/2 − 3, 3 · 3).
  const pm::Function<Q> y = pm::act(pm::compose(b, a), pm::Function<Q>{Q(1), Q(2), Q(4)});
  const pm::Function<Q> expected{Q(-3, 2), Q(9)};
  int failures = 0;
  if (y != expected) {
    std::cerr << "consumer: L(b o a) phi is wrong\n";
    ++failures;
  }
  if (std::strcmp(pm::version, PM_EXPECTED_VERSION) != 0) {
    std::cerr << "consumer: pm::version is " << pm::version << ", expected " << PM_EXPECTED_VERSION
              << "\n";
    ++failures;
  }
  if (failures == 0) std::cout << "consumer: ParametricMachines " << pm::version << " works\n";
  return failures == 0 ? 0 : 1;
}
