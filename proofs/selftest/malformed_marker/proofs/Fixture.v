(* A marker the reader cannot read must not be skipped silently. *)
(* Law FIX-ONE *)
Theorem one : 0 = 0.
Proof. reflexivity. Qed.
