(* What the gate accepts: laws proved by any kind of declaration, inside
   modules and sections, with section variables and hypotheses. *)
Module Arithmetic.
Section Plus.
Variable n : nat.
Hypothesis positive : 0 < n.

(* Law: FIX-ONE *)
Lemma one : n + 0 = n.
Proof. rewrite <- plus_n_O; reflexivity. Qed.

(* Law: FIX-ONE *)
Remark two : 0 < n + 0.
Proof. rewrite <- plus_n_O; exact positive. Qed.
End Plus.
End Arithmetic.

From Coq Require Import String.
Definition s := "Axiom in a string is no axiom"%string.

(* Law: FIX-TWO *)
Example three : Arithmetic.one 2 = eq_refl 2 \/ True.
Proof. right; exact I. Qed.
