(* The law theorem keeps its name and marker, its statement is weakened. *)
(* Law: FIX-ONE *)
Theorem one : True.
Proof. exact I. Qed.
