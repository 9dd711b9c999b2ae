(* The driver of the extracted model (Pm_model, extracted by
   proofs/Extraction.v): reads the cases written by `reference_cases
   generate` and prints, for each, the results of the model's operations in
   the format of `reference_cases eval`. It only converts between OCaml
   integers and the model's unary naturals and rationals, and prints; every
   result is computed by the extracted code. *)
open Pm_model

let rec nat_of_int n = if n <= 0 then O else S (nat_of_int (n - 1))

let int_of_nat n =
  let rec go acc = function O -> acc | S m -> go (acc + 1) m in
  go 0 n

let rec of_list = function [] -> Nil | x :: r -> Cons (x, of_list r)

let rec to_list = function Nil -> [] | Cons (x, r) -> x :: to_list r

let rat_of num den =
  q_make (if num < 0 then True else False) (nat_of_int (abs num)) (nat_of_int den)

let show_rat q =
  let n = int_of_nat (q_num q) and d = int_of_nat (q_den q) in
  Printf.sprintf "%d/%d" (match q_negative q with True -> -n | False -> n) d

let read_int () = Scanf.scanf " %d" (fun x -> x)

(* A map as `codomain size images…`: the codomain and the list of images. *)
let read_map () =
  let cod = read_int () in
  let size = read_int () in
  let images = List.init size (fun _ -> read_int ()) in
  (cod, of_list (List.map nat_of_int images))

(* The model is extracted over any commutative ring, whose carrier is
   Obj.t in OCaml; its instance here is rat, so lists of values are viewed
   as lists of rat (and back) with Obj.magic, the one unchecked step. *)
let read_fn () : 'a =
  let size = read_int () in
  Obj.magic (of_list (List.init size (fun _ -> Scanf.scanf " %d/%d" rat_of)))

let read_pspan () =
  let x, s = read_map () in
  let y, t = read_map () in
  let mu = read_fn () in
  let p, pi = read_map () in
  q_make_pspan (q_make_span (nat_of_int x) (nat_of_int y) s t mu) (nat_of_int p) pi

let out_map cod images =
  let l = to_list images in
  Printf.printf " %d %d" cod (List.length l);
  List.iter (fun i -> Printf.printf " %d" (int_of_nat i)) l

let out_fn v =
  let l : rat Stdlib.List.t = Obj.magic (to_list v) in
  Printf.printf " %d" (List.length l);
  List.iter (fun q -> Printf.printf " %s" (show_rat q)) l

let out_span a =
  out_map (int_of_nat a.edom) a.es;
  out_map (int_of_nat a.ecod) a.et;
  out_fn a.emu

let out_pspan a =
  out_span a.espan_of_p;
  out_map (int_of_nat a.epar) a.epi

