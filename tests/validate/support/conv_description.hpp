#pragma once
// The specification side of the validator's conv tests: a conv's model as
// the catalogue constructor builds its span (pm::conv), and a report's row
// of a law.
#include <catch2/catch.hpp>

#include "pm/io/layer_format.hpp"
#include "pm/layers/conv.hpp"
#include "pm/validate/report.hpp"

namespace pm_test {

inline pm::io::LayerDescription conv_description(const pm::ConvSpec &c) {
  pm::io::LayerDescription d;
  d.file = "conv (pm::conv)";
  d.source = c.input_shape();
  d.target = c.output_shape();
  d.parameters = c.parameter_shape();
  d.has_parameters = true;
  d.span = pm::conv<pm::Rational>(c);
  return d;
}

inline const pm::LawResult &result(const pm::Report &r, const std::string &law) {
  for (const auto &x : r.results)
    if (x.law == law) return x;
  FAIL("no result for " << law);
  return r.results.front();
}

} // namespace pm_test
