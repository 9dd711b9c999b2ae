// The numerical laws of spec/spans.md again in floating point, where they hold
// only up to the forward error bound derived in docs/tolerances.md.
#include "support/span_laws.hpp"
#include "support/span_mutants.hpp"

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

// The bound is not vacuous on real law outputs: each floating-point law, in
// double, rejects a mutant within its derived bound: a float accumulator where the two sides group their sums
// differently, and otherwise (where both sides would round alike) the exact
// law's mutant.
#define FLOAT_MUTANT(ID, LAW, MUT, WHAT)                                                           \
  TEST_CASE(ID " mutant: in double, " WHAT) {                                                      \
    REQUIRE(rejects([] { LAW<MUT, double>(); }));                                                  \
  }
FLOAT_MUTANT("PUSH-COMP", law_push_comp, MutPush, "pushforward into the neighbouring fibre")
FLOAT_MUTANT("INT-COMP", law_int_comp, MutIntegrate, "integration into the neighbouring fibre")
FLOAT_MUTANT("PROJ-FORMULA", law_proj_formula, MutFloatAccumulator, "a float accumulator")
FLOAT_MUTANT("BECK-CHEVALLEY", law_beck_chevalley, MutFibre, "a fibre product missing a pair")
FLOAT_MUTANT("SPAN-LIN-COMP", law_span_lin_comp, MutFloatAccumulator, "a float accumulator")
FLOAT_MUTANT("SPAN-ADJOINT", law_span_adjoint, MutFloatAccumulator, "a float accumulator")
FLOAT_MUTANT("PSPAN-BILINEAR", law_pspan_bilinear, MutFloatAccumulator, "a float accumulator")
FLOAT_MUTANT("PSPAN-ADJOINT", law_pspan_adjoint, MutFloatAccumulator, "a float accumulator")
FLOAT_MUTANT("PSPAN-GRADIENT", law_pspan_gradient, MutFloatAccumulator, "a float accumulator")
FLOAT_MUTANT("PSPAN-COMP", law_pspan_comp, MutFloatAccumulator, "a float accumulator")
