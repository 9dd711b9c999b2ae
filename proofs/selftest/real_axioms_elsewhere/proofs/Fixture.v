(* The axioms of the reals are allowed in proofs/Backprop.v only. *)
From Coq Require Import Reals.

(* Law: FIX-ONE *)
Theorem closed : forall x : nat, x + 0 = x.
Proof. intro x; rewrite <- plus_n_O; reflexivity. Qed.

Lemma on_reals : forall x : R, (x + 0 = x)%R.
Proof. exact Rplus_0_r. Qed.
