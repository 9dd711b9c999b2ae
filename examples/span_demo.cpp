// Builds two spans, composes them by fibre product and prints the composite
// together with the laws it checks on it, exactly over the rationals.
#include <iostream>

#include "pm/category.hpp"

using namespace pm;
using Q = Rational;

namespace {
void print(const char *name, const Span<Q> &a) {
  std::cout << name << ": " << a.source() << " <- " << a.apex() << " -> " << a.target() << "\n";
  for (Index e = 0; e < a.apex(); ++e)
    std::cout << "  edge " << e << ": " << a.s(e) << " -> " << a.t(e) << "  weight " << a.mu[e]
              << "\n";
}

void print(const char *name, const Function<Q> &f) {
  std::cout << name << " = (";
  for (Index i = 0; i < f.size(); ++i) std::cout << (i ? ", " : "") << f[i];
  std::cout << ")\n";
}

int report(const char *law, bool ok) {
  std::cout << (ok ? "  passed  " : "  FAILED  ") << law << "\n";
  return ok ? 0 : 1;
}
} // namespace

int main() {
  // a : [3] → [2], a 1-D average pooling of width 2 with stride 1.
  const Span<Q> a{FinMap(3, {0, 1, 1, 2}), FinMap(2, {0, 0, 1, 1}),
                  {Q(1, 2), Q(1, 2), Q(1, 2), Q(1, 2)}};
  // b : [2] → [2], a fixed mixing: y0 = x0 − x1, y1 = 3 x1.
  const Span<Q> b{FinMap(2, {0, 1, 1}), FinMap(2, {0, 0, 1}), {Q(1), Q(-1), Q(3)}};
  a.validate("a");
  b.validate("b");
  const Span<Q> c = compose(b, a);
  print("a", a);
  print("b", b);
  print("b o a", c);

  const Function<Q> phi{Q(1), Q(2), Q(4)}, g{Q(1, 3), Q(-2)};
  print("phi", phi);
  print("L(b o a) phi", act(c, phi));

  std::cout << "laws checked exactly over Q:\n";
  int failures = 0;
  failures += report("SPAN-LIN-COMP  L(b o a) = L(b) L(a)", act(c, phi) == act(b, act(a, phi)));
  failures += report("SPAN-ADJOINT   <g, L phi> = <L^T g, phi>",
                     dot(g, act(c, phi)) == dot(act(transpose(c), g), phi));
  failures += report("SPAN-TRANSPOSE-INVOL  (c^T)^T = c", transpose(transpose(c)) == c);
  const auto h = span_isomorphism(compose(compose(b, b), a), compose(b, compose(b, a)));
  failures += report("SPAN-ASSOC     (b o b) o a ~ b o (b o a), witness checked",
                     h && is_span_isomorphism(compose(compose(b, b), a),
                                              compose(b, compose(b, a)), *h));
  const auto u = span_isomorphism(compose(identity_span<Q>(2), a), a);
  failures += report("SPAN-UNIT-LEFT id o a ~ a", u.has_value());
  return failures == 0 ? 0 : 1;
}
