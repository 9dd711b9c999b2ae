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

#include "pm/category/batch.hpp"
#include "pm/category/finite_set.hpp"
#include "pm/category/parametric_span.hpp"
#include "pm/numeric/rounding.hpp"
#include "support/compare.hpp"
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

// Kernel data widened to the reference's long double, optionally |·|.
template <class T> std::vector<long double> widened(const std::vector<T> &v, bool abs = false) {
  std::vector<long double> out(v.begin(), v.end());
  if (abs)
    for (long double &x : out) x = std::fabs(x);
  return out;
}

inline pm::Batch<long double> batch_of(std::vector<long double> v, pm::Index rows, pm::Index cols) {
  pm::Batch<long double> b(rows, cols);
  b.data = std::move(v);
  return b;
}

// u of T plus u of long double: the kernel's and the reference's rounding
// (docs/tolerances.md).
template <class T> long double combined_roundoff() {
  return (long double)(pm::unit_roundoff<T>()) + pm::unit_roundoff<long double>();
}

// The reference weight gradient Σ_b π_!(s*φ_b · t*g_b) of a batch of column
// major φ and g in the kernel's type, and its mass: the same sum over |μ|,
// |φ| and |g|, which the error bounds scale.
struct GradientReference {
  pm::Function<long double> value, mass;
};
template <class T>
GradientReference batch_gradient(const pm::ParametricSpan<long double> &a,
                                 const std::vector<T> &phi_in, const std::vector<T> &g_in,
                                 pm::Index batch) {
  const pm::Batch<long double> phi = batch_of(widened(phi_in), a.source(), batch),
                               g = batch_of(widened(g_in), a.target(), batch),
                               phi_abs = batch_of(widened(phi_in, true), a.source(), batch),
                               g_abs = batch_of(widened(g_in, true), a.target(), batch);
  const pm::ParametricSpan<long double> a_abs = absolute(a);
  GradientReference r{pm::Function<long double>(a.parameters(), 0),
                      pm::Function<long double>(a.parameters(), 0)};
  for (pm::Index b = 0; b < batch; ++b) {
    r.value = pm::add(r.value, pm::parameter_gradient(a, phi.column(b), g.column(b)));
    r.mass = pm::add(r.mass, pm::parameter_gradient(a_abs, phi_abs.column(b), g_abs.column(b)));
  }
  return r;
}

inline const char *type_name(float) { return "float"; }
inline const char *type_name(double) { return "double"; }

} // namespace pm_test
