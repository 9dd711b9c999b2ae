(* Finite spaces, maps, measures, spans and parametric spans: the laws of
   spec/spans.md, proved over an arbitrary commutative ring R (so they hold
   for the rationals and the reals alike).

   The model follows src/pm/category/: a finite set is 'I_n = {0, ..., n-1};
   a map (FinMap) is a function between ordinals; a function or a measure on
   X is a function 'I_n -> R; sums run over the domain in increasing order,
   as the C++ loops do. Equalities of functions are stated pointwise (=1),
   which needs no functional extensionality. *)
From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.
Local Open Scope ring_scope.

Section Spans.

Variable R : comRingType.

(* ------------------------------------------------------------------ *)
(* Maps (map.hpp).                                                     *)

Definition identity_map n : 'I_n -> 'I_n := fun i => i.
#[global] Arguments identity_map n : clear implicits.

(* compose g f = g ∘ f : first f, then g. *)
Definition compose m n k (g : 'I_n -> 'I_k) (f : 'I_m -> 'I_n) : 'I_m -> 'I_k :=
  fun i => g (f i).

(* Law: MAP-UNIT-LEFT *)
Theorem map_unit_left m n (f : 'I_m -> 'I_n) : compose (identity_map n) f =1 f.
Proof. by []. Qed.

(* Law: MAP-UNIT-RIGHT *)
Theorem map_unit_right m n (f : 'I_m -> 'I_n) : compose f (identity_map m) =1 f.
Proof. by []. Qed.

(* Law: MAP-ASSOC *)
Theorem map_assoc m n k l (f : 'I_m -> 'I_n) (g : 'I_n -> 'I_k) (h : 'I_k -> 'I_l) :
  compose h (compose g f) =1 compose (compose h g) f.
Proof. by []. Qed.

(* ------------------------------------------------------------------ *)
(* Functions and measures (function.hpp).                              *)

