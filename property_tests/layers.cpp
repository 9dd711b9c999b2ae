// Laws of spec/layers.md: every structured layer agrees exactly (over Q) with
// an independent plain-loop formula, and the structural laws (equivariance,
// transpose, composition) hold. Each law is run on the reference constructor
// and on a deliberately wrong one, which it must reject.
#include <algorithm>
#include <functional>
#include <numeric>

#include "pm/layers.hpp"
#include "support/generators.hpp"
#include "support/law.hpp"

using namespace pm;
using pm_test::rejects;
using Q = Rational;

namespace {

template <class S> using Maker = std::function<ParametricSpan<S>(const ConvSpec &)>;

template <class S> Function<S> draw_function(Index n) { return *pm_test::function<S>(n); }
Index draw(Index lo, Index hi) { return *pm_test::full_size(rc::gen::inRange<Index>(lo, hi + 1)); }

std::vector<Index> cat(std::vector<Index> a, std::initializer_list<Index> b) {
  a.insert(a.end(), b);
  return a;
}

// A small convolution geometry of rank 1..max_rank; padding and groups
// optional. Extents are kept small so that exact arithmetic stays cheap.
ConvSpec draw_conv(Index max_rank, bool pad, bool groups) {
  ConvSpec c;
  const Index r = draw(1, max_rank);
  for (Index j = 0; j < r; ++j) {
    c.kernel.push_back(draw(1, r == 3 ? 2 : 3));
    c.dilation.push_back(draw(1, 2));
    c.stride.push_back(draw(1, 2));
    c.pad_lo.push_back(pad ? draw(0, 2) : 0);
    c.pad_hi.push_back(pad ? draw(0, 2) : 0);
    const Index reach = c.dilation[j] * (c.kernel[j] - 1) + 1, padding = c.pad_lo[j] + c.pad_hi[j];
    c.spatial.push_back(std::max<Index>(1, reach > padding ? reach - padding : 1) +
                        draw(0, r == 3 ? 1 : 3));
  }
  c.groups = groups ? draw(1, 3) : 1;
  c.in_channels = c.groups * draw(1, 2);
  c.out_channels = c.groups * draw(1, 2);
  return c;
}

// Output positions of c, computed from PyTorch's formula.
std::vector<Index> out_extents(const ConvSpec &c) {
  std::vector<Index> o;
  for (Index j = 0; j < c.rank(); ++j)
    o.push_back((c.spatial[j] + c.lo(j) + c.hi(j) - c.dil(j) * (c.kernel[j] - 1) - 1) / c.step(j) +
                1);
  return o;
}

// The input position read by output position o at kernel offset k, or
// nothing when it lies in the padding (signed arithmetic, written apart from
// the library's enumeration).
bool input_position(const ConvSpec &c, const std::vector<Index> &o, const std::vector<Index> &k,
                    std::vector<Index> &pos) {
  pos.resize(c.rank());
  for (Index j = 0; j < c.rank(); ++j) {
    const long p = long(o[j] * c.step(j)) + long(k[j] * c.dil(j)) - long(c.lo(j));
    if (p < 0 || p >= long(c.spatial[j])) return false;
    pos[j] = Index(p);
  }
  return true;
}

// Calls f(x_flat, y_flat, w_flat) for every term of PyTorch's
// conv: y[o, co] += w[k, ci, co] · x[o·s + k·d − lo, g·cin_g + ci].
template <class F> void conv_terms(const ConvSpec &c, F &&f) {
  const Index cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  const Shape O(out_extents(c)), K(c.kernel), X(cat(c.spatial, {c.in_channels}));
  const Shape Y(cat(out_extents(c), {c.out_channels})), P(cat(c.kernel, {cin_g, c.out_channels}));
  std::vector<Index> pos;
  for (Index of = 0; of < O.size(); ++of)
    for (Index co = 0; co < c.out_channels; ++co)
      for (Index kf = 0; kf < K.size(); ++kf)
        for (Index ci = 0; ci < cin_g; ++ci) {
          const auto o = O.multi(of), k = K.multi(kf);
          if (!input_position(c, o, k, pos)) continue;
          f(X.flat(cat(pos, {(co / cout_g) * cin_g + ci})), Y.flat(cat(o, {co})),
            P.flat(cat(k, {ci, co})));
        }
}

Function<Q> direct_conv(const ConvSpec &c, const Function<Q> &w, const Function<Q> &x) {
  Function<Q> y(Shape(cat(out_extents(c), {c.out_channels})).size(), Q(0));
  conv_terms(c, [&](Index xi, Index yi, Index wi) { y[yi] += w[wi] * x[xi]; });
  return y;
}

// PyTorch's conv_transpose with the same geometry: a scatter of g.
Function<Q> direct_conv_transpose(const ConvSpec &c, const Function<Q> &w, const Function<Q> &g) {
  Function<Q> x(Shape(cat(c.spatial, {c.in_channels})).size(), Q(0));
  conv_terms(c, [&](Index xi, Index yi, Index wi) { x[xi] += w[wi] * g[yi]; });
  return x;
}

// ---- mutants -------------------------------------------------------------

// True convolution instead of cross-correlation: the kernel read backwards.
ParametricSpan<Q> flipped_conv(const ConvSpec &c) {
  ParametricSpan<Q> a = conv<Q>(c);
  const Shape P = c.parameter_shape();
  for (Index &p : a.pi.images) {
    auto m = P.multi(p);
    for (Index j = 0; j < c.rank(); ++j) m[j] = c.kernel[j] - 1 - m[j];
    p = P.flat(m);
  }
  return a;
}

// A layer whose weights depend on the output position (parity of axis 0).
ParametricSpan<Q> position_dependent_conv(const ConvSpec &c) {
  ParametricSpan<Q> a = conv<Q>(c);
  const Shape Y = c.output_shape();
  for (Index e = 0; e < a.apex(); ++e) a.span.mu[e] = Q(1 + Y.multi(a.span.t.images[e])[0] % 2);
  return a;
}

// ---- laws ----------------------------------------------------------------

void law_dense(const std::function<ParametricSpan<Q>(const DenseSpec &)> &make) {
  const DenseSpec d{draw(0, 4), draw(0, 4), *rc::gen::arbitrary<bool>()};
  const auto w = draw_function<Q>(d.parameters()), x = draw_function<Q>(d.in);
  Function<Q> y(d.out, Q(0));
  for (Index j = 0; j < d.out; ++j) {
    for (Index i = 0; i < d.in; ++i) y[j] += w[i * d.out + j] * x[i];
    if (d.bias) y[j] += w[d.in * d.out + j];
  }
  const ParametricSpan<Q> a = make(d);
  RC_ASSERT(a.source() == d.source());
  pm_test::classify(pm_test::any_nonzero(y));
  RC_ASSERT(act(a, w, d.bias ? adjoin_unit(x) : x) == y);
}

void law_conv(const Maker<Q> &make) {
  const ConvSpec c = draw_conv(3, true, true);
  const auto w = draw_function<Q>(c.parameter_shape().size());
  const auto x = draw_function<Q>(c.input_shape().size());
  const auto y = direct_conv(c, w, x);
  pm_test::classify(pm_test::any_nonzero(y));
  RC_ASSERT(act(make(c), w, x) == y);
}

// Shifting the input by stride·δ shifts the output by δ wherever neither
// receptive field meets the boundary.
void law_conv_equivariant(const Maker<Q> &make) {
  const ConvSpec c = draw_conv(2, true, true);
  std::vector<long> delta;
  for (Index j = 0; j < c.rank(); ++j) delta.push_back(long(draw(0, 4)) - 2);
  const auto w = draw_function<Q>(c.parameter_shape().size());
  const auto x = draw_function<Q>(c.input_shape().size());
  const Shape X = c.input_shape(), Y = c.output_shape(), K(c.kernel);
  Function<Q> shifted(X.size(), Q(0));
  for (Index i = 0; i < X.size(); ++i) {
    auto m = X.multi(i);
    bool inside = true;
    for (Index j = 0; j < c.rank(); ++j) {
      const long p = long(m[j]) + long(c.step(j)) * delta[j];
      inside = inside && p >= 0 && p < long(c.spatial[j]);
      m[j] = Index(p);
    }
    if (inside) shifted[X.flat(m)] = x[i];
  }
  // Whole receptive field of output position o inside the input.
  auto interior = [&](const std::vector<Index> &o) {
    std::vector<Index> pos;
    for (Index kf = 0; kf < K.size(); ++kf)
      if (!input_position(c, o, K.multi(kf), pos)) return false;
    return true;
  };
  const ParametricSpan<Q> a = make(c);
  const auto y = act(a, w, x), ys = act(a, w, shifted);
  pm_test::classify(pm_test::any_nonzero(y));
  for (Index of = 0; of < Y.size(); ++of) {
    const auto o = Y.multi(of);
    std::vector<Index> back = o;
    bool valid = interior(o);
    for (Index j = 0; j < c.rank() && valid; ++j) {
      const long b = long(o[j]) - delta[j];
      valid = b >= 0 && b < long(Y.extents()[j]);
      back[j] = Index(b);
    }
    if (valid && interior(back)) RC_ASSERT(ys[of] == y[Y.flat(back)]);
  }
}

void law_conv_transpose(const Maker<Q> &make) {
  const ConvSpec c = draw_conv(3, true, true);
  const auto w = draw_function<Q>(c.parameter_shape().size());
  const auto g = draw_function<Q>(c.output_shape().size());
  const auto x = direct_conv_transpose(c, w, g);
  pm_test::classify(pm_test::any_nonzero(x));
  RC_ASSERT(act(transpose(make(c)), w, g) == x);
}

// conv(c2) ∘ conv(c1) without padding is the convolution of stride s1·s2
// whose kernel is K[r] = Σ_{a·d1 + b·s1·d2 = r} w1[a] w2[b] (channels
// contracted). `stride_in_offset` = false is the mutant that forgets s1.
void law_conv_compose(bool stride_in_offset) {
  const Index r = draw(1, 2), c0 = draw(1, 2), c1 = draw(1, 2), c2 = draw(1, 2);
  ConvSpec a{{}, c0, c1, {}, {}, {}, {}, {}, 1}, b{{}, c1, c2, {}, {}, {}, {}, {}, 1};
  ConvSpec k{{}, c0, c2, {}, {}, {}, {}, {}, 1};
  for (Index j = 0; j < r; ++j) {
    a.kernel.push_back(draw(1, 3));
    a.dilation.push_back(draw(1, 2));
    a.stride.push_back(draw(1, 2));
    b.kernel.push_back(draw(1, 3));
    b.dilation.push_back(draw(1, 2));
    b.stride.push_back(draw(1, 2));
    const Index lift = stride_in_offset ? a.stride[j] : 1;
    k.kernel.push_back(a.dilation[j] * (a.kernel[j] - 1) +
                       lift * b.dilation[j] * (b.kernel[j] - 1) + 1);
    k.stride.push_back(a.stride[j] * b.stride[j]);
    a.spatial.push_back(a.dilation[j] * (a.kernel[j] - 1) +
                        a.stride[j] * b.dilation[j] * (b.kernel[j] - 1) + 1 + draw(0, 3));
  }
  b.spatial = out_extents(a);
  k.spatial = a.spatial;
  const auto w1 = draw_function<Q>(a.parameter_shape().size());
  const auto w2 = draw_function<Q>(b.parameter_shape().size());
  const auto x = draw_function<Q>(a.input_shape().size());
  const Shape P1 = a.parameter_shape(), P2 = b.parameter_shape(), PK = k.parameter_shape();
  Function<Q> kernel(PK.size(), Q(0));
  for (Index i = 0; i < P1.size(); ++i)
    for (Index l = 0; l < P2.size(); ++l) {
      const auto m1 = P1.multi(i), m2 = P2.multi(l);
      if (m1[r + 1] != m2[r]) continue; // the intermediate channel must agree
      std::vector<Index> mk;
      for (Index j = 0; j < r; ++j)
        mk.push_back(m1[j] * a.dil(j) + (stride_in_offset ? a.step(j) : 1) * m2[j] * b.dil(j));
      kernel[PK.flat(cat(mk, {m1[r], m2[r + 1]}))] += w1[i] * w2[l];
    }
  const auto y = act(conv<Q>(k), kernel, x);
  pm_test::classify(pm_test::any_nonzero(y));
  RC_ASSERT(act(compose(conv<Q>(b), conv<Q>(a)), tensor(w1, w2), x) == y);
}

void law_time_conv(const std::function<ParametricSpan<Q>(const TimeConvSpec &)> &make) {
  const TimeConvSpec c{draw(1, 7), draw(1, 3), draw(1, 3), draw(0, 4)};
  const auto w = draw_function<Q>(c.parameter_shape().size());
  const auto x = draw_function<Q>(c.length * c.in_channels);
  Function<Q> y(c.length * c.out_channels, Q(0));
  for (Index t = 0; t < c.length; ++t)
    for (Index co = 0; co < c.out_channels; ++co)
      for (Index lag = 0; lag <= std::min(t, c.max_lag); ++lag)
        for (Index ci = 0; ci < c.in_channels; ++ci)
          y[t * c.out_channels + co] += w[(lag * c.in_channels + ci) * c.out_channels + co] *
                                        x[(t - lag) * c.in_channels + ci];
  pm_test::classify(pm_test::any_nonzero(y));
  RC_ASSERT(act(make(c), w, x) == y);
}

GraphConvSpec draw_graph(bool symmetric) {
  GraphConvSpec g;
  g.nodes = draw(1, 5);
  const Index m = draw(0, 8);
  for (Index e = 0; e < m; ++e) g.edges.emplace_back(draw(0, g.nodes - 1), draw(0, g.nodes - 1));
  g.self_loops = *rc::gen::arbitrary<bool>();
  g.norm = symmetric ? GraphNorm::symmetric
                     : (*rc::gen::arbitrary<bool>() ? GraphNorm::sum : GraphNorm::mean);
  g.in_channels = draw(1, 2);
  g.out_channels = draw(1, 2);
  return g;
}

// y(v, co) = Σ_{u→v} c(u, v) Σ_ci W(ci, co) x(u, ci); also Σ|terms| in `mag`.
template <class S>
Function<S> direct_graph(const GraphConvSpec &g, const Function<S> &w, const Function<S> &x,
                         Function<S> *mag = nullptr) {
  std::vector<Index> deg(g.nodes, 0);
  auto edges = g.edges;
  if (g.self_loops)
    for (Index v = 0; v < g.nodes; ++v) edges.emplace_back(v, v);
  for (auto [u, v] : edges) ++deg[v];
  Function<S> y(g.nodes * g.out_channels, S(0));
  if (mag) *mag = y;
  for (auto [u, v] : edges) {
    S c = S(1);
    if (g.norm == GraphNorm::mean) c = S(1) / S(deg[v]);
    if constexpr (std::is_floating_point_v<S>)
      if (g.norm == GraphNorm::symmetric)
        c = deg[u] == 0 ? S(0) : S(1) / std::sqrt(S(deg[u] * deg[v]));
    for (Index co = 0; co < g.out_channels; ++co)
      for (Index ci = 0; ci < g.in_channels; ++ci) {
        const S term = c * w[ci * g.out_channels + co] * x[u * g.in_channels + ci];
        y[v * g.out_channels + co] += term;
        if constexpr (std::is_floating_point_v<S>)
          if (mag) (*mag)[v * g.out_channels + co] += std::abs(term);
      }
  }
  return y;
}

using GraphMaker = std::function<ParametricSpan<Q>(const GraphConvSpec &)>;

void law_graph(const GraphMaker &make) {
  const GraphConvSpec g = draw_graph(false);
  const auto w = draw_function<Q>(g.in_channels * g.out_channels);
  const auto x = draw_function<Q>(g.nodes * g.in_channels);
  const auto y = direct_graph(g, w, x);
  pm_test::classify(pm_test::any_nonzero(y));
  RC_ASSERT(act(make(g), w, x) == y);
}

// Symmetric normalisation in double: both results lie within
// γ_{n+7} Σ|terms| of the exact value, n the number of terms of an output
// (docs/tolerances.md, "Layers").
void law_graph_symmetric(const std::function<ParametricSpan<double>(const GraphConvSpec &)> &make) {
  const GraphConvSpec g = draw_graph(true);
  const auto w = draw_function<double>(g.in_channels * g.out_channels);
  const auto x = draw_function<double>(g.nodes * g.in_channels);
  Function<double> mag;
  const auto expected = direct_graph(g, w, x, &mag);
  const auto got = act(make(g), w, x);
  pm_test::classify(pm_test::any_nonzero(expected));
  const Index terms = (g.edges.size() + g.nodes) * g.in_channels;
  for (Index i = 0; i < got.size(); ++i)
    RC_ASSERT(pm_test::within_bound(got[i], expected[i], mag[i], mag[i], terms + 7));
}

// Relabelling the nodes by a permutation p relabels the output by p.
template <class S>
void law_graph_permutation(const std::function<ParametricSpan<S>(const GraphConvSpec &)> &make,
                           bool symmetric) {
  GraphConvSpec g = draw_graph(symmetric);
  const auto p = *rc::gen::map(rc::gen::arbitrary<int>(), [n = g.nodes](int seed) {
    std::vector<Index> q(n);
    std::iota(q.begin(), q.end(), Index{0});
    for (Index i = n; i > 1; --i) std::swap(q[i - 1], q[Index(seed & 0x7fffffff) % i]), seed /= 3;
    return q;
  });
  const auto w = draw_function<S>(g.in_channels * g.out_channels);
  const auto x = draw_function<S>(g.nodes * g.in_channels);
  GraphConvSpec h = g;
  for (auto &[u, v] : h.edges) u = p[u], v = p[v];
  Function<S> xp(x.size());
  for (Index v = 0; v < g.nodes; ++v)
    for (Index c = 0; c < g.in_channels; ++c)
      xp[p[v] * g.in_channels + c] = x[v * g.in_channels + c];
  const auto y = act(make(g), w, x), yp = act(make(h), w, xp);
  pm_test::classify(pm_test::any_nonzero(y));
  for (Index v = 0; v < g.nodes; ++v)
    for (Index c = 0; c < g.out_channels; ++c)
      RC_ASSERT(yp[p[v] * g.out_channels + c] == y[v * g.out_channels + c]);
}

// A graph layer that treats node 0 differently from the others.
template <class S> ParametricSpan<S> labelled_graph_conv(const GraphConvSpec &g) {
  ParametricSpan<S> a = graph_conv<S>(g);
  for (Index e = 0; e < a.apex(); ++e)
    if (a.span.t.images[e] / g.out_channels == 0) a.span.mu[e] *= S(2);
  return a;
}

void law_pool(const std::function<Span<Q>(const PoolSpec &)> &make) {
  const ConvSpec c = draw_conv(2, true, false);
  const PoolSpec p{c.spatial, draw(1, 2), c.kernel, c.pad_lo, c.pad_hi, c.stride};
  const ConvSpec geometry{p.spatial, p.channels, p.channels, p.window, p.pad_lo,
                          p.pad_hi,  p.stride,   {},         1};
  const auto x = draw_function<Q>(Shape(cat(p.spatial, {p.channels})).size());
  const Q size = Q(Shape(p.window).size());
  const Shape O(out_extents(geometry)), K(p.window), X(cat(p.spatial, {p.channels}));
  Function<Q> y(O.size() * p.channels, Q(0));
  std::vector<Index> pos;
  for (Index of = 0; of < O.size(); ++of)
    for (Index ch = 0; ch < p.channels; ++ch)
      for (Index kf = 0; kf < K.size(); ++kf)
        if (input_position(geometry, O.multi(of), K.multi(kf), pos))
          y[of * p.channels + ch] += x[X.flat(cat(pos, {ch}))] / size;
  pm_test::classify(pm_test::any_nonzero(y));
  RC_ASSERT(act(make(p), x) == y);
}

// Average over the positions inside the input only (count_include_pad = false).
Span<Q> pool_excluding_padding(const PoolSpec &p) {
  Span<Q> a = average_pool<Q>(p);
  const Measure<Q> count = pushforward(a.t, Measure<Q>(a.apex(), Q(1)));
  for (Index e = 0; e < a.apex(); ++e) a.mu[e] = Q(1) / count[a.t.images[e]];
  return a;
}

} // namespace

