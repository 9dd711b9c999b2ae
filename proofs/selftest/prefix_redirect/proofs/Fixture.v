(* Each refused command behind the control prefix `Redirect "log"`. *)
Require Extraction.
Redirect "log" Axiom ax : False.
Redirect "log" Parameter p : nat.
Redirect "log" Conjecture c : False.
Lemma open : False.
Proof. Redirect "log" Admitted.
Redirect "log" Unset Guard Checking.
Fixpoint loop (n : nat) : nat := loop n.
Set Guard Checking.
Redirect "log" Extract Constant Nat.add => "(+)".
Redirect "log" Extract Inlined Constant Nat.mul => "( * )".
Redirect "log" Extract Inductive bool => "bool" [ "true" "false" ].

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n; rewrite <- plus_n_O; reflexivity. Qed.

Definition flip (b : bool) := negb b.
Extraction "model.ml" flip.
