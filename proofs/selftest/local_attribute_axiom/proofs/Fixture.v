(* An axiom made local by an attribute. *)
#[local] Axiom cheat : forall P : Prop, P.

(* Law: FIX-ONE *)
Theorem one : 1 = 2.
Proof. apply cheat. Qed.
