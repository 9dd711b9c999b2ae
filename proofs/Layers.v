(* Classical layers as parametric spans (src/pm/layers/), with the
   operators of their spans proved equal to the textbook formulas.

   The layers are written as the C++ constructors build them, on the lists
   of Executable.v: a layer is the list of its edges (source, target,
   parameter, weight) in the constructor's order, and its parametric span is
   `of_edges` of that list; multi-indices are flattened row-major, as
   pm::Shape does. The theorems say what the operator of each span computes
   at every output, in the coordinates of the textbook formula:

   - dense: (L_W φ)(y) = Σ_x W(x, y) φ(x), W flat x |Y| + y;
   - convolution of any rank with asymmetric zero padding, stride, dilation
     and groups (the semantics of PyTorch's ConvNd):
       y[o, c_out] = Σ_{k, c_in} W[k, c_in, c_out] x[o·stride + k·dilation − pad_lo, g·C_in/groups + c_in]
     with x zero outside the input (padding is the absence of an edge) and
     g = c_out / (C_out / groups) the group of c_out;
   - for any layer given by its edges, the transposed span and the
     parameter gradient are the sums over the edges out of an input and
     over the edges of a parameter: for the convolution, the input gradient
     is the transposed convolution and the weight gradient the correlation
     of the input with the output gradient. *)
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

(* ------------------------------------------------------------------ *)
(* Dense (dense.hpp, without bias).                                   *)

Definition edense (I O : nat) : seq edge :=
  [seq ((x, y), (x * O + y)%N, 1) | x <- iota 0 I, y <- iota 0 O].

Lemma esum_allpairs (s t : seq nat) (f : nat -> nat -> edge) (F : edge -> R) (Q : pred edge) :
  esum [seq F e | e <- [seq f x y | x <- s, y <- t] & Q e]
  = esum [seq esum [seq F e | e <- [seq f x y | y <- t] & Q e] | x <- s].
Proof. by elim: s => //= x s IH; rewrite filter_cat map_cat esum_cat IH. Qed.

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
   of coef: 1 (sum), 1/deg(v) (mean). *)
Definition egraph_edges (edges : seq (nat * nat)) (cin cout : nat) (coef : nat -> nat -> R) :=
  flatten [seq [seq ((uv.1 * cin + ci, uv.2 * cout + co), ci * cout + co, coef uv.1 uv.2)%N
               | ci <- iota 0 cin, co <- iota 0 cout]
          | uv <- edges].

Definition egraph nodes edges cin cout coef : epspan R :=
  of_edges (nodes * cin) (nodes * cout) (cin * cout) (egraph_edges edges cin cout coef).

Lemma flat_pair_eq (q r n y : nat) : (r < n)%N ->
  ((q * n + r)%N == y) = (q == y %/ n)%N && (r == y %% n)%N.
Proof.
move=> lt; have n_pos : (0 < n)%N by apply: leq_ltn_trans lt.
apply/eqP/andP => [<- | [/eqP -> /eqP ->]]; last by rewrite -divn_eq.
by rewrite divnMDl // divn_small // addn0 modnMDl modn_small.
Qed.

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
(* Offsets k = 0..p read the lags p - k: reverse the list of offsets. *)
rewrite -esum_rev -map_rev; congr esum.
have -> : rev (iota 0 p.+1) = [seq (p - lag)%N | lag <- iota 0 p.+1].
  apply: (@eq_from_nth _ 0%N); first by rewrite size_rev size_map.
  move=> i; rewrite size_rev size_iota => lt_i.
  rewrite nth_rev ?size_iota // (nth_map 0%N) ?size_iota // !nth_iota //.
  by rewrite ltn_subrL.
rewrite -map_comp; apply/eq_in_map => lag; rewrite mem_iota add0n => /andP[_ lt_lag] /=.
have lag_le : (lag <= p)%N by rewrite -ltnS.
set t := (y %/ cout)%N.
rewrite subKn // (_ : (p <= t + (p - lag))%N = (lag <= t)%N); last first.
  by rewrite addnC -leq_subLR subKn.
case: ifP => le /=; last by [].
rewrite -map_comp; congr esum; apply: eq_map => ci /=.
rewrite /ewt /eprm /esrc /= mul1r.
by rewrite addnBA // subnAC addnK.
Qed.

End Layers.
