#pragma once
// RecurMachine(dims, σ, pad, timeblock, length): I = (time, channel); the span
// is the causal time convolution N → N with lags 0..pad (time_conv.hpp),
// W(lag, input, output); the grading is (time block, channel block)
// lexicographic: d(t, c) = ⌊t / timeblock⌋ · |dims| + block(c).
//
// The generic cleaning rule (keep a weight iff every one of its edges raises
// the grade) gives: lag ≥ timeblock, every channel pair; lag < timeblock,
// only block(input) < block(output). Difference from the authors' code: with
// more than one time block it also zeroes lag 0 for every channel pair (its
// index clamping makes lag 0 look like an edge from a later time block);
// here lag 0 keeps the weights from an earlier channel block, as the rule
// says, so the two agree exactly when the sequence is a single time block or
// when W(0, ·, ·) is zero.
#include "pm/layers/seed_machine.hpp"
#include "pm/layers/time_conv.hpp"

namespace pm {

template <class S> class RecurMachine : public SeedMachine<S> {
public:
  RecurMachine(std::vector<Index> dims, Sigma<S> sigma, Index pad, Index timeblock, Index length)
      : RecurMachine(
            SeedDescription{"RecurMachine", std::move(dims), "", {length}, {pad}, timeblock},
            std::move(sigma), 0) {}

  TimeConvSpec spec() const { return spec_of(this->description()); }

  static TimeConvSpec spec_of(const SeedDescription &d) {
    require(d.positions.size() == 1 && d.positions[0] >= 1, "RecurMachine: length must be >= 1");
    require(d.pad.size() == 1, "RecurMachine: pad has ", d.pad.size(), " entries, expected 1");
    require(d.timeblock >= 1, "RecurMachine: timeblock is 0, expected >= 1");
    const Index n = SeedMachine<S>::channel_count(d);
    return TimeConvSpec{d.positions[0], n, n, d.pad[0]};
  }

private:
  RecurMachine(SeedDescription d, Sigma<S> sigma, int)
      : SeedMachine<S>(d, spec_of(d).parameter_shape(), time_conv<S>(spec_of(d)), grades(d),
                       levels(d), std::move(sigma)) {}

  // Both validate d first: the constructor's arguments are evaluated in any order.
  static Index levels(const SeedDescription &d) {
    spec_of(d);
    return (d.positions[0] + d.timeblock - 1) / d.timeblock * d.dims.size();
  }

  static std::vector<Index> grades(const SeedDescription &d) {
    spec_of(d);
    const std::vector<Index> block = SeedMachine<S>::channel_grades(d.dims);
    std::vector<Index> g;
    for (Index t = 0; t < d.positions[0]; ++t)
      for (Index b : block) g.push_back(t / d.timeblock * d.dims.size() + b);
    return g;
  }
};

} // namespace pm
