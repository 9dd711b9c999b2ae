(* A fixpoint that does not terminate, accepted with the guard check off. *)
Unset Guard Checking.
Fixpoint loop (n : nat) : False := loop n.
Set Guard Checking.

(* Law: FIX-ONE *)
Theorem one : False.
Proof. exact (loop 0). Qed.
