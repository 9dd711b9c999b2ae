// The depth sequence: a machine of depth d reaches its solution after d
// naive iterations x ← x₀ + f(x) (each one evaluating all of f, "expensive"),
// or after one sweep that updates one level at a time, R_f = (id + f_d) ∘ …
// ∘ (id + f_1) ("optimized"). Five nodes, one per level, with a strictly
// triangular weight matrix W and σ = tanh: y = y₀ + W z, z = tanh(y). The
// program prints both sequences and exits non-zero unless both end at the
// point the level solver computes.
#include <cstdio>

#include "pm/machine.hpp"

using pm::Function;
using pm::Index;

namespace {

constexpr Index nodes = 5;

// The edge j → i (j < i) carries parameter (i, j) of W, i.e. W(i, j) z_j
// enters y_i.
pm::ParametricSpan<double> triangular_span() {
  pm::ParametricSpan<double> a{pm::Span<double>{pm::FinMap(nodes, {}), pm::FinMap(nodes, {}), {}},
                               pm::FinMap(nodes * nodes, {})};
  for (Index i = 0; i < nodes; ++i)
    for (Index j = 0; j < i; ++j) {
      a.span.s.images.push_back(j);
      a.span.t.images.push_back(i);
      a.span.mu.push_back(1.0);
      a.pi.images.push_back(i * nodes + j);
    }
  return a;
}

void print_z(const char *label, Index step, const Function<double> &x) {
  std::printf("%-10s %2zu  z =", label, step);
  for (Index i = 0; i < nodes; ++i) std::printf(" % .6f", x[nodes + i]);
  std::printf("\n");
}

} // namespace

int main() {
  std::vector<Index> grades(nodes);
  for (Index i = 0; i < nodes; ++i) grades[i] = i + 1;
  const pm::GradedSpanMachine<double> m(pm::Grading(nodes, grades), triangular_span(),
                                        pm::Sigma<double>::tanh());
  Function<double> w(nodes * nodes, 0.0);
  for (Index i = 0; i < nodes; ++i)
    for (Index j = 0; j < i; ++j) w[i * nodes + j] = (i + j) % 2 == 0 ? 0.75 : -0.5;
  pm::Batch<double> y0(nodes, 1), z0(nodes, 1);
  y0(0, 0) = 1.0; // the input enters at node 0
  Function<double> x0 = y0.column(0);
  x0.resize(2 * nodes, 0.0); // the state (y, z), z₀ = 0

  const pm::Machine<double> f = pm::as_machine(m, w);
  const pm::Grading levels = pm::state_grading(m.grading());

  std::printf("expensive: x <- x0 + f(x), all of f at every step\n");
  const auto naive = pm::naive_iterates(f, x0, Function<double>(f.n, 0.0), levels.levels());
  for (Index k = 0; k < naive.size(); ++k) print_z("expensive", k, naive[k]);

  std::printf("optimized: (id + f_k) for one level k at a time\n");
  Function<double> x = x0;
  for (Index k = 1; k <= levels.levels(); ++k) {
    const Function<double> fx = f(x);
    for (Index i = 0; i < f.n; ++i)
      if (levels(i) == k) x[i] += fx[i];
    if (k % 2 == 0) print_z("optimized", k / 2, x); // after node k/2's z
  }

  const auto solved = pm::forward(m, w, y0, z0);
  Function<double> sweep = solved.y.column(0);
  const Function<double> z = solved.z.column(0);
  sweep.insert(sweep.end(), z.begin(), z.end());
  const bool same = naive.back() == x && x == sweep;
  std::printf("%s\n", same ? "both sequences end at the level solver's solution"
                           : "MISMATCH: the sequences end at different points");
  return same ? 0 : 1;
}
