// Laws of spec/machines.md on general machines, depth and cleaning, checked
// exactly over the rationals, each with the mutant it must reject.
#include "support/machine_generators.hpp"

using namespace pm_test;
using Q = pm::Rational;
using pm::Function;
using pm::Grading;
using pm::Machine;
using pm::Matrix;

namespace {

rc::Gen<Matrix<Q>> matrix(Index n) {
  return rc::gen::map(vector<Q>(n * n), [n](Function<Q> v) {
    Matrix<Q> m(n, n);
    m.data = std::move(v);
    return m;
  });
}

// A with the rows outside `rows` and the columns outside `cols` set to zero.
Matrix<Q> restrict(Matrix<Q> a, const std::vector<bool> &rows, const std::vector<bool> &cols) {
  for (Index i = 0; i < a.rows; ++i)
    for (Index j = 0; j < a.cols; ++j)
      if (!rows[i] || !cols[j]) a(i, j) = Q(0);
  return a;
}

std::vector<bool> complement(std::vector<bool> v) {
  v.flip();
  return v;
}

Matrix<Q> plus(Matrix<Q> a, const Matrix<Q> &b) {
  for (Index k = 0; k < a.data.size(); ++k) a.data[k] += b.data[k];
  return a;
}

Matrix<Q> times(const Matrix<Q> &a, const Matrix<Q> &b) {
  Matrix<Q> c(a.rows, b.cols);
  for (Index i = 0; i < a.rows; ++i)
    for (Index k = 0; k < a.cols; ++k)
      for (Index j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

// A is a machine when I − A is invertible.
bool is_machine(const Matrix<Q> &a) {
  try {
    pm::solve(pm::identity_minus(a), zeros<Q>(a.rows));
    return true;
  } catch (const pm::Error &) {
    return false;
  }
}

rc::Gen<std::vector<bool>> subset(Index n) {
  return full_size(rc::gen::container<std::vector<bool>>(n, rc::gen::arbitrary<bool>()));
}

// A subset with a coordinate k in it and k + 1 (mod n) outside it. A machine
// reading only outside A is zero when A is empty or everything, which an
// arbitrary subset of 2 to 4 coordinates is in about 30 % of the cases
// (2/2^n), and left about half of MACH-SELF-INDEP's cases trivial.
rc::Gen<std::vector<bool>> proper_subset(Index n) {
  return rc::gen::map(rc::gen::pair(subset(n), rc::gen::inRange<Index>(0, n)), [n](auto p) {
    p.first[p.second] = true;
    p.first[(p.second + 1) % n] = false;
    return p.first;
  });
}

// ---- MACH-EQUATION -------------------------------------------------------

template <template <class> class Solver> void law_equation() {
  const auto c = *machine_case<Q>(true);
  const auto x = Solver<Q>{}(c);
  for (Index b = 0; b < c.y0.cols; ++b)
    RC_ASSERT(pm::residual(pm::as_machine(c.machine(), c.w, b), c.x0(b), state(x, b)) ==
              zeros<Q>(2 * c.grading.size()));
  // A general linear machine: the oracle's solution satisfies the equation.
  const Index n = *full_size(rc::gen::inRange<Index>(1, 4));
  const auto a = *matrix(n);
  RC_PRE(is_machine(a));
  classify(has_valid_weight(c));
  const auto x0 = *vector<Q>(n);
  RC_ASSERT(pm::residual(pm::linear_machine(a), x0, pm::linear_resolvent(a, x0)) == zeros<Q>(n));
}

// ---- MACH-UNIQUE ---------------------------------------------------------

// The state machine of a graded span machine, and a mutant whose σ-half also
// feeds z back into itself (a loop that does not raise the grade).
struct StateMachine {
  Machine<Q> operator()(const MachineCase<Q> &c) const {
    return pm::as_machine(c.machine(), c.w, 0);
  }
};
struct SelfLoopMachine {
  Machine<Q> operator()(const MachineCase<Q> &c) const {
    Machine<Q> f = pm::as_machine(c.machine(), c.w, 0);
    const Index n = c.grading.size();
    f.f = [g = f.f, n](const Function<Q> &x) {
      Function<Q> out = g(x);
      for (Index i = n; i < 2 * n; ++i) out[i] += x[i];
      return out;
    };
    return f;
  }
};

// id − f is injective: x and x + v (v ≠ 0) never solve the same equation.
template <class Make> void law_unique() {
  const auto c = *machine_case<Q>(true, 4, 1);
  classify(has_valid_weight(c));
  const Machine<Q> f = Make{}(c);
  const auto x = *vector<Q>(f.n);
  const auto v = *nonzero_function<Q>(f.n);
  RC_ASSERT(pm::residual(f, zeros<Q>(f.n), x) != pm::residual(f, zeros<Q>(f.n), pm::add(x, v)));
}

// ---- MACH-SUM-RULE, MACH-SELF-INDEP --------------------------------------

// f₁ does not depend on f₂ when f₁ vanishes on the image of f₂: f₂ writes only
// into a subset A of the coordinates and f₁ reads none of them.
struct IndependentPair {
  Matrix<Q> f1, f2;
};
rc::Gen<IndependentPair> independent_pair() {
  return rc::gen::mapcat(full_size(rc::gen::inRange<Index>(2, 5)), [](Index n) {
    return rc::gen::apply(
        [n](Matrix<Q> m1, Matrix<Q> m2, std::vector<bool> a) {
          const std::vector<bool> all(n, true);
          return IndependentPair{restrict(m1, all, complement(a)), restrict(m2, a, all)};
        },
        matrix(n), matrix(n), subset(n));
  });
}

// The sum rule composes R_{f₁} first; the mutant composes R_{f₂} first. Each
// takes the two resolvents as callables.
struct SumRuleOrder {
  template <class R1, class R2> Function<Q> operator()(R1 r1, R2 r2, const Function<Q> &x0) const {
    return r2(r1(x0));
  }
};
struct ReversedOrder {
  template <class R1, class R2> Function<Q> operator()(R1 r1, R2 r2, const Function<Q> &x0) const {
    return r1(r2(x0));
  }
};

Function<Q> squares(const Function<Q> &x) { return pm::hadamard(x, x); }

// The strictly lower triangle of A: depth ≤ n for the grading i ↦ i + 1.
Matrix<Q> strictly_lower(Matrix<Q> a) {
  for (Index i = 0; i < a.rows; ++i)
    for (Index j = i; j < a.cols; ++j) a(i, j) = Q(0);
  return a;
}

template <class Compose> void law_sum_rule() {
  const auto p = *independent_pair();
  const Index n = p.f1.rows;
  RC_ASSERT(times(p.f1, p.f2) == Matrix<Q>(n, n)); // f₁ ∘ f₂ = 0
  RC_PRE(is_machine(p.f1) && is_machine(p.f2));
  classify(p.f1 != Matrix<Q>(n, n) && p.f2 != Matrix<Q>(n, n));
  const auto x0 = *vector<Q>(n);
  const auto f = plus(p.f1, p.f2);
  RC_ASSERT(is_machine(f));
  auto r = [](const Matrix<Q> &a) {
    return [a](const Function<Q> &x) { return pm::linear_resolvent(a, x); };
  };
  RC_ASSERT(pm::linear_resolvent(f, x0) == Compose{}(r(p.f1), r(p.f2), x0));
  check_cotangent(pm::sum(pm::linear_machine(p.f1), pm::linear_machine(p.f2)), x0, *vector<Q>(n));
  // Nonlinear: g_k(x) = L_k (x ⊙ x) with L_k the strict lower triangle of f_k
  // keeps the independence and has depth ≤ n, so naive iteration solves it.
  const Matrix<Q> l1 = strictly_lower(p.f1), l2 = strictly_lower(p.f2);
  const Machine<Q> g1{n, [l1](const Function<Q> &x) { return pm::act(l1, squares(x)); }, {}, {}};
  const Machine<Q> g2{n, [l2](const Function<Q> &x) { return pm::act(l2, squares(x)); }, {}, {}};
  const auto a = *vector<Q>(n), b = *vector<Q>(n);
  const Q lambda = *scalar<Q>();
  RC_ASSERT(g1(pm::add(a, pm::scale(lambda, g2(b)))) == g1(a)); // g₁ does not depend on g₂
  auto nr = [n](const Machine<Q> &g) {
    return [g, n](const Function<Q> &x) { return pm::resolvent(g, x, n); };
  };
  const Machine<Q> g{n, [g1, g2](const Function<Q> &x) { return pm::add(g1(x), g2(x)); }, {}, {}};
  RC_ASSERT(pm::resolvent(g, x0, n) == Compose{}(nr(g1), nr(g2), x0));
}

// A self-independent f (f ∘ f = 0): rows in A, columns outside A. The
// mutant keeps the columns in A too, so f may depend on itself.
struct SelfIndependent {
  Matrix<Q> operator()(const Matrix<Q> &m, const std::vector<bool> &a) const {
    return restrict(m, a, complement(a));
  }
};
struct RowsOnly {
  Matrix<Q> operator()(const Matrix<Q> &m, const std::vector<bool> &a) const {
    return restrict(m, a, std::vector<bool>(a.size(), true));
  }
};

template <class Make> void law_self_indep() {
  const Index n = *full_size(rc::gen::inRange<Index>(2, 5));
  const auto a = *proper_subset(n);
  const Matrix<Q> f = Make{}(*matrix(n), a);
  RC_PRE(is_machine(f));
  classify(f != Matrix<Q>(n, n));
  const auto x0 = *vector<Q>(n);
  RC_ASSERT(pm::linear_resolvent(f, x0) == pm::add(x0, pm::act(f, x0)));
  // A nonlinear self-independent machine, f(x)_i = Σ_j f_ij x_j² for i ∈ A:
  // it reads only outside A, so its resolvent (depth 2) is id + f.
  const Machine<Q> g{n, [f](const Function<Q> &x) { return pm::act(f, squares(x)); }, {}, {}};
  RC_ASSERT(pm::resolvent(g, x0, 2) == pm::add(x0, g(x0)));
}

// ---- MACH-DIRECT-SUM -----------------------------------------------------

// The mutant direct sum leaks the last coordinate into the first.
struct DirectSum {
  Machine<Q> operator()(const Machine<Q> &f, const Machine<Q> &g) const {
    return pm::direct_sum(f, g);
  }
};
struct LeakySum {
  Machine<Q> operator()(const Machine<Q> &f, const Machine<Q> &g) const {
    Machine<Q> h = pm::direct_sum(f, g);
    h.f = [s = h.f](const Function<Q> &x) {
      Function<Q> out = s(x);
      if (!x.empty()) out.front() += x.back();
      return out;
    };
    return h;
  }
};

template <class Sum> void law_direct_sum() {
  // Linear machines, resolvents by the oracle.
  const Index n1 = *full_size(rc::gen::inRange<Index>(1, 4)),
              n2 = *full_size(rc::gen::inRange<Index>(1, 4));
  const auto a = *matrix(n1), b = *matrix(n2);
  RC_PRE(is_machine(a) && is_machine(b));
  const auto x1 = *vector<Q>(n1), x2 = *vector<Q>(n2);
  const Machine<Q> ab = Sum{}(pm::linear_machine(a), pm::linear_machine(b));
  const Matrix<Q> j = pm::jacobian(ab, zeros<Q>(n1 + n2));
  check_cotangent(ab, zeros<Q>(n1 + n2), *vector<Q>(n1 + n2));
  RC_ASSERT(pm::linear_resolvent(j, concat(x1, x2)) ==
            concat(pm::linear_resolvent(a, x1), pm::linear_resolvent(b, x2)));
  // Graded span machines, resolvents by naive iteration.
  const auto c1 = *machine_case<Q>(true, 3), c2 = *machine_case<Q>(true, 3);
  classify(a != Matrix<Q>(n1, n1) && b != Matrix<Q>(n2, n2) &&
           (has_valid_weight(c1) || has_valid_weight(c2)));
  const Machine<Q> f =
      Sum{}(pm::as_machine(c1.machine(), c1.w), pm::as_machine(c2.machine(), c2.w));
  const Index depth = 2 * std::max(c1.grading.levels(), c2.grading.levels());
  RC_ASSERT(pm::resolvent(f, concat(c1.x0(0), c2.x0(0)), depth) ==
            concat(state(pm::forward(c1.machine(), c1.w, c1.y0, c1.z0), 0),
                   state(pm::forward(c2.machine(), c2.w, c2.y0, c2.z0), 0)));
}

// ---- DEPTH-MACHINE -------------------------------------------------------

// The exact depth check, and a mutant that also accepts edges within a level.
struct DepthCheck {
  bool operator()(const Matrix<Q> &a, const Grading &d) const { return pm::has_depth(a, d); }
};
struct WeakDepthCheck {
  bool operator()(const Matrix<Q> &a, const Grading &d) const {
    for (Index y = 0; y < a.rows; ++y)
      for (Index x = 0; x < a.cols; ++x)
        if (a(y, x) != Q(0) && d(x) > d(y)) return false;
    return true;
  }
};

// Whatever the check accepts is a machine whose naive iteration settles
// within D steps at the oracle's solution.
template <class Check> void law_depth_machine() {
  const auto c = *machine_case<Q>(true);
  classify(has_valid_weight(c));
  const bool cleaned = *rc::gen::arbitrary<bool>();
  const auto w = cleaned ? pm::clean(c.span, c.grading, c.w) : c.w;
  const Matrix<Q> a = pm::matrix(pm::weighted_span(c.span, w));
  if (!Check{}(a, c.grading)) return;
  RC_ASSERT(is_machine(a));
  const auto x0 = *vector<Q>(a.rows);
  RC_ASSERT(pm::resolvent(pm::linear_machine(a), x0, c.grading.levels()) ==
            pm::linear_resolvent(a, x0));
  // The graded span machine itself: depth 2D on its state, so it settles.
  const Machine<Q> f = pm::as_machine(c.machine(), c.w);
  RC_ASSERT(pm::has_depth_randomized(f, pm::state_grading(c.grading), 3, 7));
  RC_ASSERT(pm::resolvent(f, c.x0(0), 2 * c.grading.levels()) ==
            state(pm::forward(c.machine(), c.w, c.y0, c.z0), 0));
}

// ---- DEPTH-DUAL ----------------------------------------------------------

struct Reverse {
  Grading operator()(const Grading &d) const { return d.reversed(); }
};
struct KeepGrading {
  Grading operator()(const Grading &d) const { return d; }
};

// The transpose of a depth-D map has depth D for the reversed grading, and
// conversely; the valid parameters of the transposed span under the reversed
// grading are the same (clean commutes with flipping).
template <class Dual> void law_depth_dual() {
  const auto c = *machine_case<Q>(true);
  classify(has_valid_weight(c));
  const Matrix<Q> a = pm::matrix(pm::weighted_span(c.span, c.w));
  RC_ASSERT(pm::has_depth(a, c.grading) == pm::has_depth(pm::transpose(a), Dual{}(c.grading)));
  RC_ASSERT(pm::valid_parameters(c.span, c.grading) ==
            pm::valid_parameters(pm::transpose(c.span), Dual{}(c.grading)));
  const Machine<Q> f = pm::as_machine(c.machine(), c.w);
  const auto x = state(pm::forward(c.machine(), c.w, c.y0, c.z0), 0);
  RC_ASSERT(pm::has_depth(pm::transpose(pm::jacobian(f, x)), Dual{}(pm::state_grading(c.grading))));
}

// ---- GRADED-CLEAN --------------------------------------------------------

// The mutant decides validity by the first edge of each parameter only.
struct Clean {
  Function<Q> operator()(const MachineCase<Q> &c, const Function<Q> &w) const {
    return pm::clean(c.span, c.grading, w);
  }
};
struct FirstEdgeClean {
  Function<Q> operator()(const MachineCase<Q> &c, const Function<Q> &w) const {
    std::vector<int> decided(w.size(), 0); // 0 undecided, 1 valid, −1 invalid
    for (Index e = 0; e < c.span.apex(); ++e) {
      const Index p = c.span.pi(e);
      if (decided[p] == 0)
        decided[p] = c.grading(c.span.span.s(e)) < c.grading(c.span.span.t(e)) ? 1 : -1;
    }
    Function<Q> out(w);
    for (Index p = 0; p < out.size(); ++p)
      if (decided[p] < 0) out[p] = Q(0);
    return out;
  }
};

// One edge in three is arbitrary, so that valid and invalid parameters mix.
// The expected validity is read off the edges (valid_by_edges), not taken
// from pm::valid_parameters, which cleaning itself uses. A case is
// non-trivial when cleaning has something to decide: a parameter with edges
// and a nonzero weight.
template <class C> void law_clean() {
  const auto c = *machine_case<Q>(true, 4, 0, 3);
  const std::vector<bool> valid = valid_by_edges(c);
  bool decides = false;
  for (Index e = 0; e < c.span.apex(); ++e) decides = decides || c.w[c.span.pi(e)] != Q(0);
  classify(decides);
  const Function<Q> cw = C{}(c, c.w);
  RC_ASSERT(pm::is_valid(c.span, c.grading, cw));
  RC_ASSERT(C{}(c, cw) == cw);                     // idempotent
  RC_ASSERT(pm::has_depth(c.span, cw, c.grading)); // the result is valid
  for (Index p = 0; p < cw.size(); ++p)            // valid parameters unchanged
    RC_ASSERT(cw[p] == (valid[p] ? c.w[p] : Q(0)));
}

} // namespace

MACHINE_LAW("MACH-EQUATION", "the solution satisfies x = x0 + f(x)", "exact over Q",
            law_equation<LevelSolver>, law_equation<ReversedGradingSolver>)
MACHINE_LAW("MACH-UNIQUE", "id - f is injective", "exact over Q", law_unique<StateMachine>,
            law_unique<SelfLoopMachine>)
MACHINE_LAW("MACH-SUM-RULE", "R_{f1+f2} = R_{f2} o R_{f1} when f1 does not depend on f2",
            "exact over Q", law_sum_rule<SumRuleOrder>, law_sum_rule<ReversedOrder>)
MACHINE_LAW("MACH-SELF-INDEP", "R_f = id + f when f does not depend on itself", "exact over Q",
            law_self_indep<SelfIndependent>, law_self_indep<RowsOnly>)
MACHINE_LAW("MACH-DIRECT-SUM", "R_{f x g} = R_f x R_g", "exact over Q", law_direct_sum<DirectSum>,
            law_direct_sum<LeakySum>)
MACHINE_LAW("DEPTH-MACHINE", "finite depth implies machine, settling in D steps", "exact over Q",
            law_depth_machine<DepthCheck>, law_depth_machine<WeakDepthCheck>)
MACHINE_LAW("DEPTH-DUAL", "the transpose has depth D for the reversed grading", "exact over Q",
            law_depth_dual<Reverse>, law_depth_dual<KeepGrading>)
MACHINE_LAW("GRADED-CLEAN", "cleaning is the projection onto the valid parameters", "exact over Q",
            law_clean<Clean>, law_clean<FirstEdgeClean>)

// The pair of the sum rule's statement where the order matters: on three
// coordinates, f1 copies x0 into x1 and f2 copies x1 into x2. f1 does not
// depend on f2 (f1 f2 = 0) but f2 depends on f1.
TEST_CASE("MACH-SUM-RULE: the reversed order fails on a constructed pair") {
  IndependentPair p{Matrix<Q>(3, 3), Matrix<Q>(3, 3)};
  p.f1(1, 0) = Q(1);
  p.f2(2, 1) = Q(1);
  const Function<Q> x0{Q(1), Q(0), Q(0)};
  const Function<Q> solution{Q(1), Q(1), Q(1)}; // x1 = x0_1 + x0_0, x2 = x0_2 + x1
  REQUIRE(pm::linear_resolvent(plus(p.f1, p.f2), x0) == solution);
  auto r = [](const Matrix<Q> &a) {
    return [a](const Function<Q> &x) { return pm::linear_resolvent(a, x); };
  };
  REQUIRE(SumRuleOrder{}(r(p.f1), r(p.f2), x0) == solution);
  REQUIRE(ReversedOrder{}(r(p.f1), r(p.f2), x0) == Function<Q>{Q(1), Q(1), Q(0)});
}
