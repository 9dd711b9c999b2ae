// Laws of spec/spans.md, checked exactly over the rationals, each with the
// mutant it must reject.
#include "support/span_laws.hpp"
#include "support/span_mutants.hpp"

using namespace pm_test;
using Q = pm::Rational;

PM_LAW("MAP-UNIT-LEFT", "id ∘ f = f", law_map_unit_left<Reference>(),
       law_map_unit_left<MutIdentity>())
PM_LAW("MAP-UNIT-RIGHT", "f ∘ id = f", law_map_unit_right<Reference>(),
       law_map_unit_right<MutIdentity>())
PM_LAW("MAP-ASSOC", "(h ∘ g) ∘ f = h ∘ (g ∘ f)", law_map_assoc<Reference>(),
       law_map_assoc<MutCompose>())
PM_LAW("PULL-ID", "id* = id", (law_pull_id<Reference, Q>()), (law_pull_id<MutPull, Q>()))
PM_LAW("PULL-COMP", "(g ∘ f)* = f* ∘ g*", (law_pull_comp<Reference, Q>()),
       (law_pull_comp<MutPull, Q>()))
PM_LAW("PUSH-ID", "id_! = id", (law_push_id<Reference, Q>()), (law_push_id<MutPush, Q>()))
PM_LAW("PUSH-COMP", "(g ∘ f)_! = g_! ∘ f_!", (law_push_comp<Reference, Q>()),
       (law_push_comp<MutPush, Q>()))
PM_LAW("INT-COMP", "(g ∘ f)_!^μ = g_!^1 ∘ f_!^μ", (law_int_comp<Reference, Q>()),
       (law_int_comp<MutIntegrate, Q>()))
PM_LAW("PROJ-FORMULA", "f_!^μ(ψ · f*φ) = φ · f_!^μ ψ", (law_proj_formula<Reference, Q>()),
       (law_proj_formula<MutIntegrate, Q>()))
PM_LAW("BECK-CHEVALLEY", "g* f_!^μ = q_!^{p*μ} p*", (law_beck_chevalley<Reference, Q>()),
       (law_beck_chevalley<MutFibre, Q>()))
PM_LAW("SPAN-ASSOC", "(c ∘ b) ∘ a ≅ c ∘ (b ∘ a)", (law_span_assoc<Reference, Q>()),
       (law_span_assoc<MutMeasureDifference, Q>()))
PM_LAW("SPAN-UNIT-LEFT", "id ∘ a ≅ a", (law_span_unit_left<Reference, Q>()),
       (law_span_unit_left<MutMeasureDifference, Q>()))
PM_LAW("SPAN-UNIT-RIGHT", "a ∘ id ≅ a", (law_span_unit_right<Reference, Q>()),
       (law_span_unit_right<MutMeasureDifference, Q>()))
PM_LAW("SPAN-ISO-WITNESS", "relabelled apex is found isomorphic, a changed weight is not",
       (law_span_iso_witness<Reference, Q>()), (law_span_iso_witness<MutIso, Q>()))
PM_LAW("SPAN-LIN-COMP", "L(b ∘ a) = L(b) ∘ L(a)", (law_span_lin_comp<Reference, Q>()),
       (law_span_lin_comp<MutDroppedMeasure, Q>()))
PM_LAW("SPAN-LIN-ID", "L(id) = id", (law_span_lin_id<Reference, Q>()),
       (law_span_lin_id<MutSpanIdentity, Q>()))
PM_LAW("SPAN-TRANSPOSE-INVOL", "(aᵀ)ᵀ = a", (law_span_transpose_invol<Reference, Q>()),
       (law_span_transpose_invol<MutTransposeUnitMeasure, Q>()))
PM_LAW("SPAN-ADJOINT", "⟨g, L φ⟩ = ⟨Lᵀ g, φ⟩", (law_span_adjoint<Reference, Q>()),
       (law_span_adjoint<MutTransposeReversedMeasure, Q>()))
PM_LAW("BATCH-COLUMNWISE", "a layer acts on each column of a batch",
       (law_batch_columnwise<Reference, Q>()), (law_batch_columnwise<MutBatch, Q>()))
PM_LAW("PSPAN-BILINEAR", "L_w φ is linear in w and in φ", (law_pspan_bilinear<Reference, Q>()),
       (law_pspan_bilinear<MutApplyAdds, Q>()))
PM_LAW("PSPAN-ADJOINT", "⟨g, L_w φ⟩ = ⟨L_wᵀ g, φ⟩", (law_pspan_adjoint<Reference, Q>()),
       (law_pspan_adjoint<MutPTranspose, Q>()))
PM_LAW("PSPAN-GRADIENT", "⟨g, L_w φ⟩ = ⟨w, π_!^μ(s*φ · t*g)⟩", (law_pspan_gradient<Reference, Q>()),
       (law_pspan_gradient<MutGradient, Q>()))
PM_LAW("PSPAN-COMP", "L_{w_a ⊗ w_b}(b ∘ a) = L_{w_b} ∘ L_{w_a}", (law_pspan_comp<Reference, Q>()),
       (law_pspan_comp<MutParameterOrder, Q>()))
