#pragma once
// The machines of the seed (the authors' DenseMachine, ConvMachine and
// RecurMachine) as graded span machines: each is only a choice of index set
// I, parametric span I ← E → I and grading; cleaning, the level solver and
// the backward pass are the generic ones of src/pm/machine/.
//
// The index set is I = (position…, channel), row-major, with N = Σ dims
// channels split into consecutive blocks `dims`; a Batch has one column per
// sample. The parameters W are stored flat in the row-major layout
// parameter_shape(), the authors' layout of W: (input, output) for dense,
// (kernel offset…, input, output) for convolution, (lag, input, output) for
// the recurrent machine.
//
// Inputs may have fewer channels than the machine: a prefix of the channels,
// the rest zero (the authors' expandchannels); anything else is an error.
#include <string>

#include "pm/machine.hpp"

namespace pm {

// What a seed machine is, in the terms of its constructor; it is all that a
// saved machine must record besides the parameters.
struct SeedDescription {
  std::string kind;             // "DenseMachine", "ConvMachine" or "RecurMachine"
  std::vector<Index> dims;      // channel blocks
  std::string sigma;            // Sigma::name()
  std::vector<Index> positions; // spatial extents (conv) or {length} (recurrent); dense: none
  std::vector<Index> pad;       // conv: (lo, hi) per axis; recurrent: {max lag}
  Index timeblock = 0;          // recurrent only

  friend bool operator==(const SeedDescription &, const SeedDescription &) = default;
};

template <class S> class SeedMachine {
public:
  const SeedDescription &description() const { return description_; }
  const GradedSpanMachine<S> &machine() const { return machine_; }
  const std::vector<Index> &dims() const { return description_.dims; }
  Index channels() const { return channels_; }
  // The number of positions (product of the extents; 1 for dense).
  Index positions() const { return Shape(description_.positions).size(); }
  Shape state_shape() const {
    std::vector<Index> e = description_.positions;
    e.push_back(channels_);
    return Shape(std::move(e));
  }
  const Shape &parameter_shape() const { return parameter_shape_; }
  Index parameters() const { return machine_.parameters(); }

  // W̃: W with every weight zeroed that has an edge not raising the grade.
  Function<S> clean(const Function<S> &w) const {
    return pm::clean(machine_.span(), machine_.grading(), w);
  }

  // An input with c ≤ N channels (c · positions() rows) as a state with N
  // channels, the missing channels zero.
  Batch<S> expand_channels(const Batch<S> &input, const std::string &what) const {
    const Index p = positions();
    require(input.rows % p == 0 && input.rows / p <= channels_ && input.rows > 0, description_.kind,
            ": ", what, " has ", input.rows, " rows, expected positions (", p,
            ") × channels with at most ", channels_, " channels");
    const Index c = input.rows / p;
    if (c == channels_) return input;
    Batch<S> out(p * channels_, input.cols);
    for (Index b = 0; b < input.cols; ++b)
      for (Index x = 0; x < p; ++x)
        for (Index ch = 0; ch < c; ++ch) out(x * channels_ + ch, b) = input(x * c + ch, b);
    return out;
  }

  // The first c channels of a state, e.g. the cotangent of an input that had
  // c channels.
  Batch<S> select_channels(const Batch<S> &state, Index c) const {
    require(c <= channels_, description_.kind, ": select_channels(", c, "), expected at most ",
            channels_, " channels");
    const Index p = positions();
    require(state.rows == p * channels_, description_.kind, ": state has ", state.rows,
            " rows, expected ", p * channels_);
    Batch<S> out(p * c, state.cols);
    for (Index b = 0; b < state.cols; ++b)
      for (Index x = 0; x < p; ++x)
        for (Index ch = 0; ch < c; ++ch) out(x * c + ch, b) = state(x * channels_ + ch, b);
    return out;
  }

  // Solves y = y₀ + L_W̃ z, z = z₀ + σ(y).
  MachineState<S> forward(const Function<S> &w, const Batch<S> &y0, const Batch<S> &z0) const {
    return pm::forward(machine_, w, expand_channels(y0, "y0"), expand_channels(z0, "z0"));
  }
  MachineState<S> forward(const Function<S> &w, const Batch<S> &y0) const {
    const Batch<S> y = expand_channels(y0, "y0");
    return pm::forward(machine_, w, y, Batch<S>(y.rows, y.cols));
  }
  // The authors' m(y₀): the post-activations z with z₀ = 0.
  Batch<S> operator()(const Function<S> &w, const Batch<S> &y0) const { return forward(w, y0).z; }

  // Cotangents of y₀, z₀, W and an array σ from the gradients (g_y, g_z) of
  // a loss at the state.
  Gradients<S> backward(const Function<S> &w, const MachineState<S> &x, const Batch<S> &gy,
                        const Batch<S> &gz) const {
    return pm::backward(machine_, w, x, gy, gz);
  }

protected:
  SeedMachine(SeedDescription d, Shape parameter_shape, ParametricSpan<S> span,
              std::vector<Index> grades, Index levels, Sigma<S> sigma)
      : description_(std::move(d)), channels_(channel_count(description_)),
        parameter_shape_(std::move(parameter_shape)),
        machine_(Grading(levels, std::move(grades)), std::move(span), std::move(sigma)) {
    description_.sigma = machine_.sigma().name();
  }

  static Index channel_count(const SeedDescription &d) {
    require(!d.dims.empty(), d.kind, ": dims is empty, expected at least one channel block");
    Index n = 0;
    for (Index k = 0; k < d.dims.size(); ++k) {
      require(d.dims[k] >= 1, d.kind, ": dims[", k, "] is 0, expected >= 1");
      n += d.dims[k];
    }
    return n;
  }

  // The grade (1..D) of each channel: its block.
  static std::vector<Index> channel_grades(const std::vector<Index> &dims) {
    return Grading::from_blocks(dims).grades();
  }

private:
  SeedDescription description_;
  Index channels_;
  Shape parameter_shape_;
  GradedSpanMachine<S> machine_;
};

} // namespace pm
