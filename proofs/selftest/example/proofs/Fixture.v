(* A law proved as an Example resting on a library axiom. *)
From Coq Require Import FunctionalExtensionality.

(* Law: FIX-ONE *)
Example one : (fun x : nat => x + 0) = (fun x => x).
Proof. apply functional_extensionality; intro x; rewrite <- plus_n_O; reflexivity. Qed.
