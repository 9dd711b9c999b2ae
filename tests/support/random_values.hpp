#pragma once
// Inputs of the kernel tests: values in [−1, 1] in steps of 1/1000 from a
// fixed seed, exact in float and double, so that two runs of a kernel see the
// same bits.
#include <random>
#include <vector>

#include "pm/category/finite_set.hpp"

namespace pm_test {

// n values after `offset` zeros (an offset moves a buffer's alignment).
template <class T> std::vector<T> random_values(pm::Index n, unsigned seed, pm::Index offset = 0) {
  std::mt19937 g(seed);
  std::vector<T> v(n + offset, T(0));
  for (pm::Index k = offset; k < v.size(); ++k) v[k] = T(int(g() % 2001) - 1000) / T(1000);
  return v;
}

} // namespace pm_test
