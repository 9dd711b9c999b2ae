#pragma once
// The level-by-level forward solver of a graded span machine. Over grades
// k = 1..D it finishes y and then z on the indices of grade k:
//   y_i = y₀_i + Σ_{e : t(e) = i} μ(e) w(π(e)) z_{s(e)},   z_i = z₀_i + σ(y_i).
// Only edges with a valid parameter enter, and these come from lower grades,
// whose z is already final; so one sweep solves the machine equation exactly
// (spec/machines.md, DEPTH-LEVEL-SCHEDULE), at the cost of one evaluation of
// the span. Each batch column is an independent sample.
#include <algorithm>

#include "pm/machine/graded_span_machine.hpp"

namespace pm {

// The solution (y, z) of the machine equation, one column per sample.
template <class S> struct MachineState {
  Batch<S> y;
  Batch<S> z;
};

template <class S>
void require_batch(const GradedSpanMachine<S> &m, const Batch<S> &b, Index cols,
                   const std::string &what) {
  require(b.rows == m.size(), what, " has ", b.rows, " rows, expected the machine size ", m.size());
  require(b.cols == cols, what, " has ", b.cols, " columns, expected ", cols);
}

template <class S>
MachineState<S> forward(const GradedSpanMachine<S> &m, const Function<S> &w, const Batch<S> &y0,
                        const Batch<S> &z0) {
  require_size(w, m.parameters(), "forward: parameters");
  require_batch(m, y0, y0.cols, "forward: y0");
  require_batch(m, z0, y0.cols, "forward: z0");
  m.sigma().require_shape(m.size(), y0.cols, "forward");
  const Span<S> &sp = m.span().span;
  MachineState<S> x{Batch<S>(m.size(), y0.cols), Batch<S>(m.size(), y0.cols)};
  Function<S> acc(m.size());
  for (Index b = 0; b < y0.cols; ++b) {
    std::fill(acc.begin(), acc.end(), S(0));
    for (Index k = 0; k < m.levels(); ++k) {
      // The same products and order as act(span, w, z) followed by y₀ + ·,
      // so that the sweep and the machine equation agree bit for bit.
      for (Index e : m.edges_into(k))
        acc[sp.t(e)] += sp.mu[e] * (w[m.span().pi(e)] * x.z(sp.s(e), b));
      for (Index i : m.members(k)) {
        x.y(i, b) = y0(i, b) + acc[i];
        x.z(i, b) = z0(i, b) + m.sigma().value(x.y(i, b), i, b);
      }
    }
  }
  return x;
}

} // namespace pm
