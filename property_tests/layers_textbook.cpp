// Laws of spec/layers.md §4, the textbook backward formulas and the
// recurrent machine's cleaning proved in proofs/Layers.v, run on the C++
// constructors exactly over Q. Each law is
// run on the reference constructor and on a deliberately wrong one, which it
// must reject.
#include <algorithm>
#include <functional>
#include <utility>

#include "pm/layers.hpp"
#include "support/generators.hpp"
#include "support/law.hpp"

using namespace pm;
using Q = Rational;

namespace {

using DenseMaker = std::function<ParametricSpan<Q>(const DenseSpec &)>;
using ConvMaker = std::function<ParametricSpan<Q>(const ConvSpec &)>;
using TimeMaker = std::function<ParametricSpan<Q>(const TimeConvSpec &)>;
using RecurCleaner = std::function<Function<Q>(const RecurMachine<Q> &, const Function<Q> &)>;

Index pick(Index lo, Index hi) { return *rc::gen::inRange<Index>(lo, hi + 1); }

// LAYER-DENSE-INPUT-GRADIENT: (L_Wᵀ g)(x) = Σ_y W(x·|Y| + y) g(y), and with
// bias Σ_y b(y) g(y) at •.
void law_dense_input_gradient(const DenseMaker &make) {
  const DenseSpec d{pick(1, 4), pick(1, 4), pick(0, 1) == 1};
  const Function<Q> w = *pm_test::function<Q>(d.parameters()), g = *pm_test::function<Q>(d.out);
  Function<Q> expected(d.source(), Q(0));
  for (Index x = 0; x < d.in; ++x)
    for (Index y = 0; y < d.out; ++y) expected[x] += w[x * d.out + y] * g[y];
  if (d.bias)
    for (Index y = 0; y < d.out; ++y) expected[d.in] += w[d.in * d.out + y] * g[y];
  pm_test::classify(pm_test::any_nonzero(expected));
  RC_ASSERT(act(transpose(make(d)), w, g) == expected);
}

// The dense layer with its weights read output-major, y·|X| + x.
ParametricSpan<Q> output_major_dense(const DenseSpec &d) {
  ParametricSpan<Q> a = dense<Q>(d);
  for (Index &p : a.pi.images) p = (p % d.out) * d.in + p / d.out;
  return a;
}

// LAYER-DENSE-PARAMETER-GRADIENT: at φ ⊔ 1, φ(x) g(y) at x·|Y| + y and g(y)
// at |X|·|Y| + y.
void law_dense_parameter_gradient(const DenseMaker &make) {
  const DenseSpec d{pick(1, 4), pick(1, 4), true};
  const Function<Q> phi = *pm_test::function<Q>(d.in), g = *pm_test::function<Q>(d.out);
  Function<Q> expected(d.parameters(), Q(0));
  for (Index y = 0; y < d.out; ++y) {
    for (Index x = 0; x < d.in; ++x) expected[x * d.out + y] = phi[x] * g[y];
    expected[d.in * d.out + y] = g[y];
  }
  pm_test::classify(pm_test::any_nonzero(expected));
  RC_ASSERT(parameter_gradient(make(d), adjoin_unit(phi), g) == expected);
}

// The dense layer with the bias parameters before the weights.
ParametricSpan<Q> bias_first_dense(const DenseSpec &d) {
  ParametricSpan<Q> a = dense<Q>(d);
  for (Index &p : a.pi.images) p = (p + d.out) % d.parameters();
  return a;
}

// LAYER-TIME-CONV-TRANSPOSE: (L_Wᵀ g)(s, c_in) =
// Σ_{lag ≤ max_lag, s + lag < length} Σ_{c_out} W(lag, c_in, c_out) g(s + lag, c_out).
void law_time_conv_transpose(const TimeMaker &make) {
  const TimeConvSpec t{pick(1, 6), pick(1, 2), pick(1, 2), pick(0, 3)};
  const Index ci_n = t.in_channels, co_n = t.out_channels;
  const Function<Q> w = *pm_test::function<Q>(t.parameter_shape().size()),
                    g = *pm_test::function<Q>(t.length * co_n);
  Function<Q> expected(t.length * ci_n, Q(0));
  for (Index s = 0; s < t.length; ++s)
    for (Index ci = 0; ci < ci_n; ++ci)
      for (Index lag = 0; lag <= t.max_lag && s + lag < t.length; ++lag)
        for (Index co = 0; co < co_n; ++co)
          expected[s * ci_n + ci] += w[(lag * ci_n + ci) * co_n + co] * g[(s + lag) * co_n + co];
  pm_test::classify(pm_test::any_nonzero(expected));
  RC_ASSERT(act(transpose(make(t)), w, g) == expected);
}

// The time convolution with its kernel read forwards: offset k is lag k.
ParametricSpan<Q> forward_kernel_time_conv(const TimeConvSpec &t) { return conv<Q>(t.as_conv()); }

// LAYER-RECUR-CLEAN: W(lag, c_in, c_out) survives cleaning iff lag ≥ length,
// lag ≥ timeblock or block(c_in) < block(c_out).
void law_recur_clean(const RecurCleaner &clean) {
  std::vector<Index> dims(pick(1, 3)), block;
  for (Index k = 0; k < dims.size(); ++k) {
    dims[k] = pick(1, 2);
    block.insert(block.end(), dims[k], k + 1);
  }
  const Index pad = pick(1, 3), timeblock = pick(1, 3), length = pick(1, 6), n = block.size();
  const RecurMachine<Q> m(dims, Sigma<Q>::relu(), pad, timeblock, length);
  const Function<Q> w = *pm_test::function<Q>((pad + 1) * n * n);
  Function<Q> expected(w.size(), Q(0));
  for (Index q = 0; q < w.size(); ++q) {
    const Index lag = q / (n * n), c_in = q % (n * n) / n, c_out = q % n;
    if (lag >= length || lag >= timeblock || block[c_in] < block[c_out]) expected[q] = w[q];
  }
  pm_test::classify(pm_test::any_nonzero(expected) && expected != w);
  RC_ASSERT(clean(m, w) == expected);
}

// The authors' cleaning: with more than one time block, lag 0 is zeroed for
// every channel pair.
Function<Q> authors_clean(const RecurMachine<Q> &m, const Function<Q> &w) {
  Function<Q> c = m.clean(w);
  const TimeConvSpec s = m.spec();
  if (s.length > m.description().timeblock)
    std::fill(c.begin(), c.begin() + s.in_channels * s.out_channels, Q(0));
  return c;
}

// A convolution geometry of rank 1..3 whose every field is exercised:
// asymmetric padding, stride, dilation and groups, each axis long enough for
// its dilated kernel.
ConvSpec any_conv() {
  ConvSpec c;
  const Index rank = pick(1, 3);
  c.groups = pick(1, 2);
  c.in_channels = c.groups * pick(1, 2);
  c.out_channels = c.groups * pick(1, 2);
  for (Index j = 0; j < rank; ++j) {
    c.kernel.push_back(pick(1, 3));
    c.pad_lo.push_back(pick(0, 2));
    c.pad_hi.push_back(pick(0, 2));
    c.stride.push_back(pick(1, 2));
    c.dilation.push_back(pick(1, 2));
    const Index reach = c.reach(j), padding = c.lo(j) + c.hi(j);
    const Index shortest = reach > padding ? reach - padding : 1;
    c.spatial.push_back(pick(shortest, std::max<Index>(shortest, rank == 1 ? 6 : 3)));
  }
  return c;
}

// LAYER-CONV-WEIGHT-GRADIENT: for every parameter p = (k, c, c_out), the sum
// over the output positions o that read inside the input of
// x[o·s + k·d − lo, γ·C_in/g + c] · g[o, c_out].
void law_conv_weight_gradient(const ConvMaker &make) {
  const ConvSpec c = any_conv();
  const Shape in = c.input_shape(), out = c.output_shape(), par = c.parameter_shape();
  const Shape positions(c.output_extents());
  const Function<Q> x = *pm_test::function<Q>(in.size()), g = *pm_test::function<Q>(out.size());
  const Index per_group_in = c.in_channels / c.groups, per_group_out = c.out_channels / c.groups;
  Function<Q> expected(par.size(), Q(0));
  for (Index p = 0; p < par.size(); ++p) {
    const std::vector<Index> kcc = par.multi(p); // (k…, c, c_out)
    const Index c_out = kcc.back(), channel = c_out / per_group_out * per_group_in + kcc[c.rank()];
    for (Index op = 0; op < positions.size(); ++op) {
      std::vector<Index> o = positions.multi(op), at(c.rank() + 1);
      bool reads_input = true;
      for (Index j = 0; j < c.rank(); ++j) {
        const Index before_pad = o[j] * c.step(j) + kcc[j] * c.dil(j);
        reads_input = reads_input && before_pad >= c.lo(j) && before_pad < c.lo(j) + c.spatial[j];
        at[j] = before_pad - c.lo(j);
      }
      if (!reads_input) continue;
      at.back() = channel;
      o.push_back(c_out);
      expected[p] += x[in.flat(at)] * g[out.flat(o)];
    }
  }
  pm_test::classify(pm_test::any_nonzero(expected));
  RC_ASSERT(parameter_gradient(make(c), x, g) == expected);
}

// The convolution with its low and high padding exchanged.
ParametricSpan<Q> pads_swapped_conv(ConvSpec c) {
  std::swap(c.pad_lo, c.pad_hi);
  return conv<Q>(c);
}

} // namespace

