(* The bypass of issue 13: an axiom kept local to the file, behind a law. *)
Local Axiom cheat : forall P : Prop, P.

(* Law: FIX-ONE *)
Theorem one : 1 = 2.
Proof. apply cheat. Qed.
