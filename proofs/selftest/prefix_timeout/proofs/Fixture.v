(* Each refused command behind the control prefix `Timeout 100`. *)
Require Extraction.
Timeout 100 Axiom ax : False.
Timeout 100 Parameter p : nat.
Timeout 100 Conjecture c : False.
Lemma open : False.
Proof. Timeout 100 Admitted.
Timeout 100 Unset Guard Checking.
Fixpoint loop (n : nat) : nat := loop n.
Set Guard Checking.
Timeout 100 Extract Constant Nat.add => "(+)".
Timeout 100 Extract Inlined Constant Nat.mul => "( * )".
Timeout 100 Extract Inductive bool => "bool" [ "true" "false" ].

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.

Definition flip (b : bool) := negb b.
Extraction "model.ml" flip.
