(* The text of the statement is unchanged, a notation makes it mean True. *)
Local Notation "x = y" := True : type_scope.

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; exact I. Qed.
