(* A section variable outside any Section is an axiom. *)
Hypothesis cheat : forall P : Prop, P.

(* Law: FIX-ONE *)
Theorem one : 1 = 2.
Proof. apply cheat. Qed.
