#pragma once
// Generators for machines: gradings, parametric spans on a graded index set,
// pointwise σ and whole graded span machines with inputs; and what the
// machine law files share: helpers, the solvers under test and their mutant,
// the causality law (run over ℚ and in double) and the law macro. Sizes are small
// (|I| ≤ 4, D ≤ 3, batch ≤ 2) so that exact rational checks stay fast; the
// corners are reached on purpose: empty index sets and levels, parameters
// without edges, parameters shared by valid and invalid edges, repeated edges.
#include <ostream>

#include "generators.hpp"
#include "law.hpp"
#include "pm/machine.hpp"

namespace pm_test {

// D ∈ 1..max_levels, one level one time in sixteen; seven times in eight, a
// grading whose indices all fell on one level gets its last index moved to
// another level, so that most gradings have edges that go up.
inline rc::Gen<pm::Grading> grading(Index n, Index max_levels = 3) {
  auto levels = rc::gen::weightedOneOf<Index>(
      {{1, rc::gen::just(Index{1})}, {15, rc::gen::inRange<Index>(2, max_levels + 1)}});
  return full_size(rc::gen::mapcat(levels, [n](Index levels) {
    return rc::gen::apply(
        [levels](std::vector<Index> g, int spread) {
          const bool flat = std::all_of(g.begin(), g.end(), [&](Index k) { return k == g[0]; });
          if (flat && spread != 0 && g.size() > 1 && levels > 1) g.back() = g[0] % levels + 1;
          return pm::Grading(levels, std::move(g));
        },
        rc::gen::container<std::vector<Index>>(n, rc::gen::inRange<Index>(1, levels + 1)),
        rc::gen::inRange(0, 8));
  }));
}

// A parametric span I ← E → I with P parameters. Seven edges in eight are
// drawn among the pairs that go up the grading (when there are any), so that
// most machines have real depth; the others are arbitrary and, with edges
// within a level, make some parameters invalid.
template <class S>
rc::Gen<pm::ParametricSpan<S>> graded_span(const pm::Grading &d, Index p, Index max_apex = 6,
                                           int arbitrary_one_in = 8) {
  const Index n = d.size();
  const Index cap = (n == 0 || p == 0) ? 0 : max_apex;
  std::vector<std::pair<Index, Index>> up;
  for (Index s = 0; s < n; ++s)
    for (Index t = 0; t < n; ++t)
      if (d(s) < d(t)) up.emplace_back(s, t);
  struct Edge {
    Index s, t, pi;
    S mu;
  };
  const Index m = n == 0 ? 1 : n;
  auto edge = rc::gen::apply(
      [up, m](Index k, Index pi, S mu, int orient) {
        if (orient != 0 && !up.empty())
          return Edge{up[k % up.size()].first, up[k % up.size()].second, pi, mu};
        return Edge{k % m, k / m, pi, mu};
      },
      rc::gen::inRange<Index>(0, m * m), rc::gen::inRange<Index>(0, p == 0 ? 1 : p), scalar<S>(),
      rc::gen::inRange(0, arbitrary_one_in));
  return rc::gen::mapcat(
      rc::gen::weightedOneOf<Index>(
          {{1, size(cap)}, {3, rc::gen::inRange<Index>(cap / 2, cap + 1)}}),
      [=](Index e) {
        return rc::gen::map(
            rc::gen::container<std::vector<Edge>>(e, edge), [=](const std::vector<Edge> &edges) {
              pm::ParametricSpan<S> a{pm::Span<S>{pm::FinMap(n, {}), pm::FinMap(n, {}), {}},
                                      pm::FinMap(p, {})};
              for (const Edge &x : edges) {
                a.span.s.images.push_back(x.s);
                a.span.t.images.push_back(x.t);
                a.pi.images.push_back(x.pi);
                a.span.mu.push_back(x.mu);
              }
              return a;
            });
      });
}

template <class S> rc::Gen<pm::Batch<S>> batch(Index rows, Index cols) {
  return full_size(rc::gen::map(function<S>(rows * cols), [rows, cols](pm::Function<S> v) {
    pm::Batch<S> b(rows, cols);
    b.data = std::move(v);
    return b;
  }));
}

// A vector with entries over the full range of scalar<S>.
template <class S> rc::Gen<pm::Function<S>> vector(Index n) { return full_size(function<S>(n)); }

// σ exact over the rationals: identity, relu, a polynomial of degree ≤ 2, or
// an array (one slope column, or one per sample).
template <class S> rc::Gen<pm::Sigma<S>> exact_sigma(Index n, Index cols) {
  using Sg = pm::Sigma<S>;
  return rc::gen::oneOf(
      rc::gen::just(Sg::identity()), rc::gen::just(Sg::relu()),
      rc::gen::map(
          rc::gen::mapcat(rc::gen::inRange<Index>(1, 4), [](Index k) { return function<S>(k); }),
          [](pm::Function<S> c) { return Sg::polynomial(std::move(c)); }),
      rc::gen::map(rc::gen::mapcat(rc::gen::element<Index>(1, cols),
                                   [n](Index c) { return batch<S>(n, c); }),
                   [](pm::Batch<S> s) { return Sg::array(std::move(s)); }));
}

// σ in floating point: the transcendental ones and relu.
template <class S> rc::Gen<pm::Sigma<S>> float_sigma() {
  using Sg = pm::Sigma<S>;
  return rc::gen::element(Sg::tanh(), Sg::sigmoid(), Sg::softplus(), Sg::relu(), Sg::identity());
}

// A graded span machine with parameters and a batch of inputs.
template <class S> struct MachineCase {
  pm::Grading grading;
  pm::ParametricSpan<S> span;
  pm::Sigma<S> sigma;
  pm::Function<S> w;
  pm::Batch<S> y0, z0;

  pm::GradedSpanMachine<S> machine() const { return {grading, span, sigma}; }
  // Column b of the initial state x₀ = (y₀, z₀).
  pm::Function<S> x0(Index b) const {
    pm::Function<S> x = y0.column(b), z = z0.column(b);
    x.insert(x.end(), z.begin(), z.end());
    return x;
  }
};

template <class S> std::ostream &operator<<(std::ostream &os, const MachineCase<S> &c) {
  os << "machine n=" << c.grading.size() << " D=" << c.grading.levels()
     << " edges=" << c.span.apex() << " P=" << c.span.parameters() << " sigma=" << c.sigma.name()
     << " batch=" << c.y0.cols << " grades=[";
  for (Index g : c.grading.grades()) os << g << ' ';
  os << "] edges(s>t:pi)=[";
  for (Index e = 0; e < c.span.apex(); ++e)
    os << c.span.span.s(e) << '>' << c.span.span.t(e) << ':' << c.span.pi(e) << ' ';
  return os << ']';
}

// The valid parameters read off the edges directly, written apart from
// pm::valid_parameters: p is valid when each edge carrying p goes strictly up.
template <class S> std::vector<bool> valid_by_edges(const MachineCase<S> &c) {
  std::vector<bool> valid;
  for (Index p = 0; p < c.span.parameters(); ++p) {
    bool up = true;
    for (Index e = 0; e < c.span.apex(); ++e)
      if (c.span.pi(e) == p) up = up && c.grading(c.span.span.s(e)) < c.grading(c.span.span.t(e));
    valid.push_back(up);
  }
  return valid;
}

// A machine case is non-trivial when some edge carries a valid parameter with
// a nonzero weight and a nonzero measure: otherwise the layer is zero and the
// machine is z = z₀ + σ(y₀).
template <class S> bool has_valid_weight(const MachineCase<S> &c) {
  const std::vector<bool> valid = valid_by_edges(c);
  for (Index e = 0; e < c.span.apex(); ++e)
    if (valid[c.span.pi(e)] && c.w[c.span.pi(e)] != S(0) && c.span.span.mu[e] != S(0)) return true;
  return false;
}

// exact = true: σ from exact_sigma; otherwise from float_sigma.
template <class S>
rc::Gen<MachineCase<S>> machine_case(bool exact, Index max_n = 4, Index min_n = 0,
                                     int arbitrary_one_in = 8) {
  return full_size(rc::gen::mapcat(
      // Empty index sets and parameter spaces are corners, not the rule.
      rc::gen::tuple(rc::gen::weightedOneOf<Index>(
                         {{1, rc::gen::inRange<Index>(min_n, max_n + 1)},
                          {7, rc::gen::inRange<Index>(std::max<Index>(min_n, 2), max_n + 1)}}),
                     rc::gen::weightedOneOf<Index>(
                         {{1, rc::gen::inRange<Index>(0, 7)}, {7, rc::gen::inRange<Index>(1, 7)}}),
                     rc::gen::inRange<Index>(1, 3)),
      [exact, arbitrary_one_in](std::tuple<Index, Index, Index> sizes) {
        // Named variables, not a structured binding: lambdas capture them below.
        const Index n = std::get<0>(sizes), p = std::get<1>(sizes), cols = std::get<2>(sizes);
        return rc::gen::mapcat(grading(n), [=](pm::Grading d) {
          return rc::gen::apply(
              [d](pm::ParametricSpan<S> a, pm::Sigma<S> s, pm::Function<S> w, pm::Batch<S> y0,
                  pm::Batch<S> z0) {
                return MachineCase<S>{
                    d, std::move(a), std::move(s), std::move(w), std::move(y0), std::move(z0)};
              },
              graded_span<S>(d, p, 8, arbitrary_one_in),
              exact ? exact_sigma<S>(n, cols) : float_sigma<S>(), function<S>(p), batch<S>(n, cols),
              batch<S>(n, cols));
        });
      }));
}

// A random vector in which about half of the coordinates are zero, so that
// directions along a few coordinates only are frequent.
template <class S> rc::Gen<pm::Function<S>> sparse_function(Index n) {
  return full_size(
      rc::gen::container<pm::Function<S>>(n, rc::gen::oneOf(rc::gen::just(S(0)), scalar<S>())));
}

// A nonzero sparse vector (n > 0): a sparse one, with a 1 at a random
// coordinate if it came out zero.
template <class S> rc::Gen<pm::Function<S>> nonzero_function(Index n) {
  return rc::gen::apply(
      [](pm::Function<S> v, Index k) {
        if (v == pm::Function<S>(v.size(), S(0))) v[k] = S(1);
        return v;
      },
      sparse_function<S>(n), full_size(rc::gen::inRange<Index>(0, n)));
}

template <class S> pm::Function<S> concat(pm::Function<S> a, const pm::Function<S> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Column b of a machine state, as the vector (y, z).
template <class S> pm::Function<S> state(const pm::MachineState<S> &x, Index b) {
  return concat(x.y.column(b), x.z.column(b));
}

template <class S> pm::Function<S> zeros(Index n) { return pm::Function<S>(n, S(0)); }

// The vector-Jacobian product of f is the transpose of the Jacobian that its
// Jacobian-vector product assembles: Df(x)* u = Df(x)ᵀ u.
template <class S>
void check_cotangent(const pm::Machine<S> &f, const pm::Function<S> &x, const pm::Function<S> &u) {
  RC_ASSERT(f.cotangent(x, u) == pm::act(pm::transpose(pm::jacobian(f, x)), u));
}

// The level solver, and the mutant that solves with the reversed grading
// (its sweep visits the levels in the wrong order and keeps the wrong edges).
template <class S> struct LevelSolver {
  pm::MachineState<S> operator()(const MachineCase<S> &c) const {
    return pm::forward(c.machine(), c.w, c.y0, c.z0);
  }
};
template <class S> struct ReversedGradingSolver {
  pm::MachineState<S> operator()(const MachineCase<S> &c) const {
    return pm::forward(pm::GradedSpanMachine<S>(c.grading.reversed(), c.span, c.sigma), c.w, c.y0,
                       c.z0);
  }
};

// MACH-CAUSALITY: changing the inputs of grade ≥ j leaves every output of
// grade < j bit-identical (σ from exact_sigma over exact scalars, else from
// float_sigma).
template <class S, template <class> class Solver> void law_causality() {
  // One edge in two is arbitrary: edges that go down the grading are what
  // a solver with the wrong level order would let through. Non-trivial: some
  // edge carries weight (valid or not, for the same reason). Every cut level
  // j = 2..D is checked on the same perturbation.
  const auto c = *machine_case<S>(!std::is_floating_point_v<S>, 4, 1, 2);
  bool weighted = false;
  for (Index e = 0; e < c.span.apex(); ++e)
    weighted = weighted || (c.w[c.span.pi(e)] != S(0) && c.span.span.mu[e] != S(0));
  classify(weighted);
  const auto py = *batch<S>(c.y0.rows, c.y0.cols), pz = *batch<S>(c.y0.rows, c.y0.cols);
  const auto x = Solver<S>{}(c);
  for (Index j = 2; j <= c.grading.levels(); ++j) {
    auto c2 = c;
    for (Index b = 0; b < c.y0.cols; ++b)
      for (Index i = 0; i < c.y0.rows; ++i)
        if (c.grading(i) >= j) {
          c2.y0(i, b) += py(i, b);
          c2.z0(i, b) += pz(i, b);
        }
    const auto x2 = Solver<S>{}(c2);
    for (Index b = 0; b < c.y0.cols; ++b)
      for (Index i = 0; i < c.y0.rows; ++i)
        if (c.grading(i) < j) {
          RC_ASSERT(pm::bit_identical(x.y(i, b), x2.y(i, b)));
          RC_ASSERT(pm::bit_identical(x.z(i, b), x2.z(i, b)));
        }
  }
}

} // namespace pm_test

// A law ID with its property (REF) and the mutant it must reject (MUT);
// HOW says how it is checked ("exact over Q", "in double").
#define MACHINE_LAW(ID, NAME, HOW, REF, MUT)                                                       \
  TEST_CASE(ID ": " NAME) {                                                                        \
    pm_test::census() = {};                                                                        \
    rc::prop(ID " " HOW, [] { REF(); });                                                           \
    pm_test::require_nontrivial_share(ID);                                                         \
  }                                                                                                \
  TEST_CASE(ID " mutant: " NAME) {                                                                 \
    REQUIRE(pm_test::rejects([] { MUT(); }));                                                      \
  }
