(* Machines, resolvents, depth, the level solver and the backward pass: the
   laws of spec/machines.md, proved over an arbitrary commutative ring R.

   The model follows src/pm/machine/: the global space is S^n, here column
   vectors 'cV[R]_n (so that equality is extensional and linear maps are
   matrices); a machine is any endofunction f of 'cV_n; a grading d gives
   every index a grade in 1..D, as pm::Grading does. The graded span
   machine, its level solver and its backward pass are stated on functions
   'I_n -> R, with the spans of Spans.v. *)
From mathcomp Require Import all_ssreflect all_algebra.
From PM Require Import Spans.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.
Local Open Scope ring_scope.

Section Machines.

Variable R : comRingType.

Notation vec n := 'cV[R]_n.

(* ------------------------------------------------------------------ *)
(* Machines and resolvents (machine.hpp, resolvent.hpp).              *)

(* x solves the machine equation x = x0 + f(x), i.e. x = R_f(x0). *)
Definition solves n (f : vec n -> vec n) (x0 x : vec n) := x = x0 + f x.

(* f is a machine when the machine equation has exactly one solution for
   every input: id - f is invertible and R_f = (id - f)^-1. *)
Definition is_machine n (f : vec n -> vec n) := forall x0, exists! x, solves f x0 x.

(* f1 does not depend on f2: f1(a + lambda f2(b)) = f1(a). *)
Definition independent n (f1 f2 : vec n -> vec n) :=
  forall a b (lambda : R), f1 (a + lambda *: f2 b) = f1 a.

(* sum f1 f2 = f1 + f2 (pm::sum). *)
Definition sum n (f1 f2 : vec n -> vec n) : vec n -> vec n := fun x => f1 x + f2 x.

(* (id - f1) o (id - f2) = id - (f1 + f2) when f1 does not depend on f2. *)
Lemma factor_independent n (f1 f2 : vec n -> vec n) : independent f1 f2 ->
  forall x, (x - f2 x) - f1 (x - f2 x) = x - sum f1 f2 x.
Proof.
move=> ind x; have -> : x - f2 x = x + (-1) *: f2 x by rewrite scaleN1r.
by rewrite ind /sum scaleN1r opprD addrAC addrA.
Qed.

Lemma solvesP n (f : vec n -> vec n) x0 x : solves f x0 x <-> x - f x = x0.
Proof. by rewrite /solves; split=> [h|<-]; rewrite ?subrK // {1}h addrK. Qed.

(* Law: MACH-SUM-RULE *)
Theorem mach_sum_rule n (f1 f2 : vec n -> vec n) : independent f1 f2 ->
  (forall x0 x1 x2, solves f1 x0 x1 -> solves f2 x1 x2 -> solves (sum f1 f2) x0 x2) /\
  (is_machine f1 -> is_machine f2 -> is_machine (sum f1 f2)).
Proof.
move=> ind; have comp x0 x1 x2 : solves f1 x0 x1 -> solves f2 x1 x2 -> solves (sum f1 f2) x0 x2.
  move=> /solvesP s1 /solvesP s2; apply/solvesP.
  by rewrite -factor_independent // s2.
split=> // m1 m2 x0; have [x1 [s1 u1]] := m1 x0; have [x2 [s2 u2]] := m2 x1.
exists x2; split; first exact: comp s1 s2.
move=> y /solvesP sy; apply: u2; apply/solvesP; symmetry; apply: u1; apply/solvesP.
by rewrite factor_independent.
Qed.

(* Law: MACH-SELF-INDEP *)
Theorem mach_self_indep n (f : vec n -> vec n) : independent f f ->
  forall x0, solves f x0 (x0 + f x0) /\ (forall x, solves f x0 x -> x = x0 + f x0).
Proof.
move=> ind x0; have fx x : f (x0 + f x) = f x0 by rewrite -[f x]scale1r ind.
split=> [|x sx]; first by rewrite /solves fx.
by rewrite {1}sx; congr (_ + _); rewrite sx fx.
Qed.

(* The direct sum f x g on S^(n+m): (a, b) |-> (f a, g b) (pm::direct_sum). *)
Definition direct_sum n m (f : vec n -> vec n) (g : vec m -> vec m) : vec (n + m) -> vec (n + m) :=
  fun x => col_mx (f (usubmx x)) (g (dsubmx x)).

(* Law: MACH-DIRECT-SUM *)
Theorem mach_direct_sum n m (f : vec n -> vec n) (g : vec m -> vec m) :
  (forall a0 a b0 b, solves f a0 a -> solves g b0 b ->
     solves (direct_sum f g) (col_mx a0 b0) (col_mx a b)) /\
  (is_machine f -> is_machine g -> is_machine (direct_sum f g)).
