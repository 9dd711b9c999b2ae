(* An assumption that no theorem uses still makes the library inconsistent
   or its proofs conditional. *)
Class C := { c : nat }.
#[global] Declare Instance inst : C.

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.
