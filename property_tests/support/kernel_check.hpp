#pragma once
// Shared by the differential laws of the kernels (property_tests/kernels*.cpp):
// the verdict of a comparison of kernel outputs with the long double
// reference (src/pm/kernels/reference_check.hpp, the same functions that
// `pmach check --kernels` runs): a failure prints the case's one-line
// reproduction and the worst entry; a case that is too weak to show anything
// is discarded as such, not passed (docs/tolerances.md, "Kernels").
#include <string>

#include "pm/kernels/reference_check.hpp"
#include "support/law.hpp"

namespace pm_test {

using pm::kernels::batch_gradient;
using pm::kernels::batch_of;
using pm::kernels::combined_roundoff;
using pm::kernels::draw;
using pm::kernels::type_name;
using pm::kernels::widened;

inline void verdict(const pm::kernels::Comparison &c, const std::string &repro) {
  if (c.failed()) RC_FAIL(repro + ": " + c.failure);
  RC_PRE(c.outputs > 0);
  if (c.too_weak()) RC_DISCARD("too weak (outputs mostly zero): " + repro);
}

} // namespace pm_test
