#pragma once
// The ranges of pm::kernels::case_ranges (src/pm/kernels/check_cases.hpp) as
// RapidCheck generators, for the kernel properties: the same ranges as the
// cases of `pmach check --kernels`, drawn, shrunk and grown by RapidCheck.
#include <cstddef>
#include <vector>

#include <rapidcheck.h>

#include "pm/kernels/check_cases.hpp"

namespace pm_test {

inline rc::Gen<pm::Index> in(pm::kernels::Range r) {
  return rc::gen::inRange<pm::Index>(r.lo, r.hi + 1);
}

template <class T, std::size_t N> rc::Gen<T> one_of(const T (&elements)[N]) {
  return rc::gen::elementOf(std::vector<T>(elements, elements + N));
}

} // namespace pm_test
