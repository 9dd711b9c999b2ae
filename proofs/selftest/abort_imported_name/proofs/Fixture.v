(* The marked proof is abandoned while a constant of its name is in scope;
   a theorem of the same name then proves True. *)
From PM Require Import Other.

(* Law: FIX-ONE *)
Theorem one : forall n : nat, n + 0 = n.
Proof. intro n. Abort.

Theorem one : True.
Proof. exact I. Qed.
