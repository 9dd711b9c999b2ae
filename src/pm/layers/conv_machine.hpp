#pragma once
// ConvMachine(dims, σ, pad, spatial): I = (position…, channel) over the given
// spatial extents; the span is the size-preserving convolution N → N with
// padding (pad_lo, pad_hi) per axis and kernel pad_lo + pad_hi + 1 (stride 1,
// dilation 1, cross-correlation, see conv.hpp); the grading is the channel
// block only, space is not graded. W has shape (kernel…, N, N).
//
// Difference from the authors' code: they use NNlib's conv, which reverses
// the kernel (true convolution); here the kernel is read forwards, so their
// W corresponds to ours with every kernel axis reversed. The index set is
// fixed at construction (their machine takes its extents from the input).
#include "pm/layers/conv.hpp"
#include "pm/layers/seed_machine.hpp"

namespace pm {

template <class S> class ConvMachine : public SeedMachine<S> {
public:
  // pad = (lo_0, hi_0, lo_1, hi_1, …), one pair per spatial axis.
  ConvMachine(std::vector<Index> dims, Sigma<S> sigma, std::vector<Index> pad,
              std::vector<Index> spatial)
      : ConvMachine(SeedDescription{"ConvMachine", std::move(dims), "", std::move(spatial),
                                    std::move(pad), 0},
                    std::move(sigma), 0) {}

  ConvSpec spec() const { return spec_of(this->description()); }

  static ConvSpec spec_of(const SeedDescription &d) {
    const Index r = d.positions.size();
    require(r >= 1, "ConvMachine: spatial has no axes, expected at least 1");
    require(d.pad.size() == 2 * r, "ConvMachine: pad has ", d.pad.size(), " entries, expected ",
            2 * r, " (lo, hi per spatial axis)");
    const Index n = SeedMachine<S>::channel_count(d);
    ConvSpec c{d.positions, n, n, {}, {}, {}, {}, {}, 1};
    for (Index j = 0; j < r; ++j) {
      c.pad_lo.push_back(d.pad[2 * j]);
      c.pad_hi.push_back(d.pad[2 * j + 1]);
      c.kernel.push_back(d.pad[2 * j] + d.pad[2 * j + 1] + 1);
    }
    return c;
  }

private:
  ConvMachine(SeedDescription d, Sigma<S> sigma, int)
      : SeedMachine<S>(d, spec_of(d).parameter_shape(), conv<S>(spec_of(d)), grades(d),
                       d.dims.size(), std::move(sigma)) {}

  static std::vector<Index> grades(const SeedDescription &d) {
    spec_of(d); // validates d: the constructor's arguments are evaluated in any order
    const std::vector<Index> block = SeedMachine<S>::channel_grades(d.dims);
    std::vector<Index> g;
    for (Index x = 0; x < Shape(d.positions).size(); ++x)
      g.insert(g.end(), block.begin(), block.end());
    return g;
  }
};

} // namespace pm
