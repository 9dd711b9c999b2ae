#pragma once
// The scalar types the reference semantics is instantiated with. Rational is
// exact, so algebraic laws are checked with ==; the others are floating point.
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>

namespace pm {

using Rational = boost::multiprecision::cpp_rational;
using BinFloat50 = boost::multiprecision::cpp_bin_float_50;

} // namespace pm
