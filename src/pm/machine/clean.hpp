#pragma once
// Valid parameters and cleaning. For a parametric span I ←s− E −t→ I with
// parameter leg π : E → P on a graded index set, a parameter p is valid when
// every edge e with π(e) = p raises the grade, d(s(e)) < d(t(e)); parameters
// without edges are valid. Cleaning is the projection onto the valid
// parameters: it zeroes the others. With valid parameters the layer L_w has
// depth ≤ D, which is what makes y = y₀ + L_w z solvable level by level. This
// one rule replaces every per-architecture masking rule.
#include "pm/category/parametric_span.hpp"
#include "pm/machine/grading.hpp"

namespace pm {

template <class S>
void require_graded(const ParametricSpan<S> &a, const Grading &d, const std::string &what) {
  a.validate(what + ".span");
  d.require_covers(a.source(), what + ": span source");
  d.require_covers(a.target(), what + ": span target");
}

template <class S>
std::vector<bool> valid_parameters(const ParametricSpan<S> &a, const Grading &d) {
  require_graded(a, d, "valid_parameters");
  std::vector<bool> valid(a.parameters(), true);
  for (Index e = 0; e < a.apex(); ++e)
    if (d(a.span.s(e)) >= d(a.span.t(e))) valid[a.pi(e)] = false;
  return valid;
}

template <class S>
Function<S> clean(const ParametricSpan<S> &a, const Grading &d, const Function<S> &w) {
  require_size(w, a.parameters(), "clean: parameters");
  const std::vector<bool> valid = valid_parameters(a, d);
  Function<S> out(w);
  for (Index p = 0; p < out.size(); ++p)
    if (!valid[p]) out[p] = S(0);
  return out;
}

// True when w vanishes on every invalid parameter.
template <class S>
bool is_valid(const ParametricSpan<S> &a, const Grading &d, const Function<S> &w) {
  return clean(a, d, w) == w;
}

} // namespace pm
