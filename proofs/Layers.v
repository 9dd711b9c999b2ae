(* Classical layers as parametric spans (src/pm/layers/), with the
   operators of their spans proved equal to the textbook formulas.

   The layers are written as the C++ constructors build them, on the lists
   of Executable.v: a layer is the list of its edges (source, target,
   parameter, weight) in the constructor's order, and its parametric span is
   `of_edges` of that list; multi-indices are flattened row-major, as
   pm::Shape does. The theorems say what the operator of each span computes
   at every output, in the coordinates of the textbook formula:

   - dense: (L_W φ)(y) = Σ_x W(x, y) φ(x), W flat x |Y| + y, and with bias
     (the copairing with the span from the one-point space) at φ ⊔ 1:
     Σ_x W(x, y) φ(x) + b(y); its gradients φ(x) g(y) and g(y);
   - convolution of any rank with asymmetric zero padding, stride, dilation
     and groups (the semantics of PyTorch's ConvNd):
       y[o, c_out] = Σ_{k, c_in} W[k, c_in, c_out] x[o·stride + k·dilation − pad_lo, g·C_in/groups + c_in]
     with x zero outside the input (padding is the absence of an edge) and
     g = c_out / (C_out / groups) the group of c_out;
   - for any layer given by its edges, the transposed span and the
     parameter gradient are the sums over the edges out of an input and
     over the edges of a parameter: for the convolution, the input gradient
     is the transposed convolution and the weight gradient the correlation
     of the input with the output gradient; the convolution commutes with
     translations by stride · δ away from the boundary;
   - graph convolution: Σ_{u -> v} c(u, v) Σ_{c_in} W(c_in, c_out) φ(u, c_in)
     with c = 1, 1/deg(v), or (deg(u) deg(v))^{-1/2} over a real closed
     field, and its equivariance under a relabelling of the nodes;
   - the recurrent machine's cleaning: which (lag, c_in, c_out) survive,
     and that flipping the parameters commutes with cleaning for the
     reversed grading;
   - in 1-D without padding, composing two convolutions (their textbook
     operators, and their spans) is the convolution with the composed
     kernel;
   - an edge list with its ends in range as a parametric span of Spans.v. *)
From Coq Require Import Lia.
From mathcomp Require Import all_ssreflect all_algebra.
From PM Require Import Spans Executable.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.
Local Open Scope ring_scope.

Section Layers.

Variable R : comRingType.

(* ------------------------------------------------------------------ *)
(* Spans given by their edges.                                         *)

(* An edge: ((source, target), parameter), weight. *)
Definition edge := ((nat * nat) * nat * R)%type.
Definition esrc (e : edge) : nat := e.1.1.1.
Definition etgt (e : edge) : nat := e.1.1.2.
Definition eprm (e : edge) : nat := e.1.2.
Definition ewt (e : edge) : R := e.2.
Definition edge0 : edge := ((0, 0, 0)%N, 0).

Definition of_edges (X Y P : nat) (es : seq edge) : epspan R :=
  EPSpan (ESpan X Y (map esrc es) (map etgt es) (map ewt es)) P (map eprm es).

Lemma esum_cat (u v : seq R) : esum (u ++ v) = esum u + esum v.
Proof. by rewrite !esum_big big_cat. Qed.

Lemma nth_ehadamard (u v : seq R) a : size u = size v ->
  nth 0 (ehadamard u v) a = nth 0 u a * nth 0 v a.
Proof.
move=> uv; rewrite /ehadamard; case: (ltnP a (size u)) => [lt|ge].
  by rewrite (nth_map (0, 0)) ?size_zip ?uv ?minnn -?uv // nth_zip.
by rewrite !nth_default ?mul0r ?size_map ?size_zip ?uv ?minnn -?uv.
Qed.

(* A sum over the points of the apex, read by index, is a sum over the
   edges. *)
Lemma esum_edges (es : seq edge) (F : edge -> R) (Q : pred edge) :
  esum [seq F (nth edge0 es a) | a <- iota 0 (size es) & Q (nth edge0 es a)]
  = esum [seq F e | e <- es & Q e].
Proof.
by rewrite -[in RHS](mkseq_nth edge0 es) /mkseq filter_map -map_comp.
Qed.

(* The operator of a span given by its edges: at y, the sum over the edges
   into y of weight · w(parameter) · φ(source). *)
Theorem eapply_p_edges X Y P (es : seq edge) (w phi : seq R) :
  eapply_p (of_edges X Y P es) w phi
  = [seq esum [seq ewt e * (nth 0 w (eprm e) * nth 0 phi (esrc e)) | e <- es & etgt e == y]
    | y <- iota 0 Y].
Proof.
rewrite /eapply_p /eintegrate /= size_map; apply: eq_map => y.
rewrite -(esum_edges es (fun e => ewt e * (nth 0 w (eprm e) * nth 0 phi (esrc e))) (fun e => etgt e == y)).
congr esum.
have -> : [seq a <- iota 0 (size es) | nth 0%N (map etgt es) a == y]
  = [seq a <- iota 0 (size es) | etgt (nth edge0 es a) == y].
  by apply: eq_in_filter => a; rewrite mem_iota add0n => /andP[_ lt]; rewrite (nth_map edge0).
apply/eq_in_map => a; rewrite mem_filter mem_iota add0n => /andP[_ /andP[_ lt]].
rewrite nth_ehadamard ?size_map // !(nth_map 0%N) ?size_map //.
by rewrite !(nth_map edge0).
Qed.

(* The transposed span is the span of the edges turned round. *)
Definition turn (e : edge) : edge := ((etgt e, esrc e), eprm e, ewt e).

Lemma transpose_edges X Y P (es : seq edge) :
  etranspose_p (of_edges X Y P es) = of_edges Y X P (map turn es).
Proof. by rewrite /etranspose_p /of_edges /etranspose /= -!map_comp. Qed.

(* The transposed operator: at x, the sum over the edges out of x. *)
Theorem transpose_p_edges X Y P (es : seq edge) (w g : seq R) :
  eapply_p (etranspose_p (of_edges X Y P es)) w g
  = [seq esum [seq ewt e * (nth 0 w (eprm e) * nth 0 g (etgt e)) | e <- es & esrc e == x]
    | x <- iota 0 X].
Proof.
rewrite transpose_edges eapply_p_edges; apply: eq_map => x.
by rewrite filter_map -map_comp.
Qed.

(* The parameter gradient: at p, the sum over the edges of parameter p of
   weight · φ(source) · g(target). *)
Theorem gradient_edges X Y P (es : seq edge) (phi g : seq R) :
  eparameter_gradient (of_edges X Y P es) phi g
  = [seq esum [seq ewt e * (nth 0 phi (esrc e) * nth 0 g (etgt e)) | e <- es & eprm e == p]
    | p <- iota 0 P].
Proof.
rewrite /eparameter_gradient /eintegrate /= size_map; apply: eq_map => p.
rewrite -(esum_edges es (fun e => ewt e * (nth 0 phi (esrc e) * nth 0 g (etgt e))) (fun e => eprm e == p)).
congr esum.
have -> : [seq a <- iota 0 (size es) | nth 0%N (map eprm es) a == p]
  = [seq a <- iota 0 (size es) | eprm (nth edge0 es a) == p].
  by apply: eq_in_filter => a; rewrite mem_iota add0n => /andP[_ lt]; rewrite (nth_map edge0).
apply/eq_in_map => a; rewrite mem_filter mem_iota add0n => /andP[_ /andP[_ lt]].
rewrite nth_ehadamard ?size_map // !(nth_map 0%N) ?size_map //.
by rewrite !(nth_map edge0).
Qed.

(* The operator of the plain span (no parameter): at y, the sum over the
   edges into y of weight · φ(source). *)
Theorem eapply_edges X Y P (es : seq edge) (phi : seq R) :
  eapply (espan_of_p (of_edges X Y P es)) phi
  = [seq esum [seq ewt e * nth 0 phi (esrc e) | e <- es & etgt e == y] | y <- iota 0 Y].
Proof.
rewrite /eapply /eintegrate /= size_map; apply: eq_map => y.
rewrite -(esum_edges es (fun e => ewt e * nth 0 phi (esrc e)) (fun e => etgt e == y)).
congr esum.
have -> : [seq a <- iota 0 (size es) | nth 0%N (map etgt es) a == y]
  = [seq a <- iota 0 (size es) | etgt (nth edge0 es a) == y].
  by apply: eq_in_filter => a; rewrite mem_iota add0n => /andP[_ lt]; rewrite (nth_map edge0).
apply/eq_in_map => a; rewrite mem_filter mem_iota add0n => /andP[_ /andP[_ lt]].
by rewrite (nth_map 0%N) ?size_map // !(nth_map edge0).
Qed.

(* Sums over nested lists. *)
Lemma esum_flatten (ls : seq (seq edge)) (F : edge -> R) (Q : pred edge) :
  esum [seq F e | e <- flatten ls & Q e] = esum [seq esum [seq F e | e <- l & Q e] | l <- ls].
Proof. by elim: ls => //= l ls IH; rewrite filter_cat map_cat esum_cat IH. Qed.

Lemma esum_flatten_all (ls : seq (seq edge)) (F : edge -> R) :
  esum [seq F e | e <- flatten ls] = esum [seq esum [seq F e | e <- l] | l <- ls].
Proof. by elim: ls => //= l ls IH; rewrite map_cat esum_cat IH. Qed.

Lemma esum_scale (m : R) (l : seq R) : m * esum l = esum [seq m * v | v <- l].
Proof. by elim: l => /= [|v l <-]; rewrite ?mulr0 ?mulrDr. Qed.

Lemma esum_zero T (s : seq T) : esum [seq 0 : R | _ <- s] = 0.
Proof. by elim: s => //= _ s ->; rewrite addr0. Qed.

Lemma esum_pick n (G : nat -> R) y : (y < n)%N ->
  esum [seq if i == y then G i else 0 | i <- iota 0 n] = G y.
Proof.
move=> lt; rewrite esum_big big_map (bigD1_seq y) ?mem_iota ?iota_uniq //= eqxx big1 ?addr0 //.
by move=> i /negbTE ->.
Qed.

(* Edges listed output by output: a filtered sum over the edges into y is
   the sum over the block of y. *)
Lemma block_sum (block : nat -> seq edge) n (F : edge -> R) y :
  (forall y' e, e \in block y' -> etgt e = y') -> (y < n)%N ->
  esum [seq F e | e <- flatten [seq block y' | y' <- iota 0 n] & etgt e == y]
  = esum [seq F e | e <- block y].
Proof.
move=> targets lt; rewrite esum_flatten -map_comp.
rewrite (@eq_map _ _ _ (fun y' => if y' == y then esum [seq F e | e <- block y'] else 0)).
  by rewrite esum_pick.
move=> y' /=; case: eqP => [-> | ne].
  by congr (esum (map _ _)); apply/all_filterP/allP => e /targets ->.
rewrite (@eq_in_filter _ _ pred0) ?filter_pred0 // => e /targets -> /=.
by apply/eqP.
Qed.

(* A flat index q·n + r with r < n is the pair (q, r). *)
Lemma flat_pair_eq (q r n y : nat) : (r < n)%N ->
  ((q * n + r)%N == y) = (q == y %/ n)%N && (r == y %% n)%N.
Proof.
move=> lt; have n_pos : (0 < n)%N by apply: leq_ltn_trans lt.
apply/eqP/andP => [<- | [/eqP -> /eqP ->]]; last by rewrite -divn_eq.
by rewrite divnMDl // divn_small // addn0 modnMDl modn_small.
Qed.

(* ------------------------------------------------------------------ *)
(* Dense (dense.hpp, without bias).                                   *)

Definition edense (I O : nat) : seq edge :=
  [seq ((x, y), (x * O + y)%N, 1) | x <- iota 0 I, y <- iota 0 O].

Lemma esum_allpairs (s t : seq nat) (f : nat -> nat -> edge) (F : edge -> R) (Q : pred edge) :
  esum [seq F e | e <- [seq f x y | x <- s, y <- t] & Q e]
  = esum [seq esum [seq F e | e <- [seq f x y | y <- t] & Q e] | x <- s].
Proof. by elim: s => //= x s IH; rewrite filter_cat map_cat esum_cat IH. Qed.

(* Law: LAYER-DENSE-EQ-SPAN *)
Theorem dense_textbook I O (w phi : seq R) :
  eapply_p (of_edges I O (I * O) (edense I O)) w phi
  = [seq esum [seq nth 0 w (x * O + y) * nth 0 phi x | x <- iota 0 I] | y <- iota 0 O].
Proof.
rewrite eapply_p_edges; apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt].
rewrite esum_allpairs; congr esum; apply: eq_map => x.
rewrite filter_map /= (@eq_filter _ _ (pred1 y)) // filter_pred1_uniq ?iota_uniq ?mem_iota //=.
by rewrite /ewt /eprm /esrc /= mul1r addr0.
Qed.

(* The input gradient of the dense layer: (L_Wᵀ g)(x) = Σ_y W(x, y) g(y). *)
(* Law: LAYER-DENSE-INPUT-GRADIENT *)
Theorem dense_transpose_textbook I O (w g : seq R) :
  eapply_p (etranspose_p (of_edges I O (I * O) (edense I O))) w g
  = [seq esum [seq nth 0 w (x * O + y) * nth 0 g y | y <- iota 0 O] | x <- iota 0 I].
Proof.
rewrite transpose_p_edges; apply/eq_in_map => x; rewrite mem_iota add0n => /andP[_ lt].
rewrite esum_allpairs.
rewrite (@eq_map _ _ _ (fun x' => if x' == x then
           esum [seq nth 0 w (x' * O + y) * nth 0 g y | y <- iota 0 O] else 0)).
  by rewrite esum_pick.
move=> x' /=; rewrite filter_map -map_comp /preim /esrc /=.
case: eqP => [-> | ne].
  rewrite (@eq_filter _ _ predT) ?filter_predT //; congr esum; apply: eq_map => y.
  by rewrite /ewt /eprm /etgt /= mul1r.
by rewrite (@eq_filter _ _ pred0) ?filter_pred0 // => y /=; apply/eqP.
Qed.

(* ------------------------------------------------------------------ *)
(* Bias and the copairing (coproduct.hpp).                           *)

(* The copairing [a, b] : X_a ⊔ X_b -> Y: the edges of a, then those of b
   with sources shifted by |X_a| and parameters by |P_a| (pm::copair). *)
Definition ecopair (XA PA : nat) (ea eb : seq edge) : seq edge :=
  ea ++ [seq ((XA + esrc e, etgt e), PA + eprm e, ewt e)%N | e <- eb].

(* The bias {•} <- Y -> Y: one edge • -> y with parameter y (pm::bias). *)
Definition ebias (O : nat) : seq edge := [seq (((0%N, y), y), 1) | y <- iota 0 O].

Lemma map_zip_add (T : Type) (s : seq T) (f g : T -> R) :
  [seq u.1 + u.2 | u <- zip [seq f y | y <- s] [seq g y | y <- s]] = [seq f y + g y | y <- s].
Proof. by elim: s => //= y s ->. Qed.

(* L_{(w_a, w_b)}(φ_a ⊔ φ_b) = L_{w_a} φ_a + L_{w_b} φ_b, where w_b and φ_b
   are what follows the first |P_a| parameters and |X_a| inputs. *)
Theorem copair_apply XA XB Y PA PB (ea eb : seq edge) (w phi : seq R) :
  eapply_p (of_edges (XA + XB) Y (PA + PB) (ecopair XA PA ea eb)) w phi
  = [seq u.1 + u.2 | u <- zip (eapply_p (of_edges XA Y PA ea) w phi)
                              (eapply_p (of_edges XB Y PB eb) (drop PA w) (drop XA phi))].
Proof.
rewrite !eapply_p_edges map_zip_add; apply: eq_map => y.
rewrite /ecopair filter_cat map_cat esum_cat filter_map -map_comp; congr (_ + esum _).
by apply: eq_map => e; rewrite /= !nth_drop.
Qed.

(* Filtered sums over the copairing, split at |X_a| or |P_a|. *)
Lemma copair_sum_low XA PA (ea eb : seq edge) (key : edge -> nat) (shift : nat) (F : edge -> R) k :
  (forall e, key ((XA + esrc e, etgt e), PA + eprm e, ewt e)%N = shift + key e)%N ->
  (k < shift)%N ->
  esum [seq F e | e <- ecopair XA PA ea eb & key e == k] = esum [seq F e | e <- ea & key e == k].
Proof.
move=> shifted lt; rewrite /ecopair filter_cat map_cat esum_cat filter_map.
rewrite (@eq_filter _ (preim _ _) pred0) ?filter_pred0 /= ?addr0 // => e /=.
by rewrite /preim shifted; apply/negbTE; rewrite eq_sym neq_ltn (leq_trans lt (leq_addr _ _)).
Qed.

Lemma copair_sum_high XA PA (ea eb : seq edge) (key : edge -> nat) (shift : nat) (F : edge -> R) k :
  (forall e, key ((XA + esrc e, etgt e), PA + eprm e, ewt e)%N = shift + key e)%N ->
  all (fun e => key e < shift)%N ea ->
  esum [seq F e | e <- ecopair XA PA ea eb & key e == shift + k]%N
  = esum [seq F ((XA + esrc e, etgt e), PA + eprm e, ewt e)%N | e <- eb & key e == k].
Proof.
move=> shifted /allP low; rewrite /ecopair filter_cat map_cat esum_cat filter_map -map_comp.
rewrite (@eq_in_filter _ _ pred0) ?filter_pred0 /= ?add0r; last first.
  by move=> e /low lt; apply/negbTE; rewrite neq_ltn (leq_trans lt (leq_addr _ _)).
by congr (esum (map _ _)); apply: eq_filter => e; rewrite /preim /= shifted eqn_add2l.
Qed.

(* A family of filtered sums over the copairing, one per key k < shift + n,
   splits into a's (keys below shift) and b's (the shifted keys). *)
Lemma copair_split XA PA (ea eb : seq edge) (key : edge -> nat) shift n (F F' : edge -> R) :
  (forall e, key ((XA + esrc e, etgt e), PA + eprm e, ewt e)%N = shift + key e)%N ->
  all (fun e => key e < shift)%N ea ->
  (forall e, F ((XA + esrc e, etgt e), PA + eprm e, ewt e)%N = F' e) ->
  [seq esum [seq F e | e <- ecopair XA PA ea eb & key e == k] | k <- iota 0 (shift + n)]
  = [seq esum [seq F e | e <- ea & key e == k] | k <- iota 0 shift]
    ++ [seq esum [seq F' e | e <- eb & key e == k] | k <- iota 0 n].
Proof.
move=> shifted low FF'; rewrite iotaD map_cat add0n; congr (_ ++ _).
  by apply/eq_in_map => k; rewrite mem_iota add0n => /andP[_ lt]; apply: copair_sum_low.
rewrite -[shift in iota shift _]addn0 iotaDl -map_comp; apply: eq_map => k /=.
by rewrite copair_sum_high //; congr esum; apply: eq_map.
Qed.

(* The transposed copairing: the transposed a on X_a, then the transposed b. *)
Theorem copair_transpose XA XB Y PA PB (ea eb : seq edge) (w g : seq R) :
  all (fun e => esrc e < XA)%N ea ->
  eapply_p (etranspose_p (of_edges (XA + XB) Y (PA + PB) (ecopair XA PA ea eb))) w g
  = eapply_p (etranspose_p (of_edges XA Y PA ea)) w g
    ++ eapply_p (etranspose_p (of_edges XB Y PB eb)) (drop PA w) g.
Proof. by move=> low; rewrite !transpose_p_edges; apply: copair_split => // e; rewrite /= nth_drop. Qed.

(* The parameter gradient of the copairing: a's, then b's at φ_b. *)
Theorem copair_gradient XA XB Y PA PB (ea eb : seq edge) (phi g : seq R) :
  all (fun e => eprm e < PA)%N ea ->
  eparameter_gradient (of_edges (XA + XB) Y (PA + PB) (ecopair XA PA ea eb)) phi g
  = eparameter_gradient (of_edges XA Y PA ea) phi g
    ++ eparameter_gradient (of_edges XB Y PB eb) (drop XA phi) g.
Proof. by move=> low; rewrite !gradient_edges; apply: copair_split => // e; rewrite /= nth_drop. Qed.

Definition edense_bias (I O : nat) : seq edge := ecopair I (I * O) (edense I O) (ebias O).

Definition dense_span (I O : nat) (bias : bool) : epspan R :=
  if bias then of_edges (I + 1) O (I * O + O) (edense_bias I O)
  else of_edges I O (I * O) (edense I O).

Lemma dense_edges_in I O : all (fun e => (esrc e < I) && (eprm e < I * O))%N (edense I O).
Proof.
apply/allP => e /allpairsP[[x y] [/=]]; rewrite !mem_iota !add0n => /andP[_ ltx] /andP[_ lty] ->.
rewrite /esrc /eprm /= ltx /=.
by rewrite (leq_trans (_ : _ < x * O + O)%N) ?ltn_add2l // -mulSnr leq_mul2r ltx orbT.
Qed.

(* The affine dense layer, evaluated at φ ⊔ 1 (adjoin_unit):
   (L_(W,b) (φ ⊔ 1))(y) = Σ_x W(x, y) φ(x) + b(y), b(y) the parameter I·O + y. *)
(* Law: LAYER-DENSE-EQ-SPAN *)
Theorem dense_bias_textbook I O (w phi : seq R) : size phi = I ->
  eapply_p (dense_span I O true) w (rcons phi 1)
  = [seq esum [seq nth 0 w (x * O + y) * nth 0 phi x | x <- iota 0 I] + nth 0 w (I * O + y)
    | y <- iota 0 O].
Proof.
move=> sz; rewrite /dense_span copair_apply dense_textbook eapply_p_edges map_zip_add.
apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt]; congr (esum _ + _).
  by apply/eq_in_map => x; rewrite mem_iota add0n => /andP[_ ltx]; rewrite nth_rcons sz ltx.
rewrite (_ : drop I (rcons phi 1) = [:: 1]); last by rewrite -sz drop_rcons // drop_size.
rewrite /ebias filter_map /=.
rewrite (@eq_in_filter _ _ (pred1 y)); last by [].
rewrite filter_pred1_uniq ?iota_uniq ?mem_iota //= /ewt /eprm /esrc /= nth_drop.
by rewrite mul1r mulr1 addr0.
Qed.

(* The dense layer's parameter gradient: ∂⟨g, L_W φ⟩/∂W(x, y) = φ(x) g(y). *)
Theorem dense_gradient_textbook I O (phi g : seq R) :
  eparameter_gradient (dense_span I O false) phi g
  = [seq nth 0 phi (p %/ O) * nth 0 g (p %% O) | p <- iota 0 (I * O)].
Proof.
rewrite /dense_span gradient_edges; apply/eq_in_map => p; rewrite mem_iota add0n => /andP[_ lt].
have /andP[_ Opos] : (0 < I)%N && (0 < O)%N by rewrite -muln_gt0 (leq_ltn_trans _ lt).
rewrite esum_allpairs.
rewrite (@eq_map _ _ _ (fun x => if x == (p %/ O)%N then nth 0 phi x * nth 0 g (p %% O) else 0)).
  by rewrite esum_pick // ltn_divLR // mulnC.
move=> x /=; rewrite filter_map -map_comp /preim /eprm /=.
rewrite (@eq_in_filter _ _ (fun y => (x == p %/ O)%N && (y == p %% O)%N)); last first.
  by move=> y; rewrite mem_iota add0n => /andP[_ lty] /=; rewrite flat_pair_eq.
case: eqP => [-> | _] /=; last by rewrite filter_pred0.
rewrite filter_pred1_uniq ?iota_uniq ?mem_iota ?ltn_pmod //= /ewt /esrc /etgt /=.
by rewrite mul1r addr0.
Qed.

(* With bias: the weight gradient φ(x) g(y), then the bias gradient g(y). *)
(* Law: LAYER-DENSE-PARAMETER-GRADIENT *)
Theorem dense_bias_gradient_textbook I O (phi g : seq R) : size phi = I ->
  eparameter_gradient (dense_span I O true) (rcons phi 1) g
  = [seq nth 0 phi (p %/ O) * nth 0 g (p %% O) | p <- iota 0 (I * O)]
    ++ [seq nth 0 g y | y <- iota 0 O].
Proof.
move=> sz; rewrite /dense_span copair_gradient; last first.
  by apply: sub_all (dense_edges_in I O) => e /andP[].
have := dense_gradient_textbook I O (rcons phi 1) g; rewrite /dense_span => ->.
rewrite (_ : drop I (rcons phi 1) = [:: 1]); last by rewrite -sz drop_rcons // drop_size.
congr (_ ++ _).
  apply/eq_in_map => p; rewrite mem_iota add0n => /andP[_ lt].
  have /andP[_ Opos] : (0 < I)%N && (0 < O)%N by rewrite -muln_gt0 (leq_ltn_trans _ lt).
  by rewrite nth_rcons sz ltn_divLR // lt.
rewrite gradient_edges; apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt].
rewrite /ebias filter_map /= (@eq_in_filter _ _ (pred1 y)); last by [].
by rewrite filter_pred1_uniq ?iota_uniq ?mem_iota //= /ewt /esrc /= !mul1r addr0.
Qed.

(* The input gradient with bias: Σ_y W(x, y) g(y) at x < I, then Σ_y b(y) g(y) at •. *)
(* Law: LAYER-DENSE-INPUT-GRADIENT *)
Theorem dense_bias_transpose_textbook I O (w g : seq R) :
  eapply_p (etranspose_p (dense_span I O true)) w g
  = rcons [seq esum [seq nth 0 w (x * O + y) * nth 0 g y | y <- iota 0 O] | x <- iota 0 I]
          (esum [seq nth 0 w (I * O + y) * nth 0 g y | y <- iota 0 O]).
Proof.
rewrite /dense_span copair_transpose; last by apply: sub_all (dense_edges_in I O) => e /andP[].
rewrite dense_transpose_textbook -cats1; congr (_ ++ _).
rewrite transpose_p_edges /= /ebias filter_map /=.
rewrite (@eq_filter _ _ predT) ?filter_predT // -map_comp; congr [:: esum _].
by apply: eq_map => y; rewrite /= /ewt /eprm /etgt /= nth_drop mul1r.
Qed.

(* ------------------------------------------------------------------ *)
(* Convolution of any rank (conv.hpp).                                 *)

(* The multi-indices of a shape in row-major order (the first coordinate
   major), and the flat index of a multi-index, as pm::Shape. *)
Fixpoint multis (sh : seq nat) : seq (seq nat) :=
  if sh is e :: es then [seq i :: r | i <- iota 0 e, r <- multis es] else [:: [::]].

Definition flat (sh idx : seq nat) : nat := foldl (fun f p => f * p.1 + p.2)%N 0%N (zip sh idx).

Record ConvSpec := {
  spatial : seq nat;     (* input extents, one per axis *)
  in_channels : nat;
  out_channels : nat;
  kernel : seq nat;
  pad_lo : seq nat;      (* empty: 0 *)
  pad_hi : seq nat;
  stride : seq nat;      (* empty: 1 *)
  dilation : seq nat;    (* empty: 1 *)
  groups : nat
}.

Section Convolution.

Variable c : ConvSpec.

Local Notation rank := (size (spatial c)).
Definition lo j := nth 0%N (pad_lo c) j.
Definition hi j := nth 0%N (pad_hi c) j.
Definition step j := nth 1%N (stride c) j.
Definition dil j := nth 1%N (dilation c) j.
Definition reach j := (dil j * (nth 0%N (kernel c) j).-1).+1.
Definition cin_g := (in_channels c %/ groups c)%N.
Definition cout_g := (out_channels c %/ groups c)%N.

Definition out_positions : seq nat :=
  [seq ((nth 0%N (spatial c) j + lo j + hi j - reach j) %/ step j).+1 | j <- iota 0 rank]%N.
Definition in_shape := rcons (spatial c) (in_channels c).
Definition out_shape := rcons out_positions (out_channels c).
Definition outputs := multis out_shape.
Definition offsets := multis (kernel c).

(* The position o·stride + k·dilation of output position o and kernel
   offset k, before the padding is subtracted, on axis j. *)
Definition shifted (o k : seq nat) j := (nth 0%N o j * step j + nth 0%N k j * dil j)%N.
(* The input position lies inside the input on every axis. *)
Definition inside (o k : seq nat) :=
  all (fun j => (lo j <= shifted o k j) && (shifted o k j - lo j < nth 0%N (spatial c) j))%N (iota 0 rank).
Definition source (o k : seq nat) (channel : nat) :=
  flat in_shape (rcons [seq (shifted o k j - lo j)%N | j <- iota 0 rank] channel).
Definition parameter (kf ci co : nat) := ((kf * cin_g + ci) * out_channels c + co)%N.

(* The edges of output y, multi-index o = (position, c_out), in the order
   of for_each_conv_edge: kernel offsets, then input channels of the group;
   an offset that reads the padding has no edge. *)
Definition conv_block (y : nat) : seq edge :=
  let o := nth [::] outputs y in let co := last 0%N o in
  flatten [seq if inside o (nth [::] offsets kf)
               then [seq ((source o (nth [::] offsets kf) (co %/ cout_g * cin_g + ci), y),
                          parameter kf ci co, 1) | ci <- iota 0 cin_g]
               else [::]
          | kf <- iota 0 (size offsets)].

Definition econv_edges : seq edge := flatten [seq conv_block y | y <- iota 0 (size outputs)].

Definition econv : epspan R :=
  of_edges (foldr muln 1%N in_shape) (size outputs)
           (foldr muln 1%N (kernel c) * cin_g * out_channels c)%N econv_edges.

(* The input at a position shifted by the padding, zero outside. *)
Definition padded (x : seq R) (o k : seq nat) (channel : nat) : R :=
  if inside o k then nth 0 x (source o k channel) else 0.

Lemma block_targets y e : e \in conv_block y -> etgt e = y.
Proof.
move=> /flattenP[l /mapP[kf _ ->]]; case: ifP => _ //.
by move=> /mapP[ci _ ->].
Qed.

(* A filtered sum over the edges into y is the sum over the block of y. *)
Lemma conv_block_sum (F : edge -> R) y : (y < size outputs)%N ->
  esum [seq F e | e <- econv_edges & etgt e == y] = esum [seq F e | e <- conv_block y].
Proof. exact: block_sum block_targets. Qed.

(* The convolution: at the output y with multi-index o = (position, c_out),
     y[o] = Σ_{k, c_in} W[k, c_in, c_out] x[o·stride + k·dilation − pad_lo, g·C_in/groups + c_in],
   x zero outside the input, g = c_out / (C_out / groups). *)
(* Law: LAYER-CONV-EQ-SPAN *)
Theorem conv_textbook (w x : seq R) :
  eapply_p econv w x
  = [seq let o := nth [::] outputs y in let co := last 0%N o in
         esum [seq esum [seq nth 0 w (parameter kf ci co)
                             * padded x o (nth [::] offsets kf) (co %/ cout_g * cin_g + ci)
                        | ci <- iota 0 cin_g]
              | kf <- iota 0 (size offsets)]
    | y <- iota 0 (size outputs)].
Proof.
rewrite eapply_p_edges; apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt] /=.
rewrite conv_block_sum // /conv_block esum_flatten_all -map_comp; congr esum; apply: eq_map => kf /=.
case: ifP => [ins | outs] /=.
  rewrite -map_comp; congr esum; apply: eq_map => ci.
  by rewrite /padded ins /ewt /= mul1r.
rewrite (@eq_map _ _ _ (fun _ => 0)) ?esum_zero // => ci.
by rewrite /padded outs mulr0.
Qed.

(* The edge of output y, kernel offset kf and input channel ci. *)
Definition conv_edge y kf ci : edge :=
  let o := nth [::] outputs y in let co := last 0%N o in
  ((source o (nth [::] offsets kf) (co %/ cout_g * cin_g + ci), y), parameter kf ci co, 1).

(* Any filtered sum over the edges is the sum over (y, kf, ci) with the
   offset inside the input. *)
Lemma conv_sum (F : edge -> R) (Q : pred edge) :
  esum [seq F e | e <- econv_edges & Q e]
  = esum [seq esum [seq esum [seq if inside (nth [::] outputs y) (nth [::] offsets kf)
                                     && Q (conv_edge y kf ci) then F (conv_edge y kf ci) else 0
                             | ci <- iota 0 cin_g]
                   | kf <- iota 0 (size offsets)]
         | y <- iota 0 (size outputs)].
Proof.
rewrite esum_flatten -map_comp; congr esum; apply: eq_map => y /=.
rewrite /conv_block esum_flatten -map_comp; congr esum; apply: eq_map => kf /=.
case: ifP => ins /=.
  rewrite filter_map -map_comp; elim: (iota 0 cin_g) => //= ci l IH.
  by rewrite /preim /=; case: ifP => q //=; rewrite ?add0r IH.
by rewrite (@eq_map _ _ _ (fun _ => 0)) ?esum_zero.
Qed.

(* The transposed convolution (the input gradient): at the input x_i,
     Σ over (y, k, c_in) with the offset inside and x_i the input it reads
     of W[k, c_in, c_out] g[y]. *)
(* Law: LAYER-CONV-TRANSPOSE *)
Theorem conv_transpose_textbook (w g : seq R) :
  eapply_p (etranspose_p econv) w g
  = [seq esum [seq esum [seq esum [seq if inside (nth [::] outputs y) (nth [::] offsets kf)
                                         && (esrc (conv_edge y kf ci) == xi)
                                      then nth 0 w (eprm (conv_edge y kf ci)) * nth 0 g y else 0
                                 | ci <- iota 0 cin_g]
                       | kf <- iota 0 (size offsets)]
             | y <- iota 0 (size outputs)]
    | xi <- iota 0 (foldr muln 1%N in_shape)].
Proof.
rewrite transpose_p_edges; apply: eq_map => xi; rewrite conv_sum.
congr esum; apply: eq_map => y; congr esum; apply: eq_map => kf; congr esum; apply: eq_map => ci.
by case: ifP => // _; rewrite /ewt mul1r.
Qed.

(* The weight gradient: at the parameter p = (k, c_in, c_out), the sum over
   the outputs y of channel c_out whose offset k reads inside the input of
   x[o·stride + k·dilation − pad_lo, g·C_in/groups + c_in] g[y]. *)
(* Law: LAYER-CONV-WEIGHT-GRADIENT *)
Theorem conv_gradient_textbook (x g : seq R) :
  eparameter_gradient econv x g
  = [seq esum [seq esum [seq esum [seq if inside (nth [::] outputs y) (nth [::] offsets kf)
                                         && (eprm (conv_edge y kf ci) == p)
                                      then nth 0 x (esrc (conv_edge y kf ci)) * nth 0 g y else 0
                                 | ci <- iota 0 cin_g]
                       | kf <- iota 0 (size offsets)]
             | y <- iota 0 (size outputs)]
    | p <- iota 0 (foldr muln 1%N (kernel c) * cin_g * out_channels c)%N].
Proof.
rewrite gradient_edges; apply: eq_map => p; rewrite conv_sum.
congr esum; apply: eq_map => y; congr esum; apply: eq_map => kf; congr esum; apply: eq_map => ci.
by case: ifP => // _; rewrite /ewt mul1r.
Qed.

(* Translation: if x' is x moved by stride · δ (x'(p + s·δ, ch) = x(p, ch)
   wherever both positions lie in the input), then the output at o is the
   output at o' = o − δ, when the receptive fields of o and o' lie inside
   the input. *)
(* Law: LAYER-CONV-EQUIVARIANT *)
Theorem conv_equivariant (w x x' : seq R) (delta : seq nat) y y' :
  (y < size outputs)%N -> (y' < size outputs)%N ->
  let o := nth [::] outputs y in let o' := nth [::] outputs y' in
  (forall j, j < rank -> nth 0 o j = nth 0 o' j + nth 0 delta j)%N ->
  last 0%N o = last 0%N o' ->
  (forall kf, kf < size offsets ->
     inside o (nth [::] offsets kf) && inside o' (nth [::] offsets kf))%N ->
  (forall (pos : seq nat) ch,
     all (fun j => (nth 0%N pos j < nth 0%N (spatial c) j)
                   && (nth 0%N pos j + step j * nth 0%N delta j < nth 0%N (spatial c) j))%N
         (iota 0 rank) ->
     nth 0 x' (flat in_shape
                 (rcons [seq nth 0%N pos j + step j * nth 0%N delta j | j <- iota 0 rank]%N ch))
     = nth 0 x (flat in_shape (rcons [seq nth 0%N pos j | j <- iota 0 rank] ch))) ->
  nth 0 (eapply_p econv w x') y = nth 0 (eapply_p econv w x) y'.
Proof.
move=> lty lty' o o' shift same fields moved.
rewrite !conv_textbook !(nth_map 0%N) ?size_iota // !nth_iota // !add0n /= -/o -/o' same.
congr esum; apply/eq_in_map => kf; rewrite mem_iota add0n => /andP[_ ltk].
congr esum; apply: eq_map => ci; congr (_ * _).
have /andP[ins ins'] := fields _ ltk; rewrite /padded ins ins' /source.
set k := nth [::] offsets kf; set pos := [seq (shifted o' k j - lo j)%N | j <- iota 0 rank].
have npos j : (j < rank)%N -> nth 0%N pos j = (shifted o' k j - lo j)%N.
  by move=> lt; rewrite (nth_map 0%N) ?size_iota // nth_iota.
have posj j : (j < rank)%N ->
    (nth 0%N pos j + step j * nth 0%N delta j)%N = (shifted o k j - lo j)%N.
  move=> lt; rewrite npos //.
  move/allP: ins' => /(_ j); rewrite mem_iota add0n lt => /(_ isT) /andP[le _].
  by rewrite addnBAC // /shifted shift // mulnDl addnAC [(step j * _)%N]mulnC.
have posE : [seq (shifted o k j - lo j)%N | j <- iota 0 rank]
            = [seq (nth 0%N pos j + step j * nth 0%N delta j)%N | j <- iota 0 rank].
  by apply/eq_in_map => j; rewrite mem_iota add0n => /andP[_ lt]; rewrite posj.
have pos_in : [seq nth 0%N pos j | j <- iota 0 rank] = pos.
  by apply/eq_in_map => j; rewrite mem_iota add0n => /andP[_ lt]; rewrite npos.
rewrite posE moved; first by congr (nth _ _ (flat _ (rcons _ _))); exact: pos_in.
apply/allP => j; rewrite mem_iota add0n => /andP[_ lt]; rewrite posj // npos //.
move/allP: ins' => /(_ j); rewrite mem_iota add0n lt => /(_ isT) /andP[_ ->] /=.
by move/allP: ins => /(_ j); rewrite mem_iota add0n lt => /(_ isT) /andP[_].
Qed.

End Convolution.

(* ------------------------------------------------------------------ *)
(* Average pooling (pool.hpp).                                         *)

Record PoolSpec := {
  pool_spatial : seq nat;
  channels : nat;
  window : seq nat;
  pool_lo : seq nat;
  pool_hi : seq nat;
  pool_stride : seq nat   (* empty: the window *)
}.

(* The geometry of a depthwise convolution with dilation 1. *)
Definition pool_conv (c : PoolSpec) : ConvSpec :=
  Build_ConvSpec (pool_spatial c) (channels c) (channels c) (window c) (pool_lo c) (pool_hi c)
                 (if pool_stride c is [::] then window c else pool_stride c) [::] (channels c).

(* Every edge of the depthwise geometry, with the weight m (1/|window| in
   pm::average_pool) and no parameter. *)
Definition epool_edges (c : PoolSpec) (m : R) : seq edge :=
  [seq ((esrc e, etgt e), 0%N, m) | e <- econv_edges (pool_conv c)].

Definition epool (c : PoolSpec) (m : R) : epspan R :=
  of_edges (foldr muln 1%N (in_shape (pool_conv c))) (size (outputs (pool_conv c))) 1
           (epool_edges c m).

(* Average pooling: at the output y with multi-index o = (position, c), m
   times the sum over the window offsets k of the input at
   (o·stride + k − lo, c), zero outside the input. *)
(* Law: LAYER-POOL-EQ-SPAN *)
Theorem pool_textbook (c : PoolSpec) (m : R) (x : seq R) : (0 < channels c)%N ->
  eapply (espan_of_p (epool c m)) x
  = [seq let o := nth [::] (outputs (pool_conv c)) y in
         m * esum [seq padded (pool_conv c) x o (nth [::] (offsets (pool_conv c)) kf) (last 0%N o)
                  | kf <- iota 0 (size (offsets (pool_conv c)))]
    | y <- iota 0 (size (outputs (pool_conv c)))].
Proof.
move=> pos; rewrite eapply_edges; apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt].
have g1 : cin_g (pool_conv c) = 1%N by rewrite /cin_g /= divnn pos.
have g1' : cout_g (pool_conv c) = 1%N by rewrite /cout_g /= divnn pos.
transitivity (esum [seq m * nth 0 x (esrc e) | e <- econv_edges (pool_conv c) & etgt e == y]).
  by rewrite /epool_edges filter_map -map_comp.
rewrite conv_block_sum // /conv_block esum_flatten_all -map_comp esum_scale -map_comp.
congr esum; apply: eq_map => kf /=.
rewrite /padded; case: ifP => ins /=; last by rewrite mulr0.
by rewrite g1 g1' /= divn1 muln1 addn0 addr0.
Qed.

(* ------------------------------------------------------------------ *)
(* Graph convolution (graph_conv.hpp).                                 *)

(* The edges of the graph convolution with coefficient coef(u, v) on the
   graph edge u -> v, in the order of pm::graph_conv: graph edges in list
   order, then c_in, then c_out. The normalisations of the C++ are choices
   of coef (gcoef below). *)
Definition egraph_edges (edges : seq (nat * nat)) (cin cout : nat) (coef : nat -> nat -> R) :=
  flatten [seq [seq ((uv.1 * cin + ci, uv.2 * cout + co), ci * cout + co, coef uv.1 uv.2)%N
               | ci <- iota 0 cin, co <- iota 0 cout]
          | uv <- edges].

Definition egraph nodes edges cin cout coef : epspan R :=
  of_edges (nodes * cin) (nodes * cout) (cin * cout) (egraph_edges edges cin cout coef).

(* The graph convolution: at the output (v, c_out), the sum over the graph
   edges u -> v of coef(u, v) Σ_{c_in} W(c_in, c_out) φ(u, c_in). *)
Theorem graph_textbook nodes edges cin cout coef (w phi : seq R) :
  eapply_p (egraph nodes edges cin cout coef) w phi
  = [seq esum [seq if uv.2 == (y %/ cout)%N then
                     coef uv.1 uv.2 * esum [seq nth 0 w (ci * cout + y %% cout)%N
                                                * nth 0 phi (uv.1 * cin + ci)%N | ci <- iota 0 cin]
                   else 0
              | uv <- edges]
    | y <- iota 0 (nodes * cout)%N].
Proof.
rewrite eapply_p_edges; apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt].
have /andP[_ cpos] : (0 < nodes)%N && (0 < cout)%N by rewrite -muln_gt0 (leq_ltn_trans _ lt).
rewrite esum_flatten -map_comp; congr esum; apply: eq_map => uv /=; rewrite esum_allpairs.
have red ci : [seq e <- [seq ((uv.1 * cin + ci, uv.2 * cout + co), ci * cout + co, coef uv.1 uv.2)%N
                        | co <- iota 0 cout] | etgt e == y]
  = if uv.2 == (y %/ cout)%N then [:: ((uv.1 * cin + ci, uv.2 * cout + y %% cout),
                                   ci * cout + y %% cout, coef uv.1 uv.2)%N] else [::].
  rewrite filter_map /preim /etgt /=.
  rewrite (@eq_in_filter _ _ (fun co => (uv.2 == y %/ cout)%N && (co == y %% cout)%N)); last first.
    by move=> co; rewrite mem_iota add0n => /andP[_ lt_co] /=; rewrite flat_pair_eq.
  case: eqP => _ /=; last by rewrite filter_pred0.
  by rewrite filter_pred1_uniq ?iota_uniq ?mem_iota ?ltn_pmod.
case: eqP => hv.
  rewrite esum_scale -map_comp; congr esum; apply: eq_map => ci /=.
  by rewrite red hv eqxx /= /ewt /eprm /esrc /= addr0 mulrCA.
rewrite (@eq_map _ _ _ (fun _ => 0)) ?esum_zero // => ci /=.
by rewrite red; case: eqP.
Qed.

(* ------------------------------------------------------------------ *)
(* Causal time convolution (time_conv.hpp), the recurrent machine's span. *)

(* The edges of pm::time_conv, the 1-D convolution with kernel p + 1 and
   padding (p, 0) whose offset k reads lag p - k, parameters relabelled to
   (lag, c_in, c_out): output y = (t, c_out), then offsets k, then c_in. *)
Definition time_block (L cin cout p y : nat) : seq edge :=
  let t := (y %/ cout)%N in let co := (y %% cout)%N in
  flatten [seq if (p <= t + k)%N
               then [seq (((t + k - p) * cin + ci, y)%N, ((p - k) * (cin * cout) + (ci * cout + co))%N, 1)
                    | ci <- iota 0 cin]
               else [::]
          | k <- iota 0 p.+1].

Definition etime_edges L cin cout p : seq edge :=
  flatten [seq time_block L cin cout p y | y <- iota 0 (L * cout)].

Definition etime_conv L cin cout p : epspan R :=
  of_edges (L * cin) (L * cout) (p.+1 * (cin * cout)) (etime_edges L cin cout p).

Lemma esum_rev (l : seq R) : esum (rev l) = esum l.
Proof. by elim: l => //= x l IH; rewrite rev_cons -cats1 esum_cat IH /= addr0 addrC. Qed.

(* Offsets k = 0..p read the lags p - k: a sum over k is a sum over the lags. *)
Lemma esum_lags p (A : nat -> R) :
  esum [seq A (p - k)%N | k <- iota 0 p.+1] = esum [seq A lag | lag <- iota 0 p.+1].
Proof.
rewrite -esum_rev -map_rev.
have -> : rev (iota 0 p.+1) = [seq (p - lag)%N | lag <- iota 0 p.+1].
  apply: (@eq_from_nth _ 0%N); first by rewrite size_rev size_map.
  move=> i; rewrite size_rev size_iota => lt_i.
  rewrite nth_rev ?size_iota // (nth_map 0%N) ?size_iota // !nth_iota //.
  by rewrite ltn_subrL.
rewrite -map_comp; congr esum; apply/eq_in_map => lag; rewrite mem_iota add0n => /andP[_ lt] /=.
by rewrite subKn // -ltnS.
Qed.

(* At the output (t, c_out):
     Σ_{lag = 0..p, lag ≤ t} Σ_{c_in} W(lag, c_in, c_out) φ(t − lag, c_in). *)
(* Law: LAYER-TIME-CONV-EQ-SPAN *)
Theorem time_conv_textbook L cin cout p (w phi : seq R) :
  eapply_p (etime_conv L cin cout p) w phi
  = [seq let t := (y %/ cout)%N in let co := (y %% cout)%N in
         esum [seq if (lag <= t)%N
                   then esum [seq nth 0 w (lag * (cin * cout) + (ci * cout + co))%N
                                  * nth 0 phi ((t - lag) * cin + ci)%N | ci <- iota 0 cin]
                   else 0
              | lag <- iota 0 p.+1]
    | y <- iota 0 (L * cout)%N].
Proof.
rewrite eapply_p_edges; apply/eq_in_map => y; rewrite mem_iota add0n => /andP[_ lt].

have targets y' e : e \in time_block L cin cout p y' -> etgt e = y'.
  by move=> /flattenP[l /mapP[k _ ->]]; case: ifP => // _ /mapP[ci _ ->].
rewrite /etime_edges (block_sum (block := time_block L cin cout p)) // /time_block esum_flatten_all -map_comp.
cbv zeta; rewrite -[RHS]esum_lags; congr esum; apply/eq_in_map => k.
rewrite mem_iota add0n ltnS => /andP[_ lek] /=.
set t := (y %/ cout)%N.
rewrite (_ : (p - k <= t)%N = (p <= t + k)%N); last by rewrite leq_subLR addnC.
case: ifP => le /=; last by [].
rewrite -map_comp; congr esum; apply: eq_map => ci /=.
by rewrite /ewt /eprm /esrc /= mul1r subnBA.
Qed.

(* A sum over the flat indices t·n + c of L blocks of n is a sum over t, then c. *)
Lemma esum_blocks L n (F : nat -> R) :
  esum [seq F y | y <- iota 0 (L * n)]
  = esum [seq esum [seq F (t * n + c)%N | c <- iota 0 n] | t <- iota 0 L].
Proof.
elim: L => [|L IH]; first by rewrite mul0n.
rewrite mulSnr iotaD map_cat esum_cat IH -addn1 iotaD map_cat esum_cat /= addr0 add0n.
have -> : iota (L * n) n = map (addn (L * n)) (iota 0 n) by rewrite -iotaDl addn0.
by rewrite -map_comp.
Qed.

(* The block T of that sum, when it exists. *)
Lemma esum_block L n T (H : nat -> R) : (0 < n)%N ->
  esum [seq if (y %/ n == T)%N then H y else 0 | y <- iota 0 (L * n)]
  = if (T < L)%N then esum [seq H (T * n + c)%N | c <- iota 0 n] else 0.
Proof.
move=> n_pos; rewrite esum_blocks.
rewrite (@eq_map _ _ _ (fun t => if t == T then esum [seq H (T * n + c)%N | c <- iota 0 n] else 0)).
  case: ltnP => [lt | ge]; first by rewrite esum_pick.
  rewrite -[RHS](@esum_zero _ (iota 0 L)); congr esum.
  apply/eq_in_map => t; rewrite mem_iota add0n => /andP[_ lt].
  by case: eqP => // eq; move: ge; rewrite -eq leqNgt lt.
move=> t /=; case: eqP => [-> | ne].
  by congr esum; apply/eq_in_map => c; rewrite mem_iota add0n => /andP[_ lt]; rewrite divnMDl // divn_small // addn0 eqxx.
rewrite -[RHS](@esum_zero _ (iota 0 n)); congr esum.
apply/eq_in_map => c; rewrite mem_iota add0n => /andP[_ lt].
by rewrite divnMDl // divn_small // addn0; case: eqP.
Qed.

Lemma esum_exchange (s1 s2 : seq nat) (F : nat -> nat -> R) :
  esum [seq esum [seq F i j | j <- s2] | i <- s1] = esum [seq esum [seq F i j | i <- s1] | j <- s2].
Proof.
rewrite !esum_big !big_map; under eq_bigr do rewrite esum_big big_map.
by rewrite exchange_big; apply: eq_bigr => j _; rewrite esum_big big_map.
Qed.

(* The transposed time convolution is anti-causal: at the input (s, c_in),
     Σ_{lag = 0..p, s + lag < L} Σ_{c_out} W(lag, c_in, c_out) g(s + lag, c_out). *)
(* Law: LAYER-TIME-CONV-TRANSPOSE *)
Theorem time_conv_transpose_textbook L cin cout p (w g : seq R) :
  eapply_p (etranspose_p (etime_conv L cin cout p)) w g
  = [seq let s := (x %/ cin)%N in let ci := (x %% cin)%N in
         esum [seq if (s + lag < L)%N
                   then esum [seq nth 0 w (lag * (cin * cout) + (ci * cout + co))%N
                                  * nth 0 g ((s + lag) * cout + co)%N | co <- iota 0 cout]
                   else 0
              | lag <- iota 0 p.+1]
    | x <- iota 0 (L * cin)%N].
Proof.
rewrite transpose_p_edges; apply/eq_in_map => x; rewrite mem_iota add0n => /andP[_ lt]; cbv zeta.
have cin_pos : (0 < cin)%N by move: lt; case: cin => //; rewrite muln0.
set s := (x %/ cin)%N; set ci := (x %% cin)%N.
case: (posnP cout) => [cout0 | cout_pos].
  transitivity (0 : R); first by rewrite /etime_edges cout0 muln0.
  rewrite -[in LHS](@esum_zero _ (iota 0 p.+1)); congr esum.
  by apply: eq_map => lag; rewrite cout0; case: ifP.
rewrite /etime_edges esum_flatten -map_comp.
pose G y k := if (y %/ cout == s + (p - k))%N
              then nth 0 w ((p - k) * (cin * cout) + (ci * cout + y %% cout))%N * nth 0 g y else 0.
have blocks y : esum [seq ewt e * (nth 0 w (eprm e) * nth 0 g (etgt e))
                     | e <- time_block L cin cout p y & esrc e == x]
                = esum [seq G y k | k <- iota 0 p.+1].
  rewrite /time_block esum_flatten -map_comp; congr esum; apply/eq_in_map => k.
  rewrite mem_iota add0n ltnS => /andP[_ lek] /=; rewrite /G.
  have -> : (y %/ cout == s + (p - k))%N = (p <= y %/ cout + k)%N && (y %/ cout + k - p == s)%N.
    apply/eqP/andP => [-> | [le /eqP e]].
      by rewrite -addnA subnK // leq_addl addnK.
    by move: (subnK le); rewrite e => tk; rewrite -(addnK k (y %/ cout)%N) -tk addnBA.
  case: ifP => le //=; rewrite filter_map.
  rewrite (@eq_in_filter _ _ (fun ci' => (y %/ cout + k - p == s)%N && (ci' == ci)%N)); last first.
    move=> ci'; rewrite mem_iota add0n => /andP[_ lt'].
    by rewrite /preim /esrc /= flat_pair_eq.
  case: eqP => _ /=; last by rewrite filter_pred0.
  rewrite filter_pred1_uniq ?iota_uniq ?mem_iota ?ltn_pmod //= /ewt /eprm /etgt /=.
  by rewrite mul1r addr0.
pose A lag := if (s + lag < L)%N
              then esum [seq nth 0 w (lag * (cin * cout) + (ci * cout + co))%N
                             * nth 0 g ((s + lag) * cout + co)%N | co <- iota 0 cout]
              else 0.
rewrite (eq_map blocks) esum_exchange.
transitivity (esum [seq A (p - k)%N | k <- iota 0 p.+1]); last by rewrite esum_lags.
congr esum; apply: eq_map => k; rewrite /G esum_block // /A; case: ifP => // _.
by congr esum; apply/eq_in_map => co; rewrite mem_iota add0n => /andP[_ lt']; rewrite modnMDl modn_small.
Qed.


(* ------------------------------------------------------------------ *)
(* The recurrent machine's span and its cleaning (recur_machine.hpp). *)

(* Validity of a parameter of a span given by its edges: every edge with
   parameter q raises the grade. *)
Lemma evalid_edges ed X Y P (es : seq edge) q :
  evalid ed (of_edges X Y P es) q
  = all (fun e => (eprm e != q) || (nth 0%N ed (esrc e) < nth 0%N ed (etgt e)))%N es.
Proof.
rewrite /evalid /of_edges /= size_map -[in RHS](mkseq_nth edge0 es) /mkseq all_map.
by apply: eq_in_all => e; rewrite mem_iota add0n => /andP[_ lt] /=; rewrite !(nth_map edge0).
Qed.

(* The grading of RecurMachine on (time, channel), flat t·N + c with N the
   channels: ⌊t / timeblock⌋ · B + block(c), B the number of channel blocks
   and block(c) in 1..B. *)
Definition recur_grades (L tb B : nat) (blk : seq nat) : seq nat :=
  [seq (i %/ size blk %/ tb * B + nth 0 blk (i %% size blk))%N | i <- iota 0 (L * size blk)].

(* The block of each channel: dims(k) channels of block k + 1
   (Grading::from_blocks). *)
Definition block_grades (dims : seq nat) : seq nat :=
  flatten [seq nseq (nth 0%N dims k) k.+1 | k <- iota 0 (size dims)].

Lemma block_grades_range dims : all (fun b => 0 < b <= size dims)%N (block_grades dims).
Proof.
apply/allP => b /flattenP[l /mapP[k]]; rewrite mem_iota add0n => /andP[_ lt] -> /nseqP[-> _].
by [].
Qed.

Lemma flat_lt a b m n : (a < m)%N -> (b < n)%N -> (a * n + b < m * n)%N.
Proof.
move=> lta ltb; rewrite (leq_trans (_ : _ < a * n + n)%N) ?ltn_add2l //.
by rewrite -mulSnr leq_mul2r lta orbT.
Qed.

Lemma nth_recur_grades L tb B blk t c : (t < L)%N -> (c < size blk)%N ->
  nth 0%N (recur_grades L tb B blk) (t * size blk + c) = (t %/ tb * B + nth 0 blk c)%N.
Proof.
move=> lt ltc; rewrite (nth_map 0%N) ?size_iota ?flat_lt // nth_iota ?flat_lt // add0n.
by rewrite divnMDl ?(leq_ltn_trans _ ltc) // (divn_small ltc) addn0 modnMDl modn_small.
Qed.

(* Where an edge of lag `lag` from (t − lag, c) to (t, c') raises the
   grade: a later time block, or a later channel block. *)
Lemma recur_raises tb B b1 b2 lag t : (0 < tb)%N -> (0 < b2)%N -> (b1 <= B)%N -> (lag <= t)%N ->
  (tb <= lag)%N || (b1 < b2)%N -> ((t - lag) %/ tb * B + b1 < t %/ tb * B + b2)%N.
Proof.
move=> tb_pos b2_pos b1_le le /orP[later | blocks].
  have step : (((t - lag) %/ tb).+1 <= t %/ tb)%N.
    have -> : (((t - lag) %/ tb).+1 = (t - lag + tb) %/ tb)%N by rewrite divnDr ?dvdnn // divnn tb_pos addn1.
    apply: leq_div2r.
    by rewrite -{2}(subnK le) leq_add2l.
  apply: (@leq_ltn_trans (((t - lag) %/ tb).+1 * B)); first by rewrite mulSnr leq_add2l.
  apply: (@leq_ltn_trans (t %/ tb * B)); first by rewrite leq_mul2r step orbT.
  by rewrite -{1}[(t %/ tb * B)%N]addn0 ltn_add2l.
by rewrite -addnS leq_add // leq_mul2r leq_div2r ?leq_subr ?orbT.
Qed.

(* The time convolution of RecurMachine, N = |blk| channels in and out:
   parameter q = (lag, c_in, c_out) survives cleaning exactly when its lag
   reaches no position (lag ≥ L), or reaches an earlier time block
   (lag ≥ timeblock), or c_in is in an earlier channel block than c_out. *)
Theorem recur_valid_textbook L tb B blk p q : (0 < tb)%N -> all (fun b => 0 < b <= B)%N blk ->
  (q < p.+1 * (size blk * size blk))%N ->
  let N := size blk in let lag := (q %/ (N * N))%N in
  evalid (recur_grades L tb B blk) (etime_conv L N N p) q
  = [|| (L <= lag)%N, (tb <= lag)%N | (nth 0 blk (q %% (N * N) %/ N) < nth 0 blk (q %% N))%N].
Proof.
move=> tb_pos /allP range ltq.
have N_pos : (0 < size blk)%N by move: ltq; case: (size blk) => //; rewrite !muln0.
move=> N lag.
set ci := (q %% (N * N) %/ N)%N; set co := (q %% N)%N.
have ltci : (ci < N)%N by rewrite ltn_divLR // ltn_pmod ?muln_gt0 ?N_pos.
have ltco : (co < N)%N by rewrite ltn_pmod.
have lag_le : (lag <= p)%N by rewrite -ltnS ltn_divLR ?muln_gt0 ?N_pos.
have qE : q = (lag * (N * N) + (ci * N + co))%N.
  by rewrite {1}(divn_eq q (N * N)) {1}(divn_eq (q %% (N * N)) N) modn_dvdm ?dvdn_mulr.
have blk_in c : (c < N)%N -> (0 < nth 0 blk c <= B)%N by move=> lt; apply/range/mem_nth.
(* The edges of parameter q: from (t − lag, c_in) to (t, c_out), lag ≤ t. *)
have edges e : e \in etime_edges L N N p ->
  exists y k ci', [/\ e = ((((y %/ N + k - p) * N + ci', y), (p - k) * (N * N) + (ci' * N + y %% N))%N, 1),
                      (y < L * N)%N, (k <= p)%N, (p <= y %/ N + k)%N & (ci' < N)%N].
  move=> /flattenP[l /mapP[y]]; rewrite mem_iota add0n => /andP[_ lty] ->.
  move=> /flattenP[l' /mapP[k]]; rewrite mem_iota add0n => /andP[_ ltk] ->.
  case: ifP => // le /mapP[ci']; rewrite mem_iota add0n => /andP[_ ltci'] ->.
  by exists y, k, ci'.
rewrite /etime_conv evalid_edges; apply/idP/idP => [valid | cond].
  (* The edge from (0, c_in) to (lag, c_out) has parameter q. *)
  case: (leqP L lag) => //= ltL; case: (leqP tb lag) => //= lttb.
  set y := (lag * N + co)%N; set k := (p - lag)%N.
  have yN : (y %/ N = lag)%N by rewrite divnMDl // divn_small ?addn0.
  have yc : (y %% N = co)%N by rewrite modnMDl modn_small.
  have mem : ((((y %/ N + k - p) * N + ci, y), (p - k) * (N * N) + (ci * N + y %% N))%N, 1)
             \in etime_edges L N N p.
    apply/flattenP; exists (time_block L N N p y).
      by apply: map_f; rewrite mem_iota add0n flat_lt.
    apply/flattenP; eexists; first by apply: (map_f _ (_ : k \in iota 0 p.+1)); rewrite mem_iota ltnS leq_subr.
    by rewrite /= yN /k subnKC // leqnn /=; apply: map_f; rewrite mem_iota.
  move/allP: valid => /(_ _ mem) /=; rewrite /eprm /esrc /etgt /= yN yc /k subKn // subnKC // subnn.
  have L_pos : (0 < L)%N by apply: leq_ltn_trans ltL.
  rewrite /y !nth_recur_grades // div0n (divn_small lttb) !mul0n !add0n.
  by case/orP => [/negP[]|] //; apply/eqP; exact: esym qE.
apply/allP => e /edges[y [k [ci' [-> lty lek le ltci']]]]; rewrite /eprm /esrc /etgt /=.
case: eqP => //= prmq; move/eqP: prmq; rewrite flat_pair_eq ?flat_lt ?ltn_pmod //.
case/andP => /eqP klag; rewrite flat_pair_eq ?ltn_pmod // => /andP[/eqP cieq /eqP coeq].
rewrite modn_dvdm ?dvdn_mulr // -/co in coeq; rewrite -/ci in cieq; rewrite -/lag in klag.
have ltyN : (y %/ N < L)%N by rewrite ltn_divLR.
have lagy : (lag <= y %/ N)%N by rewrite -klag leq_subLR addnC.
have ltsrc : (y %/ N + k - p < L)%N.
  by rewrite (leq_ltn_trans _ ltyN) // leq_subLR addnC leq_add2r.
rewrite {2}(divn_eq y N) !nth_recur_grades ?ltn_pmod //.
rewrite -subnBA // klag cieq coeq.
have /andP[b2_pos _] := blk_in _ ltco; have /andP[_ b1_le] := blk_in _ ltci.
case/or3P: cond => [Llag | tblag | blocks].
- by have := leq_ltn_trans (leq_trans Llag lagy) ltyN; rewrite ltnn.
- by apply: recur_raises => //; rewrite tblag.
by apply: recur_raises => //; rewrite blocks orbT.
Qed.

(* The cleaning of RecurMachine(dims, σ, pad, timeblock, L): W̃(lag, c_in,
   c_out) is W(lag, c_in, c_out) when lag ≥ L, lag ≥ timeblock or
   block(c_in) < block(c_out), and 0 otherwise. *)
(* Law: LAYER-RECUR-CLEAN *)
Theorem recur_clean_textbook L tb dims p (w : seq R) : (0 < tb)%N ->
  let blk := block_grades dims in let N := size blk in
  eclean (recur_grades L tb (size dims) blk) (etime_conv L N N p) w
  = [seq if [|| (L <= q %/ (N * N))%N, (tb <= q %/ (N * N))%N
             | (nth 0 blk (q %% (N * N) %/ N) < nth 0 blk (q %% N))%N]
         then nth 0 w q else 0
    | q <- iota 0 (p.+1 * (N * N))].
Proof.
move=> tb_pos blk N; apply/eq_in_map => q; rewrite mem_iota add0n => /andP[_ lt].
by rewrite recur_valid_textbook // block_grades_range.
Qed.

(* ------------------------------------------------------------------ *)
(* Composing unpadded convolutions convolves their kernels.           *)

(* The textbook unpadded 1-D convolution (cross-correlation) with C input
   channels, kernel size k, stride s and dilation dl, of a signal x on
   (position, channel):
     (conv1d w x)(o, c') = Σ_{a < k} Σ_{c < C} w(a, c, c') x(o·s + a·dl, c). *)
Definition conv1d (k C s dl : nat) (w : nat -> nat -> nat -> R) (x : nat -> nat -> R) :=
  fun o c' => \sum_(a < k) \sum_(c < C) w a c c' * x (o * s + a * dl)%N c.

(* The composed kernel of a (k1, stride s1, dilation d1) and then
   b (k2, d2) through C1 middle channels:
     K(r, c0, c2) = Σ_{a·d1 + b·s1·d2 = r} Σ_{c1} w1(a, c0, c1) w2(b, c1, c2). *)
Definition compose_kernel (k1 k2 C1 s1 d1 d2 : nat) (w1 w2 : nat -> nat -> nat -> R) :=
  fun r c0 c2 => \sum_(a < k1) \sum_(b < k2)
    (if (a * d1 + b * (s1 * d2) == r)%N then \sum_(c1 < C1) w1 a c0 c1 * w2 b c1 c2 else 0).

Definition compose_extent (k1 k2 s1 d1 d2 : nat) := (d1 * k1.-1 + s1 * d2 * k2.-1).+1.

Lemma big_pick (K m : nat) (F : nat -> R) : (m < K)%N ->
  \sum_(r < K) (if (m == r)%N then F r else 0) = F m.
Proof.
move=> lt; rewrite (bigD1 (Ordinal lt)) //= eqxx big1 ?addr0 // => r /negbTE ne.
by case: eqP => // e; move: ne; rewrite -val_eqE /= e eqxx.
Qed.

(* Every offset a·d1 + b·s1·d2 of the composite lies in its kernel. *)
Lemma compose_offset_lt k1 k2 s1 d1 d2 (a : 'I_k1) (b : 'I_k2) :
  (a * d1 + b * (s1 * d2) < compose_extent k1 k2 s1 d1 d2)%N.
Proof.
have below m (i : 'I_m) : (i <= m.-1)%N by rewrite -ltnS prednK ?(leq_ltn_trans (leq0n i)).
by rewrite ltnS leq_add // [X in (X <= _)%N]mulnC leq_mul2l below orbT.
Qed.

(* The convolution a (kernel k1, stride s1, dilation d1, C0 -> C1
   channels) followed by b (k2, s2, d2, C1 -> C2) is, on every signal x
   and at every output (o, c2), the one convolution with stride s1·s2,
   dilation 1, kernel d1(k1 − 1) + s1·d2(k2 − 1) + 1 and the composed
   kernel K: the textbook operators, in 1-D. *)
(* Law: LAYER-CONV-COMPOSE *)
Theorem conv_compose k1 k2 C0 C1 s1 s2 d1 d2 w1 w2 (x : nat -> nat -> R) o c2 :
  conv1d k2 C1 s2 d2 w2 (conv1d k1 C0 s1 d1 w1 x) o c2
  = conv1d (compose_extent k1 k2 s1 d1 d2) C0 (s1 * s2) 1
          (compose_kernel k1 k2 C1 s1 d1 d2 w1 w2) x o c2.
Proof.
rewrite /conv1d /compose_kernel.
(* Both sides are the sum over (a, b, c0, c1) of w1 w2 x at
   o·s1·s2 + a·d1 + b·s1·d2: on the left, (o·s2 + b·d2)·s1 + a·d1; on the
   right, the offset sum collapses onto r = a·d1 + b·s1·d2. *)
transitivity (\sum_(a < k1) \sum_(b < k2) \sum_(c0 < C0) \sum_(c1 < C1)
               w1 a c0 c1 * w2 b c1 c2 * x (o * (s1 * s2) + (a * d1 + b * (s1 * d2)))%N c0).
  under eq_bigr => b _ do under eq_bigr => c1 _ do rewrite big_distrr /=.
  under eq_bigr => b _ do under eq_bigr => c1 _ do under eq_bigr => a _ do rewrite big_distrr /=.
  under eq_bigr => b _ do rewrite exchange_big /=.
  under eq_bigr => b _ do under eq_bigr => a _ do rewrite exchange_big /=.
  rewrite exchange_big /=; apply: eq_bigr => a _; apply: eq_bigr => b _.
  apply: eq_bigr => c0 _; apply: eq_bigr => c1 _.
  rewrite mulrCA mulrA; congr (_ * x _ c0).
  by rewrite mulnDl -!mulnA [(s2 * s1)%N]mulnC [(d2 * s1)%N]mulnC -addnA [(b * _ + _)%N]addnC.
symmetry.
under eq_bigr => r _ do under eq_bigr => c0 _ do rewrite big_distrl /=.
under eq_bigr => r _ do under eq_bigr => c0 _ do under eq_bigr => a _ do rewrite big_distrl /=.
under eq_bigr => r _ do under eq_bigr => c0 _ do under eq_bigr => a _ do
  under eq_bigr => b _ do rewrite (fun_if (fun v => v * _)) mul0r.
rewrite exchange_big /=.
under eq_bigr => c0 _ do rewrite exchange_big /=.
under eq_bigr => c0 _ do under eq_bigr => a _ do rewrite exchange_big /=.
under eq_bigr => c0 _ do under eq_bigr => a _ do under eq_bigr => b _ do
  rewrite (big_pick (fun r => (\sum_(c1 < C1) w1 a c0 c1 * w2 b c1 c2) * x (o * (s1 * s2) + r * 1)%N c0)
                   (compose_offset_lt _ _ _ a b)).
rewrite exchange_big /=; apply: eq_bigr => a _.
rewrite exchange_big /=; apply: eq_bigr => b _; apply: eq_bigr => c0 _.
by rewrite muln1 big_distrl.
Qed.

(* ------------------------------------------------------------------ *)
(* Flip and clean commute for the reversed grading.                   *)

(* The transposed span with its parameters relabelled by f: every edge
   turned round, its parameter q taken to f q (the test's `flip`). *)
Definition eflip (f : nat -> nat) (es : seq edge) : seq edge :=
  [seq ((etgt e, esrc e), f (eprm e), ewt e) | e <- es].

(* W relabelled by an involution f of the P parameters: flip(W)(q) = W(f q),
   i.e. flip(W)(f p) = W(p). *)
Definition eflip_w (f : nat -> nat) (P : nat) (w : seq R) : seq R :=
  [seq nth 0 w (f q) | q <- iota 0 P].

(* The reversed grades D + 1 - g order the grades below D the other way. *)
Lemma ereversed_lt D a b : (a <= D)%N -> (b <= D)%N -> (D.+1 - b < D.+1 - a)%N = (a < b)%N.
Proof.
move=> ha hb; case: (ltnP a b) => [lt | le]; first by rewrite ltn_sub2l // ltnS.
by apply/negbTE; rewrite -leqNgt leq_sub2l.
Qed.

Lemma nth_reversed D ed i : (i < size ed)%N -> nth 0%N (ereversed D ed) i = (D.+1 - nth 0%N ed i)%N.
Proof. by move=> lt; rewrite /ereversed (nth_map 0%N). Qed.

(* For a span given by its edges, grades at most D at their ends, and an
   involution f of its parameters: a parameter q of the flipped transposed
   span is valid for the reversed grading iff f q is valid for the span, so
   clean′(flip(W)) = flip(clean(W)), clean′ the cleaning of the flipped
   transposed span for the reversed grading. *)
(* Law: SEED-FLIP-CLEAN *)
Theorem flip_clean D ed X Y P (es : seq edge) (f : nat -> nat) (w : seq R) :
  all (fun g => g <= D)%N ed ->
  all (fun e => [&& esrc e < size ed, etgt e < size ed & eprm e < P])%N es ->
  (forall q, q < P -> f q < P /\ f (f q) = q)%N ->
  eclean (ereversed D ed) (of_edges Y X P (eflip f es)) (eflip_w f P w)
  = eflip_w f P (eclean ed (of_edges X Y P es) w).
Proof.
move=> /allP grades /allP ends inv; rewrite /eclean /eflip_w /=.
apply/eq_in_map => q; rewrite mem_iota add0n => /andP[_ lt] /=.
have [ltf ff] := inv q lt.
rewrite !(nth_map 0%N) ?size_iota // !nth_iota // !add0n.
congr (if _ then _ else _); rewrite !evalid_edges /eflip all_map.
apply: eq_in_all => e /ends /and3P[ls lt' lp] /=; rewrite /eprm /esrc /etgt /=.
rewrite !nth_reversed // ereversed_lt ?grades ?mem_nth //.
congr (_ || _); apply/negb_inj; rewrite !negbK; apply/eqP/eqP => [<- | ->].
  by have [_ ->] := inv _ lp.
exact: ff.
Qed.

(* The operator of the flipped transposed span at flip(W) is the
   transposed operator at W. *)
Lemma flip_apply X Y P (es : seq edge) (f : nat -> nat) (w g : seq R) :
  all (fun e => eprm e < P)%N es -> (forall q, q < P -> f q < P /\ f (f q) = q)%N ->
  eapply_p (of_edges Y X P (eflip f es)) (eflip_w f P w) g
  = eapply_p (etranspose_p (of_edges X Y P es)) w g.
Proof.
move=> /allP prms inv; rewrite eapply_p_edges transpose_p_edges /eflip; apply: eq_map => x.
rewrite filter_map -map_comp; congr esum; apply/eq_in_map => e; rewrite mem_filter => /andP[_ /prms lt].
have [ltf ff] := inv _ lt.
by rewrite /= /eflip_w /eprm /esrc /etgt /ewt /= (nth_map 0%N) ?size_iota // nth_iota // add0n ff.
Qed.

(* RecurMachine's flip: (lag, c_in, c_out) ↦ (lag, c_out, c_in), flat
   lag·N² + c·N + c′ with N channels (no kernel reversal: the lags stay). *)
Definition recur_flip (N q : nat) : nat :=
  (q %/ (N * N) * (N * N) + (q %% N * N + q %% (N * N) %/ N))%N.

Lemma flat_coords lag ci co N : (ci < N)%N -> (co < N)%N ->
  let q := (lag * (N * N) + (ci * N + co))%N in
  [/\ q %/ (N * N) = lag, q %% (N * N) %/ N = ci & q %% N = co]%N.
Proof.
move=> lti lto q; have N_pos : (0 < N)%N by apply: leq_ltn_trans lto.
have lt2 : (ci * N + co < N * N)%N by apply: flat_lt.
rewrite /q divnMDl ?muln_gt0 ?N_pos // divn_small // addn0 modnMDl modn_small //.
rewrite divnMDl // divn_small // addn0; split=> //.
by rewrite mulnA modnMDl modnMDl modn_small.
Qed.

Lemma recur_flip_inv N P q : (q < P * (N * N))%N ->
  (recur_flip N q < P * (N * N))%N /\ recur_flip N (recur_flip N q) = q.
Proof.
move=> lt; have N_pos : (0 < N)%N by move: lt; case: N => // /=; rewrite !muln0.
have ltco : (q %% N < N)%N by rewrite ltn_pmod.
have ltci : (q %% (N * N) %/ N < N)%N by rewrite ltn_divLR // ltn_pmod ?muln_gt0 ?N_pos.
have qE : q = (q %/ (N * N) * (N * N) + (q %% (N * N) %/ N * N + q %% N))%N.
  by rewrite {1}(divn_eq q (N * N)) {1}(divn_eq (q %% (N * N)) N) modn_dvdm ?dvdn_mulr.
split.
  by rewrite /recur_flip flat_lt ?flat_lt // ltn_divLR ?muln_gt0 ?N_pos // mulnC.
have [e1 e2 e3] := flat_coords (q %/ (N * N)) ltco ltci.
have -> : recur_flip N q = (q %/ (N * N) * (N * N) + (q %% N * N + q %% (N * N) %/ N))%N by [].
by rewrite /recur_flip e1 e2 e3 -qE.
Qed.

Lemma etime_edges_in L N p e : e \in etime_edges L N N p ->
  [&& esrc e < L * N, etgt e < L * N & eprm e < p.+1 * (N * N)]%N.
Proof.
move=> /flattenP[l /mapP[y]]; rewrite mem_iota add0n => /andP[_ lty] ->.
move=> /flattenP[l' /mapP[k]]; rewrite mem_iota add0n ltnS => /andP[_ lek] ->.
case: ifP => // le /mapP[ci]; rewrite mem_iota add0n => /andP[_ ltci] -> /=.
have N_pos : (0 < N)%N by apply: leq_ltn_trans ltci.
rewrite /esrc /etgt /eprm /= lty /= flat_lt ?flat_lt ?ltn_pmod ?ltnS ?leq_subr //.
rewrite (leq_ltn_trans _ (_ : y %/ N < L)%N) ?ltn_divLR //.
by rewrite leq_subLR addnC leq_add2r.
Qed.

(* RecurMachine(dims, σ, pad p, timeblock, L): with flip (lag, c_in, c_out)
   ↦ (lag, c_out, c_in) and any D bounding the grades, clean′(flip(W)) =
   flip(clean(W)), clean′ the cleaning of the flipped transposed time
   convolution (anti-causal, time_conv_transpose_textbook) for the
   reversed grading. *)
(* Law: SEED-FLIP-CLEAN *)
Theorem recur_flip_clean L tb dims p D (w : seq R) :
  let blk := block_grades dims in let N := size blk in
  let ed := recur_grades L tb (size dims) blk in
  all (fun g => g <= D)%N ed ->
  eclean (ereversed D ed) (of_edges (L * N) (L * N) (p.+1 * (N * N))
                                    (eflip (recur_flip N) (etime_edges L N N p)))
         (eflip_w (recur_flip N) (p.+1 * (N * N)) w)
  = eflip_w (recur_flip N) (p.+1 * (N * N)) (eclean ed (etime_conv L N N p) w).
Proof.
move=> blk N ed grades; apply: flip_clean => //; last exact: recur_flip_inv.
apply/allP => e /etime_edges_in.
by rewrite /ed /recur_grades size_map size_iota.
Qed.

(* ------------------------------------------------------------------ *)
(* An edge list as a parametric span of Spans.v.                      *)

Section OfEdges.

Variables (X Y P : nat) (es : seq edge).
Hypothesis ends : all (fun e => [&& esrc e < X, etgt e < Y & eprm e < P])%N es.

Lemma edge_ends (e : 'I_(size es)) :
  [&& esrc (nth edge0 es e) < X, etgt (nth edge0 es e) < Y & eprm (nth edge0 es e) < P]%N.
Proof. by apply: (allP ends); rewrite mem_nth. Qed.

Lemma edge_src (e : 'I_(size es)) : (esrc (nth edge0 es e) < X)%N.
Proof. by case/and3P: (edge_ends e). Qed.
Lemma edge_tgt (e : 'I_(size es)) : (etgt (nth edge0 es e) < Y)%N.
Proof. by case/and3P: (edge_ends e). Qed.
Lemma edge_prm (e : 'I_(size es)) : (eprm (nth edge0 es e) < P)%N.
Proof. by case/and3P: (edge_ends e). Qed.

(* The apex is the list's positions, the legs read each edge. *)
Definition pspan_of_edges : ParametricSpan R X Y P :=
  {| span := {| apex := size es; s := fun e => Ordinal (edge_src e);
                t := fun e => Ordinal (edge_tgt e); mu := fun e => ewt (nth edge0 es e) |};
     pi := fun e => Ordinal (edge_prm e) |}.

Lemma map_edges T (F : edge -> T) :
  [seq F (nth edge0 es (val e)) | e <- enum 'I_(size es)] = map F es.
Proof.
by rewrite -(map_iota_ord (size es) (fun i => F (nth edge0 es i))) -[in RHS](mkseq_nth edge0 es) /mkseq -map_comp.
Qed.

(* Its lists are the edge list's span. *)
Lemma pspan_of_edgesE : epspan_of pspan_of_edges = of_edges X Y P es.
Proof. by rewrite /epspan_of /espan_of /of_edges /mseq /fseq /= !map_edges. Qed.

End OfEdges.

(* The seed's machines as lists: every end of the edge list in range, and
   the grades in 1..D, the hypotheses of Backprop.v's seed_gradient. *)

(* RecurMachine(dims, σ, p, tb, L), for any D above its grades. *)
(* Law: SEED-GRADIENT *)
Lemma recur_seed L tb p D dims :
  let blk := block_grades dims in let N := size blk in let ed := recur_grades L tb (size dims) blk in
  all (fun g => g <= D)%N ed ->
  [/\ all (fun e => [&& esrc e < L * N, etgt e < L * N & eprm e < p.+1 * (N * N)])%N (etime_edges L N N p),
      size ed = (L * N)%N & all (fun g => 0 < g <= D)%N ed].
Proof.
move=> blk N ed levels; split; first by apply/allP => e /etime_edges_in.
  by rewrite size_map size_iota.
apply/allP => g gin; rewrite (allP levels) // andbT.
move: gin => /mapP[i]; rewrite mem_iota add0n => /andP[_ lt] ->.
have N_pos : (0 < size blk)%N by case: (posnP (size blk)) lt => [-> | //]; rewrite muln0.
have /andP[pos _] : (0 < nth 0 blk (i %% size blk) <= size dims)%N.
  by apply: (allP (block_grades_range dims)); rewrite mem_nth ?ltn_pmod.
exact: leq_trans pos (leq_addl _ _).
Qed.

(* DenseMachine(dims, σ): the dense span N -> N, grades block(c) in 1..|dims|. *)
(* Law: SEED-GRADIENT *)
Lemma dense_seed dims :
  let ed := block_grades dims in let N := size ed in
  [/\ all (fun e => [&& esrc e < N, etgt e < N & eprm e < N * N])%N (edense N N),
      size ed = N & all (fun g => 0 < g <= size dims)%N ed].
Proof.
move=> ed N; split=> //; last exact: block_grades_range.
apply/allP => e ein; have /andP[-> ->] := allP (dense_edges_in N N) e ein.
by move: ein => /allpairsP[[x y] [_ /=]]; rewrite mem_iota add0n andbT => /andP[_ lty] ->.
Qed.

End Layers.

(* A flat index i·t + j of a product of ranges is the pair (k + i, j). *)
Lemma nth_allpairs_iota T (f : nat -> nat -> T) x0 k m t i j : (i < m)%N -> (j < t)%N ->
  nth x0 [seq f a b | a <- iota k m, b <- iota 0 t] (i * t + j) = f (k + i)%N j.
Proof.
move=> + ltj; elim: i k m => [|i IH] k [|m] //= lti.
  by rewrite nth_cat size_map size_iota mul0n add0n ltj (nth_map 0%N) ?size_iota // nth_iota // addn0.
rewrite nth_cat size_map size_iota mulSn -addnA ltnNge leq_addr /= addKn IH //.
by rewrite addSnnS.
Qed.

(* ------------------------------------------------------------------ *)
(* The 1-D convolution spans and their composition.                   *)

Section Rank1.

Variable R : comRingType.

(* The 1-D convolution of pm::conv: n positions, C -> C' channels, kernel
   k, padding (pl, ph), stride s, dilation dl, one group. *)
Definition conv1_spec (n C C' k pl ph s dl : nat) : ConvSpec :=
  Build_ConvSpec [:: n] C C' [:: k] [:: pl] [:: ph] [:: s] [:: dl] 1.

Variables (n C C' k pl ph s dl : nat).
Local Notation c := (conv1_spec n C C' k pl ph s dl).
Definition out1 := ((n + pl + ph - (dl * k.-1).+1) %/ s).+1.

Lemma multis2 m t : multis [:: m; t] = [seq [:: a; b] | a <- iota 0 m, b <- iota 0 t].
Proof.
have e : multis [:: t] = [seq [:: i] | i <- iota 0 t] by rewrite /=; elim: (iota 0 t) => //= i l ->.
change (multis [:: m; t]) with [seq i :: r | i <- iota 0 m, r <- multis [:: t]]; rewrite e.
by elim: (iota 0 m) => //= a l ->; rewrite -map_comp.
Qed.

Lemma multis1 m : multis [:: m] = [seq [:: a] | a <- iota 0 m].
Proof. by rewrite /=; elim: (iota 0 m) => //= i l ->. Qed.

Lemma esum_iota (m : nat) (F : nat -> R) : esum [seq F i | i <- iota 0 m] = \sum_(i < m) F i.
Proof. by rewrite esum_big big_map -(big_mkord xpredT) /index_iota subn0. Qed.

Lemma outputs1E : outputs c = multis [:: out1; C'].
Proof.
by rewrite /outputs /out_shape (_ : out_positions c = [:: out1]).
Qed.

Lemma nth_outputs1 o co : (o < out1)%N -> (co < C')%N -> nth [::] (outputs c) (o * C' + co) = [:: o; co].
Proof.
move=> lto ltco; rewrite outputs1E multis2.
by rewrite (nth_allpairs_iota (fun a b => [:: a; b])).
Qed.

Lemma size_outputs1 : size (outputs c) = (out1 * C')%N.
Proof. by rewrite outputs1E multis2 size_allpairs !size_iota. Qed.

(* The 1-D convolution: at the output (o, c'),
     Σ_{a < k} Σ_{ci < C} W(a, ci, c') x(o·s + a·dl − pl, ci),
   x zero outside the input: PyTorch's index formula, written with the flat
   indices of pm::conv (x and y position-major, W (a, ci, c')) and none of
   the construction's helpers, for every o below out1, PyTorch's output
   length ⌊(n + pl + ph − dl·(k − 1) − 1) / s⌋ + 1. *)
(* Law: LAYER-CONV-EQ-SPAN *)
Theorem conv1_padded (w x : seq R) o co : (o < out1)%N -> (co < C')%N ->
  nth 0 (eapply_p (econv R c) w x) (o * C' + co)
  = \sum_(a < k) \sum_(ci < C) nth 0 w ((a * C + ci) * C' + co)%N
      * (if ((pl <= o * s + a * dl) && (o * s + a * dl - pl < n))%N then nth 0 x ((o * s + a * dl - pl) * C + ci)%N
         else 0).
Proof.
move=> lto ltco.
have lty : (o * C' + co < size (outputs c))%N by rewrite size_outputs1 flat_lt.
rewrite conv_textbook (nth_map 0%N) ?size_iota // nth_iota // add0n /= nth_outputs1 //=.
have offs : offsets c = [seq [:: a] | a <- iota 0 k] by rewrite /offsets multis1.
rewrite offs size_map size_iota esum_iota; apply: eq_bigr => a _.
rewrite (nth_map 0%N) ?size_iota // nth_iota // add0n /cin_g /cout_g /= !divn1 esum_iota.
apply: eq_bigr => ci _; rewrite divn_small // mul0n add0n /parameter /cin_g /= ?divn1.
rewrite /padded /inside /shifted /step /dil /lo /= andbT.
by case: ifP => //; rewrite /source /flat /in_shape /= mul0n add0n.
Qed.
End Rank1.

(* Without padding, when the reach fits the input, every output reads
   inside the input. *)
Lemma reads_in n k s dl o a : (dl * k.-1 < n)%N -> (o < out1 n k 0 0 s dl)%N -> (a < k)%N ->
  (o * s + a * dl < n)%N.
Proof.
rewrite /out1 !addn0 => fits lto lta.
have le : (o * s <= n - (dl * k.-1).+1)%N.
  by rewrite (leq_trans _ (leq_trunc_div _ s)) // leq_mul2r -ltnS lto orbT.
rewrite (leq_ltn_trans (leq_add le (_ : a * dl <= dl * k.-1)%N)) //.
  by rewrite mulnC leq_mul2l -ltnS prednK ?lta ?orbT // (leq_ltn_trans (leq0n a) lta).
by rewrite addnC -ltn_subRL subnSK // subnn.
Qed.

(* The 1-D convolution without padding, when its reach fits the input:
   at the output (o, c'), Σ_{a < k} Σ_{ci < C} W(a, ci, c') x(o·s + a·dl, ci). *)
Theorem conv1_textbook (R : comRingType) n C C' k s dl (w x : seq R) o co :
  (dl * k.-1 < n)%N -> (o < out1 n k 0 0 s dl)%N -> (co < C')%N ->
  nth 0 (eapply_p (econv R (conv1_spec n C C' k 0 0 s dl)) w x) (o * C' + co)
  = conv1d k C s dl (fun a ci co => nth 0 w ((a * C + ci) * C' + co)%N)
                    (fun i ci => nth 0 x (i * C + ci)%N) o co.
Proof.
move=> fits lto ltco; rewrite conv1_padded //; apply: eq_bigr => a _; apply: eq_bigr => ci _.
by rewrite subn0 leq0n (reads_in fits lto (ltn_ord a)).
Qed.

Lemma conv1d_ext (R : comRingType) k C s dl (w w' : nat -> nat -> nat -> R) (x x' : nat -> nat -> R) o c' :
  (forall a c, a < k -> c < C -> w a c c' = w' a c c' /\ x (o * s + a * dl) c = x' (o * s + a * dl) c)%N ->
  conv1d k C s dl w x o c' = conv1d k C s dl w' x' o c'.
Proof.
move=> e; apply: eq_bigr => a _; apply: eq_bigr => c _.
by have [-> ->] := e a c (ltn_ord a) (ltn_ord c).
Qed.

Section ConvComposeSpans.

Variable R : comRingType.
Variables (n C0 C1 C2 k1 k2 s1 s2 d1 d2 : nat).

(* a: n positions, C0 -> C1; then b on a's outputs, C1 -> C2; both unpadded. *)
Local Notation m := (out1 n k1 0 0 s1 d1).
Local Notation a := (conv1_spec n C0 C1 k1 0 0 s1 d1).
Local Notation b := (conv1_spec m C1 C2 k2 0 0 s2 d2).
Local Notation ext := (compose_extent k1 k2 s1 d1 d2).

(* The composite: stride s1·s2, dilation 1, kernel ext, parameters
   K(r, c0, c2) flat (r·C0 + c0)·C2 + c2. *)
Definition composite_spec := conv1_spec n C0 C2 ext 0 0 (s1 * s2) 1.

Definition composite_kernel (w1 w2 : seq R) : seq R :=
  [seq compose_kernel k1 k2 C1 s1 d1 d2 (fun a c c' => nth 0 w1 ((a * C0 + c) * C1 + c')%N)
                      (fun a c c' => nth 0 w2 ((a * C1 + c) * C2 + c')%N) (rc %/ C0)%N (rc %% C0)%N c2
  | rc <- iota 0 (ext * C0), c2 <- iota 0 C2].

(* The composite has b's output positions. *)
Lemma composite_out : out1 n ext 0 0 (s1 * s2) 1 = out1 m k2 0 0 s2 d2.
Proof.
rewrite /out1 !addn0 /compose_extent /= mul1n -addSn subnDA subSS.
by rewrite -mulnA [(s1 * (d2 * _))%N]mulnC divnMA divnBMl.
Qed.

(* Composing the spans of two unpadded 1-D convolutions whose reaches fit
   their inputs: at every output (o, c2) of b, b's span applied to a's
   span applied to x is the span of the composite convolution (stride
   s1·s2, dilation 1, kernel d1(k1 − 1) + s1·d2(k2 − 1) + 1) at the
   composed kernel K. *)
(* Law: LAYER-CONV-COMPOSE *)
Theorem conv_compose_spans (w1 w2 x : seq R) o c2 :
  (d1 * k1.-1 < n)%N -> (d2 * k2.-1 < m)%N -> (o < out1 m k2 0 0 s2 d2)%N -> (c2 < C2)%N ->
  nth 0 (eapply_p (econv R b) w2 (eapply_p (econv R a) w1 x)) (o * C2 + c2)
  = nth 0 (eapply_p (econv R composite_spec) (composite_kernel w1 w2) x) (o * C2 + c2).
Proof.
move=> fits1 fits2 lto ltc2.
have fitsK : (1 * ext.-1 < n)%N.
  rewrite mul1n /compose_extent /=.
  have le : (s1 * d2 * k2.-1 <= n - (d1 * k1.-1).+1)%N.
    rewrite -mulnA (leq_trans _ (leq_trunc_div _ s1)) // mulnC leq_mul2r.
    by move: fits2; rewrite /out1 !addn0 ltnS => ->; rewrite orbT.
  by rewrite -ltn_subRL (leq_ltn_trans le) // subnS prednK ?subn_gt0 // leq_subr.
rewrite conv1_textbook // conv1_textbook ?composite_out //.
transitivity (conv1d k2 C1 s2 d2 (fun a c c' => nth 0 w2 ((a * C1 + c) * C2 + c')%N)
                     (conv1d k1 C0 s1 d1 (fun a c c' => nth 0 w1 ((a * C0 + c) * C1 + c')%N)
                                         (fun i c => nth 0 x (i * C0 + c)%N)) o c2).
  apply: conv1d_ext => b' c1 ltb ltc1; split=> //; rewrite conv1_textbook //.
  exact: (reads_in fits2 lto ltb).
rewrite conv_compose; apply: conv1d_ext => r c0 ltr ltc0; split=> //.
rewrite (nth_allpairs_iota (fun rc c2 => compose_kernel _ _ _ _ _ _ _ _ (rc %/ C0)%N (rc %% C0)%N c2)) //.
  have C0_pos : (0 < C0)%N by apply: leq_ltn_trans ltc0.
  by rewrite add0n divnMDl // divn_small // addn0 modnMDl modn_small.
exact: flat_lt.
Qed.

End ConvComposeSpans.

(* RecurMachine's backward span: the transposed time convolution with its
   parameters flipped, (lag, c_in, c_out) ↦ (lag, c_out, c_in), has at
   flip(W), on every g and at every input (t, c_in), the operator of the
   1-D convolution on L positions and N channels with kernel p + 1,
   padding (0, p), stride and dilation 1, at flip(W): the anti-causal
   convolution, whose offset a reads g at t + a. *)
(* Law: SEED-FLIP-CLEAN *)
Theorem recur_backward_span (R : comRingType) L N p (w g : seq R) t ci : (t < L)%N -> (ci < N)%N ->
  let f := recur_flip N in let P := (p.+1 * (N * N))%N in
  nth 0 (eapply_p (of_edges (L * N) (L * N) P (eflip f (etime_edges R L N N p))) (eflip_w f P w) g)
      (t * N + ci)
  = nth 0 (eapply_p (econv R (conv1_spec L N N p.+1 0 p 1 1)) (eflip_w f P w) g) (t * N + ci).
Proof.
move=> ltt ltci f P.
have N_pos : (0 < N)%N by apply: leq_ltn_trans ltci.
rewrite flip_apply; last exact: recur_flip_inv.
  2: by apply/allP => e /etime_edges_in /and3P[].
rewrite time_conv_transpose_textbook (nth_map 0%N) ?size_iota ?flat_lt // nth_iota ?flat_lt // add0n.
cbv zeta.
rewrite divnMDl // divn_small // addn0 modnMDl modn_small //.
have out : (t < out1 L p.+1 0 p 1 1)%N.
  by rewrite /out1 addn0 mul1n divn1 subnS addnK prednK // (leq_ltn_trans (leq0n t) ltt).
rewrite conv1_padded // esum_iota; apply: eq_bigr => a _; rewrite !muln1 subn0 leq0n.
case: ifP => lt; last by rewrite big1 // => c _; rewrite mulr0.
rewrite esum_iota; apply: eq_bigr => c _.
have ltq : ((a * N + c) * N + ci < P)%N by rewrite /P mulnA flat_lt ?flat_lt.
have qE : ((a * N + c) * N + ci = a * (N * N) + (c * N + ci))%N by rewrite mulnDl -mulnA addnA.
rewrite /eflip_w (nth_map 0%N) ?size_iota // nth_iota // add0n /f qE /recur_flip.
by have [-> -> ->] := flat_coords a (ltn_ord c) ltci.
Qed.

(* ConvMachine(dims, σ, pad (lo, hi), [n]) in 1-D: the size-preserving
   convolution on n positions and N channels (kernel lo + hi + 1, stride
   and dilation 1) and the grades block(c) of (position, c), the
   hypotheses of Backprop.v's seed_gradient with D = |dims|; its edge list
   is econv's. *)
(* Law: SEED-GRADIENT *)
Lemma conv_seed (R : comRingType) n lo hi dims : (0 < n)%N ->
  let blk := block_grades dims in let N := size blk in
  let c := conv1_spec n N N (lo + hi).+1 lo hi 1 1 in
  let ed := [seq nth 0%N blk (i %% N) | i <- iota 0 (n * N)] in
  [/\ of_edges (n * N) (n * N) ((lo + hi).+1 * (N * N)) (econv_edges R c) = econv R c,
      all (fun e => [&& esrc e < n * N, etgt e < n * N & eprm e < (lo + hi).+1 * (N * N)])%N
          (econv_edges R c),
      size ed = (n * N)%N & all (fun g => 0 < g <= size dims)%N ed].
Proof.
move=> n_pos blk N c ed.
have out : out1 n (lo + hi).+1 lo hi 1 1 = n.
  by rewrite /out1 mul1n divn1 -addnA subnS addnK prednK.
have szo : size (outputs c) = (n * N)%N by rewrite size_outputs1 out.
split.
- rewrite /econv szo; congr of_edges; first by rewrite /in_shape /= muln1.
  by rewrite /cin_g /= divn1 muln1 mulnA.
- apply/allP => e /flattenP[l /mapP[y]]; rewrite mem_iota add0n szo => /andP[_ lty] ->.
  have N_pos : (0 < N)%N by case: (posnP N) lty => [-> | //]; rewrite muln0.
  have ltq : (y %/ N < n)%N by rewrite ltn_divLR.
  have ltr : (y %% N < N)%N by rewrite ltn_pmod.
  have oE : nth [::] (outputs c) y = [:: y %/ N; y %% N]%N.
    by rewrite {1}(divn_eq y N) nth_outputs1 ?out.
  move=> /flattenP[l' /mapP[kf]]; rewrite mem_iota add0n => /andP[_ ltk] ->.
  case: ifP => // ins /mapP[ci]; rewrite mem_iota add0n => /andP[_ ltci] -> /=.
  rewrite /esrc /etgt /eprm /= lty /=.
  move: ltk ins ltci; rewrite oE /offsets multis1 size_map size_iota => ltk.
  rewrite (nth_map 0%N) ?size_iota // nth_iota // add0n /cin_g /cout_g /= !divn1 => ins ltci.
  rewrite (divn_small ltr) mul0n add0n /parameter /cin_g /= divn1.
  rewrite [(_ * (N * N))%N]mulnA flat_lt ?flat_lt ?andbT //.
  move: ins; rewrite /inside /= andbT => /andP[_ inn].
  by rewrite mul0n add0n.
- by rewrite size_map size_iota.
apply/allP => g /mapP[i]; rewrite mem_iota add0n => /andP[_ lt] ->.
have N_pos : (0 < N)%N by case: (posnP N) lt => [-> | //]; rewrite muln0.
by apply: (allP (block_grades_range dims)); rewrite mem_nth ?ltn_pmod.
Qed.

(* ConvMachine's flip in 1-D: (k_f, c_in, c_out) ↦ (k − 1 − k_f, c_out,
   c_in), flat k_f·N² + c·N + c′: the kernel reversed, the channels
   swapped. *)
Definition conv_flip (k N q : nat) : nat :=
  ((k.-1 - q %/ (N * N)) * (N * N) + (q %% N * N + q %% (N * N) %/ N))%N.

Lemma conv_flip_inv k N q : (q < k * (N * N))%N ->
  (conv_flip k N q < k * (N * N))%N /\ conv_flip k N (conv_flip k N q) = q.
Proof.
move=> lt; have N_pos : (0 < N)%N by move: lt; case: N => // /=; rewrite !muln0.
have NN_pos : (0 < N * N)%N by rewrite muln_gt0 N_pos.
have ltco : (q %% N < N)%N by rewrite ltn_pmod.
have ltci : (q %% (N * N) %/ N < N)%N by rewrite ltn_divLR // ltn_pmod.
have ltk : (q %/ (N * N) < k)%N by rewrite ltn_divLR.
have lek : (q %/ (N * N) <= k.-1)%N by rewrite -ltnS prednK // (leq_ltn_trans (leq0n _) ltk).
have qE : q = (q %/ (N * N) * (N * N) + (q %% (N * N) %/ N * N + q %% N))%N.
  by rewrite {1}(divn_eq q (N * N)) {1}(divn_eq (q %% (N * N)) N) modn_dvdm ?dvdn_mulr.
split.
  by rewrite /conv_flip flat_lt ?flat_lt // (leq_ltn_trans (leq_subr _ _)) // prednK // (leq_ltn_trans (leq0n _) ltk).
have [e1 e2 e3] := flat_coords (k.-1 - q %/ (N * N)) ltco ltci.
have -> : conv_flip k N q = ((k.-1 - q %/ (N * N)) * (N * N) + (q %% N * N + q %% (N * N) %/ N))%N by [].
by rewrite /conv_flip e1 e2 e3 subKn // -qE.
Qed.

(* ConvMachine(dims, σ, pad (lo, hi), [n]) in 1-D, D = |dims|: with flip
   the kernel reversed and the channels swapped, clean′(flip(W)) =
   flip(clean(W)), clean′ the cleaning of the flipped transposed span for
   the reversed grading. *)
(* Law: SEED-FLIP-CLEAN *)
Theorem conv_flip_clean (R : comRingType) n lo hi dims (w : seq R) : (0 < n)%N ->
  let blk := block_grades dims in let N := size blk in
  let c := conv1_spec n N N (lo + hi).+1 lo hi 1 1 in
  let ed := [seq nth 0%N blk (i %% N) | i <- iota 0 (n * N)] in
  let f := conv_flip (lo + hi).+1 N in let P := ((lo + hi).+1 * (N * N))%N in
  eclean (ereversed (size dims) ed) (of_edges (n * N) (n * N) P (eflip f (econv_edges R c))) (eflip_w f P w)
  = eflip_w f P (eclean ed (econv R c) w).
Proof.
move=> n_pos blk N c ed f P.
have [eE ends size_ed grades] := conv_seed R lo hi dims n_pos.
rewrite -eE; apply: flip_clean; last exact: conv_flip_inv.
  by apply: sub_all grades => g /andP[].
by rewrite size_ed.
Qed.

(* ConvMachine's backward span in 1-D: the transposed convolution with
   flip (kernel reversed, channels swapped) has at flip(W), on every g and
   at every input (i, c_in), the operator of the convolution with the pads
   swapped, (hi, lo): the authors' backward span. *)
(* Law: SEED-FLIP-CLEAN *)
Theorem conv_backward_span (R : comRingType) n lo hi dims (w g : seq R) i ci : (i < n)%N ->
  let blk := block_grades dims in let N := size blk in
  let k := (lo + hi).+1 in let f := conv_flip k N in let P := (k * (N * N))%N in
  (ci < N)%N ->
  nth 0 (eapply_p (of_edges (n * N) (n * N) P (eflip f (econv_edges R (conv1_spec n N N k lo hi 1 1))))
                  (eflip_w f P w) g) (i * N + ci)
  = nth 0 (eapply_p (econv R (conv1_spec n N N k hi lo 1 1)) (eflip_w f P w) g) (i * N + ci).
Proof.
move=> lti blk N k f P ltci.
have n_pos : (0 < n)%N by apply: leq_ltn_trans lti.
have N_pos : (0 < N)%N by apply: leq_ltn_trans ltci.
have [_ ends _ _] := conv_seed R lo hi dims n_pos.
rewrite flip_apply; last exact: conv_flip_inv.
  2: by apply: sub_all ends => e /and3P[].
have out' : out1 n k hi lo 1 1 = n.
  by rewrite /out1 mul1n divn1 -addnA [(hi + lo)%N]addnC subnS addnK prednK.
have out : out1 n k lo hi 1 1 = n.
  by rewrite /out1 mul1n divn1 -addnA subnS addnK prednK.
rewrite conv1_padded ?out' //.
rewrite transpose_p_edges (nth_map 0%N) ?size_iota ?flat_lt // nth_iota ?flat_lt // add0n conv_sum.
have key q (c0 : 'I_N) : ((q * N + c0)%N == (i * N + ci)%N) = (q == i) && (c0 == ci :> nat).
  by rewrite flat_pair_eq // divnMDl // divn_small // addn0 modnMDl modn_small.
transitivity (\sum_(o < n) \sum_(co < N) \sum_(kf < k)
  (if ((lo <= o + kf) && (o + kf - lo == i))%N then nth 0 w ((kf * N + ci) * N + co)%N * nth 0 g (o * N + co)%N
   else 0)).
  rewrite size_outputs1 out esum_blocks esum_iota; apply: eq_bigr => o _; rewrite esum_iota.
  apply: eq_bigr => co _; rewrite nth_outputs1 ?out // /offsets multis1 size_map size_iota esum_iota.
  apply: eq_bigr => kf _; rewrite (nth_map 0%N) ?size_iota // nth_iota // add0n /cin_g /= divn1 esum_iota.
  rewrite /inside /conv_edge /esrc /eprm /etgt /source /flat /in_shape /= nth_outputs1 ?out // /offsets multis1 (nth_map 0%N) ?size_iota // nth_iota // add0n.
  rewrite /shifted /Layers.lo /step /dil /cout_g /cin_g /parameter /= !divn1 !muln1 (divn_small (ltn_ord co)) !mul0n !add0n andbT.
  under eq_bigr => c0 _ do rewrite add0n key.
  case: eqP => [qi | nq]; last by rewrite andbF big1 // => c0 _; rewrite !andbF.
  rewrite qi lti andbT; case: (lo <= o + kf)%N; last by rewrite big1.
  under eq_bigr => c0 _ do rewrite /= eq_sym.
  rewrite (big_pick (fun c0 => 1 * (w`_((kf * cin_g (conv1_spec n N N k lo hi 1 1) + c0) * N + co) * g`_(o * N + co)))) //.
  by rewrite mul1r /cin_g /= divn1.
rewrite exchange_big /=; under eq_bigr => co _ do rewrite exchange_big /=; rewrite exchange_big /=.
rewrite [RHS](reindex_inj rev_ord_inj) /=; apply: eq_bigr => kf _; apply: eq_bigr => co _.
have ltkf : (kf <= lo + hi)%N by rewrite -ltnS ltn_ord.
have rev : (k - kf.+1 = lo + hi - kf)%N by rewrite subSS.
have ltq : ((k - kf.+1) * N + co < k * N)%N by rewrite flat_lt // rev ltnS leq_subr.
have ltQ : (((k - kf.+1) * N + co) * N + ci < P)%N by rewrite /P mulnA flat_lt.
rewrite /eflip_w (nth_map 0%N) ?size_iota // nth_iota // add0n.
have qE : (((k - kf.+1) * N + co) * N + ci = (k - kf.+1) * (N * N) + (co * N + ci))%N.
  by rewrite mulnDl -mulnA addnA.
rewrite qE /f /conv_flip; have [-> -> ->] := flat_coords (k - kf.+1) (ltn_ord co) ltci.
have kfE : (k.-1 - (k - kf.+1) = kf)%N by rewrite rev /= subKn.
have wE : ((kf * N + ci) * N + co = kf * (N * N) + (ci * N + co))%N by rewrite mulnDl -mulnA addnA.
rewrite kfE !muln1 -wE.
have C o : ((lo <= o + kf) && (o + kf - lo == i))%N = (kf <= i + lo)%N && (o == i + lo - kf)%N.
  by apply/andP/andP => -[/leP h1 /eqP h2]; split; apply/leP || apply/eqP; rewrite -?plusE -?minusE in h1 h2 *; lia.
have C' : ((hi <= i + (k - kf.+1)) && (i + (k - kf.+1) - hi < n))%N = (kf <= i + lo)%N && (i + lo - kf < n)%N.
  rewrite rev; have /leP h := ltkf.
  by apply/andP/andP => -[/leP h1 /ltP h2]; split; (apply/leP || apply/ltP); rewrite -?plusE -?minusE in h h1 h2 *; lia.
under eq_bigr => o _ do rewrite C.
rewrite C'; case: (kf <= i + lo)%N; last by rewrite big1 ?mulr0.
have -> : (i + (k - kf.+1) - hi = i + lo - kf)%N.
  rewrite rev; have /leP h := ltkf; apply/eqP; rewrite eqn_leq; apply/andP.
  by split; apply/leP; rewrite -?plusE -?minusE in h *; lia.
case: ltnP => [ltm | gem].
  rewrite (bigD1 (Ordinal ltm)) //= eqxx big1 ?addr0 // => o /negbTE ne /=.
  by case: eqP => // e; move: ne; rewrite -val_eqE /= e eqxx.
rewrite mulr0 big1 // => o _ /=; case: eqP => // e.
by move: (ltn_ord o); rewrite e ltnNge gem.
Qed.

(* ------------------------------------------------------------------ *)
(* The normalisations of the graph convolution (graph_conv.hpp).      *)

Section GraphNormalisation.

Variable F : fieldType.

(* The edge list with the self loops appended, and the in-degree. *)
Definition gall (nodes : nat) (edges : seq (nat * nat)) (self_loops : bool) : seq (nat * nat) :=
  if self_loops then edges ++ [seq (v, v) | v <- iota 0 nodes] else edges.
Definition gdeg (es : seq (nat * nat)) (v : nat) : nat := count (fun uv => uv.2 == v) es.

Inductive gnorm := GSum | GMean | GSymmetric.

(* c(u, v) of pm::graph_conv, given the square root of a degree: 1,
   1/deg(v), or 1/root(deg u) · 1/root(deg v), which is 0 when deg u = 0
   (x^-1 = 0 at 0), as in the C++. *)
Definition gcoef (root : nat -> F) (n : gnorm) (es : seq (nat * nat)) (u v : nat) : F :=
  match n with
  | GSum => 1
  | GMean => (gdeg es v)%:R^-1
  | GSymmetric => (root (gdeg es u))^-1 * (root (gdeg es v))^-1
  end.

Definition egraph_norm root nodes edges self_loops cin cout n : epspan F :=
  let es := gall nodes edges self_loops in egraph nodes es cin cout (gcoef root n es).

(* The message of u to output channel c_out: Σ_{c_in} W(c_in, c_out) φ(u, c_in). *)
Definition gmessage cin cout (w phi : seq F) (u co : nat) : F :=
  esum [seq nth 0 w (ci * cout + co)%N * nth 0 phi (u * cin + ci)%N | ci <- iota 0 cin].

Lemma egraph_normE root nodes edges self_loops cin cout n (w phi : seq F) :
  let es := gall nodes edges self_loops in
  eapply_p (egraph_norm root nodes edges self_loops cin cout n) w phi
  = [seq esum [seq if uv.2 == (y %/ cout)%N
                   then gcoef root n es uv.1 uv.2 * gmessage cin cout w phi uv.1 (y %% cout)
                   else 0 | uv <- es]
    | y <- iota 0 (nodes * cout)%N].
Proof. exact: graph_textbook. Qed.

(* Sum: at (v, c_out), the sum over the edges u -> v of u's message. *)
(* Law: LAYER-GRAPH-EQ-SPAN *)
Theorem graph_sum_textbook root nodes edges self_loops cin cout (w phi : seq F) :
  let es := gall nodes edges self_loops in
  eapply_p (egraph_norm root nodes edges self_loops cin cout GSum) w phi
  = [seq esum [seq if uv.2 == (y %/ cout)%N then gmessage cin cout w phi uv.1 (y %% cout) else 0
              | uv <- es]
    | y <- iota 0 (nodes * cout)%N].
Proof.
rewrite egraph_normE /=; apply: eq_map => y; congr esum; apply: eq_map => uv.
by case: ifP; rewrite ?mul1r.
Qed.

(* Mean: 1/deg(v) times that sum, deg(v) the number of edges into v. *)
(* Law: LAYER-GRAPH-EQ-SPAN *)
Theorem graph_mean_textbook root nodes edges self_loops cin cout (w phi : seq F) :
  let es := gall nodes edges self_loops in
  eapply_p (egraph_norm root nodes edges self_loops cin cout GMean) w phi
  = [seq (gdeg es (y %/ cout))%:R^-1
         * esum [seq if uv.2 == (y %/ cout)%N then gmessage cin cout w phi uv.1 (y %% cout) else 0
                | uv <- es]
    | y <- iota 0 (nodes * cout)%N].
Proof.
rewrite egraph_normE /=; apply: eq_map => y; rewrite esum_scale -map_comp; congr esum.
by apply: eq_map => uv /=; case: eqP => [<- | _]; rewrite ?mulr0.
Qed.

End GraphNormalisation.

(* The square root of a degree over the rationals: the integer root, the
   largest r with r² ≤ d (as pm::detail::inverse_sqrt_degree). *)
Definition isqrt (d : nat) : nat := count (fun r => r.+1 * r.+1 <= d)%N (iota 0 d).

Section SymmetricNormalisation.

Variable R : rcfType.
Import Num.Theory.

(* Symmetric: at (v, c_out), Σ_{u -> v} (deg(u) deg(v))^{-1/2} times u's
   message, the square root of the real closed field R; (0)^{-1/2} is 0. *)
(* Law: LAYER-GRAPH-SYMMETRIC *)
Theorem graph_symmetric_textbook nodes edges self_loops cin cout (w phi : seq R) :
  let es := gall nodes edges self_loops in
  eapply_p (egraph_norm (fun d => Num.sqrt d%:R) nodes edges self_loops cin cout GSymmetric) w phi
  = [seq esum [seq if uv.2 == (y %/ cout)%N
                   then (Num.sqrt (gdeg es uv.1 * gdeg es uv.2)%:R)^-1
                        * gmessage cin cout w phi uv.1 (y %% cout)
                   else 0 | uv <- es]
    | y <- iota 0 (nodes * cout)%N].
Proof.
rewrite egraph_normE /=; apply: eq_map => y; congr esum; apply: eq_map => uv.
by rewrite natrM sqrtrM ?ler0n // invfM.
Qed.

(* Where the degree is a perfect square, the integer root is the square
   root of R: the model over the rationals computes the same coefficients. *)
Lemma isqrt_sqrt d : (isqrt d * isqrt d)%N = d -> ((isqrt d)%:R : R) = Num.sqrt d%:R.
Proof.
by move=> sq; rewrite -{2}sq natrM -expr2 sqrtr_sqr ger0_norm ?ler0n.
Qed.

End SymmetricNormalisation.

(* ------------------------------------------------------------------ *)
(* Relabelling the nodes of a graph convolution.                       *)

Section GraphPermutation.

Variable F : fieldType.

Lemma esum_perm (s1 s2 : seq F) : perm_eq s1 s2 -> esum s1 = esum s2.
Proof. by move=> pe; rewrite !esum_big; apply: perm_big. Qed.

Variables (nodes : nat) (ps : seq nat).
Hypothesis ps_perm : perm_eq ps (iota 0 nodes).
Local Notation pn v := (nth 0%N ps v).
Definition relabel (uv : nat * nat) : nat * nat := (pn uv.1, pn uv.2).

Lemma size_ps : size ps = nodes.
Proof. by rewrite (perm_size ps_perm) size_iota. Qed.

Lemma pn_lt v : (v < nodes)%N -> (pn v < nodes)%N.
Proof.
move=> lt; have : pn v \in iota 0 nodes by rewrite -(perm_mem ps_perm) mem_nth ?size_ps.
by rewrite mem_iota.
Qed.

Lemma pn_eq a b : (a < nodes)%N -> (b < nodes)%N -> (pn a == pn b) = (a == b).
Proof. by move=> la lb; rewrite nth_uniq ?size_ps // (perm_uniq ps_perm) iota_uniq. Qed.

Lemma gall_relabel edges self_loops :
  perm_eq (gall nodes (map relabel edges) self_loops) (map relabel (gall nodes edges self_loops)).
Proof.
case: self_loops; rewrite /gall //= map_cat perm_cat2l -map_comp.
have -> : [seq relabel (v, v) | v <- iota 0 nodes] = [seq (w, w) | w <- ps].
  by rewrite -[in RHS](mkseq_nth 0%N ps) size_ps /mkseq -map_comp.
by apply: perm_map; rewrite perm_sym.
Qed.

Lemma gall_range edges self_loops :
  all (fun uv => (uv.1 < nodes) && (uv.2 < nodes))%N edges ->
  all (fun uv => (uv.1 < nodes) && (uv.2 < nodes))%N (gall nodes edges self_loops).
Proof.
move=> range; case: self_loops => //=; rewrite all_cat range /=.
by apply/allP => uv /mapP[v]; rewrite mem_iota add0n => /andP[_ lt] -> /=; rewrite lt.
Qed.

(* Relabelling the nodes keeps the in-degrees: deg'(p v) = deg(v). *)
Lemma gdeg_relabel edges self_loops v :
  all (fun uv => (uv.1 < nodes) && (uv.2 < nodes))%N edges -> (v < nodes)%N ->
  gdeg (gall nodes (map relabel edges) self_loops) (pn v) = gdeg (gall nodes edges self_loops) v.
Proof.
move=> range lt; rewrite /gdeg (permP (gall_relabel edges self_loops)) count_map.
apply: eq_in_count => uv /(allP (gall_range self_loops range)) /andP[_ lt2] /=.
by rewrite pn_eq.
Qed.

(* LAYER-GRAPH-PERMUTATION: relabelling the nodes of the edge list and of
   the input by the permutation ps relabels the output, for every
   normalisation and every root. *)
(* Law: LAYER-GRAPH-PERMUTATION *)
Theorem graph_permutation root edges self_loops cin cout n (w phi phi' : seq F) v co :
  all (fun uv => (uv.1 < nodes) && (uv.2 < nodes))%N edges ->
  (forall u c, (u < nodes)%N -> (c < cin)%N ->
     nth 0 phi' (pn u * cin + c)%N = nth 0 phi (u * cin + c)%N) ->
  (v < nodes)%N -> (co < cout)%N ->
  nth 0 (eapply_p (egraph_norm root nodes (map relabel edges) self_loops cin cout n) w phi')
      (pn v * cout + co)
  = nth 0 (eapply_p (egraph_norm root nodes edges self_loops cin cout n) w phi) (v * cout + co).
Proof.
move=> range relabelled ltv ltco; rewrite !egraph_normE /=.
rewrite !(nth_map 0%N) ?size_iota ?flat_lt ?pn_lt // !nth_iota ?flat_lt ?pn_lt // !add0n.
rewrite !divnMDl ?(leq_ltn_trans _ ltco) // !(divn_small ltco) !addn0 !modnMDl !(modn_small ltco).
rewrite (esum_perm (perm_map _ (gall_relabel edges self_loops))) -map_comp; congr esum.
apply/eq_in_map => uv /(allP (gall_range self_loops range)) /andP[lt1 lt2] /=.
rewrite pn_eq //; case: eqP => // ->.
congr (_ * _).
  by case: n => //=; rewrite ?gdeg_relabel.
rewrite /gmessage; congr esum; apply/eq_in_map => c; rewrite mem_iota add0n => /andP[_ ltc].
by rewrite relabelled.
Qed.
End GraphPermutation.

(* ------------------------------------------------------------------ *)
(* relu and the pooling weight of the extracted model.                *)

(* relu and the slope the backward pass takes for it, as
   src/pm/machine/sigma.hpp computes them: 1 above 0, else 0 (at 0, where
   relu has no derivative, a convention). Backprop.v proves relu over ℝ
   equal to erelu (relu_erelu) and erelu_slope a slope of relu away from 0
   (erelu_slope_pos, erelu_slope_neg: the hypotheses on the step of
   relu_backward_correct); Extraction.v extracts these two. *)
Definition erelu {R : numDomainType} (v : R) : R := if (0 < v)%R then v else 0.
Definition erelu_slope {R : numDomainType} (v : R) : R := if (0 < v)%R then 1 else 0.

(* The weight m of pool_textbook that makes epool an average, as
   pm::average_pool takes it: 1 / the number of window offsets. *)
Definition pool_weight {F : fieldType} (c : PoolSpec) : F := (foldr muln 1%N (window c))%:R^-1.

Lemma pool_weight_average (F : numFieldType) (c : PoolSpec) :
  (0 < foldr muln 1 (window c))%N -> pool_weight c * (foldr muln 1%N (window c))%:R = 1 :> F.
Proof. by move=> pos; rewrite mulVf // Num.Theory.pnatr_eq0 -lt0n. Qed.
