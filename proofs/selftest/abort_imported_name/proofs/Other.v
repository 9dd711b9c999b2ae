(* A constant named like the law theorem, for the abandoned proof to fall back on. *)
Theorem one : True.
Proof. exact I. Qed.
