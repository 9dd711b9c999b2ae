#pragma once
// Shared by the differential laws of the kernels (property_tests/kernels*.cpp):
// portable data drawn from a case's seed, and the comparison of kernel
// outputs with a long double reference within per-output bounds, which
// prints the case's one-line reproduction and discards a case that is too
// weak to show anything (docs/tolerances.md, "Kernels").
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pm/category/finite_set.hpp"
#include "support/law.hpp"

namespace pm_test {

// Data from the case's seed, portable across standard libraries: k/997 for
// k ∈ [−997, 997], scaled; rounded to T once, and the reference reads
// exactly these values.
template <class T> std::vector<T> draw(std::mt19937 &g, pm::Index n, T scale) {
  std::vector<T> v(n);
  for (T &x : v) x = T(int(g() % 1995) - 997) / T(997) * scale;
  return v;
}

// Compares kernel outputs with reference outputs within the bound; fails with
// the case's one-line reproduction naming the worst entry. Returns the number
// of outputs above their tolerance (the ones that test something).
template <class T>
pm::Index compare(const std::string &repro, const char *what, const std::vector<T> &kernel,
                  const std::vector<long double> &reference,
                  const std::vector<long double> &bound) {
  pm::Index informative = 0;
  for (pm::Index k = 0; k < kernel.size(); ++k) {
    if (!(std::fabs((long double)(kernel[k]) - reference[k]) <= bound[k])) {
      std::ostringstream os;
      os << repro << ": " << what << "[" << k << "] kernel=" << kernel[k]
         << " reference=" << reference[k] << " bound=" << bound[k];
      RC_FAIL(os.str());
    }
    if (std::fabs(reference[k]) > bound[k]) ++informative;
  }
  return informative;
}

inline void require_informative(pm::Index informative, pm::Index outputs,
                                const std::string &repro) {
  RC_PRE(outputs > 0);
  // A check passes only when most outputs are larger than their tolerance.
  if (2 * informative < outputs) RC_DISCARD("too weak (outputs mostly zero): " + repro);
}

inline const char *type_name(float) { return "float"; }
inline const char *type_name(double) { return "double"; }

} // namespace pm_test
