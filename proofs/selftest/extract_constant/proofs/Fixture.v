(* A proved model whose extracted program would not be the model: addition
   replaced by hand-written OCaml. *)
(* Law: FIX-ONE *)
Theorem one : 1 + 1 = 2.
Proof. reflexivity. Qed.

Require Extraction.
Extract Constant Nat.add => "fun a b -> a - b".
