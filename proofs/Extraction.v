(* The executable model of Executable.v over the rationals of MathComp
   (rat: a normalised pair of integers, the model's own ring), extracted to
   OCaml for the comparison with the C++ reference
   (proofs/extraction/, ctest proofs_extracted_vs_cpp). Nothing is replaced
   by hand-written OCaml: no Extract Constant or Extract Inductive, so the
   extracted program is the model's definitions, naturals in unary
   included. *)
From mathcomp Require Import all_ssreflect all_algebra.
From PM Require Import Spans Executable Layers.

Import GRing.Theory.
Local Open Scope ring_scope.

Notation Q := [comRingType of rat].

(* Rationals in and out: sign, numerator and denominator as naturals. *)
Definition q_make (negative : bool) (n d : nat) : rat :=
  fracq ((if negative then - (n%:Z) else n%:Z), d%:Z).
Definition q_negative (q : rat) : bool := numq q < 0.
Definition q_num (q : rat) : nat := absz (numq q).
Definition q_den (q : rat) : nat := absz (denq q).

Definition q_espan := espan Q.
Definition q_make_span X Y (s t : seq nat) (mu : seq rat) : espan Q := ESpan X Y s t mu.
Definition q_make_pspan (a : espan Q) P (pi : seq nat) : epspan Q := EPSpan a P pi.

Definition q_pullback := @epullback Q.
Definition q_pushforward := @epushforward Q.
Definition q_integrate := @eintegrate Q.
Definition q_identity_span := @eidentity_span Q.
Definition q_transpose := @etranspose Q.
Definition q_apply := @eapply Q.
Definition q_compose_span := @ecompose_span Q.
Definition q_transpose_p := @etranspose_p Q.
Definition q_apply_p := @eapply_p Q.
Definition q_parameter_gradient := @eparameter_gradient Q.
Definition q_compose_p := @ecompose_p Q.

(* The graded span machine with two exact nonlinearities of
   src/pm/machine/sigma.hpp: the array sigma(y)_i = s_i y_i, and relu with
   the derivative convention of the C++ (1 for y > 0, else 0): erelu and
   erelu_slope of Layers.v, which Backprop.v proves to be relu over ℝ and a
   slope of it away from 0. *)
Definition q_relu (v : rat) : rat := erelu v.
Definition q_relu_slopes (y : seq rat) : seq rat := [seq erelu_slope v | v <- y].
Definition q_clean := @eclean Q.
Definition q_forward_array (ed : seq nat) (a : epspan Q) (slopes w y0 z0 : seq rat) D :=
  @eforward Q ed a (fun i v => nth 0 slopes i * v) w y0 z0 D.
Definition q_forward_relu (ed : seq nat) (a : epspan Q) (w y0 z0 : seq rat) D :=
  @eforward Q ed a (fun _ v => q_relu v) w y0 z0 D.
Definition q_backward := @ebackward Q.
Definition q_weight_gradient := @eweight_gradient Q.

(* The layers of Layers.v: dense (with or without bias), the convolution,
   whose transpose is the transposed convolution, and average pooling with
   the weight 1/|window| of pm::average_pool, graph convolution and the
   causal time convolution; the grading of the recurrent machine. The
   pooling weight is pool_weight of Layers.v
   (pool_weight_average). *)
Definition q_dense (I O : nat) (bias : bool) : epspan Q := dense_span Q I O bias.
Definition q_conv (spatial : seq nat) (cin cout : nat) (kernel lo hi stride dilation : seq nat)
  (groups : nat) : epspan Q :=
  econv Q (Build_ConvSpec spatial cin cout kernel lo hi stride dilation groups).
(* Graph convolution with the normalisations of pm::graph_conv, the square
   root of a degree the integer root (exact at the perfect squares that
   pm::graph_conv requires over the rationals). *)
Definition q_graph (nodes : nat) (edges : seq (nat * nat)) (self_loops : bool) (cin cout : nat)
  (norm : gnorm) : epspan Q :=
  egraph_norm (fun d => (isqrt d)%:R) nodes edges self_loops cin cout norm.
Definition q_time_conv (L cin cout max_lag : nat) : epspan Q := etime_conv Q L cin cout max_lag.
(* RecurMachine(dims, σ, pad, timeblock, L): its grading and its span, the
   time convolution on N = Σ dims channels; cleaning is q_clean. *)
Definition q_recur_grades (L timeblock : nat) (dims : seq nat) : seq nat :=
  recur_grades L timeblock (size dims) (block_grades dims).
Definition q_recur_span (L pad : nat) (dims : seq nat) : epspan Q :=
  let N := size (block_grades dims) in etime_conv Q L N N pad.
(* DenseMachine(dims, σ): the dense span N → N without bias, graded by
   channel block (dense_seed). *)
Definition q_dense_grades (dims : seq nat) : seq nat := block_grades dims.
Definition q_dense_machine (dims : seq nat) : epspan Q :=
  let N := size (block_grades dims) in dense_span Q N N false.
(* ConvMachine(dims, σ, pad, spatial): the size-preserving convolution N → N,
   kernel lo + hi + 1 per axis, stride and dilation 1, one group; position
   by position the channel blocks (conv_seed, in 1-D). *)
Definition q_conv_grades (spatial dims : seq nat) : seq nat :=
  let blk := block_grades dims in
  [seq nth 0%N blk (i %% size blk) | i <- iota 0 (foldr muln 1%N spatial * size blk)].
Definition q_conv_machine (spatial lo hi dims : seq nat) : epspan Q :=
  let N := size (block_grades dims) in
  let ones := nseq (size spatial) 1%N in
  econv Q (Build_ConvSpec spatial N N [seq (lh.1 + lh.2).+1 | lh <- zip lo hi] lo hi ones ones 1).
Definition q_pool (spatial : seq nat) (channels : nat) (window lo hi stride : seq nat) : epspan Q :=
  let c := Build_PoolSpec spatial channels window lo hi stride in epool c (pool_weight c).

Require Extraction.
Extraction Language OCaml.
Extraction "pm_model.ml" q_make q_negative q_num q_den q_make_span q_make_pspan
  eidentity_map ecompose efibre q_pullback q_pushforward q_integrate q_identity_span
  q_transpose q_apply q_compose_span q_transpose_p q_apply_p q_parameter_gradient q_compose_p
  q_relu_slopes q_clean q_forward_array q_forward_relu q_backward q_weight_gradient
  q_dense q_conv q_pool q_graph q_time_conv q_recur_grades q_recur_span
  q_dense_grades q_dense_machine q_conv_grades q_conv_machine.
