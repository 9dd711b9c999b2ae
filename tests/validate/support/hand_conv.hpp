#pragma once
// conv2d as a user writes it, in plain loops, correct or with one planted
// fault: the implementation under test of tests/validate/conformance.cpp
// and of the probe round trip of tests/cli/intent.cpp.
#include "pm/layers/conv.hpp"

namespace pm_test {

using pm::Index;

enum class Fault {
  none,
  dilation,
  padding,
  reversed,
  missing_group,
  affine,
  quadratic,
  flipped,     // both kernel axes reversed: a convolution, not a cross-correlation
  wrong_group, // group g reads the input channels of group g + 1 (mod groups)
  last_row,    // the last input row is never read: an off-by-one at one border
  single,      // one coefficient (first output, first parameter) doubled
  stride_swap, // axis 0 stepped by the stride of axis 1 and the reverse
  stride_lost, // axis 1 stepped by 1, not by its stride
};

// conv2d as a user writes it: loops over output, kernel and channels, in the
// layout of pm::conv (X = (h, w, c), Y = (h', w', c'), P = (kh, kw, c_in/g, c')).
template <class S> struct HandConv2d {
  using scalar_type = S;
  pm::ConvSpec c;
  Fault fault = Fault::none;

  Index source_size() const { return c.input_shape().size(); }
  Index target_size() const { return c.output_shape().size(); }
  Index parameter_size() const { return c.parameter_shape().size(); }

  pm::Function<S> apply(const pm::Function<S> &w, const pm::Function<S> &x) const {
    pm::Function<S> y(target_size(), S(fault == Fault::affine ? 1 : 0));
    visit([&](Index yo, Index xin, Index p) {
      y[yo] += w[p] * x[xin] * (fault == Fault::quadratic ? x[xin] : S(1)) * factor(yo, p);
    });
    return y;
  }
  // The weight of one term: 2 for the single wrong coefficient (output 0
  // and the kernel's centre, on the first channels), else 1.
  S factor(Index yo, Index p) const {
    const Index centre = ((c.kernel[1] + 1) * (c.in_channels / c.groups)) * c.out_channels;
    return fault == Fault::single && yo == 0 && p == centre ? S(2) : S(1);
  }
  // ∇_w ⟨g, L_w x⟩, by the same loops.
  pm::Function<S> gradient(const pm::Function<S> &x, const pm::Function<S> &g) const {
    pm::Function<S> gw(parameter_size(), S(0));
    visit([&](Index yo, Index xin, Index p) { gw[p] += x[xin] * g[yo]; });
    return gw;
  }
  // Calls term(output, input, parameter) for every product of the sum.
  template <class Term> void visit(Term &&term) const {
    const auto o = c.output_extents();
    const Index H = c.spatial[0], W = c.spatial[1], C = c.in_channels, O = c.out_channels;
    const Index KH = c.kernel[0], KW = c.kernel[1], G = c.groups, Cg = C / G, Og = O / G;
    for (Index i = 0; i < o[0]; ++i)
      for (Index j = 0; j < o[1]; ++j)
        for (Index co = 0; co < O; ++co) {
          const Index g = co / Og;
          const Index gin = fault == Fault::wrong_group ? (g + 1) % G : g;
          if (fault == Fault::missing_group && g == G - 1) continue;
          for (Index a = 0; a < KH; ++a)
            for (Index b = 0; b < KW; ++b) {
              const bool flip = fault == Fault::flipped;
              const Index ka = fault == Fault::reversed || flip ? KH - 1 - a : a;
              const Index kb = flip ? KW - 1 - b : b;
              const long long dil1 = fault == Fault::dilation ? 1 : (long long)c.dil(1);
              const long long lo0 = (long long)c.lo(0) + (fault == Fault::padding ? 1 : 0);
              const bool swap = fault == Fault::stride_swap;
              const long long hi =
                  (long long)(i * c.step(swap ? 1 : 0)) + (long long)a * (long long)c.dil(0) - lo0;
              const long long wi =
                  (long long)(j * (fault == Fault::stride_lost ? 1 : c.step(swap ? 0 : 1))) +
                  (long long)b * dil1 - (long long)c.lo(1);
              if (hi < 0 || hi >= (long long)H || wi < 0 || wi >= (long long)W) continue;
              if (fault == Fault::last_row && hi == (long long)H - 1) continue;
              for (Index ci = 0; ci < Cg; ++ci) {
                const Index xin = (Index(hi) * W + Index(wi)) * C + gin * Cg + ci;
                const Index p = ((ka * KW + kb) * Cg + ci) * O + co;
                term((i * o[1] + j) * O + co, xin, p);
              }
            }
        }
  }
};

// The same loops with the two adjoints: a pm::Layer, whose faults are the
// forward's (the transpose and the gradient read the same terms).
template <class S> struct HandConvLayer : HandConv2d<S> {
  pm::Function<S> apply_transpose(const pm::Function<S> &w, const pm::Function<S> &g) const {
    pm::Function<S> x(this->source_size(), S(0));
    this->visit(
        [&](Index yo, Index xin, Index p) { x[xin] += w[p] * g[yo] * this->factor(yo, p); });
    return x;
  }
  pm::Function<S> parameter_gradient(const pm::Function<S> &x, const pm::Function<S> &g) const {
    pm::Function<S> gw(this->parameter_size(), S(0));
    this->visit(
        [&](Index yo, Index xin, Index p) { gw[p] += x[xin] * g[yo] * this->factor(yo, p); });
    return gw;
  }
};

} // namespace pm_test
