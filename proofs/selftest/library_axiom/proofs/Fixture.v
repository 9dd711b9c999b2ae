(* A theorem that is not a law still has its assumptions printed. *)
From Coq Require Import FunctionalExtensionality.

(* Law: FIX-ONE *)
Theorem closed : forall x : nat, x + 0 = x.
Proof. intro x; rewrite <- plus_n_O; reflexivity. Qed.

Lemma uses_axiom : (fun x : nat => x + 0) = (fun x => x).
Proof. apply functional_extensionality; intro x; rewrite <- plus_n_O; reflexivity. Qed.
