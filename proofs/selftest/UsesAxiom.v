(* A fixture for the ctest proofs_self_test: one marked theorem rests on the
   axiom of functional extensionality, one on nothing. check_proofs.cmake
   must report exactly one of the two as closed, and fail. *)
From Coq Require Import FunctionalExtensionality.

(* Law: SELF-TEST-AXIOM *)
Theorem uses_axiom : (fun x : nat => x + 0) = (fun x => x).
Proof. apply functional_extensionality; intro x; rewrite <- plus_n_O; reflexivity. Qed.

(* Law: SELF-TEST-CLOSED *)
Theorem closed : forall x : nat, x + 0 = x.
Proof. intro x; rewrite <- plus_n_O; reflexivity. Qed.