PM_LAW("LAYER-DENSE-EQ-SPAN", "dense layer (with and without bias) = Σ_x W(x,y) φ(x) + b(y)",
       law_dense(dense<Q>), law_dense([](const DenseSpec &d) {
         ParametricSpan<Q> a = dense<Q>(d); // mutant: weight matrix read output-major
         for (Index e = 0; e < d.in * d.out; ++e) a.pi.images[e] = (e % d.out) * d.in + e / d.out;
         return a;
       }))
PM_LAW("LAYER-CONV-EQ-SPAN", "N-d convolution span = PyTorch cross-correlation loop",
       law_conv(conv<Q>), law_conv(flipped_conv))
PM_LAW("LAYER-CONV-EQUIVARIANT", "convolution commutes with translation away from the boundary",
       law_conv_equivariant(conv<Q>), law_conv_equivariant(position_dependent_conv))
PM_LAW("LAYER-CONV-TRANSPOSE", "transpose of the convolution span = transposed convolution loop",
       law_conv_transpose(conv<Q>), law_conv_transpose(flipped_conv))
PM_LAW("LAYER-CONV-COMPOSE",
       "composite of two convolution spans = convolution with composed kernel",
       law_conv_compose(true), law_conv_compose(false))
PM_LAW("LAYER-TIME-CONV-EQ-SPAN", "causal time convolution = Σ_{lag ≤ t} W(lag) φ(t − lag)",
       law_time_conv(time_conv<Q>),
       law_time_conv([](const TimeConvSpec &c) { return conv<Q>(c.as_conv()); }))
PM_LAW("LAYER-GRAPH-EQ-SPAN", "graph convolution (sum, mean) = normalised neighbour sum over Q",
       law_graph(graph_conv<Q>), law_graph([](const GraphConvSpec &g) {
         GraphConvSpec h = g; // mutant: self loops ignored
         h.self_loops = false;
         return graph_conv<Q>(h);
       }))
PM_LAW("LAYER-GRAPH-SYMMETRIC", "symmetric graph convolution within the derived double bound",
       law_graph_symmetric(graph_conv<double>), law_graph_symmetric([](const GraphConvSpec &g) {
         GraphConvSpec h = g; // mutant: mean instead of symmetric normalisation
         h.norm = GraphNorm::mean;
         return graph_conv<double>(h);
       }))
PM_LAW("LAYER-GRAPH-PERMUTATION", "graph convolution is equivariant under node relabelling",
       (law_graph_permutation<Q>(graph_conv<Q>, false),
        law_graph_permutation<double>(graph_conv<double>, true)),
       law_graph_permutation<Q>(labelled_graph_conv<Q>, false))
PM_LAW("LAYER-POOL-EQ-SPAN", "average pooling span = window mean with zero padding",
       law_pool(average_pool<Q>), law_pool(pool_excluding_padding))
