// The authors' polynomial regression: p(x, y) = (2x − 1)² + 2y + xy − 3 on a
// 6 × 6 grid of [0, 1]²; model DenseMachine([2, 4, 4, 4], sigmoid) then
// Dense(14 → 1); Adam with learning rate 0.1, double, fixed seed. The loss on
// a 14 × 14 grid is reported as well.
// Usage: train_polynomial [loss.csv]  (default train_polynomial_loss.csv).
// Exits 1 unless the final training loss is at most a tenth of the initial.
#include <iostream>

#include "pm/layers/seed_machines.hpp"
#include "pm/train/fit.hpp"

namespace {
double poly(double x, double y) { return (2 * x - 1) * (2 * x - 1) + 2 * y + x * y - 3; }

// The n × n grid of [0, 1]² (x major, as the authors' repeat(inner/outer)).
std::pair<pm::Batch<double>, pm::Batch<double>> grid(pm::Index n) {
  pm::Batch<double> in(2, n * n), out(1, n * n);
  for (pm::Index i = 0; i < n; ++i)
    for (pm::Index j = 0; j < n; ++j) {
      const double x = double(i) / double(n - 1), y = double(j) / double(n - 1);
      in(0, i * n + j) = x;
      in(1, i * n + j) = y;
      out(0, i * n + j) = poly(x, y);
    }
  return {in, out};
}
} // namespace

int main(int argc, char **argv) {
  using namespace pm;
  const std::string csv = argc > 1 ? argv[1] : "train_polynomial_loss.csv";
  std::mt19937_64 rng(20230207);
  const auto [x, y] = grid(6);
  const auto [x_test, y_test] = grid(14);
  const MachineWithReadout<double> model(
      DenseMachine<double>({2, 4, 4, 4}, Sigma<double>::sigmoid()), 1);
  ModelParameters<double> p = model.initial_parameters(rng);
  std::cout << "train_polynomial: DenseMachine([2,4,4,4], sigmoid) + Dense(14 -> 1), 6x6 grid\n";
  const double test_initial = mse(model.predict(p, x_test), y_test);
  const FitResult r = fit(model, p, x, y, {3000, 0.1, csv, 250}, std::cout);
  std::cout << "14x14 grid loss: initial " << test_initial << ", final "
            << mse(model.predict(p, x_test), y_test) << '\n';
  return report(r, csv, std::cout);
}
