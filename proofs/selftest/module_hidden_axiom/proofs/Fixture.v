(* A module opened behind a control prefix, holding an axiom and a marked
   theorem that rests on it; the same name proved honestly outside. *)
Timeout 100 Module Hidden.
Axiom ax : 1 = 2.

(* Law: FIX-ONE *)
Theorem one : 1 = 2.
Proof. exact ax. Qed.
End Hidden.

Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.
