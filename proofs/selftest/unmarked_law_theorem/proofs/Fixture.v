(* The spec names two theorems, only one carries the marker. *)
(* Law: FIX-ONE *)
Theorem one : 0 = 0.
Proof. reflexivity. Qed.

Theorem two : 1 = 1.
Proof. reflexivity. Qed.
