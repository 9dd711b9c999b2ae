(* A law left unproved. *)
(* Law: FIX-ONE *)
Theorem one : 1 = 2.
Proof. Admitted.
