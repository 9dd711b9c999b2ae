// Laws of spec/spans.md, checked exactly over the rationals, each with the
// mutant it must reject.
#include "support/span_laws.hpp"
#include "support/span_mutants.hpp"

using namespace pm_test;
using Q = pm::Rational;

// LAW(ID, law, mutant): the reference satisfies the law over Q, and the mutant
// is rejected by it.
#define LAW(ID, NAME, CALL_REF, CALL_MUT)                                                         \
  TEST_CASE(ID ": " NAME) {                                                                       \
    rc::prop(ID " exact over Q", [] { CALL_REF; });                                               \
  }                                                                                               \
  TEST_CASE(ID " mutant: " NAME) { REQUIRE(rejects([] { CALL_MUT; })); }

LAW("MAP-UNIT-LEFT", "id ∘ f = f", law_map_unit_left<Reference>(),
    law_map_unit_left<MutIdentity>())
LAW("MAP-UNIT-RIGHT", "f ∘ id = f", law_map_unit_right<Reference>(),
    law_map_unit_right<MutIdentity>())
LAW("MAP-ASSOC", "(h ∘ g) ∘ f = h ∘ (g ∘ f)", law_map_assoc<Reference>(),
    law_map_assoc<MutCompose>())
LAW("PULL-ID", "id* = id", (law_pull_id<Reference, Q>()), (law_pull_id<MutPull, Q>()))
LAW("PULL-COMP", "(g ∘ f)* = f* ∘ g*", (law_pull_comp<Reference, Q>()),
    (law_pull_comp<MutPull, Q>()))
LAW("PUSH-ID", "id_! = id", (law_push_id<Reference, Q>()), (law_push_id<MutPush, Q>()))
LAW("PUSH-COMP", "(g ∘ f)_! = g_! ∘ f_!", (law_push_comp<Reference, Q>()),
    (law_push_comp<MutPush, Q>()))
LAW("INT-COMP", "(g ∘ f)_!^μ = g_!^1 ∘ f_!^μ", (law_int_comp<Reference, Q>()),
    (law_int_comp<MutIntegrate, Q>()))
LAW("PROJ-FORMULA", "f_!^μ(ψ · f*φ) = φ · f_!^μ ψ", (law_proj_formula<Reference, Q>()),
    (law_proj_formula<MutIntegrate, Q>()))
LAW("BECK-CHEVALLEY", "g* f_!^μ = q_!^{p*μ} p*", (law_beck_chevalley<Reference, Q>()),
    (law_beck_chevalley<MutFibre, Q>()))
LAW("SPAN-ASSOC", "(c ∘ b) ∘ a ≅ c ∘ (b ∘ a)", (law_span_assoc<Reference, Q>()),
    (law_span_assoc<MutMeasureDifference, Q>()))
LAW("SPAN-UNIT-LEFT", "id ∘ a ≅ a", (law_span_unit_left<Reference, Q>()),
    (law_span_unit_left<MutMeasureDifference, Q>()))
LAW("SPAN-UNIT-RIGHT", "a ∘ id ≅ a", (law_span_unit_right<Reference, Q>()),
    (law_span_unit_right<MutMeasureDifference, Q>()))
LAW("SPAN-ISO-WITNESS", "relabelled apex is found isomorphic, a changed weight is not",
    (law_span_iso_witness<Reference, Q>()), (law_span_iso_witness<MutIso, Q>()))
LAW("SPAN-LIN-COMP", "L(b ∘ a) = L(b) ∘ L(a)", (law_span_lin_comp<Reference, Q>()),
    (law_span_lin_comp<MutDroppedMeasure, Q>()))
LAW("SPAN-LIN-ID", "L(id) = id", (law_span_lin_id<Reference, Q>()),
    (law_span_lin_id<MutSpanIdentity, Q>()))
LAW("SPAN-TRANSPOSE-INVOL", "(aᵀ)ᵀ = a", (law_span_transpose_invol<Reference, Q>()),
    (law_span_transpose_invol<MutTransposeUnitMeasure, Q>()))
LAW("SPAN-ADJOINT", "⟨g, L φ⟩ = ⟨Lᵀ g, φ⟩", (law_span_adjoint<Reference, Q>()),
    (law_span_adjoint<MutTransposeReversedMeasure, Q>()))
LAW("BATCH-COLUMNWISE", "a layer acts on each column of a batch",
    (law_batch_columnwise<Reference, Q>()), (law_batch_columnwise<MutBatch, Q>()))
LAW("PSPAN-BILINEAR", "L_w φ is linear in w and in φ", (law_pspan_bilinear<Reference, Q>()),
    (law_pspan_bilinear<MutApplyAdds, Q>()))
LAW("PSPAN-ADJOINT", "⟨g, L_w φ⟩ = ⟨L_wᵀ g, φ⟩", (law_pspan_adjoint<Reference, Q>()),
    (law_pspan_adjoint<MutPTranspose, Q>()))
LAW("PSPAN-GRADIENT", "⟨g, L_w φ⟩ = ⟨w, π_!^μ(s*φ · t*g)⟩",
    (law_pspan_gradient<Reference, Q>()), (law_pspan_gradient<MutGradient, Q>()))
LAW("PSPAN-COMP", "L_{w_a ⊗ w_b}(b ∘ a) = L_{w_b} ∘ L_{w_a}", (law_pspan_comp<Reference, Q>()),
    (law_pspan_comp<MutParameterOrder, Q>()))
