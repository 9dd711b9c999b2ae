(* A law marker with unusual spacing still marks its theorem: the theorem
   is a law theorem (the Proof line names it), and it rests on an axiom. *)
From Coq Require Import FunctionalExtensionality.

(*   Law:  FIX-ONE   *)
Theorem one : (fun x : nat => x + 0) = (fun x => x).
Proof. apply functional_extensionality; intro x; rewrite <- plus_n_O; reflexivity. Qed.
