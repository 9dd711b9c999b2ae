(* A second theorem marked with the law, that the spec does not name:
   the set of law theorems differs from the Proof lines. *)
(* Law: FIX-ONE *)
Theorem one : 0 = 0.
Proof. reflexivity. Qed.

(* Law: FIX-ONE *)
Theorem two : 1 = 1.
Proof. reflexivity. Qed.
