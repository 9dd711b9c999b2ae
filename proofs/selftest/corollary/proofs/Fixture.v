(* A law restated as a Corollary, resting on an axiom that the file
   does not declare itself: only Print Assumptions can see it. *)
From Coq Require Import FunctionalExtensionality.

(* Law: FIX-ONE *)
Corollary one : (fun x : nat => x + 0) = (fun x => x).
Proof. apply functional_extensionality; intro x; rewrite <- plus_n_O; reflexivity. Qed.
