// The numerical laws of spec/spans.md again in floating point, where they hold
// only up to the forward error bound derived in docs/tolerances.md.
#include "support/span_laws.hpp"

using namespace pm_test;

TEMPLATE_TEST_CASE("spans in floating point within the derived bound", "[float]", float, double,
                   long double) {
  using S = TestType;
  rc::prop("PUSH-COMP", [] { law_push_comp<Reference, S>(); });
  rc::prop("INT-COMP", [] { law_int_comp<Reference, S>(); });
  rc::prop("PROJ-FORMULA", [] { law_proj_formula<Reference, S>(); });
  rc::prop("BECK-CHEVALLEY", [] { law_beck_chevalley<Reference, S>(); });
  rc::prop("SPAN-LIN-COMP", [] { law_span_lin_comp<Reference, S>(); });
  rc::prop("SPAN-ADJOINT", [] { law_span_adjoint<Reference, S>(); });
  rc::prop("PSPAN-BILINEAR", [] { law_pspan_bilinear<Reference, S>(); });
  rc::prop("PSPAN-ADJOINT", [] { law_pspan_adjoint<Reference, S>(); });
  rc::prop("PSPAN-GRADIENT", [] { law_pspan_gradient<Reference, S>(); });
  rc::prop("PSPAN-COMP", [] { law_pspan_comp<Reference, S>(); });
}

// The bound is not vacuous: a perturbation of a few units in the last place
// beyond it is reported.
TEST_CASE("the floating-point bound rejects an error beyond it") {
  const double a = 1.0, m = 1.0;
  const std::size_t n = 4;
  const double bound = gamma<double>(n) * (m + m);
  REQUIRE(within_bound(a, a + 0.5 * bound, m, m, n));
  REQUIRE_FALSE(within_bound(a, a + 4 * bound, m, m, n));
}
