(* A file importing another of the tree. *)
From PM Require Import Fixture.

Fact four : 1 + 0 = 1.
Proof. exact (Arithmetic.one 1). Qed.