Proof.
have comp a0 a b0 b : solves f a0 a -> solves g b0 b ->
    solves (direct_sum f g) (col_mx a0 b0) (col_mx a b).
  by move=> sa sb; rewrite /solves /direct_sum col_mxKu col_mxKd add_col_mx -sa -sb.
split=> // mf mg x0; have [a [sa ua]] := mf (usubmx x0); have [b [sb ub]] := mg (dsubmx x0).
exists (col_mx a b); split; first by rewrite -[x0]vsubmxK; apply: comp.
move=> x sx; rewrite -[x]vsubmxK; congr col_mx; [apply: ua | apply: ub].
  by rewrite /solves {1}sx /direct_sum linearD /= col_mxKu.
by rewrite /solves {1}sx /direct_sum linearD /= col_mxKd.
Qed.

(* ------------------------------------------------------------------ *)
(* Gradings and depth (grading.hpp, depth.hpp).                       *)

Section Depth.

Variables (n D : nat) (d : 'I_n -> nat).

(* pm::Grading validates every grade to lie in 1..D. *)
Definition is_grading := forall i, (0 < d i <= D)%N.

(* Grades start at 1: the induction over grades has an empty base. *)
Lemma no_grade_zero {i} : is_grading -> (d i <= 0)%N -> False.
Proof. by move=> g; case/andP: (g i) => pos _; rewrite leqNgt pos. Qed.

(* f has depth <= D for d: output i depends only on the inputs of grade
   below d i. With the projections pi_k onto grades <= k this is equivalent to
   pi_k o f = pi_k o f o pi_(k-1) for every k. *)
Definition has_depth (f : vec n -> vec n) :=
  forall (x y : vec n) i, (forall j, (d j < d i)%N -> x j 0 = y j 0) -> f x i 0 = f y i 0.

(* A matrix has depth <= D when it is strictly block-triangular: every
   nonzero entry (i, j) has d j < d i (pm::has_depth on a matrix). *)
Definition matrix_has_depth (W : 'M[R]_n) := forall i j, W i j != 0 -> (d j < d i)%N.

Lemma linear_depth W : matrix_has_depth W -> has_depth (mulmx W).
Proof.
move=> hW x y i agree; rewrite !mxE; apply: eq_bigr => j _.
have [/agree-> // | lt] := ltnP (d j) (d i).
suff /eqP-> : W i j == 0 by rewrite !mul0r.
by apply: contraTT lt => /hW; rewrite -ltnNge.
Qed.

Variable f : vec n -> vec n.
Hypothesis grading : is_grading.
Hypothesis depth : has_depth f.

(* One step of the naive iteration x <- x0 + f(x) (naive_iterates). *)
Definition naive_step (x0 x : vec n) := x0 + f x.

(* Two runs of the naive iteration agree on grades <= k after k steps. *)
Lemma naive_agree x0 y y' k i :
  (d i <= k)%N -> iter k (naive_step x0) y i 0 = iter k (naive_step x0) y' i 0.
Proof.
elim: k i => [|k IH] i dk; first by case: (no_grade_zero grading dk).
rewrite /= /naive_step !mxE; congr (_ + _); apply: depth => j lt.
by apply: IH; rewrite -ltnS (leq_trans lt).
Qed.

Lemma naive_settles x0 y y' : iter D (naive_step x0) y = iter D (naive_step x0) y'.
Proof. by apply/matrixP => i j; rewrite !ord1; apply: naive_agree; case/andP: (grading i). Qed.

Lemma fixed_iter x0 x k : solves f x0 x -> iter k (naive_step x0) x = x.
Proof. by move=> sx; elim: k => //= k ->; rewrite /naive_step -sx. Qed.

(* Law: DEPTH-NAIVE *)
Theorem depth_naive x0 y :
  solves f x0 (iter D (naive_step x0) y) /\
  (forall x, solves f x0 x -> x = iter D (naive_step x0) y) /\
  (forall k i, (d i <= k)%N -> iter k (naive_step x0) y i 0 = iter D (naive_step x0) y i 0).
Proof.
have s : solves f x0 (iter D (naive_step x0) y).
  by rewrite /solves -/(naive_step x0 _) -iterS iterSr (naive_settles x0 _ y).
split=> //; split=> [x sx|k i dk]; first by rewrite -(fixed_iter D sx) (naive_settles x0 x y).
by rewrite -(fixed_iter k s); apply: naive_agree.
Qed.

(* Law: DEPTH-MACHINE *)
Theorem depth_machine : is_machine f.
Proof.
move=> x0; exists (iter D (naive_step x0) 0).
by have [s [u _]] := depth_naive x0 0; split=> // x /u.
Qed.

(* Law: MACH-UNIQUE *)
Theorem mach_unique : injective (fun x => x - f x).
Proof.
move=> x x' /= e; have [_ [u _]] := depth_naive (x - f x) 0.
have sx : solves f (x - f x) x by apply/solvesP.
have sx' : solves f (x - f x) x' by apply/solvesP; rewrite e.
by rewrite (u _ sx) (u _ sx').
Qed.

(* The level-by-level schedule (solver.hpp): the state starts at zero and,
   for the grades k = 1..D in turn, every index i of grade k is finished,
   x_i = x0_i + f(x)_i; the others are left alone. *)
Definition level_step (x0 : vec n) (k : nat) (x : vec n) : vec n :=
  \col_i (if d i == k then x0 i 0 + f x i 0 else x i 0).

Fixpoint level_schedule (x0 : vec n) (k : nat) : vec n :=
  if k is k'.+1 then level_step x0 k (level_schedule x0 k') else 0.

(* After the grades 1..k, the indices of grade <= k satisfy the machine
   equation. *)
Lemma level_schedule_invariant x0 k i :
  (d i <= k)%N -> level_schedule x0 k i 0 = x0 i 0 + f (level_schedule x0 k) i 0.
Proof.
elim: k i => [|k IH] i dk; first by case: (no_grade_zero grading dk).
set x := level_schedule x0 k; rewrite /= -/x.
have same : f (level_step x0 k.+1 x) i 0 = f x i 0.
  apply: depth => j lt; rewrite mxE; case: eqP => // djk.
  by move: lt; rewrite djk ltnNge dk.
rewrite same mxE; case: eqP => // /eqP dik; apply: IH.
by rewrite -ltnS ltn_neqAle dik dk.
Qed.

(* The same schedule as a product of maps, R_f = (id + f_D) o ... o (id + f_1)
   with f_k = (pi_k - pi_(k-1)) f: the update of grade k adds f(x) there. *)
Definition level_part (k : nat) (x : vec n) : vec n := \col_i (if d i == k then f x i 0 else 0).

Fixpoint level_product (x0 : vec n) (k : nat) : vec n :=
  if k is k'.+1 then let x := level_product x0 k' in x + level_part k x else x0.

(* After k factors the product agrees with the schedule on grades <= k and
   still holds x0 above. *)
Lemma level_product_schedule x0 k i :
  level_product x0 k i 0 = if (d i <= k)%N then level_schedule x0 k i 0 else x0 i 0.
Proof.
elim: k i => [|k IH] i; first by case: ifP => // /(no_grade_zero grading) [].
rewrite /= !mxE IH; have [dk|dk] := leqP (d i) k.
  have ne : (d i == k.+1) = false by apply/negbTE; rewrite neq_ltn ltnS dk.
  by rewrite ne addr0 (leq_trans dk (leqnSn _)).
case: (eqVneq (d i) k.+1) => [e|ne]; last first.
  by rewrite addr0 leq_eqVlt (negbTE ne) ltnS leqNgt dk.
rewrite e leqnn; congr (_ + _); apply: depth => j lt.
by rewrite IH -ltnS -e lt.
Qed.

(* Law: DEPTH-LEVEL-SCHEDULE *)
Theorem depth_level_schedule x0 :
  solves f x0 (level_schedule x0 D) /\ (forall x, solves f x0 x -> x = level_schedule x0 D) /\
  level_product x0 D = level_schedule x0 D.
Proof.
have s : solves f x0 (level_schedule x0 D).
  apply/matrixP => i j; rewrite !ord1 [RHS]mxE level_schedule_invariant //.
  by case/andP: (grading i).
split=> //; split=> [x sx|]; first by have [_ [u _]] := depth_naive x0 0; rewrite (u _ sx) (u _ s).
apply/matrixP => i j; rewrite !ord1 level_product_schedule.
by case/andP: (grading i) => _ ->.
Qed.

End Depth.

(* ------------------------------------------------------------------ *)
(* The derivative of the resolvent, in the algebraic form that the     *)
(* tests use (dual numbers Q[eps], eps^2 = 0): f has the Jacobian J at  *)
(* x along eps when f(x + eps v) = f(x) + eps J v for every v, as every *)
(* polynomial map does over the dual numbers. Then the resolvent at     *)
(* x0 + eps v0 is R_f(x0) + eps R_J(v0): D R_f(x0) = R_(Df(x)).         *)

Section Derivative.

Variables (n D : nat) (d : 'I_n -> nat) (f : vec n -> vec n).
Hypotheses (grading : is_grading D d) (depth : has_depth d f).
Variables (eps : R) (J : 'M[R]_n) (x0 v0 x u : vec n).
Hypothesis jacobian : forall v, f (x + eps *: v) = f x + eps *: (J *m v).

(* Law: MACH-DERIVATIVE *)
Theorem mach_derivative : solves f x0 x -> solves (mulmx J) v0 u ->
  solves f (x0 + eps *: v0) (x + eps *: u) /\
  (forall x', solves f (x0 + eps *: v0) x' -> x' = x + eps *: u).
Proof.
move=> sx su; have s : solves f (x0 + eps *: v0) (x + eps *: u).
  rewrite /solves jacobian {1}sx {1}su scalerDr.
  by rewrite addrACA.
split=> // x' sx'; have [_ [uniq _]] := depth_naive grading depth (x0 + eps *: v0) 0.
by rewrite (uniq _ sx') (uniq _ s).
Qed.

End Derivative.

(* ------------------------------------------------------------------ *)
(* The backward pass (backward.hpp): the transposed linear map over the *)
(* reversed grading d'(i) = D + 1 - d(i) (Grading::reversed).          *)

Section Backward.

Variables (n D : nat) (d : 'I_n -> nat).
Hypothesis grading : is_grading D d.

Definition reversed (i : 'I_n) := (D.+1 - d i)%N.

Lemma reversed_grading : is_grading D reversed.
Proof.
move=> i; case/andP: (grading i) => lo hi.
by rewrite /reversed subn_gt0 ltnS hi /= leq_subLR -addn1 addnC leq_add2r.
Qed.

Lemma reversed_lt i j : (reversed i < reversed j)%N = (d j < d i)%N.
Proof.
case/andP: (grading i) => _ hi; case/andP: (grading j) => _ hj.
apply/idP/idP => lt; last by apply: ltn_sub2l lt; rewrite ltnS.
by move: lt; apply: contraLR; rewrite -!leqNgt => le; apply: leq_sub2l.
Qed.

(* Law: DEPTH-DUAL *)
Theorem depth_dual (W : 'M[R]_n) : matrix_has_depth d W <-> matrix_has_depth reversed W^T.
Proof.
split=> hW i j; first by rewrite mxE reversed_lt => /hW.
by move=> Wij; rewrite -reversed_lt; apply: hW; rewrite mxE.
Qed.

(* Law: MACH-BACKWARD *)
Theorem mach_backward (W : 'M[R]_n) (g : vec n) : matrix_has_depth d W ->
  let u := level_schedule reversed (mulmx W^T) g D in
  u = g + W^T *m u /\ (1%:M - W^T) *m u = g /\
  (forall v, (1%:M - W^T) *m v = g -> v = u).
Proof.
move=> hW u; have dT := linear_depth (proj1 (depth_dual W) hW).
have [su [uu _]] := depth_level_schedule reversed_grading dT g.
have eqv v : ((1%:M - W^T) *m v = g) <-> solves (mulmx W^T) g v.
  by rewrite mulmxBl mul1mx; split=> [h|h]; apply/solvesP.
by split=> //; split=> [|v /eqv /uu //]; apply/eqv.
Qed.

End Backward.

(* ------------------------------------------------------------------ *)
(* The graded span machine (graded_span_machine.hpp, clean.hpp) and   *)
(* its level solver (solver.hpp), on functions 'I_n -> R as in        *)
(* Spans.v. The state (y, z) solves y = y0 + L_clean(w) z and          *)
(* z = z0 + sigma(y), with sigma i v the value of the nonlinearity at   *)
(* index i (Sigma::value).                                             *)

Section GradedSpanMachine.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan R n n P).
Hypothesis grading : is_grading D d.

Local Notation E := (apex (span a)).
Local Notation src := (s (span a)).
Local Notation tgt := (t (span a)).
Local Notation weight := (mu (span a)).

(* p is valid when every edge with parameter p raises the grade. *)
Definition valid_parameter (p : 'I_P) :=
  [forall e : 'I_E, (pi a e == p) ==> (d (src e) < d (tgt e))%N].

Definition clean (w : 'I_P -> R) : 'I_P -> R := fun p => if valid_parameter p then w p else 0.

Lemma valid_edge e : valid_parameter (pi a e) -> (d (src e) < d (tgt e))%N.
Proof. by move/forallP/(_ e); rewrite eqxx. Qed.

Variables (sigma : 'I_n -> R -> R) (w : 'I_P -> R) (y0 z0 : 'I_n -> R).

(* What the solver accumulates into acc[i]: the valid edges into i, in
   increasing edge order, mu(e) * (w(pi e) * z(s e)). *)
Definition incoming (z : 'I_n -> R) (i : 'I_n) :=
  \sum_(e < E | valid_parameter (pi a e) && (tgt e == i)) weight e * (w (pi a e) * z (src e)).

(* Grade k of the sweep: finish y, then z, on the indices of grade k. *)
Definition forward_level (k : nat) (x : ('I_n -> R) * ('I_n -> R)) :=
  let y := fun i => if d i == k then y0 i + incoming x.2 i else x.1 i in
  (y, fun i => if d i == k then z0 i + sigma i (y i) else x.2 i).

(* The state starts at zero; the grades k = 1..D are swept in turn. *)
Fixpoint forward (k : nat) : ('I_n -> R) * ('I_n -> R) :=
  if k is k'.+1 then forward_level k (forward k') else (fun _ => 0, fun _ => 0).

(* The incoming sum at i only reads z below the grade of i. *)
Lemma incoming_local z z' i :
  (forall j, (d j < d i)%N -> z j = z' j) -> incoming z i = incoming z' i.
Proof.
move=> agree; apply: eq_bigr => e /andP[/valid_edge lt /eqP ti].
by rewrite agree // -ti.
Qed.

(* With cleaned parameters the layer is exactly the incoming sum. *)
Lemma apply_clean z i : apply_p a (clean w) z i = incoming z i.
Proof.
rewrite /apply_p /integrate /hadamard /pullback /incoming.
under [RHS]eq_bigl do rewrite andbC.
rewrite [RHS]big_mkcondr /=; apply: eq_bigr => e _; rewrite /clean.
by case: valid_parameter; rewrite ?mul0r ?mulr0.
Qed.

(* Law: GRADED-CLEAN *)
Theorem graded_clean :
  (forall p, clean (clean w) p = clean w p) /\
  (forall p, clean w p = if valid_parameter p then w p else 0) /\
  (forall e, weight e * clean w (pi a e) != 0 -> (d (src e) < d (tgt e))%N) /\
  (forall z z' i, (forall j, (d j < d i)%N -> z j = z' j) ->
     apply_p a (clean w) z i = apply_p a (clean w) z' i).
Proof.
split; [|split; [|split]] => [p|p //|e|z z' i agree].
- by rewrite /clean; case: valid_parameter.
- rewrite /clean; case valid: valid_parameter; first by rewrite (valid_edge valid).
  by rewrite mulr0 eqxx.
- by rewrite !apply_clean; apply: incoming_local.
Qed.

Lemma forward_invariant k i : (d i <= k)%N ->
  (forward k).1 i = y0 i + incoming (forward k).2 i /\
  (forward k).2 i = z0 i + sigma i ((forward k).1 i).
Proof.
elim: k i => [|k IH] i dk; first by case: (no_grade_zero grading dk).
set x := forward k; rewrite /= -/x.
have same : incoming (forward_level k.+1 x).2 i = incoming x.2 i.
  apply: incoming_local => j lt /=; case: eqP => // djk.
  by move: lt; rewrite djk ltnNge dk.
rewrite same /=; case: eqP => // /eqP dik; apply: IH.
by rewrite -ltnS ltn_neqAle dik dk.
Qed.

(* Law: DEPTH-LEVEL-SCHEDULE *)
Theorem forward_solves :
  let x := forward D in
  (forall i, x.1 i = y0 i + apply_p a (clean w) x.2 i) /\
  (forall i, x.2 i = z0 i + sigma i (x.1 i)) /\
  (forall y z, (forall i, y i = y0 i + apply_p a (clean w) z i) ->
               (forall i, z i = z0 i + sigma i (y i)) ->
               forall i, y i = x.1 i /\ z i = x.2 i).
Proof.
move=> x; have inv i := forward_invariant (proj2 (andP (grading i))).
split; [|split] => [i|i|y z ey ez].
- by rewrite apply_clean; case: (inv i).
- by case: (inv i).
have lower k : forall i, (d i <= k)%N -> y i = x.1 i /\ z i = x.2 i.
  elim: k => [|k IH] i dk; first by case: (no_grade_zero grading dk).
  have yi : y i = x.1 i.
    rewrite ey apply_clean (proj1 (inv i)); congr (_ + _); apply: incoming_local => j lt.
    by case: (IH j) => //; rewrite -ltnS (leq_trans lt).
  by split=> //; rewrite ez (proj2 (inv i)) yi.
by move=> i; apply: (lower D); case/andP: (grading i).
Qed.

(* The graded span machine as one machine on its whole state x = (y, z)
   in S^(n+n), y first (state_machine.hpp): f(y, z) = (L_clean(w) z, sigma(y)),
   with the state grading y_i |-> 2 d(i) - 1, z_i |-> 2 d(i)
   (graded_span_machine.hpp). *)
Definition state_grade (k : 'I_(n + n)) : nat :=
  match split k with inl i => (d i).*2.-1 | inr i => (d i).*2 end.

Lemma state_grade_y i : state_grade (lshift n i) = (d i).*2.-1.
Proof. by rewrite /state_grade (unsplitK (inl i : 'I_n + 'I_n)). Qed.

Lemma state_grade_z i : state_grade (rshift n i) = (d i).*2.
Proof. by rewrite /state_grade (unsplitK (inr i : 'I_n + 'I_n)). Qed.

Definition as_machine (x : vec (n + n)) : vec (n + n) :=
  col_mx (\col_i apply_p a (clean w) (fun j => dsubmx x j 0) i) (\col_i sigma i (usubmx x i 0)).

Definition state (y z : 'I_n -> R) : vec (n + n) := col_mx (\col_i y i) (\col_i z i).

Lemma state_grading : is_grading (D.*2) state_grade.
Proof.
move=> k; rewrite /state_grade; case: split => i; case/andP: (grading i) => lo hi.
  rewrite ltn_predRL -[2%N]/(1.*2) leq_double lo /=.
  by apply: leq_trans (leq_pred _) _; rewrite leq_double.
by rewrite double_gt0 lo leq_double.
Qed.

Lemma state_depth : has_depth state_grade as_machine.
Proof.
move=> x x' k; rewrite -(splitK k); case: (split k) => i agree /=.
  rewrite !col_mxEu !mxE !apply_clean; apply: incoming_local => j lt; rewrite !mxE.
  by apply: agree; rewrite state_grade_y state_grade_z ltn_predRL -doubleS leq_double.
rewrite !col_mxEd !mxE; congr (sigma i _); apply: agree.
rewrite state_grade_y state_grade_z ltn_predL double_gt0.
by case/andP: (grading i).
Qed.

(* Law: DEPTH-MACHINE *)
Theorem state_machine_depth :
  has_depth state_grade as_machine /\ is_machine as_machine /\
  (forall x0 x, solves as_machine x0 (iter D.*2 (naive_step as_machine x0) x)) /\
  solves as_machine (state y0 z0) (state (forward D).1 (forward D).2).
Proof.
split; first exact: state_depth.
split; first exact: depth_machine state_grading state_depth.
split=> [x0 x|]; first by case: (depth_naive state_grading state_depth x0 x).
have [ey [ez _]] := forward_solves.
rewrite /solves /state /as_machine col_mxKu col_mxKd add_col_mx; congr col_mx.
  apply/matrixP => i j; rewrite !ord1 !mxE ey; congr (_ + _).
  by apply: eq_bigr => e _; rewrite /hadamard /pullback mxE.
by apply/matrixP => i j; rewrite !ord1 !mxE ez.
Qed.

(* Law: MACH-UNIQUE *)
Theorem state_machine_unique : injective (fun x => x - as_machine x).
Proof. exact: mach_unique state_grading state_depth. Qed.

End GradedSpanMachine.

(* Law: MACH-EQUATION *)
Theorem mach_equation n D P (d : 'I_n -> nat) (a : ParametricSpan R n n P) (grading : is_grading D d)
  sigma w y0 z0 :
  let x := forward d a sigma w y0 z0 D in
  (forall i, x.1 i = y0 i + apply_p a (clean d a w) x.2 i) /\
  (forall i, x.2 i = z0 i + sigma i (x.1 i)).
Proof. by have [ey [ez _]] := forward_solves a grading sigma w y0 z0. Qed.

(* Law: MACH-CAUSALITY *)
Theorem mach_causality n D P (d : 'I_n -> nat) (a : ParametricSpan R n n P)
  (grading : is_grading D d) sigma w y0 z0 y0' z0' (j : nat) :
  (forall i, (d i < j)%N -> y0 i = y0' i /\ z0 i = z0' i) ->
  let x := forward d a sigma w y0 z0 D in let x' := forward d a sigma w y0' z0' D in
  forall i, (d i < j)%N -> x.1 i = x'.1 i /\ x.2 i = x'.2 i.
Proof.
move=> same x x'.
have [ey [ez _]] := forward_solves a grading sigma w y0 z0.
have [ey' [ez' _]] := forward_solves a grading sigma w y0' z0'.
have below k : forall i, (d i <= k)%N -> (d i < j)%N -> x.1 i = x'.1 i /\ x.2 i = x'.2 i.
  elim: k => [|k IH] i dk dj; first by case: (no_grade_zero grading dk).
  have y_same : x.1 i = x'.1 i.
    rewrite ey ey' !apply_clean (proj1 (same i dj)); congr (_ + _).
    apply: incoming_local => l lt; apply: (proj2 (IH l _ _)).
      by rewrite -ltnS (leq_trans lt).
    exact: ltn_trans lt dj.
  by split=> //; rewrite ez ez' y_same (proj2 (same i dj)).
by move=> i; apply: below; case/andP: (grading i).
Qed.

(* ------------------------------------------------------------------ *)
(* The backward pass of the graded span machine (backward.hpp): the    *)
(* dual machine has the transposed span, the reversed grading and the  *)
(* linear nonlinearity v |-> sigma'(y_i) v; the same solver runs it.   *)

Section GradedBackward.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan R n n P).
Hypothesis grading : is_grading D d.

(* An edge raises the reversed grade of the transpose iff it raises the
   grade: cleaning is the same for the dual machine. *)
(* Law: DEPTH-DUAL *)
Lemma valid_dual p : valid_parameter (reversed D d) (transpose_p a) p = valid_parameter d a p.
Proof. by apply: eq_forallb => e; rewrite /= (reversed_lt grading). Qed.

Lemma apply_p_ext X Y Q (b : ParametricSpan R X Y Q) w w' phi :
  (forall p, w p = w' p) -> forall y, apply_p b w phi y = apply_p b w' phi y.
Proof. by move=> ew y; apply: eq_bigr => e _; rewrite /hadamard /pullback ew. Qed.

Variables (slopes : 'I_n -> R) (w : 'I_P -> R) (gy gz : 'I_n -> R).

(* The dual machine on its whole state (zbar, ybar):
   (zbar, ybar) |-> (L^T ybar, slopes . zbar), i.e. Df(x)^T with its two
   blocks swapped, has depth 2D for the state grading of the reversed
   grading. *)
(* Law: DEPTH-DUAL *)
Theorem dual_state_depth :
  has_depth (state_grade (reversed D d))
            (as_machine (reversed D d) (transpose_p a) (fun i v => slopes i * v) w).
Proof. exact: (state_depth (transpose_p a) (reversed_grading grading)). Qed.

(* forward(dual(m, y), w, g_z, g_y): its y-part is zbar, its z-part ybar. *)
Definition backward := forward (reversed D d) (transpose_p a) (fun i v => slopes i * v) w gz gy D.

(* Law: MACH-BACKWARD *)
Theorem backward_solves :
  (forall i, backward.1 i = gz i + apply_p (transpose_p a) (clean d a w) backward.2 i) /\
  (forall i, backward.2 i = gy i + slopes i * backward.1 i) /\
  (forall zbar ybar,
     (forall i, zbar i = gz i + apply_p (transpose_p a) (clean d a w) ybar i) ->
     (forall i, ybar i = gy i + slopes i * zbar i) ->
     forall i, zbar i = backward.1 i /\ ybar i = backward.2 i).
Proof.
have cl p : clean (reversed D d) (transpose_p a) w p = clean d a w p by rewrite /clean valid_dual.
have [ez [ey u]] := forward_solves (transpose_p a) (reversed_grading grading)
                      (fun i v => slopes i * v) w gz gy.
rewrite /backward; split; [|split]; first by move=> i; rewrite [LHS]ez (apply_p_ext _ _ cl).
  exact: ey.
move=> zbar ybar ezbar eybar; apply: u => // i.
by rewrite ezbar (apply_p_ext _ _ cl).
Qed.

(* The backward pass is the adjoint of the linearised forward pass. For
   tangents (dy, dz) of the forward equations with input tangents
   (dy0, dz0) and a parameter tangent dw,
     dy = dy0 + L_clean(w) dz + L_clean(dw) z,   dz = dz0 + sigma'(y) dz,
   the pairing with the output gradients (g_y, g_z) equals the pairing of
   the cotangents (ybar, zbar) with the input tangents, plus the pairing of
   dw with the cleaned parameter gradient clean(pi_!^mu(s* z . t* ybar)). *)
(* Law: MACH-PARAM-GRADIENT *)
Theorem backward_adjoint (z dy dz dy0 dz0 : 'I_n -> R) (dw : 'I_P -> R) :
  let zbar := backward.1 in let ybar := backward.2 in
  (forall i, dy i = dy0 i + apply_p a (clean d a w) dz i + apply_p a (clean d a dw) z i) ->
  (forall i, dz i = dz0 i + slopes i * dy i) ->
  dot gy dy + dot gz dz =
  dot ybar dy0 + dot zbar dz0 + dot dw (clean d a (parameter_gradient a z ybar)).
Proof.
move=> zbar ybar edy edz; have [ezbar [eybar _]] := backward_solves.
set L := apply_p a (clean d a w); set Lt := apply_p (transpose_p a) (clean d a w).
set G := apply_p a (clean d a dw) z.
have dotB (f g h : 'I_n -> R) : dot (fun i => f i - g i) h = dot f h - dot g h.
  by rewrite /dot -sumrB; apply: eq_bigr => i _; rewrite mulrBl.
have dotBr (f g h : 'I_n -> R) : dot f (fun i => g i - h i) = dot f g - dot f h.
  by rewrite /dot -sumrB; apply: eq_bigr => i _; rewrite mulrBr.
have dot_eq (f f' g g' : 'I_n -> R) :
    (forall i, f i = f' i) -> (forall i, g i = g' i) -> dot f g = dot f' g'.
  by move=> ef eg; apply: eq_bigr => i _; rewrite ef eg.
have -> : dot gy dy = dot ybar dy - dot (fun i => slopes i * zbar i) dy.
  by rewrite -dotB; apply: dot_eq => // i; rewrite [ybar i]eybar addrK.
have -> : dot gz dz = dot zbar dz - dot (Lt ybar) dz.
  by rewrite -dotB; apply: dot_eq => // i; rewrite [zbar i]ezbar addrK.
have -> : dot ybar dy0 = dot ybar dy - dot ybar (L dz) - dot ybar G.
  rewrite -!dotBr; apply: dot_eq => // i.
  by rewrite edy /L /G addrAC !addrK.
have -> : dot zbar dz0 = dot zbar dz - dot (fun i => slopes i * zbar i) dy.
  have -> : dot (fun i => slopes i * zbar i) dy = dot zbar (fun i => slopes i * dy i).
    by apply: eq_bigr => i _; rewrite mulrAC mulrC.
  by rewrite -dotBr; apply: dot_eq => // i; rewrite edz addrK.
have -> : dot dw (clean d a (parameter_gradient a z ybar)) = dot ybar G.
  rewrite /G pspan_gradient; apply: eq_bigr => p _; rewrite /clean.
  by case: valid_parameter; rewrite ?mulr0 ?mul0r.
rewrite /Lt /L -pspan_adjoint.
rewrite [RHS]addrAC subrK addrACA [RHS]addrACA; congr (_ + _); exact: addrC.
Qed.

End GradedBackward.

End Machines.

(* Over a commutative ring with units (a field such as the rationals or the
   reals), I - W^T is invertible and the reversed schedule computes
   (I - W^T)^-1 g literally. *)
Section BackwardInverse.

Variables (F : comUnitRingType) (n D : nat) (d : 'I_n -> nat) (W : 'M[F]_n).
Hypotheses (grading : is_grading D d) (hW : matrix_has_depth d W).

Local Notation schedule g := (level_schedule (reversed D d) (mulmx W^T) g D).

(* Law: MACH-BACKWARD *)
Theorem mach_backward_inverse (g : 'cV[F]_n) :
  (1%:M - W^T) \in unitmx /\ schedule g = invmx (1%:M - W^T) *m g.
Proof.
have solves g' : (1%:M - W^T) *m schedule g' = g' by case: (mach_backward grading g' hW) => _ [].
(* The columns of the inverse are the schedules of the unit vectors. *)
pose N := \matrix_(i, j) schedule (delta_mx j 0 : 'cV[F]_n) i 0.
have AN : (1%:M - W^T) *m N = 1%:M.
  apply/matrixP => i j; rewrite [LHS]mxE.
  transitivity (((1%:M - W^T) *m schedule (delta_mx j 0 : 'cV[F]_n)) i 0).
    by rewrite [RHS]mxE; apply: eq_bigr => k _; rewrite [N _ _]mxE.
  by rewrite solves !mxE eqxx andbT.
have [unit _] := mulmx1_unit AN.
by split=> //; rewrite -{2}(solves g) mulKmx.
Qed.

End BackwardInverse.