let () =
  let rec loop i =
    match Scanf.scanf " %s" (fun w -> w) with
    | "" -> ()
    | "case" ->
        let n = read_int () in
        let _l = read_int () in
        let fn_, f = read_map () in
        let _, g = read_map () in
        let l, h = read_map () in
        let phi_n = read_fn () in
        let mu_m = read_fn () in
        let psi_m = read_fn () in
        let a = read_pspan () in
        let b = read_pspan () in
        let phi_x = read_fn () in
        let w_a = read_fn () in
        let g_y = read_fn () in
        let levels, grades = read_map () in
        let m = read_pspan () in
        let m_w = read_fn () in
        let m_y0 = read_fn () in
        let m_z0 = read_fn () in
        let m_slopes = read_fn () in
        let m_gy = read_fn () in
        let m_gz = read_fn () in
        let d = nat_of_int (levels - 1) in
        let dense_in = read_int () in
        let dense_out = read_int () in
        let dense_bias = read_int () in
        let read_list () =
          let size = read_int () in
          of_list (List.init size (fun _ -> nat_of_int (read_int ())))
        in
        let spatial = read_list () in
        let cin = read_int () in
        let cout = read_int () in
        let kernel = read_list () in
        let lo = read_list () in
        let hi = read_list () in
        let stride = read_list () in
        let dilation = read_list () in
        let groups = read_int () in
        let pool_spatial = read_list () in
        let pool_channels = read_int () in
        let window = read_list () in
        let pool_lo = read_list () in
        let pool_hi = read_list () in
        let pool_stride = read_list () in
        let nodes = read_int () in
        let n_edges = read_int () in
        let edges =
          of_list (List.init n_edges (fun _ ->
            let u = read_int () in
            let v = read_int () in
            Pair (nat_of_int u, nat_of_int v)))
        in
        let self_loops = read_int () in
        let graph_in = read_int () in
        let graph_out = read_int () in
        let norm = match read_int () with 0 -> GSum | 1 -> GMean | _ -> GSymmetric in
        let time_length = read_int () in
        let time_in = read_int () in
        let time_out = read_int () in
        let max_lag = read_int () in
        let recur_length = nat_of_int (read_int ()) in
        let recur_pad = nat_of_int (read_int ()) in
        let recur_timeblock = nat_of_int (read_int ()) in
        let recur_dims = read_list () in
        let recur_w = read_fn () in
        let seed_dims = read_list () in
        let seed_spatial = read_list () in
        let seed_lo = read_list () in
        let seed_hi = read_list () in
        let dense_w = read_fn () in
        let conv_w = read_fn () in
        let line op = Printf.printf "%d %s" i op in
        let nn = nat_of_int fn_ in
        line "id"; out_map n (eidentity_map (nat_of_int n)); print_newline ();
        line "comp"; out_map l (ecompose h f); print_newline ();
        let pairs = to_list (efibre f g) in
        line "fib";
        out_map (List.length (to_list f)) (of_list (List.map (function Pair (p, _) -> p) pairs));
        out_map (List.length (to_list g)) (of_list (List.map (function Pair (_, q) -> q) pairs));
        print_newline ();
        line "pull"; out_fn (q_pullback f phi_n); print_newline ();
        line "push"; out_fn (q_pushforward nn f mu_m); print_newline ();
        line "integ"; out_fn (q_integrate nn f mu_m psi_m); print_newline ();
        line "sid"; out_span (q_identity_span (nat_of_int n)); print_newline ();
        line "scomp"; out_span (q_compose_span b.espan_of_p a.espan_of_p); print_newline ();
        line "strans"; out_span (q_transpose a.espan_of_p); print_newline ();
        line "sapply"; out_fn (q_apply a.espan_of_p phi_x); print_newline ();
        line "papply"; out_fn (q_apply_p a w_a phi_x); print_newline ();
        line "ptrans"; out_pspan (q_transpose_p a); print_newline ();
        line "pgrad"; out_fn (q_parameter_gradient a phi_x g_y); print_newline ();
        line "pcomp"; out_pspan (q_compose_p b a); print_newline ();
        line "clean"; out_fn (q_clean grades m m_w); print_newline ();
        (* The forward state (y, z), then the backward pass at it: ybar,
           zbar and the cleaned weight gradient at (z, ybar). *)
        let machine name (Pair (y, z)) slopes =
          line ("fwd_" ^ name); out_fn y; out_fn z; print_newline ();
          let (Pair (zbar, ybar)) = q_backward d grades m slopes m_w m_gy m_gz in
          line ("bwd_" ^ name); out_fn ybar; out_fn zbar;
          out_fn (q_weight_gradient grades m z ybar); print_newline ()
        in
        machine "array" (q_forward_array grades m m_slopes m_w m_y0 m_z0 d) m_slopes;
        let (Pair (y, _)) as relu = q_forward_relu grades m m_w m_y0 m_z0 d in
        machine "relu" relu (Obj.magic (q_relu_slopes (Obj.magic y)));
        let flag b = if b = 1 then True else False in
        line "dense";
        out_pspan (q_dense (nat_of_int dense_in) (nat_of_int dense_out) (flag dense_bias));
        print_newline ();
        let conv =
          q_conv spatial (nat_of_int cin) (nat_of_int cout) kernel lo hi stride dilation
            (nat_of_int groups)
        in
        line "conv"; out_pspan conv; print_newline ();
        line "conv_transpose"; out_pspan (q_transpose_p conv); print_newline ();
        let pool = q_pool pool_spatial (nat_of_int pool_channels) window pool_lo pool_hi pool_stride in
        line "pool"; out_span pool.espan_of_p; print_newline ();
        line "graph";
        out_pspan (q_graph (nat_of_int nodes) edges (flag self_loops) (nat_of_int graph_in)
                     (nat_of_int graph_out) norm);
        print_newline ();
        line "time_conv";
        out_pspan (q_time_conv (nat_of_int time_length) (nat_of_int time_in) (nat_of_int time_out)
                     (nat_of_int max_lag));
        print_newline ();
        (* The recurrent machine: span, grading and cleaned parameters. *)
        let out_machine op span grades w =
          line op; out_pspan span;
          let gl = to_list grades in
          Printf.printf " %d" (List.length gl);
          List.iter (fun g -> Printf.printf " %d" (int_of_nat g)) gl;
          out_fn (q_clean grades span w);
          print_newline ()
        in
        out_machine "recur" (q_recur_span recur_length recur_pad recur_dims)
          (q_recur_grades recur_length recur_timeblock recur_dims) recur_w;
        (* DenseMachine and ConvMachine, the same way. *)
        out_machine "dense_machine" (q_dense_machine seed_dims) (q_dense_grades seed_dims) dense_w;
        out_machine "conv_machine" (q_conv_machine seed_spatial seed_lo seed_hi seed_dims)
          (q_conv_grades seed_spatial seed_dims) conv_w;
        loop (i + 1)
    | w -> Printf.eprintf "model_cases: expected `case`, found `%s`\n" w; exit 2
  in
  loop 0
