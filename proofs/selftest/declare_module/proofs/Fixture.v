(* An assumption that no theorem uses still makes the library inconsistent
   or its proofs conditional. *)
Module Type T.
Parameter p : nat.
End T.
Declare Module M : T.

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.
