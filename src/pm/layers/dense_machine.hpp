#pragma once
// DenseMachine(dims, σ): I = the N channels, the dense span I ← I × I → I with
// W(input, output), graded by channel block. Cleaning keeps the weights from
// a block into a later one: W̃ is the authors' block-triangular W.
#include "pm/layers/dense.hpp"
#include "pm/layers/seed_machine.hpp"

namespace pm {

template <class S> class DenseMachine : public SeedMachine<S> {
public:
  DenseMachine(std::vector<Index> dims, Sigma<S> sigma)
      : DenseMachine(SeedDescription{"DenseMachine", std::move(dims), "", {}, {}, 0},
                     std::move(sigma), 0) {}

private:
  DenseMachine(SeedDescription d, Sigma<S> sigma, int)
      : SeedMachine<S>(d, Shape({n(d), n(d)}), dense<S>({n(d), n(d), false}),
                       SeedMachine<S>::channel_grades(d.dims), d.dims.size(), std::move(sigma)) {}
  static Index n(const SeedDescription &d) { return SeedMachine<S>::channel_count(d); }
};

} // namespace pm
