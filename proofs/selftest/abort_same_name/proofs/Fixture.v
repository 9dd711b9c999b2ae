(* The marked proof is abandoned; a theorem of the same name proves True. *)
(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n. Abort.

Theorem one : True.
Proof. exact I. Qed.
