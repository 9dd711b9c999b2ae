#pragma once
// Full-batch training of a MachineWithReadout with Adam, one optimizer per
// tensor. Each step evaluates the loss and gradient at the current
// parameters, appends "step,loss" to a CSV file and updates; the loss after
// the last update is evaluated once more. Progress goes to `log` every
// `report_every` steps.
#include <fstream>
#include <iomanip>
#include <ostream>
#include <string>

#include "pm/train/model.hpp"
#include "pm/train/optimizer.hpp"

namespace pm {

struct FitResult {
  double initial_loss = 0;
  double final_loss = 0;
};

struct FitOptions {
  Index steps = 1000;
  double learning_rate = 0.1;
  std::string csv_path = "loss.csv";
  Index report_every = 100;
};

inline FitResult fit(const MachineWithReadout<double> &model, ModelParameters<double> &p,
                     const Batch<double> &input, const Batch<double> &target,
                     const FitOptions &options, std::ostream &log) {
  std::ofstream csv(options.csv_path, std::ios::trunc);
  require(bool(csv), options.csv_path, ": cannot open the loss CSV for writing");
  csv << "step,loss\n" << std::setprecision(17);
  Adam<double> machine_opt(options.learning_rate), readout_opt(options.learning_rate);
  FitResult r;
  for (Index step = 0; step < options.steps; ++step) {
    const auto e = model.evaluate(p, input, target);
    if (step == 0) r.initial_loss = e.loss;
    csv << step << ',' << e.loss << '\n';
    if (step % options.report_every == 0)
      log << "step " << std::setw(5) << step << "  loss " << std::setprecision(6) << e.loss << '\n'
          << std::flush;
    machine_opt.step(p.machine, e.gradient.machine);
    readout_opt.step(p.readout, e.gradient.readout);
  }
  r.final_loss = model.evaluate(p, input, target).loss;
  csv << options.steps << ',' << r.final_loss << '\n';
  require(bool(csv), options.csv_path, ": write error");
  return r;
}

// The closing note of a training run: both losses and their ratio; the exit
// status 0 when the loss fell at least `factor`-fold, 1 otherwise.
inline int report(const FitResult &r, const std::string &csv_path, std::ostream &out,
                  double factor = 10) {
  out << "initial loss " << r.initial_loss << ", final loss " << r.final_loss << " ("
      << r.initial_loss / r.final_loss << "x lower); loss per step in " << csv_path << '\n';
  if (r.final_loss <= r.initial_loss / factor) return 0;
  out << "FAILED: the loss fell by less than " << factor << "x\n";
  return 1;
}

} // namespace pm
