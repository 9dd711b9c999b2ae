(* Each refused command behind the control prefix `Time`. *)
Require Extraction.
Time Axiom ax : False.
Time Parameter p : nat.
Time Conjecture c : False.
Lemma open : False.
Proof. Time Admitted.
Time Unset Guard Checking.
Fixpoint loop (n : nat) : nat := loop n.
Set Guard Checking.
Time Extract Constant Nat.add => "(+)".
Time Extract Inlined Constant Nat.mul => "( * )".
Time Extract Inductive bool => "bool" [ "true" "false" ].

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.

Definition flip (b : bool) := negb b.
Extraction "model.ml" flip.
