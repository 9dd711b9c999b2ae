#pragma once
// A seed machine followed by a readout (readout.hpp), the models of the
// authors' demos, with the mean squared error and its gradient. The input is
// the machine's y₀ (fewer channels allowed), the machine's output is its z
// (z₀ = 0), and the readout maps z to the prediction at every position.
// Gradients: ∂ℓ/∂ŷ from mse, the readout's parameter gradient and transposed
// span for ∂ℓ/∂z, then the machine's backward pass with g_y = 0, g_z = ∂ℓ/∂z.
// In float and double every step runs on the fast kernels (the machine's
// kernel where it has one, the span kernel for the readout); exact scalars
// run the reference.
#include <random>

#include "pm/kernels.hpp"
#include "pm/layers/readout.hpp"
#include "pm/layers/seed_machine.hpp"
#include "pm/train/init.hpp"
#include "pm/train/mse.hpp"

namespace pm {

template <class S> struct ModelParameters {
  Function<S> machine; // W, in the machine's parameter_shape()
  Function<S> readout; // W(c_in, c_out) then b(c_out)
};

template <class S> class MachineWithReadout {
public:
  MachineWithReadout(SeedMachine<S> machine, Index outputs)
      : machine_(std::move(machine)), spec_{machine_.positions(), machine_.channels(), outputs},
        readout_(pm::readout<S>(spec_)) {
    if constexpr (std::is_floating_point_v<S>) readout_plan_ = kernels::span_plan(readout_);
  }

  const SeedMachine<S> &machine() const { return machine_; }
  const ReadoutSpec &readout_spec() const { return spec_; }

  // Glorot-uniform weights, zero bias (the authors' defaults).
  ModelParameters<S> initial_parameters(std::mt19937_64 &rng) const {
    ModelParameters<S> p{glorot_uniform(machine_.parameter_shape(), rng),
                         glorot_uniform(spec_.weight_shape(), rng)};
    p.readout.resize(spec_.parameters(), S(0));
    return p;
  }

  Batch<S> predict(const ModelParameters<S> &p, const Batch<S> &input) const {
    return kernels::act(readout_, p.readout, adjoin_unit(forward(p, input).z));
  }

  struct Evaluation {
    S loss;
    ModelParameters<S> gradient;
  };

  Evaluation evaluate(const ModelParameters<S> &p, const Batch<S> &input,
                      const Batch<S> &target) const {
    std::vector<S> slope; // σ'(y), kept by the forward for the backward below
    const MachineState<S> x = forward(p, input, &slope);
    const Batch<S> z1 = adjoin_unit(x.z);
    const Batch<S> prediction = kernels::act(readout_, p.readout, z1);
    const Batch<S> g = mse_gradient(prediction, target);
    Evaluation e{mse(prediction, target), {{}, Function<S>(spec_.parameters(), S(0))}};
    Batch<S> gz1(z1.rows, z1.cols); // ∂ℓ/∂z and, in the last row, ∂ℓ/∂•
    if constexpr (std::is_floating_point_v<S>) {
      kernels::span_parameter_gradient<S>(readout_plan_, z1.data, g.data, g.cols,
                                          e.gradient.readout);
      kernels::span_transpose<S>(readout_plan_, p.readout, g.data, g.cols, gz1.data);
    } else {
      for (Index b = 0; b < g.cols; ++b)
        e.gradient.readout =
            add(e.gradient.readout, parameter_gradient(readout_, z1.column(b), g.column(b)));
      gz1 = act(transpose(readout_), p.readout, g);
    }
    Batch<S> gz(x.z.rows, x.z.cols); // the transposed readout without the point •
    for (Index b = 0; b < gz.cols; ++b)
      for (Index i = 0; i < gz.rows; ++i) gz(i, b) = gz1(i, b);
    e.gradient.machine =
        kernels::backward(machine_, p.machine, x, Batch<S>(x.z.rows, x.z.cols), gz, &slope).w;
    return e;
  }

private:
  SeedMachine<S> machine_;
  ReadoutSpec spec_;
  ParametricSpan<S> readout_;
  kernels::SpanPlan<S> readout_plan_; // the readout's edges in CSR (float and double only)

  // The machine's state for z₀ = 0 and the input as y₀ (fewer channels allowed).
  MachineState<S> forward(const ModelParameters<S> &p, const Batch<S> &input,
                          std::vector<S> *slope = nullptr) const {
    const Batch<S> y0 = machine_.expand_channels(input, "input");
    return kernels::forward(machine_, p.machine, y0, Batch<S>(y0.rows, y0.cols), slope);
  }
};

} // namespace pm
