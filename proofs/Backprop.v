(* Backpropagation: the laws MACH-DERIVATIVE, DEPTH-DUAL, MACH-BACKWARD and
   MACH-PARAM-GRADIENT of spec/machines.md for the graded span machine of
   Machines.v, with real derivatives in the sense of Coquelicot (is_derive,
   the derivative of a function R -> R), and in the dual-number form the
   tests compute with, over any commutative ring (Q included).

   Differentiability over R is along lines: for a base point (y0, z0, w)
   and a direction (dy0, dz0, dw) of the inputs and the parameters, the
   solution at (y0 + t dy0, z0 + t dz0, w + t dw) is a function of t in R,
   and its derivative at t = 0 is proved to exist and to be the solution of
   the tangent machine. These are the directional (Gateaux) derivatives;
   that they are those of a Frechet derivative is not stated here. The
   proofs need no hypothesis about a tangent solution: the derivative is
   built grade by grade, as the solver builds the solution. *)
Require Import Reals.
From Coquelicot Require Import Hierarchy Derive.
From mathcomp Require Import all_ssreflect all_algebra.
From mathcomp.analysis Require Import Rstruct.
From PM Require Import Spans Machines Executable Layers.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.
Local Open Scope ring_scope.

(* ------------------------------------------------------------------ *)
(* The solver reads its inputs pointwise.                             *)

Section Pointwise.

