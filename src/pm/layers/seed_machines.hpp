#pragma once
// The three seed machines, and the machine of a description (as read back
// from a saved file). Every seed machine is a SeedMachine; the subclasses only
// add constructors and their structured spec.
#include "pm/layers/conv_machine.hpp"
#include "pm/layers/dense_machine.hpp"
#include "pm/layers/recur_machine.hpp"

namespace pm {

// σ by name, for the named kinds (polynomial and array σ carry data).
template <class S> Sigma<S> sigma_named(const std::string &name) {
  for (auto s : {Sigma<S>::identity(), Sigma<S>::tanh(), Sigma<S>::sigmoid(), Sigma<S>::relu(),
                 Sigma<S>::softplus()})
    if (s.name() == name) return s;
  detail::fail("sigma '", name, "': expected one of identity, tanh, sigmoid, relu, softplus");
}

template <class S> SeedMachine<S> make_seed_machine(const SeedDescription &d, Sigma<S> sigma) {
  if (d.kind == "DenseMachine") {
    require(d.positions.empty() && d.pad.empty() && d.timeblock == 0,
            "DenseMachine: positions, pad and timeblock must be empty");
    return DenseMachine<S>(d.dims, std::move(sigma));
  }
  if (d.kind == "ConvMachine") {
    require(d.timeblock == 0, "ConvMachine: timeblock is ", d.timeblock, ", expected 0");
    return ConvMachine<S>(d.dims, std::move(sigma), d.pad, d.positions);
  }
  if (d.kind == "RecurMachine") {
    require(d.positions.size() == 1 && d.pad.size() == 1, "RecurMachine: positions and pad must ",
            "have one entry each (length, max lag)");
    return RecurMachine<S>(d.dims, std::move(sigma), d.pad[0], d.timeblock, d.positions[0]);
  }
  detail::fail("machine kind '", d.kind, "': expected DenseMachine, ConvMachine or RecurMachine");
}

} // namespace pm
