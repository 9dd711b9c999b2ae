(* The guard check switched off for one definition by an attribute. *)
#[bypass_check(guard)] Fixpoint loop (n : nat) : False := loop n.

(* Law: FIX-ONE *)
Theorem one : False.
Proof. exact (loop 0). Qed.
