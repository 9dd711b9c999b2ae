// The authors' noisy-sine shift task: 32 noisy sine waves on t = −π : 0.1 : π
// (63 samples each); the target is the input shifted by 10 samples
// (cyclically). Model: ConvMachine([1, 4, 4, 4], sigmoid, pad (3, 0)), then a
// 1×1 readout 13 → 1; Adam with learning rate 0.1, double, fixed seeds.
// Usage: train_sine [loss.csv]  (default train_sine_loss.csv). Exits 1 unless
// the final loss is at most a tenth of the initial loss.
#include <cmath>
#include <iostream>
#include <numbers>

#include "pm/layers/seed_machines.hpp"
#include "pm/numeric/uniform.hpp"
#include "pm/train/fit.hpp"

int main(int argc, char **argv) {
  using namespace pm;
  const std::string csv = argc > 1 ? argv[1] : "train_sine_loss.csv";
  const Index length = 63, series = 32, shift = 10;
  std::mt19937_64 rng(20230207);
  UniformReal<double> noise(-0.05, 0.05);
  Batch<double> x(length, series), y(length, series);
  for (Index b = 0; b < series; ++b) {
    // As in the authors' demo, one noise draw per series: a random offset.
    const double offset = noise(rng);
    for (Index i = 0; i < length; ++i)
      x(i, b) = std::sin(-std::numbers::pi + 0.1 * double(i)) + offset;
    for (Index i = 0; i < length; ++i) y((i + shift) % length, b) = x(i, b);
  }
  const MachineWithReadout<double> model(
      ConvMachine<double>({1, 4, 4, 4}, Sigma<double>::sigmoid(), {3, 0}, {length}), 1);
  ModelParameters<double> p = model.initial_parameters(rng);
  std::cout << "train_sine: ConvMachine([1,4,4,4], sigmoid, pad (3,0)) + 1x1 readout, " << series
            << " series of " << length << " samples\n";
  const FitResult r = fit(model, p, x, y, {1000, 0.1, csv, 100}, std::cout);
  return report(r, csv, std::cout);
}
