// A layer with a deliberately wrong backward pass, and the validator catching
// it. The forward pass is the circular convolution of validate_layer.cpp; the
// transpose forgets to reflect the kernel, a classic slip when writing the
// backward pass of a convolution by hand (it convolves with w(j) at y − j
// instead of correlating). pm::validate must report PSPAN-ADJOINT as failed,
// with a shrunk counterexample; the program exits 0 exactly when it does.
#include <iostream>

#include "pm/validate.hpp"

struct WrongBackwardConv {
  using scalar_type = pm::Rational;
  using F = pm::Function<pm::Rational>;
  pm::Index n = 7, k = 3;

  pm::Index source_size() const { return n; }
  pm::Index target_size() const { return n; }
  pm::Index parameter_size() const { return k; }

  F apply(const F &w, const F &phi) const {
    F out(n, 0);
    for (pm::Index y = 0; y < n; ++y)
      for (pm::Index j = 0; j < k; ++j) out[y] += w[j] * phi[(y + j) % n];
    return out;
  }
  F apply_transpose(const F &w, const F &g) const {
    F out(n, 0);
    for (pm::Index y = 0; y < n; ++y)
      for (pm::Index j = 0; j < k; ++j) out[y] += w[j] * g[(y + j) % n]; // wrong: not reflected
    return out;
  }
  F parameter_gradient(const F &phi, const F &g) const {
    F out(k, 0);
    for (pm::Index y = 0; y < n; ++y)
      for (pm::Index j = 0; j < k; ++j) out[j] += phi[(y + j) % n] * g[y];
    return out;
  }
};

int main() {
  const pm::Report report = pm::validate(WrongBackwardConv{}, "conv with wrong backward");
  std::cout << pm::to_text(report);
  bool caught = false, others_pass = true;
  for (const auto &r : report.results) {
    if (r.law == "PSPAN-ADJOINT")
      caught = r.status == pm::Status::failed && !r.detail.empty();
    else
      others_pass = others_pass && r.status == pm::Status::passed;
  }
  std::cout << (caught ? "caught: the transpose is not the adjoint\n" : "NOT caught\n");
  return caught && others_pass ? 0 : 1;
}
