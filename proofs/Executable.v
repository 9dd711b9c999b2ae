(* An executable model of the span core of spec/spans.md, and its proof of
   equality with the readable model of Spans.v.

   Spans.v states the laws with ordinals, functions 'I_n -> R and big
   operators: the right objects for proofs, but not a program one can run
   (the finite types compute through locked enumerations). Here the same
   operations are written on lists, as the C++ stores them (src/pm/category/):
   a map is the list of its images, a function or a measure the list of its
   values, a sum a right fold over the domain in increasing order, the fibre
   product the list of pairs (a, b) with f a = g b in lexicographic order.
   Each operation comes with a theorem saying that on the lists of a model
   object it gives the list of the model's result; so the program extracted
   from this file (proofs/extraction/) computes what Spans.v defines.
   The second part does the same for the graded span machine of
   Machines.v: grading, valid parameters and cleaning, the incoming sums of
   the level plan, the level-by-level forward solver, the dual machine and
   the backward pass with its parameter gradient. *)
From mathcomp Require Import all_ssreflect all_algebra.
From PM Require Import Spans Machines.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.
Local Open Scope ring_scope.

Section Executable.

Variable R : comRingType.

(* ------------------------------------------------------------------ *)
(* The executable operations.                                          *)

Definition esum (l : seq R) : R := foldr +%R 0 l.

Definition eidentity_map (n : nat) : seq nat := iota 0 n.

(* ecompose g f = g ∘ f: the image of i is g's image of f's image of i. *)
Definition ecompose (g f : seq nat) : seq nat := [seq nth 0%N g i | i <- f].

Definition epullback (f : seq nat) (phi : seq R) : seq R := [seq nth 0 phi i | i <- f].

(* The values at b = 0 .. n-1 of f_!^mu psi: the sum over a = 0 .. |f|-1
   with f a = b, in increasing a. *)
Definition eintegrate (n : nat) (f : seq nat) (mu psi : seq R) : seq R :=
  [seq esum [seq nth 0 mu a * nth 0 psi a | a <- iota 0 (size f) & nth 0%N f a == b]
  | b <- iota 0 n].

Definition epushforward (n : nat) (f : seq nat) (mu : seq R) : seq R :=
  [seq esum [seq nth 0 mu a | a <- iota 0 (size f) & nth 0%N f a == b] | b <- iota 0 n].

Definition ehadamard (u v : seq R) : seq R := [seq x.1 * x.2 | x <- zip u v].

(* The fibre product of f : A -> Y and g : B -> Y as its pairs, a major. *)
Definition efibre (f g : seq nat) : seq (nat * nat) :=
  [seq ab <- [seq (a, b) | a <- iota 0 (size f), b <- iota 0 (size g)]
  | nth 0%N f ab.1 == nth 0%N g ab.2].

Record espan := ESpan {
  edom : nat;        (* |X| *)
  ecod : nat;        (* |Y| *)
  es : seq nat;      (* source leg, one image per point of the apex *)
  et : seq nat;      (* target leg *)
  emu : seq R        (* weights *)
}.

Definition eidentity_span (n : nat) : espan :=
  ESpan n n (iota 0 n) (iota 0 n) (nseq n 1).

Definition etranspose (a : espan) : espan := ESpan (ecod a) (edom a) (et a) (es a) (emu a).

Definition eapply (a : espan) (phi : seq R) : seq R :=
  eintegrate (ecod a) (et a) (emu a) (epullback (es a) phi).

Definition ecompose_span (b a : espan) : espan :=
  let fp := efibre (et a) (es b) in
  ESpan (edom a) (ecod b) [seq nth 0%N (es a) p.1 | p <- fp] [seq nth 0%N (et b) p.2 | p <- fp]
        [seq nth 0 (emu a) p.1 * nth 0 (emu b) p.2 | p <- fp].

Record epspan := EPSpan {
  espan_of_p : espan;
  epar : nat;        (* |P| *)
  epi : seq nat      (* parameter leg *)
}.

Definition etranspose_p (a : epspan) : epspan :=
  EPSpan (etranspose (espan_of_p a)) (epar a) (epi a).