Definition dot n (a b : 'I_n -> R) : R := \sum_(i < n) a i * b i.
Definition hadamard n (a b : 'I_n -> R) : 'I_n -> R := fun i => a i * b i.
Definition constant n (x : R) : 'I_n -> R := fun _ => x.
#[global] Arguments constant n x : clear implicits.

(* ------------------------------------------------------------------ *)
(* Pullback (pullback.hpp) and integration along fibres                *)
(* (pushforward.hpp).                                                  *)

Definition pullback m n (f : 'I_m -> 'I_n) (phi : 'I_n -> R) : 'I_m -> R :=
  fun a => phi (f a).

(* (f_!^mu psi)(b) = sum over a with f a = b of mu a * psi a. *)
Definition integrate m n (f : 'I_m -> 'I_n) (mu psi : 'I_m -> R) : 'I_n -> R :=
  fun b => \sum_(a < m | f a == b) mu a * psi a.

Definition pushforward m n (f : 'I_m -> 'I_n) (mu : 'I_m -> R) : 'I_n -> R :=
  fun b => \sum_(a < m | f a == b) mu a.

(* Law: PULL-ID *)
Theorem pull_id n (phi : 'I_n -> R) : pullback (identity_map n) phi =1 phi.
Proof. by []. Qed.

(* Law: PULL-COMP *)
Theorem pull_comp m n k (f : 'I_m -> 'I_n) (g : 'I_n -> 'I_k) (phi : 'I_k -> R) :
  pullback (compose g f) phi =1 pullback f (pullback g phi).
Proof. by []. Qed.

(* Law: PUSH-ID *)
Theorem push_id n (mu : 'I_n -> R) : pushforward (identity_map n) mu =1 mu.
Proof. by move=> b; rewrite /pushforward (big_pred1 b). Qed.

(* Summing over the domain of g ∘ f fibre by fibre of f: the finite Fubini
   step behind every covariance law. *)
Lemma sum_by_fibres m n k (f : 'I_m -> 'I_n) (g : 'I_n -> 'I_k) (F : 'I_m -> R) c :
  \sum_(a < m | g (f a) == c) F a = \sum_(b < n | g b == c) \sum_(a < m | f a == b) F a.
Proof.
rewrite (exchange_big_dep (fun a : 'I_m => g (f a) == c)) /=; last by move=> b a /eqP <- /eqP ->.
apply: eq_bigr => a gfa; rewrite (big_pred1 (f a)) // => b.
by apply/andP/eqP => [[_ /eqP <-] | ->] //; rewrite gfa.
Qed.

(* The same with the whole domain: a sum over A is a sum over the fibres. *)
Lemma sum_over_fibres m n (f : 'I_m -> 'I_n) (F : 'I_m -> R) :
  \sum_(a < m) F a = \sum_(b < n) \sum_(a < m | f a == b) F a.
Proof.
rewrite (exchange_big_dep xpredT) //=; apply: eq_bigr => a _.
by rewrite (big_pred1 (f a)) // => b; rewrite eq_sym.
Qed.

(* Law: PUSH-COMP *)
Theorem push_comp m n k (f : 'I_m -> 'I_n) (g : 'I_n -> 'I_k) (mu : 'I_m -> R) :
  pushforward (compose g f) mu =1 pushforward g (pushforward f mu).
Proof. by move=> c; rewrite /pushforward /compose (sum_by_fibres f g). Qed.

(* Law: INT-COMP *)
Theorem int_comp m n k (f : 'I_m -> 'I_n) (g : 'I_n -> 'I_k) (mu psi : 'I_m -> R) :
  integrate (compose g f) mu psi =1 integrate g (constant n 1) (integrate f mu psi).
Proof.
by move=> c; rewrite /integrate /compose (sum_by_fibres f g); apply: eq_bigr => b _; rewrite mul1r.
Qed.

(* Law: PROJ-FORMULA *)
Theorem proj_formula m n (f : 'I_m -> 'I_n) (mu psi : 'I_m -> R) (phi : 'I_n -> R) :
  integrate f mu (hadamard psi (pullback f phi)) =1 hadamard phi (integrate f mu psi).
Proof.
move=> b; rewrite /integrate /hadamard /pullback mulr_sumr.
by apply: eq_bigr => a /eqP fa; rewrite fa mulrA mulrC.
Qed.

(* ------------------------------------------------------------------ *)
(* Fibre products (fibre_product.hpp).                                 *)

(* A ×_Y B is the set of pairs (a, b) with f a = g b, inside the finType
   'I_m * 'I_k, enumerated by enum_val in the order of that finType: a major,
   b minor, the order of the C++ loops. Its points are 'I_(fibre_size f g). *)
Section FibreProduct.

Variables (m k n : nat) (f : 'I_m -> 'I_n) (g : 'I_k -> 'I_n).

Definition fibre_pairs := [pred ab : 'I_m * 'I_k | f ab.1 == g ab.2].
Definition fibre_size := #|fibre_pairs|.
Definition fibre_point (e : 'I_fibre_size) : 'I_m * 'I_k := enum_val e.
Definition fibre_p (e : 'I_fibre_size) : 'I_m := (fibre_point e).1.
Definition fibre_q (e : 'I_fibre_size) : 'I_k := (fibre_point e).2.

Lemma fibre_squareP e : f (fibre_p e) == g (fibre_q e).
Proof. by have := enum_valP e; rewrite inE. Qed.

Lemma fibre_square e : f (fibre_p e) = g (fibre_q e).
Proof. exact/eqP/fibre_squareP. Qed.

(* The enumeration is the lexicographic one of the C++ code. *)
Lemma fibre_enumeration :
  [seq fibre_point e | e <- enum 'I_fibre_size]
  = [seq ab <- [seq (a, b) | a <- enum 'I_m, b <- enum 'I_k] | f ab.1 == g ab.2].
Proof.
have -> : [seq fibre_point e | e <- enum 'I_fibre_size] = enum fibre_pairs.
  have [N0|/card_gt0P[x0 _]] := posnP fibre_size.
    have /size0nil-> : size (enum fibre_pairs) = 0%N by rewrite -cardE.
    by apply: size0nil; rewrite size_map size_enum_ord.
  transitivity [seq nth x0 (enum fibre_pairs) i | i <- map val (enum 'I_fibre_size)].
    by rewrite -[RHS]map_comp; apply: eq_map => i; rewrite /fibre_point (enum_val_nth x0).
  by rewrite val_enum_ord /fibre_size cardE -/(mkseq _ _) mkseq_nth.
by rewrite /enum_mem {1}unlock.
Qed.

(* Sums over the fibre product are double sums over its pairs. *)
Lemma sum_fibre (P : 'I_m -> 'I_k -> bool) (F : 'I_m -> 'I_k -> R) :
  \sum_(e < fibre_size | P (fibre_p e) (fibre_q e)) F (fibre_p e) (fibre_q e)
  = \sum_(b < k) \sum_(a < m | (f a == g b) && P a b) F a b.
Proof.
rewrite /fibre_p /fibre_q /fibre_point /fibre_size.
rewrite -(big_enum_val_cond (fun ab => P ab.1 ab.2) (fun ab => F ab.1 ab.2)) /=.
rewrite (exchange_big_dep xpredT) //= pair_big_dep.
by apply: eq_bigl => ab; rewrite inE.
Qed.

(* The point of A ×_Y B with coordinates (a, b), given f a = g b. *)
Definition fibre_index a b (H : f a == g b) : 'I_fibre_size :=
  @enum_rank_in _ (a, b) fibre_pairs H (a, b).

Lemma fibre_point_index a b (H : f a == g b) : fibre_point (fibre_index H) = (a, b).
Proof. exact: enum_rankK_in. Qed.

Lemma fibre_p_index a b (H : f a == g b) : fibre_p (fibre_index H) = a.
Proof. by rewrite /fibre_p fibre_point_index. Qed.

Lemma fibre_q_index a b (H : f a == g b) : fibre_q (fibre_index H) = b.
Proof. by rewrite /fibre_q fibre_point_index. Qed.

(* A point of the fibre product is determined by its two projections. *)
Lemma fibre_ext e e' : fibre_p e = fibre_p e' -> fibre_q e = fibre_q e' -> e = e'.
Proof.
move=> ep eq; apply: enum_val_inj; rewrite -/(fibre_point e) -/(fibre_point e').
by rewrite [fibre_point e]surjective_pairing [fibre_point e']surjective_pairing; congr (_, _).
Qed.

End FibreProduct.

#[global] Arguments fibre_pairs {m k n} f g.
#[global] Arguments fibre_size {m k n} f g.
#[global] Arguments fibre_point {m k n} f g e.
#[global] Arguments fibre_p {m k n} f g e.
#[global] Arguments fibre_q {m k n} f g e.
#[global] Arguments fibre_index {m k n} f g [a b] H.

(* Law: BECK-CHEVALLEY *)
Theorem beck_chevalley m k n (f : 'I_m -> 'I_n) (g : 'I_k -> 'I_n) (mu phi : 'I_m -> R) :
  pullback g (integrate f mu phi)
  =1 integrate (fibre_q f g) (pullback (fibre_p f g) mu) (pullback (fibre_p f g) phi).
Proof.
move=> b0; rewrite /integrate /pullback.
rewrite (sum_fibre f g (fun _ b => b == b0) (fun a _ => mu a * phi a)).
rewrite [RHS](bigD1 b0) //= [X in _ + X]big1 ?addr0; first by apply: eq_bigl => a; rewrite eqxx andbT.
by move=> b /negbTE nb; rewrite big_pred0 // => a; rewrite nb andbF.
Qed.

(* ------------------------------------------------------------------ *)
(* Spans (span.hpp).                                                   *)

Record Span (X Y : nat) := {
  apex : nat;
  s : 'I_apex -> 'I_X;   (* source leg E -> X *)
  t : 'I_apex -> 'I_Y;   (* target leg E -> Y *)
  mu : 'I_apex -> R      (* weights on E *)
}.
#[global] Arguments apex {X Y} _.
#[global] Arguments s {X Y} _ e.
#[global] Arguments t {X Y} _ e.
#[global] Arguments mu {X Y} _ e.

Definition identity_span n : Span n n :=
  {| apex := n; s := identity_map n; t := identity_map n; mu := constant n 1 |}.
#[global] Arguments identity_span n : clear implicits.

Definition transpose X Y (a : Span X Y) : Span Y X :=
  {| apex := apex a; s := t a; t := s a; mu := mu a |}.

(* L = t_!^mu ∘ s*. *)
Definition apply X Y (a : Span X Y) (phi : 'I_X -> R) : 'I_Y -> R :=
  integrate (t a) (mu a) (pullback (s a) phi).

(* compose_span b a = b ∘ a: apex E_a ×_Y E_b, weights mu_a(e_a) mu_b(e_b). *)
Definition compose_span X Y Z (b : Span Y Z) (a : Span X Y) : Span X Z :=
  {| apex := fibre_size (t a) (s b);
     s := compose (s a) (fibre_p (t a) (s b));
     t := compose (t b) (fibre_q (t a) (s b));
     mu := fun e => mu a (fibre_p (t a) (s b) e) * mu b (fibre_q (t a) (s b) e) |}.

(* Law: SPAN-LIN-ID *)
Theorem span_lin_id n (phi : 'I_n -> R) : apply (identity_span n) phi =1 phi.
Proof. by move=> y; rewrite /apply /integrate (big_pred1 y) // mul1r. Qed.

(* Law: SPAN-LIN-COMP *)
Theorem span_lin_comp X Y Z (b : Span Y Z) (a : Span X Y) (phi : 'I_X -> R) :
  apply (compose_span b a) phi =1 apply b (apply a phi).
Proof.
move=> z; rewrite /apply /integrate /pullback /compose /=.
rewrite (sum_fibre _ _ (fun _ eb => t b eb == z)
                   (fun ea eb => mu a ea * mu b eb * phi (s a ea))).
rewrite (bigID (fun eb => t b eb == z)) /= [X in _ + X]big1 ?addr0; last first.
  by move=> eb /negbTE tz; rewrite big_pred0 // => ea; rewrite tz andbF.
apply: eq_bigr => eb tz; rewrite mulr_sumr; apply: eq_big => [ea|ea _].
  by rewrite tz andbT.
by rewrite mulrA [mu b eb * _]mulrC.
Qed.

(* Law: SPAN-TRANSPOSE-INVOL *)
Theorem span_transpose_invol X Y (a : Span X Y) : transpose (transpose a) = a.
Proof. by case: a. Qed.

(* Law: SPAN-ADJOINT *)
Theorem span_adjoint X Y (a : Span X Y) (phi : 'I_X -> R) (g : 'I_Y -> R) :
  dot g (apply a phi) = dot (apply (transpose a) g) phi.
Proof.
rewrite /dot /apply /integrate /pullback /=.
transitivity (\sum_(e < apex a) g (t a e) * mu a e * phi (s a e)).
  rewrite (sum_over_fibres (t a)) /=.
  apply: eq_bigr => y _; rewrite mulr_sumr; apply: eq_bigr => e /eqP <-.
  by rewrite mulrA.
rewrite (sum_over_fibres (s a)) /=.
apply: eq_bigr => x _; rewrite mulr_suml; apply: eq_bigr => e /eqP <-.
by rewrite [g _ * _]mulrC.
Qed.

(* ------------------------------------------------------------------ *)
(* Isomorphism of spans (span_iso.hpp): a bijection of apexes that    *)
(* commutes with both legs and preserves the measure.                 *)

Definition is_span_isomorphism X Y (a b : Span X Y) (h : 'I_(apex a) -> 'I_(apex b)) :=
  bijective h /\ (forall e, s b (h e) = s a e) /\ (forall e, t b (h e) = t a e) /\
  (forall e, mu b (h e) = mu a e).
#[global] Arguments is_span_isomorphism {X Y} a b h.

Section Associativity.

Variables (X Y Z W : nat) (a : Span X Y) (b : Span Y Z) (c : Span Z W).

Let cb := compose_span c b.
Let ba := compose_span b a.

(* A point (e_a, (e_b, e_c)) of (c ∘ b) ∘ a goes to ((e_a, e_b), e_c) of
   c ∘ (b ∘ a). *)
Lemma assoc_subproof1 e :
  t a (fibre_p (t a) (s cb) e) == s b (fibre_p (t b) (s c) (fibre_q (t a) (s cb) e)).
Proof. exact: fibre_squareP. Qed.

Definition assoc_ab e := fibre_index (t a) (s b) (assoc_subproof1 e).

Lemma assoc_subproof2 e :
  t ba (assoc_ab e) == s c (fibre_q (t b) (s c) (fibre_q (t a) (s cb) e)).
Proof. by rewrite /= /compose fibre_q_index; apply: fibre_squareP. Qed.

Definition assoc_witness (e : 'I_(apex (compose_span cb a))) : 'I_(apex (compose_span c ba)) :=
  fibre_index (t ba) (s c) (assoc_subproof2 e).

Lemma unassoc_subproof1 e :
  t b (fibre_q (t a) (s b) (fibre_p (t ba) (s c) e)) == s c (fibre_q (t ba) (s c) e).
Proof. exact: fibre_squareP. Qed.

Definition unassoc_bc e := fibre_index (t b) (s c) (unassoc_subproof1 e).

Lemma unassoc_subproof2 e :
  t a (fibre_p (t a) (s b) (fibre_p (t ba) (s c) e)) == s cb (unassoc_bc e).
Proof. by rewrite /= /compose fibre_p_index; apply: fibre_squareP. Qed.

Definition unassoc_witness (e : 'I_(apex (compose_span c ba))) : 'I_(apex (compose_span cb a)) :=
  fibre_index (t a) (s cb) (unassoc_subproof2 e).

Ltac fibre_simpl := rewrite /assoc_witness /unassoc_witness /assoc_ab /unassoc_bc
  ?(fibre_p_index, fibre_q_index).

(* Law: SPAN-ASSOC *)
Theorem span_assoc : is_span_isomorphism (compose_span cb a) (compose_span c ba) assoc_witness.
Proof.
split; [exists unassoc_witness | split; [|split]] => e /=; rewrite /compose.
- apply: (@fibre_ext _ _ _ (t a) (s cb)); fibre_simpl => //.
  by apply: (@fibre_ext _ _ _ (t b) (s c)); fibre_simpl.
- apply: (@fibre_ext _ _ _ (t ba) (s c)); fibre_simpl => //.
  by apply: (@fibre_ext _ _ _ (t a) (s b)); fibre_simpl.
- by fibre_simpl.
- by fibre_simpl.
- by fibre_simpl; rewrite mulrA.
Qed.

End Associativity.

Section Units.

Variables (X Y : nat) (a : Span X Y).

Definition unit_left_inverse (e : 'I_(apex a)) : 'I_(apex (compose_span (identity_span Y) a)) :=
  fibre_index (t a) (identity_map Y) (eqxx (t a e)).

(* Law: SPAN-UNIT-LEFT *)
Theorem span_unit_left :
  is_span_isomorphism (compose_span (identity_span Y) a) a (fibre_p (t a) (identity_map Y)).
Proof.
split; [exists unit_left_inverse | split; [|split]] => e /=.
- apply: (@fibre_ext _ _ _ (t a) (identity_map Y)); rewrite /unit_left_inverse.
    by rewrite fibre_p_index.
  by rewrite fibre_q_index; apply: fibre_square.
- exact: fibre_p_index.
- by [].
- exact: fibre_square.
- by rewrite /constant mulr1.
Qed.

Definition unit_right_inverse (e : 'I_(apex a)) : 'I_(apex (compose_span a (identity_span X))) :=
  fibre_index (identity_map X) (s a) (eqxx (s a e)).

(* Law: SPAN-UNIT-RIGHT *)
Theorem span_unit_right :
  is_span_isomorphism (compose_span a (identity_span X)) a (fibre_q (identity_map X) (s a)).
Proof.
split; [exists unit_right_inverse | split; [|split]] => e /=.
- apply: (@fibre_ext _ _ _ (identity_map X) (s a)); rewrite /unit_right_inverse.
    by rewrite fibre_p_index; symmetry; apply: (fibre_square (f:=identity_map X)).
  by rewrite fibre_q_index.
- exact: fibre_q_index.
- by symmetry; apply: (fibre_square (f:=identity_map X)).
- by [].
- by rewrite /constant mul1r.
Qed.

End Units.

(* ------------------------------------------------------------------ *)
(* Parametric spans (parametric_span.hpp).                             *)

Record ParametricSpan (X Y P : nat) := {
  span : Span X Y;
  pi : 'I_(apex span) -> 'I_P  (* parameter leg E -> P *)
}.
#[global] Arguments span {X Y P} _.
#[global] Arguments pi {X Y P} _ e.

Definition transpose_p X Y P (a : ParametricSpan X Y P) : ParametricSpan Y X P :=
  {| span := transpose (span a); pi := pi a |}.

(* L_w phi = t_!^mu (pi* w . s* phi). *)
Definition apply_p X Y P (a : ParametricSpan X Y P) (w : 'I_P -> R) (phi : 'I_X -> R) :=
  integrate (t (span a)) (mu (span a)) (hadamard (pullback (pi a) w) (pullback (s (span a)) phi)).

(* The gradient pi_!^mu (s* phi . t* g), a function on P. *)
Definition parameter_gradient X Y P (a : ParametricSpan X Y P) (phi : 'I_X -> R) (g : 'I_Y -> R) :=
  integrate (pi a) (mu (span a)) (hadamard (pullback (s (span a)) phi) (pullback (t (span a)) g)).

(* The flat index of (i, j) in 'I_m * 'I_n, row-major: i * n + j. *)
Lemma pair_index_subproof m n (i : 'I_m) (j : 'I_n) : (i * n + j < m * n)%N.
Proof.
by rewrite (leq_trans (_ : _ < i * n + n)%N) ?ltn_add2l // -mulSnr leq_mul2r ltn_ord orbT.
Qed.

Definition pair_index m n (i : 'I_m) (j : 'I_n) : 'I_(m * n) :=
  Ordinal (pair_index_subproof i j).

Lemma tensor_div_subproof m n (k : 'I_(m * n)) : (k %/ n < m)%N.
Proof.
have /andP[_ n_gt0] : (0 < m)%N && (0 < n)%N.
  by rewrite -muln_gt0; apply: leq_ltn_trans (leq0n k) (ltn_ord k).
by rewrite ltn_divLR.
Qed.

Lemma tensor_mod_subproof m n (k : 'I_(m * n)) : (k %% n < n)%N.
Proof.
have /andP[_ n_gt0] : (0 < m)%N && (0 < n)%N.
  by rewrite -muln_gt0; apply: leq_ltn_trans (leq0n k) (ltn_ord k).
by rewrite ltn_pmod.
Qed.

(* (w_a ⊗ w_b)(p_a, p_b) = w_a(p_a) w_b(p_b) on the flat index. *)
Definition tensor m n (wa : 'I_m -> R) (wb : 'I_n -> R) : 'I_(m * n) -> R :=
  fun k => wa (Ordinal (tensor_div_subproof k)) * wb (Ordinal (tensor_mod_subproof k)).

Lemma tensor_pair m n (wa : 'I_m -> R) (wb : 'I_n -> R) i j :
  tensor wa wb (pair_index i j) = wa i * wb j.
Proof.
have n_gt0 : (0 < n)%N by apply: leq_ltn_trans (leq0n j) (ltn_ord j).
rewrite /tensor; congr (wa _ * wb _); apply: val_inj => /=.
  by rewrite divnMDl // divn_small // addn0.
by rewrite modnMDl modn_small.
Qed.

Definition compose_p X Y Z Pa Pb (b : ParametricSpan Y Z Pb) (a : ParametricSpan X Y Pa)
  : ParametricSpan X Z (Pa * Pb) :=
  {| span := compose_span (span b) (span a);
     pi := fun e => pair_index (pi a (fibre_p (t (span a)) (s (span b)) e))
                               (pi b (fibre_q (t (span a)) (s (span b)) e)) |}.

(* Law: PSPAN-BILINEAR *)
Theorem pspan_bilinear X Y P (a : ParametricSpan X Y P) (alpha beta : R) (w w' : 'I_P -> R)
  (phi phi' : 'I_X -> R) :
  apply_p a (fun p => alpha * w p + beta * w' p) phi =1
    (fun y => alpha * apply_p a w phi y + beta * apply_p a w' phi y) /\
  apply_p a w (fun x => alpha * phi x + beta * phi' x) =1
    (fun y => alpha * apply_p a w phi y + beta * apply_p a w phi' y).
Proof.
rewrite /apply_p /integrate /hadamard /pullback; split=> y;
  rewrite !mulr_sumr -big_split /=; apply: eq_bigr => e _.
  by rewrite mulrDl mulrDr; congr (_ + _); rewrite -mulrA mulrCA.
by rewrite !mulrDr; congr (_ + _); rewrite [w _ * (_ * _)]mulrCA mulrCA.
Qed.

(* The pairing <g, L_w phi> as one sum over the apex, symmetric in the legs. *)
Lemma pairing_apex X Y P (a : ParametricSpan X Y P) w phi g :
  dot g (apply_p a w phi)
  = \sum_(e < apex (span a)) mu (span a) e * w (pi a e) * phi (s (span a) e) * g (t (span a) e).
Proof.
rewrite /dot /apply_p /integrate /hadamard /pullback.
rewrite (sum_over_fibres (t (span a))) /=.
apply: eq_bigr => y _; rewrite mulr_sumr; apply: eq_bigr => e /eqP <-.
by rewrite mulrC !mulrA.
Qed.

Lemma dotC n (a b : 'I_n -> R) : dot a b = dot b a.
Proof. by apply: eq_bigr => i _; rewrite mulrC. Qed.

(* Law: PSPAN-ADJOINT *)
Theorem pspan_adjoint X Y P (a : ParametricSpan X Y P) w phi g :
  dot g (apply_p a w phi) = dot (apply_p (transpose_p a) w g) phi.
Proof.
rewrite [RHS]dotC !pairing_apex /=; apply: eq_bigr => e _; exact: mulrAC.
Qed.

(* Law: PSPAN-GRADIENT *)
Theorem pspan_gradient X Y P (a : ParametricSpan X Y P) w phi g :
  dot g (apply_p a w phi) = dot w (parameter_gradient a phi g).
Proof.
rewrite pairing_apex /dot /parameter_gradient /integrate /hadamard /pullback.
rewrite (sum_over_fibres (pi a)) /=.
apply: eq_bigr => p _; rewrite mulr_sumr; apply: eq_bigr => e /eqP <-.
by rewrite mulrCA !mulrA.
Qed.

(* A parametric span at fixed parameters w is the span with weights
   mu . pi* w. *)
Definition weighted X Y P (a : ParametricSpan X Y P) (w : 'I_P -> R) : Span X Y :=
  {| apex := apex (span a); s := s (span a); t := t (span a);
     mu := fun e => mu (span a) e * w (pi a e) |}.

Lemma apply_p_weighted X Y P (a : ParametricSpan X Y P) w phi :
  apply_p a w phi =1 apply (weighted a w) phi.
Proof.
by move=> y; apply: eq_bigr => e _; rewrite /hadamard /pullback /= mulrA.
Qed.

(* Law: PSPAN-COMP *)
Theorem pspan_comp X Y Z Pa Pb (b : ParametricSpan Y Z Pb) (a : ParametricSpan X Y Pa)
  (wa : 'I_Pa -> R) (wb : 'I_Pb -> R) (phi : 'I_X -> R) :
  apply_p (compose_p b a) (tensor wa wb) phi =1 apply_p b wb (apply_p a wa phi).
Proof.
move=> z; rewrite apply_p_weighted.
transitivity (apply (compose_span (weighted b wb) (weighted a wa)) phi z).
  by apply: eq_bigr => e _; rewrite /= tensor_pair mulrACA.
rewrite span_lin_comp apply_p_weighted; apply: eq_bigr => e _.
by rewrite /pullback apply_p_weighted.
Qed.

(* The witness of SPAN-ASSOC also preserves the parameter leg: both
   composites index P_a × P_b × P_c row-major, (p_a |P_b| + p_b) |P_c| + p_c
   = p_a |P_b| |P_c| + p_b |P_c| + p_c (the two parameter spaces are
   'I_((|P_a| |P_b|) |P_c|) and 'I_(|P_a| (|P_b| |P_c|)), so the indices
   are compared as numbers, as pm::is_span_isomorphism does). *)
(* Law: SPAN-ASSOC *)
Theorem pspan_assoc X Y Z W Pa Pb Pc (a : ParametricSpan X Y Pa) (b : ParametricSpan Y Z Pb)
  (c : ParametricSpan Z W Pc) :
  let h := assoc_witness (a := span a) (b := span b) (c := span c) in
  is_span_isomorphism (span (compose_p (compose_p c b) a)) (span (compose_p c (compose_p b a))) h /\
  forall e, val (pi (compose_p c (compose_p b a)) (h e)) = val (pi (compose_p (compose_p c b) a) e).
Proof.
move=> h; split; first exact: span_assoc.
move=> e; rewrite /= /h /assoc_witness /assoc_ab !(fibre_p_index, fibre_q_index) /=.
by rewrite mulnDl -mulnA addnA.
Qed.

End Spans.