PM_LAW("LAYER-DENSE-INPUT-GRADIENT", "transposed dense span = Σ_y W(x, y) g(y)",
       law_dense_input_gradient(dense<Q>), law_dense_input_gradient(output_major_dense))
PM_LAW("LAYER-CONV-WEIGHT-GRADIENT",
       "convolution parameter gradient = correlation of the input with the output gradient",
       law_conv_weight_gradient(conv<Q>), law_conv_weight_gradient(pads_swapped_conv))
PM_LAW("LAYER-TIME-CONV-TRANSPOSE", "transposed time convolution = the anti-causal sum",
       law_time_conv_transpose(time_conv<Q>), law_time_conv_transpose(forward_kernel_time_conv))
PM_LAW("LAYER-DENSE-PARAMETER-GRADIENT", "dense parameter gradient = φ(x) g(y), then g(y)",
       law_dense_parameter_gradient(dense<Q>), law_dense_parameter_gradient(bias_first_dense))
PM_LAW("LAYER-RECUR-CLEAN",
       "recurrent cleaning keeps lag ≥ length, lag ≥ timeblock or an earlier channel block",
       law_recur_clean([](const RecurMachine<Q> &m, const Function<Q> &w) { return m.clean(w); }),
       law_recur_clean(authors_clean))
