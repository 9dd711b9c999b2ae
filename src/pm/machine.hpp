#pragma once
// Machines of finite depth (see spec/machines.md).
//
// General machines (any endofunction f of S^n with id − f invertible):
//   Machine<S>{n, f, jvp, vjp}; linear_machine(Matrix), sum, direct_sum,
//   residual(m, x0, x) = x0 + f(x) − x, jacobian(m, x).
//   resolvent(m, x0, depth): naive iteration, throws pm::Error unless it
//   settles within `depth` steps; naive_iterates(m, x0, start, steps).
//   Oracles by explicit matrices and exact elimination: linear_resolvent,
//   tangent_oracle (I − Df)⁻¹ v, cotangent_oracle (I − Dfᵀ)⁻¹ g, solve.
// Gradings and depth:
//   Grading(levels, grades) with grades in 1..levels, Grading::from_blocks,
//   reversed(); has_depth(matrix | span | parametric span + w, grading)
//   exactly; has_depth_randomized(machine, grading, trials, seed).
// The graded span machine (the reference semantics of every machine layer):
//   GradedSpanMachine<S>(grading, parametric span I ← E → I, Sigma<S>);
//   Sigma<S>::identity/tanh/sigmoid/relu/softplus/polynomial(c)/array(slopes);
//   valid_parameters, clean(span, grading, w), is_valid.
//   forward(m, w, y0, z0) -> MachineState{y, z}: the level solver on a batch,
//     y = y0 + L_clean(w) z, z = z0 + σ(y);
//   backward(m, w, state, g_y, g_z) -> Gradients{y0, z0, w, sigma}: the same
//     solver on dual(m, state.y) (transposed span, reversed grading, σ'(y) as
//     array σ), then the cleaned parameter gradient and ∂/∂slopes of an array σ.
//   as_machine(m, w, column) and state_grading(grading): the same machine as
//   a general Machine on (y, z), for the oracles.
#include "pm/category.hpp"
#include "pm/machine/backward.hpp"
#include "pm/machine/clean.hpp"
#include "pm/machine/depth.hpp"
#include "pm/machine/graded_span_machine.hpp"
#include "pm/machine/grading.hpp"
#include "pm/machine/machine.hpp"
#include "pm/machine/matrix.hpp"
#include "pm/machine/resolvent.hpp"
#include "pm/machine/sigma.hpp"
#include "pm/machine/solver.hpp"
#include "pm/machine/state_machine.hpp"