Variables (K : comRingType) (n P : nat) (d : 'I_n -> nat) (a : ParametricSpan K n n P).

Lemma incoming_ext w w' z z' i : (forall p, w p = w' p) -> (forall j, z j = z' j) ->
  incoming d a w z i = incoming d a w' z' i.
Proof. by move=> ew ez; apply: eq_bigr => e _; rewrite ew ez. Qed.

Lemma forward_ext sigma w w' y0 y0' z0 z0' :
  (forall p, w p = w' p) -> (forall i, y0 i = y0' i) -> (forall i, z0 i = z0' i) ->
  forall k i, (forward d a sigma w y0 z0 k).1 i = (forward d a sigma w' y0' z0' k).1 i /\
              (forward d a sigma w y0 z0 k).2 i = (forward d a sigma w' y0' z0' k).2 i.
Proof.
move=> ew ey ez; elim=> [|k IH] i //=.
have ei : incoming d a w (forward d a sigma w y0 z0 k).2 i =
          incoming d a w' (forward d a sigma w' y0' z0' k).2 i.
  by apply: incoming_ext => // j; case: (IH j).
by case: (IH i) => e1 e2; case: eqP => _; rewrite ?ey ?ez ?ei ?e1 ?e2.
Qed.

End Pointwise.

(* ------------------------------------------------------------------ *)
(* The tangent machine, over any commutative ring.                    *)

Section Tangent.

Variables (K : comRingType) (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan K n n P).
Variables (sigma sigma' : 'I_n -> K -> K) (w dw : 'I_P -> K) (y0 z0 dy0 dz0 : 'I_n -> K).

(* The solution (y, z) of the graded span machine at (y0, z0, w). *)
Definition solution := forward d a sigma w y0 z0 D.

(* The tangent machine at the solution, for a derivative sigma' of sigma:
   the same span, grading and parameters w, the nonlinearity
   v |-> sigma'(y_i) v, the input tangents dy0 + L_clean(dw) z and dz0. *)
Definition slopes i := sigma' i (solution.1 i).

Definition tangent :=
  forward d a (fun i v => slopes i * v) w (fun i => dy0 i + incoming d a dw solution.2 i) dz0 D.

End Tangent.

(* ------------------------------------------------------------------ *)
(* Dual numbers (MACH-DERIVATIVE over Q, as the tests differentiate). *)

Section DualNumbers.

Variable K : comRingType.

(* a + eps b is Dual a b. *)

Record dual := Dual { re : K; du : K }.

Definition dual_pair (x : dual) := (re x, du x).
Definition pair_dual (p : K * K) := Dual p.1 p.2.
Lemma dual_pairK : cancel dual_pair pair_dual. Proof. by case. Qed.

Definition dual_eqMixin := CanEqMixin dual_pairK.
Canonical dual_eqType := EqType dual dual_eqMixin.
Definition dual_choiceMixin := CanChoiceMixin dual_pairK.
Canonical dual_choiceType := ChoiceType dual dual_choiceMixin.

Definition dual_zero := Dual 0 0.
Definition dual_add x y := Dual (re x + re y) (du x + du y).
Definition dual_opp x := Dual (- re x) (- du x).

Lemma dual_addA : associative dual_add.
Proof. by move=> [a b] [c e] [f g]; rewrite /dual_add /= !addrA. Qed.
Lemma dual_addC : commutative dual_add.
Proof. by move=> [a b] [c e]; rewrite /dual_add /= addrC [e + _]addrC. Qed.
Lemma dual_add0 : left_id dual_zero dual_add.
Proof. by move=> [a b]; rewrite /dual_add /= !add0r. Qed.
Lemma dual_addN : left_inverse dual_zero dual_opp dual_add.
Proof. by move=> [a b]; rewrite /dual_add /= !addNr. Qed.

Definition dual_zmodMixin := ZmodMixin dual_addA dual_addC dual_add0 dual_addN.
Canonical dual_zmodType := ZmodType dual dual_zmodMixin.

(* (a + eps b)(c + eps e) = ac + eps (a e + b c): eps^2 = 0. *)
Definition dual_one := Dual 1 0.
Definition dual_mul x y := Dual (re x * re y) (re x * du y + du x * re y).

Lemma dual_mulA : associative dual_mul.
Proof.
move=> [a b] [c e] [f g]; rewrite /dual_mul /=; congr Dual; first exact: mulrA.
by rewrite mulrDr mulrDl !mulrA addrA.
Qed.
Lemma dual_mulC : commutative dual_mul.
Proof.
by move=> [a b] [c e]; rewrite /dual_mul /= addrC [a * c]mulrC [b * c]mulrC [a * e]mulrC.
Qed.
Lemma dual_mul1 : left_id dual_one dual_mul.
Proof. by move=> [a b]; rewrite /dual_mul /= !mul1r mul0r addr0. Qed.
Lemma dual_mulD : left_distributive dual_mul dual_add.
Proof. by move=> [a b] [c e] [f g]; rewrite /dual_mul /dual_add /= !mulrDl addrACA. Qed.
Lemma dual_one_neq0 : dual_one != 0 :> dual_zmodType.
Proof. by apply/eqP => -[] /eqP; rewrite oner_eq0. Qed.

Definition dual_comRingMixin := ComRingMixin dual_mulA dual_mulC dual_mul1 dual_mulD dual_one_neq0.
Canonical dual_ringType := RingType dual dual_comRingMixin.
Canonical dual_comRingType := ComRingType dual dual_mulC.

(* eps = 0 + eps 1. *)
Definition eps : dual := Dual 0 1.

(* The dual numbers K[eps]/(eps^2): eps^2 = 0, every x is re x + eps du x,
   and the product keeps the first-order term. *)
Theorem dual_ring (x : dual) :
  eps * eps = 0 /\ x = Dual (re x) 0 + eps * Dual (du x) 0 /\
  (forall y : dual, re (x * y) = re x * re y /\ du (x * y) = re x * du y + du x * re y).
Proof.
split; first by rewrite /GRing.mul /= /dual_mul /= !mul0r mulr0 addr0.
split=> [|y //]; case: x => a b.
rewrite /GRing.mul /GRing.add /= /dual_mul /dual_add /=.
by rewrite ?mul0r ?mul1r ?addr0 ?add0r ?mulr0 ?mulr1.
Qed.

(* A parametric span over K, read over K[eps]: the same legs, real
   weights. *)
Definition lift X Y Q (b : ParametricSpan K X Y Q) : ParametricSpan dual_comRingType X Y Q :=
  {| span := {| apex := apex (span b); s := s (span b); t := t (span b);
                mu := fun e => Dual (mu (span b) e) 0 |};
     pi := pi b |}.

Lemma dual_eta (x : dual) : x = Dual (re x) (du x).
Proof. by case: x. Qed.

Lemma re_sum I (r : seq I) (P : pred I) (F : I -> dual) :
  re (\sum_(e <- r | P e) F e) = \sum_(e <- r | P e) re (F e).
Proof. exact: (big_morph re (fun _ _ => erefl) erefl). Qed.

Lemma du_sum I (r : seq I) (P : pred I) (F : I -> dual) :
  du (\sum_(e <- r | P e) F e) = \sum_(e <- r | P e) du (F e).
Proof. exact: (big_morph du (fun _ _ => erefl) erefl). Qed.

Section Forward.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan K n n P).
Hypothesis grading : is_grading D d.

(* sigmaD extends sigma to the dual numbers with the derivative sigma',
   as every polynomial (and every map the tests evaluate on dual numbers)
   does: sigma(v + eps dv) = sigma(v) + eps sigma'(v) dv. *)
Variables (sigma sigma' : 'I_n -> K -> K) (sigmaD : 'I_n -> dual -> dual).
Hypothesis sigma_dual : forall i x, sigmaD i x = Dual (sigma i (re x)) (sigma' i (re x) * du x).

Variables (w dw : 'I_P -> K) (y0 z0 dy0 dz0 : 'I_n -> K).

Lemma incoming_dual (W : 'I_P -> dual) (Z : 'I_n -> dual) i :
  incoming d (lift a) W Z i =
  Dual (incoming d a (fun p => re (W p)) (fun j => re (Z j)) i)
       (incoming d a (fun p => du (W p)) (fun j => re (Z j)) i +
        incoming d a (fun p => re (W p)) (fun j => du (Z j)) i).
Proof.
rewrite [LHS]dual_eta /incoming re_sum du_sum -big_split /=; congr Dual; apply: eq_bigr => e _.
by rewrite mul0r addr0 mulrDr addrC.
Qed.

(* Law: MACH-DERIVATIVE *)
Theorem dual_forward :
  let x := forward d (lift a) sigmaD (fun p => Dual (w p) (dw p)) (fun i => Dual (y0 i) (dy0 i))
                   (fun i => Dual (z0 i) (dz0 i)) D in
  forall i, x.1 i = Dual ((solution D d a sigma w y0 z0).1 i)
                         ((tangent D d a sigma sigma' w dw y0 z0 dy0 dz0).1 i) /\
            x.2 i = Dual ((solution D d a sigma w y0 z0).2 i)
                         ((tangent D d a sigma sigma' w dw y0 z0 dy0 dz0).2 i).
Proof.
move=> x; have [ex1 [ex2 _]] := forward_solves (lift a) grading sigmaD (fun p => Dual (w p) (dw p))
                                  (fun i => Dual (y0 i) (dy0 i)) (fun i => Dual (z0 i) (dz0 i)).
have [_ [_ usol]] := forward_solves a grading sigma w y0 z0.
have [_ [_ utan]] := forward_solves a grading (fun i v => slopes D d a sigma sigma' w y0 z0 i * v) w
                       (fun i => dy0 i + incoming d a dw (solution D d a sigma w y0 z0).2 i) dz0.
have e1 i : x.1 i = Dual (y0 i + incoming d a w (fun j => re (x.2 j)) i)
                         (dy0 i + incoming d a dw (fun j => re (x.2 j)) i +
                          incoming d a w (fun j => du (x.2 j)) i).
  by rewrite [LHS]ex1 apply_clean incoming_dual /GRing.add /= /dual_add /= addrA.
have e2 i : x.2 i = Dual (z0 i + sigma i (re (x.1 i))) (dz0 i + sigma' i (re (x.1 i)) * du (x.1 i)).
  by rewrite [LHS]ex2 sigma_dual.
have re_sol i : re (x.1 i) = (solution D d a sigma w y0 z0).1 i /\
                re (x.2 i) = (solution D d a sigma w y0 z0).2 i.
  apply: (usol (fun j => re (x.1 j)) (fun j => re (x.2 j))) => j.
    by rewrite apply_clean [x.1 j]e1.
  by rewrite [x.2 j]e2.
have du_tan i : du (x.1 i) = (tangent D d a sigma sigma' w dw y0 z0 dy0 dz0).1 i /\
                du (x.2 i) = (tangent D d a sigma sigma' w dw y0 z0 dy0 dz0).2 i.
  apply: (utan (fun j => du (x.1 j)) (fun j => du (x.2 j))) => j.
    rewrite apply_clean [x.1 j]e1 /=; congr (_ + _ + _).
    by apply: incoming_ext => // l; case: (re_sol l).
  by rewrite [x.2 j]e2 /= /slopes (proj1 (re_sol j)).
move=> i; rewrite [x.1 i]dual_eta [x.2 i]dual_eta.
by case: (re_sol i) => -> ->; case: (du_tan i) => -> ->.
Qed.

End Forward.

End DualNumbers.

(* ------------------------------------------------------------------ *)
(* Coquelicot's rules on R -> R, in the notation of MathComp's ring   *)
(* structure on R (Rstruct).                                          *)

(* f has the derivative l at x, for f : R -> R. *)
Notation derives f x l := (is_derive (K:=R_AbsRing) (V:=R_NormedModule) f x l).

Section Rules.

Lemma dv_ext (f g : R -> R) (x l l' : R) :
  derives f x l -> (forall t, f t = g t) -> l = l' -> derives g x l'.
Proof. by move=> h e <-; apply: is_derive_ext h. Qed.

Lemma dv_const (c x : R) : derives (fun _ => c) x 0.
Proof. exact: (is_derive_const (V:=R_NormedModule)). Qed.

Lemma dv_plus (f g : R -> R) (x df dg : R) : derives f x df -> derives g x dg ->
  derives (fun t : R => f t + g t) x (df + dg).
Proof. exact: is_derive_plus. Qed.

Lemma dv_mul (f g : R -> R) (x df dg : R) : derives f x df -> derives g x dg ->
  derives (fun t : R => f t * g t) x (df * g x + f x * dg).
Proof. exact: is_derive_mult. Qed.

Lemma dv_comp (f g : R -> R) (x df dg : R) : derives f (g x) df -> derives g x dg ->
  derives (fun t : R => f (g t)) x (df * dg).
Proof.
by move=> hf hg; have := is_derive_comp _ _ _ _ _ hf hg; rewrite /scal /= /mult /= mulrC.
Qed.

(* t |-> c + t * v has the slope v. *)
Lemma dv_line (c v x : R) : derives (fun t : R => c + t * v) x v.
Proof.
have id : derives (fun t : R => t) x 1 by exact: (is_derive_id (K:=R_AbsRing)).
by have := dv_plus (dv_const c x) (dv_mul id (dv_const v x)); rewrite add0r mulr0 addr0 mul1r.
Qed.

(* A finite sum is derived term by term. *)
Lemma dv_sum (I : Type) (r : seq I) (P : pred I) (F : I -> R -> R) (F' : I -> R) (x : R) :
  (forall e, P e -> derives (F e) x (F' e)) ->
  derives (fun t : R => \sum_(e <- r | P e) F e t) x (\sum_(e <- r | P e) F' e).
Proof.
move=> hF; elim: r => [|e r IH].
  by apply: (dv_ext (dv_const 0 x)) => [t|]; rewrite big_nil.
have step : derives (fun t : R => (if P e then F e t else 0) + \sum_(e <- r | P e) F e t) x
                      ((if P e then F' e else 0) + \sum_(e <- r | P e) F' e).
  by apply: (dv_plus _ IH); case Pe: (P e); [exact: hF Pe | exact: dv_const].
by apply: (dv_ext step) => [t|]; rewrite big_cons; case: (P e); rewrite ?add0r.
Qed.

(* <g, phi(t)> is derived through its second argument. *)
Lemma dv_dot n (g : 'I_n -> R) (phi : R -> 'I_n -> R) (phi' : 'I_n -> R) (x : R) :
  (forall i, derives (fun t : R => phi t i) x (phi' i)) ->
  derives (fun t : R => dot g (phi t)) x (dot g phi').
Proof.
move=> h; rewrite /dot; apply: dv_sum => i _.
by apply: (dv_ext (dv_mul (dv_const (g i) x) (h i))) => //; rewrite mul0r add0r.
Qed.

End Rules.

(* ------------------------------------------------------------------ *)
(* The derivative of the solution (MACH-DERIVATIVE).                  *)

Section Derivative.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan [comRingType of R] n n P).
Hypothesis grading : is_grading D d.

Variables (sigma sigma' : 'I_n -> R -> R).
Variables (w dw : 'I_P -> R) (y0 z0 dy0 dz0 : 'I_n -> R).

Local Notation src := (s (span a)).
Local Notation tgt := (t (span a)).
Local Notation weight := (mu (span a)).

Local Notation solution := (solution D d a sigma w y0 z0).
Local Notation slopes := (slopes D d a sigma sigma' w y0 z0).
Local Notation tangent := (tangent D d a sigma sigma' w dw y0 z0 dy0 dz0).

(* sigma i is differentiable where the machine uses it, at the
   pre-activation y_i of the solution, with derivative sigma' i there;
   elsewhere sigma may have no derivative (relu at 0, say). The derivative
   along a line at t = 0 only reads sigma near that point. *)
Hypothesis sigma_derive : forall i, derives (sigma i) (solution.1 i) (sigma' i (solution.1 i)).

(* The solution along the line through (y0, z0, w) in the direction
   (dy0, dz0, dw). *)
Definition along (t : R) :=
  forward d a sigma (fun p => w p + t * dw p) (fun i => y0 i + t * dy0 i)
          (fun i => z0 i + t * dz0 i) D.

Lemma along0 i : (along 0).1 i = solution.1 i /\ (along 0).2 i = solution.2 i.
Proof. by apply: forward_ext => p; rewrite mul0r addr0. Qed.

Lemma top i : (d i <= D)%N.
Proof. by case/andP: (grading i). Qed.

(* The incoming sum along the line, with the z of lower grades derived. *)
Lemma dv_incoming i (Z : R -> 'I_n -> R) (Z' : 'I_n -> R) :
  (forall e, valid_parameter d a (pi a e) -> tgt e == i ->
     derives (fun t : R => Z t (src e)) 0 (Z' (src e))) ->
  derives (fun t : R => incoming d a (fun p => w p + t * dw p) (Z t) i) 0
            (incoming d a dw (Z 0) i + incoming d a w Z' i).
Proof.
move=> hZ; rewrite /incoming -big_split /=.
apply: dv_sum => e /andP[valid ti].
have hw := dv_line (w (pi a e)) (dw (pi a e)) 0.
apply: (dv_ext (dv_mul (dv_const (weight e) 0) (dv_mul hw (hZ e valid ti)))) => //.
by rewrite mul0r add0r mul0r addr0 mulrDr.
Qed.

Lemma derivative_below k : forall i, (d i <= k)%N ->
  derives (fun t : R => (along t).1 i) 0 (tangent.1 i) /\
  derives (fun t : R => (along t).2 i) 0 (tangent.2 i).
Proof.
elim: k => [|k IH] i dk; first by case: (no_grade_zero grading dk).
have [ty tz] := forward_invariant a grading (fun i v => slopes i * v) w
                  (fun i => dy0 i + incoming d a dw solution.2 i) dz0 (top i).
have hinc : derives (fun t : R => incoming d a (fun p => w p + t * dw p) (along t).2 i) 0
                    (incoming d a dw (along 0).2 i + incoming d a w tangent.2 i).
  apply: dv_incoming => e /valid_edge lt /eqP ti; apply: (proj2 (IH _ _)).
  by rewrite -ltnS (leq_trans _ dk) // -ti.
have hy : derives (fun t : R => (along t).1 i) 0 (tangent.1 i).
  apply: (dv_ext (dv_plus (dv_line (y0 i) (dy0 i) 0) hinc)) => [t|].
    by rewrite /along (proj1 (forward_invariant a grading _ _ _ _ (top i))).
  rewrite /tangent ty -addrA; congr (_ + (_ + _)); apply: incoming_ext => // j.
  exact: proj2 (along0 j).
have := sigma_derive i; rewrite -(proj1 (along0 i)) => hsig.
split=> //; have hs := dv_comp hsig hy.
apply: (dv_ext (dv_plus (dv_line (z0 i) (dz0 i) 0) hs)) => [t|].
  by rewrite /along (proj2 (forward_invariant a grading _ _ _ _ (top i))).
by rewrite /tangent tz (proj1 (along0 i)).
Qed.

(* Law: MACH-DERIVATIVE *)
Theorem solution_derivative :
  (forall i, derives (fun t : R => (along t).1 i) 0 (tangent.1 i) /\
             derives (fun t : R => (along t).2 i) 0 (tangent.2 i)) /\
  (forall i, tangent.1 i = dy0 i + apply_p a (clean d a dw) solution.2 i +
                           apply_p a (clean d a w) tangent.2 i) /\
  (forall i, tangent.2 i = dz0 i + sigma' i (solution.1 i) * tangent.1 i).
Proof.
have [ey [ez _]] := forward_solves a grading (fun i v => slopes i * v) w
                      (fun i => dy0 i + incoming d a dw solution.2 i) dz0.
split; [|split] => i; first exact: derivative_below (top i).
  by rewrite [LHS]ey !apply_clean.
exact: ez.
Qed.

(* The Jacobian of the state machine f(y, z) = (L_clean(w) z, sigma(y))
   of Machines.v at the state x, along a state tangent v: the graded span
   machine with the nonlinearity v_i |-> sigma'(y_i) v_i,
   Df(x)(dy, dz) = (L_clean(w) dz, sigma'(y) . dy). *)
Definition state_jacobian (x : 'cV[R]_(n + n)) : 'cV[R]_(n + n) -> 'cV[R]_(n + n) :=
  as_machine d a (fun i u => sigma' i (usubmx x i 0) * u) w.

(* Its part along the parameters: d_w f(x) dw = (L_clean(dw) z, 0). *)
Definition parameter_jacobian (x : 'cV[R]_(n + n)) : 'cV[R]_(n + n) :=
  col_mx (\col_i apply_p a (clean d a dw) (fun j => dsubmx x j 0) i) 0.

(* Law: MACH-DERIVATIVE *)
Theorem state_jacobian_derivative (x v : 'cV[R]_(n + n)) k :
  (forall i, derives (sigma i) (usubmx x i 0) (sigma' i (usubmx x i 0))) ->
  derives (fun t : R => as_machine d a sigma (fun p => w p + t * dw p) (x + t *: v) k 0) 0
          (state_jacobian x v k 0 + parameter_jacobian x k 0).
Proof.
move=> sigma_at.
have entry (j : 'I_(n + n)) : derives (fun t : R => (x + t *: v) j 0) 0 (v j 0).
  by apply: (dv_ext (dv_line (x j 0) (v j 0) 0)) => // t; rewrite !mxE.
rewrite -(splitK k); case: (split k) => i /=.
  have h : derives (fun t : R => incoming d a (fun p => w p + t * dw p)
                                 (fun j => dsubmx (x + t *: v) j 0) i) 0
                 (incoming d a dw (fun j => dsubmx (x + 0 *: v) j 0) i +
                  incoming d a w (fun j => dsubmx v j 0) i).
    apply: dv_incoming => e _ _; apply: (dv_ext (entry (rshift n (src e)))) => [t|];
      by rewrite [RHS]mxE.
  apply: (dv_ext h) => [t|]; first by rewrite /as_machine col_mxEu mxE apply_clean.
  rewrite /state_jacobian /parameter_jacobian /as_machine !col_mxEu !mxE !apply_clean addrC.
  by congr (_ + _); apply: incoming_ext => // j; rewrite !mxE ?mul0r ?addr0.
have hsig : derives (sigma i) ((x + 0 *: v) (lshift n i) 0) (sigma' i (usubmx x i 0)).
  by have -> : (x + 0 *: v) (lshift n i) 0 = usubmx x i 0 by rewrite scale0r addr0 mxE.
have hs := dv_comp hsig (entry (lshift n i)).
apply: (dv_ext hs) => [t|]; first by rewrite /as_machine col_mxEd !mxE.
by rewrite /state_jacobian /parameter_jacobian /as_machine !col_mxEd !mxE ?mul0r !addr0.
Qed.

(* The tangent machine has the depth of the machine: Df(x) has depth 2D
   for the state grading of d, at every state x. *)
(* Law: MACH-DERIVATIVE *)
Theorem tangent_depth (x : 'cV[R]_(n + n)) : has_depth (state_grade d) (state_jacobian x).
Proof. exact: state_depth a grading _ w. Qed.

(* The tangent is the resolvent of the Jacobian: at the solution state
   x = (y, z), (dy, dz) is the one solution of u = v0 + Df(x) u for the
   input tangent v0 = (dy0, dz0) + d_w f(x) dw, i.e. D R_f = R_(Df(x)). *)
(* Law: MACH-DERIVATIVE *)
Theorem tangent_resolvent :
  let x := state solution.1 solution.2 in
  solves (state_jacobian x) (state dy0 dz0 + parameter_jacobian x) (state tangent.1 tangent.2) /\
  (forall u, solves (state_jacobian x) (state dy0 dz0 + parameter_jacobian x) u ->
     u = state tangent.1 tangent.2).
Proof.
move=> x; have [_ [ey ez]] := solution_derivative.
have s : solves (state_jacobian x) (state dy0 dz0 + parameter_jacobian x) (state tangent.1 tangent.2).
  rewrite /solves /state /state_jacobian /parameter_jacobian /as_machine /x.
  rewrite !col_mxKu !col_mxKd !add_col_mx; congr col_mx; apply/matrixP => i j; rewrite !ord1 !mxE.
    by rewrite ey !apply_clean; congr (_ + _ + _); apply: incoming_ext => // l; rewrite mxE.
  by rewrite ez addr0.
split=> // u su; have [_ [uniq _]] := depth_naive (state_grading grading) (tangent_depth x)
                                          (state dy0 dz0 + parameter_jacobian x) 0.
by rewrite (uniq _ su) (uniq _ s).
Qed.


(* The dual machine of backward.hpp at the state x: the transposed span,
   the reversed grading, the nonlinearity v_i |-> sigma'(y_i) v_i. *)
Definition dual_jacobian (x : 'cV[R]_(n + n)) : 'cV[R]_(n + n) -> 'cV[R]_(n + n) :=
  as_machine (reversed D d) (transpose_p a) (fun i u => sigma' i (usubmx x i 0) * u) w.

(* The two halves of a state exchanged: (y, z) |-> (z, y). *)
Definition swap (x : 'cV[R]_(n + n)) : 'cV[R]_(n + n) := col_mx (dsubmx x) (usubmx x).

Lemma dot_ext m (f f' g g' : 'I_m -> R) :
  (forall i, f i = f' i) -> (forall i, g i = g' i) -> dot f g = dot f' g'.
Proof. by move=> ef eg; apply: eq_bigr => i _; rewrite ef eg. Qed.

Lemma dot_split (f g : 'I_(n + n) -> R) :
  dot f g = dot (fun i => f (lshift n i)) (fun i => g (lshift n i)) +
            dot (fun i => f (rshift n i)) (fun i => g (rshift n i)).
Proof. by rewrite /dot big_split_ord. Qed.

(* The dual machine is the transpose of the Jacobian with its two blocks
   exchanged: <u, Df(x) v> = <swap (dual (swap u)), v>, i.e.
   Df(x)^T = swap o dual o swap, and it has depth 2D for the state grading
   of the reversed grading (dual_state_depth). *)
(* Law: DEPTH-DUAL *)
Theorem jacobian_adjoint (x u v : 'cV[R]_(n + n)) :
  dot (fun k => u k 0) (fun k => state_jacobian x v k 0) =
  dot (fun k => swap (dual_jacobian x (swap u)) k 0) (fun k => v k 0).
Proof.
have cl p : clean (reversed D d) (transpose_p a) w p = clean d a w p by rewrite /clean valid_dual.
rewrite !dot_split addrC; congr (_ + _).
  apply: eq_bigr => i _.
  rewrite /state_jacobian /dual_jacobian /swap /as_machine !col_mxEd col_mxEu.
  rewrite ?col_mxKd ?col_mxKu !mxE.
  by rewrite mulrCA mulrA.
transitivity (dot (fun i => usubmx u i 0) (apply_p a (clean d a w) (fun j => dsubmx v j 0))).
  by apply: dot_ext => i; rewrite /state_jacobian /as_machine ?col_mxEu !mxE.
rewrite pspan_adjoint; apply: dot_ext => i; last by rewrite mxE.
by rewrite /dual_jacobian /swap /as_machine col_mxEd col_mxKu mxE (apply_p_ext _ _ cl) col_mxKd.
Qed.

(* The gradient: for output gradients (g_y, g_z), the derivative of the
   loss <g_y, y> + <g_z, z> along the line is the pairing of the direction
   (dy0, dz0, dw) with what the backward pass computes, (ybar, zbar) and
   the cleaned parameter gradient. As the direction is arbitrary, these are
   the gradients with respect to y0, z0 and w. *)
Variables (gy gz : 'I_n -> R).

Definition loss (t : R) := dot gy (along t).1 + dot gz (along t).2.

(* Law: MACH-BACKWARD *)
(* Law: MACH-PARAM-GRADIENT *)
Theorem backward_correct :
  let zbar := (backward D d a slopes w gy gz).1 in
  let ybar := (backward D d a slopes w gy gz).2 in
  derives loss 0
    (dot ybar dy0 + dot zbar dz0 + dot dw (clean d a (parameter_gradient a solution.2 ybar))).
Proof.
have [dv [ey ez]] := solution_derivative.
have dl := dv_plus (dv_dot gy (fun i => proj1 (dv i))) (dv_dot gz (fun i => proj2 (dv i))).
apply: (dv_ext dl) => //.
have ey' i : tangent.1 i = dy0 i + apply_p a (clean d a w) tangent.2 i +
                          apply_p a (clean d a dw) solution.2 i by rewrite ey addrAC.
exact: (backward_adjoint grading gy gz ey' ez).
Qed.

End Derivative.

(* ------------------------------------------------------------------ *)
(* The gradient coordinate by coordinate.                             *)

Section Gradient.

(* The unit vector e_j. *)
Definition unit_vector m (j : 'I_m) : 'I_m -> R := fun i => if i == j then 1 else 0.

Lemma dot_unit m (f : 'I_m -> R) j : dot f (unit_vector j) = f j.
Proof.
rewrite /dot (bigD1 j) //= /unit_vector eqxx mulr1 big1 ?addr0 // => i /negbTE ->.
exact: mulr0.
Qed.

Lemma dot_zero m (f : 'I_m -> R) : dot f (fun _ => 0) = 0 /\ dot (fun _ => 0) f = 0.
Proof. by split; rewrite /dot big1 // => i _; rewrite ?mulr0 ?mul0r. Qed.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan [comRingType of R] n n P).
Hypothesis grading : is_grading D d.
Variables (sigma sigma' : 'I_n -> R -> R).
Variables (w : 'I_P -> R) (y0 z0 gy gz : 'I_n -> R).
Hypothesis sigma_derive : forall i, derives (sigma i) ((solution D d a sigma w y0 z0).1 i)
                                             (sigma' i ((solution D d a sigma w y0 z0).1 i)).

Local Notation cotangent := (backward D d a (slopes D d a sigma sigma' w y0 z0) w gy gz).
Local Notation zero n := (fun _ : 'I_n => 0 : R).

(* The partial derivatives of the loss <g_y, y> + <g_z, z> with respect to
   each coordinate of y0, of z0 and of w are the coordinates of ybar, zbar
   and the cleaned parameter gradient that backward computes. *)
(* Law: MACH-BACKWARD *)
(* Law: MACH-PARAM-GRADIENT *)
Theorem backward_gradient :
  (forall j, derives (loss D d a sigma w (zero P) y0 z0 (unit_vector j) (zero n) gy gz) 0
                     (cotangent.2 j)) /\
  (forall j, derives (loss D d a sigma w (zero P) y0 z0 (zero n) (unit_vector j) gy gz) 0
                     (cotangent.1 j)) /\
  (forall p, derives (loss D d a sigma w (unit_vector p) y0 z0 (zero n) (zero n) gy gz) 0
                     (clean d a (parameter_gradient a (solution D d a sigma w y0 z0).2
                                                  cotangent.2) p)).
Proof.
split; [|split] => j.
- apply: (dv_ext (backward_correct grading _ _ _ sigma_derive gy gz)) => //.
  by rewrite dot_unit (proj1 (dot_zero _)) (proj2 (dot_zero _)) !addr0.
- apply: (dv_ext (backward_correct grading _ _ _ sigma_derive gy gz)) => //.
  by rewrite dot_unit (proj1 (dot_zero _)) (proj2 (dot_zero _)) add0r addr0.
apply: (dv_ext (backward_correct grading _ _ _ sigma_derive gy gz)) => //.
by rewrite [dot (unit_vector _) _]dotC dot_unit !(proj1 (dot_zero _)) !add0r.
Qed.

End Gradient.

(* ------------------------------------------------------------------ *)
(* relu, which has no derivative at 0.                                *)

Definition relu (v : R) : R := Rmax 0 v.

(* Away from 0, relu has the slope of a step: 1 above 0, 0 below. It is
   the identity, or 0, on a neighbourhood of v. *)
Lemma relu_derive (step : R -> R) (v : R) :
  (forall u, Rlt 0 u -> step u = 1) -> (forall u, Rlt u 0 -> step u = 0) -> v <> 0 ->
  derives relu v (step v).
Proof.
move=> pos neg /Rdichotomy [lt | gt].
  rewrite (neg _ lt); apply: (@is_derive_ext_loc R_AbsRing R_NormedModule (fun _ => 0)); last exact: dv_const.
  apply: filter_imp (open_lt 0 v lt) => u ltu.
  by rewrite /relu Rmax_left //; apply: Rlt_le.
rewrite (pos _ gt); apply: (@is_derive_ext_loc R_AbsRing R_NormedModule (fun t => t));
  last exact: (is_derive_id (K:=R_AbsRing)).
apply: filter_imp (open_gt 0 v gt) => u ltu.
by rewrite /relu Rmax_right //; apply: Rlt_le.
Qed.

Section Relu.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan [comRingType of R] n n P).
Hypothesis grading : is_grading D d.

(* relu's slope: 1 above 0, 0 below; its value at 0 is any. *)
Variable step : R -> R.
Hypothesis step_pos : forall u, Rlt 0 u -> step u = 1.
Hypothesis step_neg : forall u, Rlt u 0 -> step u = 0.

Variables (w : 'I_P -> R) (y0 z0 gy gz : 'I_n -> R).

Local Notation sigma := (fun _ : 'I_n => relu).
Local Notation sigma' := (fun _ : 'I_n => step).
Local Notation solution := (solution D d a sigma w y0 z0).
Local Notation cotangent := (backward D d a (slopes D d a sigma sigma' w y0 z0) w gy gz).
Local Notation zero n := (fun _ : 'I_n => 0 : R).

(* No pre-activation of the solution is 0. *)
Hypothesis no_kink : forall i, solution.1 i <> 0.

Lemma relu_derive_at i : derives (sigma i) (solution.1 i) (sigma' i (solution.1 i)).
Proof. exact: relu_derive. Qed.

(* A relu machine whose pre-activations are all away from 0: along every
   line (y0 + t dy0, z0 + t dz0, w + t dw), the derivative of the loss
   <g_y, y> + <g_z, z> at t = 0 is <ybar, dy0> + <zbar, dz0> + <dw, cleaned
   gradient>, (ybar, zbar) from backward with the slopes step(y). *)
(* Law: MACH-BACKWARD *)
(* Law: MACH-PARAM-GRADIENT *)
Corollary relu_backward_correct (dw : 'I_P -> R) (dy0 dz0 : 'I_n -> R) :
  derives (loss D d a sigma w dw y0 z0 dy0 dz0 gy gz) 0
    (dot cotangent.2 dy0 + dot cotangent.1 dz0 +
     dot dw (clean d a (parameter_gradient a solution.2 cotangent.2))).
Proof. exact: (backward_correct grading dw dy0 dz0 relu_derive_at gy gz). Qed.

(* The same coordinate by coordinate: ybar, zbar and the cleaned parameter
   gradient are the partial derivatives of the loss. *)
(* Law: MACH-BACKWARD *)
(* Law: MACH-PARAM-GRADIENT *)
Corollary relu_backward_gradient :
  (forall j, derives (loss D d a sigma w (zero P) y0 z0 (unit_vector j) (zero n) gy gz) 0
                     (cotangent.2 j)) /\
  (forall j, derives (loss D d a sigma w (zero P) y0 z0 (zero n) (unit_vector j) gy gz) 0
                     (cotangent.1 j)) /\
  (forall p, derives (loss D d a sigma w (unit_vector p) y0 z0 (zero n) (zero n) gy gz) 0
                     (clean d a (parameter_gradient a solution.2 cotangent.2) p)).
Proof. exact: (backward_gradient grading gy gz relu_derive_at). Qed.

End Relu.

(* The relu and the slope of the extracted model (Layers.v, those of
   src/pm/machine/sigma.hpp): relu is erelu, and erelu_slope satisfies the
   hypotheses step_pos and step_neg, so relu_backward_correct and
   relu_backward_gradient hold for step := erelu_slope. *)
Lemma relu_erelu (v : R) : relu v = erelu v.
Proof. by rewrite /relu RmaxE. Qed.

Lemma erelu_slope_pos (u : R) : Rlt 0 u -> erelu_slope u = 1.
Proof. by move=> /RltP pos; rewrite /erelu_slope pos. Qed.

Lemma erelu_slope_neg (u : R) : Rlt u 0 -> erelu_slope u = 0.
Proof.
move=> /RltP neg; rewrite /erelu_slope; case: ifP => // pos.
by move: (Order.POrderTheory.lt_trans pos neg); rewrite Order.POrderTheory.ltxx.
Qed.

(* ------------------------------------------------------------------ *)
(* The seed's machines, given by lists.                               *)

Section SeedGradient.

(* A graded span machine given as the C++ builds it: the edge list es on
   n indices with P parameters (Layers.v), every end in range, and the list
   ed of the n grades, in 1..D. *)
Variables (n P D : nat) (es : seq (edge [comRingType of R])) (ed : seq nat).
Hypothesis ends : all (fun e => [&& esrc e < n, etgt e < n & eprm e < P])%N es.
Hypothesis size_ed : size ed = n.
Hypothesis grades_in : all (fun g => 0 < g <= D)%N ed.

Local Notation a := (pspan_of_edges ends).
Definition list_grade (i : 'I_n) : nat := nth 0%N ed i.

Lemma list_grading : is_grading D list_grade.
Proof. by move=> i; apply: (allP grades_in); rewrite mem_nth ?size_ed. Qed.

Lemma list_gradeE : gseq list_grade = ed.
Proof.
rewrite /gseq /list_grade -(map_iota_ord n (fun i => nth 0%N ed i)) -size_ed.
by rewrite -/(mkseq _ _) mkseq_nth.
Qed.

Variables (sigma sigma' : 'I_n -> R -> R) (w : 'I_P -> R) (y0 z0 gy gz : 'I_n -> R).
Hypothesis sigma_derive :
  forall i, derives (sigma i) ((solution D list_grade a sigma w y0 z0).1 i)
                    (sigma' i ((solution D list_grade a sigma w y0 z0).1 i)).

Local Notation cotangent := (backward D list_grade a (slopes D list_grade a sigma sigma' w y0 z0) w gy gz).
Local Notation zero n := (fun _ : 'I_n => 0 : R).
Local Notation loss := (loss D list_grade a sigma w).

(* SEED-GRADIENT for a machine given by its lists: the span of Spans.v
   whose lists are the edge list's (of_edges; the edge lists of Layers.v
   are those proofs_extracted_vs_cpp compares with the C++ constructors)
   and the grading whose list is ed;
   backward with the slopes σ′(y) gives the partial derivatives of
   <g_y, y> + <g_z, z> with respect to y0, z0 and W (cleaned). recur_seed,
   dense_seed and conv_seed (Layers.v) give its hypotheses for
   RecurMachine, DenseMachine and the 1-D ConvMachine. *)
(* Law: SEED-GRADIENT *)
Theorem seed_gradient :
  epspan_of a = of_edges n n P es /\ gseq list_grade = ed /\
  (forall j, derives (loss (zero _) y0 z0 (unit_vector j) (zero _) gy gz) 0 (cotangent.2 j)) /\
  (forall j, derives (loss (zero _) y0 z0 (zero _) (unit_vector j) gy gz) 0 (cotangent.1 j)) /\
  (forall q, derives (loss (unit_vector q) y0 z0 (zero _) (zero _) gy gz) 0
                     (clean list_grade a (parameter_gradient a (solution D list_grade a sigma w y0 z0).2
                                                          cotangent.2) q)).
Proof.
split; first exact: pspan_of_edgesE.
split; first exact: list_gradeE.
exact: (backward_gradient list_grading gy gz sigma_derive).
Qed.

End SeedGradient.