Definition eapply_p (a : epspan) (w phi : seq R) : seq R :=
  let sp := espan_of_p a in
  eintegrate (ecod sp) (et sp) (emu sp) (ehadamard (epullback (epi a) w) (epullback (es sp) phi)).

Definition eparameter_gradient (a : epspan) (phi g : seq R) : seq R :=
  let sp := espan_of_p a in
  eintegrate (epar a) (epi a) (emu sp) (ehadamard (epullback (es sp) phi) (epullback (et sp) g)).

(* Composite parameters p_a |P_b| + p_b, row-major as pair_index. *)
Definition ecompose_p (b a : epspan) : epspan :=
  let fp := efibre (et (espan_of_p a)) (es (espan_of_p b)) in
  EPSpan (ecompose_span (espan_of_p b) (espan_of_p a)) (epar a * epar b)
         [seq nth 0%N (epi a) p.1 * epar b + nth 0%N (epi b) p.2 | p <- fp]%N.

(* ------------------------------------------------------------------ *)
(* The lists of the model's objects.                                   *)

Definition fseq n (phi : 'I_n -> R) : seq R := [seq phi i | i <- enum 'I_n].
Definition mseq m n (f : 'I_m -> 'I_n) : seq nat := [seq val (f i) | i <- enum 'I_m].

Definition espan_of X Y (a : Span R X Y) : espan :=
  ESpan X Y (mseq (s a)) (mseq (t a)) (fseq (mu a)).

Definition epspan_of X Y P (a : ParametricSpan R X Y P) : epspan :=
  EPSpan (espan_of (span a)) P (mseq (pi a)).

(* ------------------------------------------------------------------ *)
(* Lemmas relating lists and ordinals.                                 *)

Lemma size_mseq m n (f : 'I_m -> 'I_n) : size (mseq f) = m.
Proof. by rewrite size_map size_enum_ord. Qed.

Lemma nth_fseq n (phi : 'I_n -> R) (i : 'I_n) x0 : nth x0 (fseq phi) i = phi i.
Proof. by rewrite (nth_map i) ?size_enum_ord // nth_ord_enum. Qed.

Lemma nth_mseq m n (f : 'I_m -> 'I_n) (i : 'I_m) x0 : nth x0 (mseq f) i = f i.
Proof. by rewrite (nth_map i) ?size_enum_ord // nth_ord_enum. Qed.

(* A map over iota 0 n is a map over the ordinals of n. *)
Lemma map_iota_ord T n (F : nat -> T) : [seq F i | i <- iota 0 n] = [seq F (val i) | i <- enum 'I_n].
Proof. by rewrite -val_enum_ord -map_comp. Qed.

Lemma esum_big (l : seq R) : esum l = \sum_(x <- l) x.
Proof. by elim: l => [|x l IH]; rewrite ?big_nil ?big_cons //= IH. Qed.

(* A filtered sum over 0 .. m-1 is the big sum over the ordinals of m. *)
Lemma esum_ord m (F' : nat -> R) (P' : pred nat) (F : 'I_m -> R) (P : pred 'I_m) :
  (forall i : 'I_m, F' i = F i /\ P' i = P i) ->
  esum [seq F' i | i <- iota 0 m & P' i] = \sum_(i < m | P i) F i.
Proof.
move=> FP; rewrite esum_big big_map big_filter.
have -> : iota 0 m = index_iota 0 m by rewrite /index_iota subn0.
rewrite big_mkord; apply: eq_big => i; [by case: (FP i) | by case: (FP i) => -> _].
Qed.

(* ------------------------------------------------------------------ *)
(* The executable operations compute the model's.                      *)

Theorem eidentity_mapE n : eidentity_map n = mseq (identity_map n).
Proof. by rewrite /eidentity_map -val_enum_ord. Qed.

Theorem ecomposeE m n k (f : 'I_m -> 'I_n) (g : 'I_n -> 'I_k) :
  ecompose (mseq g) (mseq f) = mseq (compose g f).
Proof. by rewrite /ecompose /mseq -map_comp; apply: eq_map => i /=; rewrite nth_mseq. Qed.

Theorem epullbackE m n (f : 'I_m -> 'I_n) (phi : 'I_n -> R) :
  epullback (mseq f) (fseq phi) = fseq (pullback f phi).
Proof. by rewrite /epullback /mseq -map_comp; apply: eq_map => i /=; rewrite nth_fseq. Qed.

Theorem epushforwardE m n (f : 'I_m -> 'I_n) (mu : 'I_m -> R) :
  epushforward n (mseq f) (fseq mu) = fseq (pushforward f mu).
Proof.
rewrite /epushforward map_iota_ord size_mseq; apply: eq_map => b.
by apply: esum_ord => a; rewrite nth_fseq nth_mseq.
Qed.

Theorem eintegrateE m n (f : 'I_m -> 'I_n) (mu psi : 'I_m -> R) :
  eintegrate n (mseq f) (fseq mu) (fseq psi) = fseq (integrate f mu psi).
Proof.
rewrite /eintegrate map_iota_ord size_mseq; apply: eq_map => b.
by apply: esum_ord => a; rewrite !nth_fseq nth_mseq.
Qed.

Lemma ehadamard_fseq n (u v : 'I_n -> R) : ehadamard (fseq u) (fseq v) = fseq (hadamard u v).
Proof. by rewrite /ehadamard zip_map -map_comp. Qed.

(* The pairs of the fibre product, in the order of its points. *)
Lemma efibre_points m k n (f : 'I_m -> 'I_n) (g : 'I_k -> 'I_n) :
  efibre (mseq f) (mseq g)
  = [seq (val (fibre_p f g e), val (fibre_q f g e)) | e <- enum 'I_(fibre_size f g)].
Proof.
pose vp (ab : 'I_m * 'I_k) := (val ab.1, val ab.2).
have -> : [seq (val (fibre_p f g e), val (fibre_q f g e)) | e <- enum 'I_(fibre_size f g)]
  = [seq vp ab | ab <- [seq fibre_point f g e | e <- enum 'I_(fibre_size f g)]].
  by rewrite -map_comp.
rewrite fibre_enumeration /efibre !size_mseq -!val_enum_ord allpairs_mapl allpairs_mapr.
rewrite (@eq_filter _ _ (preim vp (fun ab => nth 0%N (mseq f) ab.1 == nth 0%N (mseq g) ab.2))).
  by rewrite -filter_map map_allpairs.
by move=> [a b]; rewrite /vp /= !nth_mseq.
Qed.

Theorem efibreE m k n (f : 'I_m -> 'I_n) (g : 'I_k -> 'I_n) :
  [seq p.1 | p <- efibre (mseq f) (mseq g)] = mseq (fibre_p f g) /\
  [seq p.2 | p <- efibre (mseq f) (mseq g)] = mseq (fibre_q f g).
Proof. by split; rewrite /mseq efibre_points -map_comp; apply: eq_map => e. Qed.

Theorem eidentity_spanE n : eidentity_span n = espan_of (identity_span R n).
Proof.
rewrite /eidentity_span /espan_of /fseq /mseq /=; congr ESpan; try by rewrite -val_enum_ord.
rewrite /constant -[in nseq n 1](size_enum_ord n).
by elim: (enum 'I_n) => //= x l ->.
Qed.

Theorem etransposeE X Y (a : Span R X Y) : etranspose (espan_of a) = espan_of (transpose a).
Proof. by []. Qed.

Theorem eapplyE X Y (a : Span R X Y) (phi : 'I_X -> R) :
  eapply (espan_of a) (fseq phi) = fseq (apply a phi).
Proof. by rewrite /eapply /= epullbackE eintegrateE. Qed.

Theorem ecompose_spanE X Y Z (b : Span R Y Z) (a : Span R X Y) :
  ecompose_span (espan_of b) (espan_of a) = espan_of (compose_span b a).
Proof.
rewrite /ecompose_span /espan_of /= efibre_points; congr ESpan; rewrite -map_comp.
- by apply: eq_map => e /=; rewrite nth_mseq.
- by apply: eq_map => e /=; rewrite nth_mseq.
- by apply: eq_map => e /=; rewrite !nth_fseq.
Qed.

Theorem etranspose_pE X Y P (a : ParametricSpan R X Y P) :
  etranspose_p (epspan_of a) = epspan_of (transpose_p a).
Proof. by []. Qed.

Theorem eapply_pE X Y P (a : ParametricSpan R X Y P) (w : 'I_P -> R) (phi : 'I_X -> R) :
  eapply_p (epspan_of a) (fseq w) (fseq phi) = fseq (apply_p a w phi).
Proof. by rewrite /eapply_p /= !epullbackE ehadamard_fseq eintegrateE. Qed.

Theorem eparameter_gradientE X Y P (a : ParametricSpan R X Y P) (phi : 'I_X -> R)
  (g : 'I_Y -> R) :
  eparameter_gradient (epspan_of a) (fseq phi) (fseq g) = fseq (parameter_gradient a phi g).
Proof. by rewrite /eparameter_gradient /= !epullbackE ehadamard_fseq eintegrateE. Qed.

Theorem ecompose_pE X Y Z Pa Pb (b : ParametricSpan R Y Z Pb) (a : ParametricSpan R X Y Pa) :
  ecompose_p (epspan_of b) (epspan_of a) = epspan_of (compose_p b a).
Proof.
rewrite /ecompose_p /epspan_of /=; congr EPSpan; first exact: ecompose_spanE.
by rewrite efibre_points -map_comp; apply: eq_map => e /=; rewrite !nth_mseq.
Qed.

(* ------------------------------------------------------------------ *)
(* The graded span machine (src/pm/machine/).                          *)

(* A grading as the list of the grades d(0), ..., d(n-1). *)
Definition gseq n (d : 'I_n -> nat) : seq nat := [seq d i | i <- enum 'I_n].

Lemma nth_gseq n (d : 'I_n -> nat) (i : 'I_n) x0 : nth x0 (gseq d) i = d i.
Proof. by rewrite (nth_map i) ?size_enum_ord // nth_ord_enum. Qed.

Lemma size_gseq n (d : 'I_n -> nat) : size (gseq d) = n.
Proof. by rewrite size_map size_enum_ord. Qed.

Section ExecutableMachine.

Variables (ed : seq nat) (a : epspan).

Local Notation sp := (espan_of_p a).
Local Notation grade i := (nth 0%N ed i).

(* p is valid when every edge with parameter p raises the grade. *)
Definition evalid (p : nat) : bool :=
  all (fun e => (nth 0%N (epi a) e != p) || (grade (nth 0%N (es sp) e) < grade (nth 0%N (et sp) e))%N)
      (iota 0 (size (epi a))).

Definition eclean (w : seq R) : seq R :=
  [seq if evalid p then nth 0 w p else 0 | p <- iota 0 (epar a)].

(* What the solver accumulates into acc[i]: the valid edges into i, in
   increasing edge order, mu(e) * (w(pi e) * z(s e)). *)
Definition eincoming (w z : seq R) (i : nat) : R :=
  esum [seq nth 0 (emu sp) e * (nth 0 w (nth 0%N (epi a) e) * nth 0 z (nth 0%N (es sp) e))
       | e <- iota 0 (size (epi a)) & evalid (nth 0%N (epi a) e) && (nth 0%N (et sp) e == i)].

Variables (sigma : nat -> R -> R) (w y0 z0 : seq R).

Definition eforward_level (k : nat) (x : seq R * seq R) : seq R * seq R :=
  let y := [seq if grade i == k then nth 0 y0 i + eincoming w x.2 i else nth 0 x.1 i
           | i <- iota 0 (size ed)] in
  (y, [seq if grade i == k then nth 0 z0 i + sigma i (nth 0 y i) else nth 0 x.2 i
      | i <- iota 0 (size ed)]).

Fixpoint eforward (k : nat) : seq R * seq R :=
  if k is k'.+1 then eforward_level k (eforward k') else (nseq (size ed) 0, nseq (size ed) 0).

End ExecutableMachine.

Definition ereversed (D : nat) (ed : seq nat) : seq nat := [seq (D.+1 - g)%N | g <- ed].

(* The dual machine run by the same solver: transposed span, reversed
   grading, sigma replaced by v |-> slopes_i v, inputs (g_z, g_y). *)
Definition ebackward D ed a (slopes w gy gz : seq R) : seq R * seq R :=
  eforward (ereversed D ed) (etranspose_p a) (fun i v => nth 0 slopes i * v) w gz gy D.

(* The cleaned parameter gradient clean(pi_!^mu(s* z . t* ybar)). *)
Definition eweight_gradient ed a (z ybar : seq R) : seq R :=
  eclean ed a (eparameter_gradient a z ybar).

Section MachineEquality.

Variables (n D P : nat) (d : 'I_n -> nat) (a : ParametricSpan R n n P).

Lemma all_ord m (P' : pred nat) (Q : pred 'I_m) :
  (forall i : 'I_m, P' i = Q i) -> all P' (iota 0 m) = [forall i, Q i].
Proof.
move=> PQ; rewrite -val_enum_ord all_map; apply/allP/forallP => [H i | H i _] /=.
  by rewrite -PQ; apply: H; rewrite mem_enum.
by rewrite PQ.
Qed.

Theorem evalidE (p : 'I_P) : evalid (gseq d) (epspan_of a) p = valid_parameter d a p.
Proof.
rewrite /evalid /= size_mseq; apply: all_ord => e.
by rewrite !nth_mseq !nth_gseq val_eqE implybE.
Qed.

Theorem ecleanE w : eclean (gseq d) (epspan_of a) (fseq w) = fseq (clean d a w).
Proof.
rewrite /eclean map_iota_ord; apply: eq_map => p /=.
by rewrite evalidE nth_fseq.
Qed.

Theorem eincomingE w z (i : 'I_n) :
  eincoming (gseq d) (epspan_of a) (fseq w) (fseq z) i = incoming d a w z i.
Proof.
rewrite /eincoming /= size_mseq; apply: esum_ord => e.
by rewrite !nth_mseq !nth_fseq evalidE val_eqE.
Qed.

(* sigma' is the executable nonlinearity, on indices as numbers. *)
Theorem eforwardE (sigma' : nat -> R -> R) (sigma : 'I_n -> R -> R) w y0 z0 k :
  (forall i v, sigma' (val i) v = sigma i v) ->
  eforward (gseq d) (epspan_of a) sigma' (fseq w) (fseq y0) (fseq z0) k
  = (fseq (forward d a sigma w y0 z0 k).1, fseq (forward d a sigma w y0 z0 k).2).
Proof.
move=> sigmaE; elim: k => [|k IH] /=.
  by rewrite /fseq size_gseq; congr pair; rewrite -[in nseq n 0](size_enum_ord n);
     elim: (enum 'I_n) => //= x l ->.
rewrite IH /eforward_level size_gseq !map_iota_ord /=.
set y := [seq _ | i <- enum 'I_n].
have -> : y = fseq (forward_level d a sigma w y0 z0 k.+1 (forward d a sigma w y0 z0 k)).1.
  by apply: eq_map => i /=; rewrite nth_gseq nth_fseq eincomingE nth_fseq.
congr pair; apply: eq_map => i /=.
by rewrite nth_gseq !nth_fseq sigmaE.
Qed.

Theorem ereversedE : ereversed D (gseq d) = gseq (reversed D d).
Proof. by rewrite /ereversed /gseq -map_comp. Qed.

End MachineEquality.

Theorem ebackwardE n D P (d : 'I_n -> nat) (a : ParametricSpan R n n P) slopes w gy gz :
  ebackward D (gseq d) (epspan_of a) (fseq slopes) (fseq w) (fseq gy) (fseq gz)
  = (fseq (backward D d a slopes w gy gz).1, fseq (backward D d a slopes w gy gz).2).
Proof.
rewrite /ebackward ereversedE etranspose_pE.
by apply: eforwardE => i v; rewrite nth_fseq.
Qed.

Theorem eweight_gradientE n P (d : 'I_n -> nat) (a : ParametricSpan R n n P) z ybar :
  eweight_gradient (gseq d) (epspan_of a) (fseq z) (fseq ybar)
  = fseq (clean d a (parameter_gradient a z ybar)).
Proof. by rewrite /eweight_gradient eparameter_gradientE ecleanE. Qed.

End Executable.
