// Validating a hand-written layer against the laws of a parametric span.
//
// The layer is a 1-D circular convolution written with plain loops, as one
// would write it in a framework: (L_w φ)(y) = Σ_k w(k) φ((y + k) mod n).
// Its transpose and parameter gradient are written by hand too. pm::validate
// checks bilinearity, adjointness of the transpose and the parameter
// gradient identity on random cases, exactly over the rationals and within
// the derived bound in double, and prints the conformance table.
#include <iostream>

#include "pm/validate.hpp"

template <class S> struct CircularConv {
  using scalar_type = S;
  pm::Index n = 7, k = 3;

  pm::Index source_size() const { return n; }
  pm::Index target_size() const { return n; }
  pm::Index parameter_size() const { return k; }
  pm::Index terms() const { return n * k; }

  pm::Function<S> apply(const pm::Function<S> &w, const pm::Function<S> &phi) const {
    pm::Function<S> out(n, S(0));
    for (pm::Index y = 0; y < n; ++y)
      for (pm::Index j = 0; j < k; ++j) out[y] += w[j] * phi[(y + j) % n];
    return out;
  }
  // The adjoint in φ: every output y sent w(j) φ(y + j) back to y + j.
  pm::Function<S> apply_transpose(const pm::Function<S> &w, const pm::Function<S> &g) const {
    pm::Function<S> out(n, S(0));
    for (pm::Index y = 0; y < n; ++y)
      for (pm::Index j = 0; j < k; ++j) out[(y + j) % n] += w[j] * g[y];
    return out;
  }
  pm::Function<S> parameter_gradient(const pm::Function<S> &phi, const pm::Function<S> &g) const {
    pm::Function<S> out(k, S(0));
    for (pm::Index y = 0; y < n; ++y)
      for (pm::Index j = 0; j < k; ++j) out[j] += phi[(y + j) % n] * g[y];
    return out;
  }
};

int main() {
  pm::Report report = pm::validate(CircularConv<pm::Rational>{}, "circular conv (exact)");
  report.append(pm::validate(CircularConv<double>{}, "circular conv (double)"));
  std::cout << pm::to_text(report);
  return report.passed() ? 0 : 1;
}
