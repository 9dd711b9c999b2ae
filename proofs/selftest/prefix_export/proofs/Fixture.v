(* The checks switched off behind the prefix `Export`. *)
Export Unset Guard Checking.
Fixpoint loop (n : nat) : nat := loop n.
Export Set Guard Checking.

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.
