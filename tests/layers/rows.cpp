// The catalogue's rules (SpanRows) against the layers' definitions: each
// rule's edges, as a multiset, equal those enumerated here straight from the
// formula of spec/layers.md over a sweep of shapes (size 1, strides,
// dilations, groups, asymmetric padding), and the declared bounds hold.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "pm/layers.hpp"

using namespace pm;
using Q = Rational;

namespace {
using Edge = std::tuple<Index, Index, Index, Q>; // target, source, parameter, weight

std::vector<Edge> edges_of(const SpanRows &r) {
  std::vector<Edge> e;
  std::vector<RowEdge> row;
  for (Index y = 0; y < r.target(); ++y) {
    row.clear();
    r.row(y, row);
    for (const RowEdge &x : row) e.emplace_back(y, x.source, x.parameter, x.weight);
  }
  std::sort(e.begin(), e.end());
  return e;
}

std::vector<Edge> edges_of(const ParametricSpan<Q> &a) {
  std::vector<Edge> e;
  for (Index i = 0; i < a.apex(); ++i)
    e.emplace_back(a.span.t(i), a.span.s(i), a.pi(i), a.span.mu[i]);
  std::sort(e.begin(), e.end());
  return e;
}

// The bounds a rule declares are never below the true counts, and a rule
// that gives its rows as int64 edges gives the same edges in the same order.
void check_bounds(const SpanRows &r) {
  std::vector<Index> column(r.source(), 0), use(r.parameters(), 0);
  Index longest = 0;
  bool integral = true;
  std::vector<RowEdge> row;
  for (Index y = 0; y < r.target(); ++y) {
    row.clear();
    r.row(y, row);
    longest = std::max<Index>(longest, row.size());
    for (const RowEdge &e : row) {
      REQUIRE(e.source < r.source());
      REQUIRE(e.parameter < r.parameters());
      ++column[e.source], ++use[e.parameter];
      integral = integral && denominator(e.weight) == 1;
    }
  }
  CHECK(longest <= r.max_row());
  CHECK(*std::max_element(column.begin(), column.end()) <= r.max_column());
  CHECK(*std::max_element(use.begin(), use.end()) <= r.max_parameter_use());
  if (r.integral()) CHECK(integral);
  if (!r.integer_rows()) return;
  std::vector<IntegerEdge> integer;
  for (Index y = 0; y < r.target(); ++y) {
    row.clear(), integer.clear();
    r.row(y, row);
    r.integer_row(y, integer);
    REQUIRE(integer.size() == row.size());
    for (std::size_t i = 0; i < row.size(); ++i) {
      CHECK(integer[i].source == row[i].source);
      CHECK(integer[i].parameter == row[i].parameter);
      CHECK(Q(integer[i].weight) == row[i].weight);
    }
  }
}

// The convolution of spec/layers.md §2, one rank at a time: for output (o,
// c_out), offset k and c_in of the group, the source o·s + k·d − lo.
std::vector<Edge> conv_by_formula(const ConvSpec &c) {
  const Shape in = c.input_shape(), out = c.output_shape(), ker(c.kernel);
  const Index cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  std::vector<Edge> e;
  for (Index y = 0; y < out.size(); ++y) {
    const auto o = out.multi(y);
    for (Index kf = 0; kf < ker.size(); ++kf) {
      const auto k = ker.multi(kf);
      std::vector<Index> x(c.rank() + 1);
      bool in_range = true;
      for (Index j = 0; j < c.rank(); ++j) {
        const long long at = (long long)(o[j] * c.step(j) + k[j] * c.dil(j)) - (long long)c.lo(j);
        in_range = in_range && at >= 0 && at < (long long)c.spatial[j];
        x[j] = Index(std::max(at, 0LL));
      }
      if (!in_range) continue;
      for (Index ci = 0; ci < cin_g; ++ci) {
        x.back() = o.back() / cout_g * cin_g + ci;
        std::vector<Index> p = k;
        p.push_back(ci);
        p.push_back(o.back());
        e.emplace_back(y, in.flat(x), c.parameter_shape().flat(p), Q(1));
      }
    }
  }
  std::sort(e.begin(), e.end());
  return e;
}

std::vector<Edge> transposed(std::vector<Edge> e) {
  for (auto &[t, s, p, w] : e) std::swap(t, s);
  std::sort(e.begin(), e.end());
  return e;
}

// A sweep of convolutions of rank 1 to 3.
std::vector<ConvSpec> conv_sweep() {
  std::vector<ConvSpec> v;
  v.push_back({{1}, 1, 1, {1}, {}, {}, {}, {}, 1});     // size 1
  v.push_back({{5}, 2, 3, {3}, {1}, {2}, {2}, {1}, 1}); // asymmetric pad, stride
  v.push_back({{7}, 4, 2, {2}, {0}, {1}, {3}, {3}, 2}); // dilation, groups
  v.push_back({{4, 5}, 2, 4, {3, 2}, {1, 0}, {1, 2}, {2, 1}, {1, 2}, 2});
  v.push_back({{3, 3}, 3, 3, {3, 3}, {1, 1}, {1, 1}, {}, {}, 3});     // depthwise
  v.push_back({{6, 1}, 1, 2, {2, 1}, {0, 0}, {1, 0}, {2, 1}, {}, 1}); // an axis of size 1
  v.push_back({{3, 4, 2}, 2, 2, {2, 3, 1}, {1, 1, 0}, {0, 1, 1}, {1, 2, 1}, {1, 1, 1}, 1});
  return v;
}
} // namespace

TEST_CASE("ConvRows and ConvTransposeRows generate the edges of the convolution's formula") {
  for (const ConvSpec &c : conv_sweep()) {
    INFO("rank " << c.rank() << ", " << c.in_channels << " -> " << c.out_channels << ", groups "
                 << c.groups);
    const ConvRows rows(c);
    CHECK(edges_of(rows) == conv_by_formula(c));
    CHECK(edges_of(conv<Q>(c)) == conv_by_formula(c));
    check_bounds(rows);
    const ConvTransposeRows back(c);
    CHECK(back.source() == rows.target());
    CHECK(back.target() == rows.source());
    CHECK(edges_of(back) == transposed(conv_by_formula(c)));
    CHECK(edges_of(conv_transpose<Q>(c)) == transposed(conv_by_formula(c)));
    check_bounds(back);
  }
}

TEST_CASE("TimeConvRows: lag l of output t reads t − l with parameter (l, c_in, c_out)") {
  for (const TimeConvSpec &c :
       {TimeConvSpec{1, 1, 1, 0}, TimeConvSpec{5, 2, 3, 2}, TimeConvSpec{3, 1, 2, 4}}) {
    std::vector<Edge> expected;
    const Shape p = c.parameter_shape();
    for (Index t = 0; t < c.length; ++t)
      for (Index co = 0; co < c.out_channels; ++co)
        for (Index l = 0; l <= c.max_lag && l <= t; ++l)
          for (Index ci = 0; ci < c.in_channels; ++ci)
            expected.emplace_back(t * c.out_channels + co, (t - l) * c.in_channels + ci,
                                  p.flat({l, ci, co}), Q(1));
    std::sort(expected.begin(), expected.end());
    const TimeConvRows rows(c);
    CHECK(edges_of(rows) == expected);
    CHECK(edges_of(time_conv<Q>(c)) == expected);
    check_bounds(rows);
  }
}

TEST_CASE("dense rules with and without bias: W(x, y) at x·|Y| + y, then b(y)") {
  for (bool bias : {false, true})
    for (const auto &[in, out] : std::vector<std::pair<Index, Index>>{{1, 1}, {3, 2}, {2, 5}}) {
      std::vector<Edge> expected;
      for (Index y = 0; y < out; ++y) {
        for (Index x = 0; x < in; ++x) expected.emplace_back(y, x, x * out + y, Q(1));
        if (bias) expected.emplace_back(y, in, in * out + y, Q(1));
      }
      std::sort(expected.begin(), expected.end());
      const auto rows = dense_rows({in, out, bias});
      CHECK(edges_of(*rows) == expected);
      CHECK(edges_of(dense<Q>({in, out, bias})) == expected);
      check_bounds(*rows);
    }
}

TEST_CASE("GraphRows equals graph_conv for every normalisation; other degrees are inexact") {
  const std::vector<std::pair<Index, Index>> star{{1, 0}, {2, 0}, {3, 0}, {0, 1}};
  for (GraphNorm norm : {GraphNorm::sum, GraphNorm::mean, GraphNorm::symmetric}) {
    // With self loops node 0 has degree 4 and the others 1 or 2: square
    // degrees only without node 1 — so square ones come from the 4-cycle.
    const GraphConvSpec cycle{4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, 2, 3, false, norm};
    const GraphRows rows(cycle);
    CHECK(edges_of(rows) == edges_of(graph_conv<Q>(cycle)));
    CHECK(rows.exact());
    check_bounds(rows);
  }
  const GraphConvSpec odd{4, star, 1, 2, true, GraphNorm::symmetric}; // degrees 4, 2, 1, 1
  const GraphRows rows(odd);
  CHECK_FALSE(rows.exact());
  check_bounds(rows);
  // The edge 1 → 0 has coefficient 2^(−1/2) · 4^(−1/2): the double of
  // graph_conv<double>, held exactly.
  const auto e = edges_of(rows);
  const ParametricSpan<double> d = graph_conv<double>(odd);
  REQUIRE(e.size() == d.apex());
  std::vector<std::tuple<Index, Index, Index, double>> de;
  for (Index i = 0; i < d.apex(); ++i)
    de.emplace_back(d.span.t(i), d.span.s(i), d.pi(i), d.span.mu[i]);
  std::sort(de.begin(), de.end());
  for (std::size_t i = 0; i < e.size(); ++i) {
    CHECK(std::get<3>(e[i]).convert_to<double>() == std::get<3>(de[i]));
    CHECK(std::get<0>(e[i]) == std::get<0>(de[i]));
  }
}

TEST_CASE("PoolRows: the window of each output with weight 1/divisor, PyTorch's divisors") {
  // 1-D, n = 5, window 3, stride 2, padding 1: outputs read [-1, 2), [1, 4),
  // [3, 6) (floor: (5 + 2 − 3)/2 + 1 = 3). count_include_pad divides by 3;
  // without it by 2, 3, 2 (the input points of each window).
  const PoolSpec p{{5}, 1, {3}, {1}, {1}, {2}};
  const auto pool_edges = [](const PoolSpec &s) { return edges_of(PoolRows(s)); };
  const std::vector<Edge> with_pad{{0, 0, 0, Q(1, 3)}, {0, 1, 0, Q(1, 3)}, {1, 1, 0, Q(1, 3)},
                                   {1, 2, 0, Q(1, 3)}, {1, 3, 0, Q(1, 3)}, {2, 3, 0, Q(1, 3)},
                                   {2, 4, 0, Q(1, 3)}};
  CHECK(pool_edges(p) == with_pad);
  CHECK(edges_of(ParametricSpan<Q>{average_pool<Q>(p), FinMap{1, std::vector<Index>(7, 0)}}) ==
        with_pad);
  PoolSpec q = p;
  q.count_include_pad = false;
  CHECK(pool_edges(q) == std::vector<Edge>{{0, 0, 0, Q(1, 2)},
                                           {0, 1, 0, Q(1, 2)},
                                           {1, 1, 0, Q(1, 3)},
                                           {1, 2, 0, Q(1, 3)},
                                           {1, 3, 0, Q(1, 3)},
                                           {2, 3, 0, Q(1, 2)},
                                           {2, 4, 0, Q(1, 2)}});
  // ceil_mode, n = 6, window 3, stride 2, no padding: ⌈(6 − 3)/2⌉ + 1 = 3
  // outputs, the last window [4, 7) cut to [4, 6): divisor 2 either way.
  PoolSpec c{{6}, 1, {3}, {}, {}, {2}};
  c.ceil_mode = true;
  CHECK(c.output_shape().extents() == std::vector<Index>{3, 1});
  CHECK(pool_edges(c) == std::vector<Edge>{{0, 0, 0, Q(1, 3)},
                                           {0, 1, 0, Q(1, 3)},
                                           {0, 2, 0, Q(1, 3)},
                                           {1, 2, 0, Q(1, 3)},
                                           {1, 3, 0, Q(1, 3)},
                                           {1, 4, 0, Q(1, 3)},
                                           {2, 4, 0, Q(1, 2)},
                                           {2, 5, 0, Q(1, 2)}});
  // ceil_mode with a window that would start in the high padding: n = 5,
  // window 2, stride 2, padding 1: ⌈(5 + 2 − 2)/2⌉ + 1 = 4, but the 4th
  // starts at 4·... = 6 − 1 = 5 ≥ n, so 3 outputs (as PyTorch).
  PoolSpec d{{5}, 1, {2}, {1}, {1}, {2}};
  d.ceil_mode = true;
  CHECK(d.output_shape().extents() == std::vector<Index>{3, 1});
  check_bounds(PoolRows(d));
}

TEST_CASE("padding modes: circular, reflect and replicate read the border points") {
  // 1-D, n = 4, kernel 1, padding (2, 2): output o reads padded position
  // o − 2, i.e. inputs  circular 2 3 0 1 2 3 0 1, reflect 2 1 0 1 2 3 2 1,
  // replicate 0 0 0 1 2 3 3 3 (F.pad's definitions).
  const auto reads = [](PaddingMode m) {
    ConvSpec c{{4}, 1, 1, {1}, {2}, {2}, {}, {}, 1};
    c.padding_mode = m;
    std::vector<Index> v;
    for (const Edge &e : edges_of(ConvRows(c))) v.push_back(std::get<1>(e));
    return v;
  };
  CHECK(reads(PaddingMode::circular) == std::vector<Index>{2, 3, 0, 1, 2, 3, 0, 1});
  CHECK(reads(PaddingMode::reflect) == std::vector<Index>{2, 1, 0, 1, 2, 3, 2, 1});
  CHECK(reads(PaddingMode::replicate) == std::vector<Index>{0, 0, 0, 1, 2, 3, 3, 3});
  CHECK(reads(PaddingMode::zeros) == std::vector<Index>{0, 1, 2, 3});
  // A 3-tap reflect conv on x = (1, 2, 3) with padding 1: padded (2, 1, 2, 3, 2),
  // w = (1, 10, 100): y = (2 + 10 + 200, 1 + 20 + 300, 2 + 30 + 200).
  ConvSpec r{{3}, 1, 1, {3}, {1}, {1}, {}, {}, 1};
  r.padding_mode = PaddingMode::reflect;
  const Function<Q> x{Q(1), Q(2), Q(3)}, w{Q(1), Q(10), Q(100)};
  CHECK(act(conv<Q>(r), w, x) == Function<Q>{Q(212), Q(321), Q(232)});
  check_bounds(ConvRows(r));
  r.pad_lo = {3};
  CHECK_THROWS_WITH(ConvRows(r), Catch::Contains("expected at most 2 for reflect padding"));
}

namespace {
// The dense values of a parameterless rule: y = L x.
Function<Q> apply_rows(const SpanRows &r, const Function<Q> &x) {
  Function<Q> y(r.target(), Q(0));
  std::vector<RowEdge> row;
  for (Index t = 0; t < r.target(); ++t) {
    row.clear();
    r.row(t, row);
    for (const RowEdge &e : row) y[t] += e.weight * x[e.source];
  }
  return y;
}
Function<Q> ramp(Index n) {
  Function<Q> x(n);
  for (Index i = 0; i < n; ++i) x[i] = Q(int(i));
  return x;
}
} // namespace

TEST_CASE("interpolate: PyTorch's source coordinates, exact weights (4 -> 7 gives sevenths)") {
  using M = InterpolateMode;
  const Function<Q> x{Q(0), Q(7), Q(14), Q(28)}; // one channel, 4 points
  // nearest: ⌊d·4/7⌋ = 0 0 1 1 2 2 3.
  CHECK(apply_rows(InterpolateRows({{4}, 1, {7}, M::nearest, false}), x) ==
        Function<Q>{Q(0), Q(0), Q(7), Q(7), Q(14), Q(14), Q(28)});
  // linear, align_corners: x_d = d·3/6 = d/2: 0, 3.5, 7, 10.5, 14, 21, 28.
  CHECK(apply_rows(InterpolateRows({{4}, 1, {7}, M::linear, true}), x) ==
        Function<Q>{Q(0), Q(7, 2), Q(7), Q(21, 2), Q(14), Q(21), Q(28)});
  // linear, half pixels: x_d = (d + 1/2)·4/7 − 1/2 = (8d − 3)/14, cut at 0:
  // d = 0: 0 → 0; d = 1: 5/14 → 5/14·7 = 5/2; d = 2: 13/14 → 13/2;
  // d = 3: 21/14 = 3/2 → 7 + 7/2 = 21/2; d = 4: 29/14 → 14 + 14/14 = 15;
  // d = 5: 37/14 → 14 + 9/14·14 = 23; d = 6: 45/14 > 3 → x[3] = 28.
  CHECK(apply_rows(InterpolateRows({{4}, 1, {7}, M::linear, false}), x) ==
        Function<Q>{Q(0), Q(5, 2), Q(13, 2), Q(21, 2), Q(15), Q(23), Q(28)});
  // bilinear = the product of the axes' weights: (2, 2) → (3, 3) with
  // align_corners reads the midpoints 1/2 on each axis.
  const InterpolateRows bi({{2, 2}, 1, {3, 3}, M::linear, true});
  const Function<Q> y = apply_rows(bi, Function<Q>{Q(0), Q(4), Q(8), Q(16)});
  CHECK(y == Function<Q>{Q(0), Q(2), Q(4), Q(4), Q(7), Q(10), Q(8), Q(12), Q(16)});
  CHECK_FALSE(bi.integral());
  check_bounds(bi);
  // Channels are kept: 2 channels, 1 → 2 points, nearest.
  CHECK(apply_rows(InterpolateRows({{1}, 2, {2}, M::nearest, false}), Function<Q>{Q(3), Q(5)}) ==
        Function<Q>{Q(3), Q(5), Q(3), Q(5)});
}

TEST_CASE("pixel_shuffle, pixel_unshuffle and roll are the permutations of their definitions") {
  // F.pixel_shuffle, r = 2, C = 1, one input position: the four channels
  // c = i·2 + j go to the 2×2 block (i, j): (0, 1, 2, 3) → rows (0 1 / 2 3).
  const PixelShuffleSpec s{{1, 1}, 1, 2};
  CHECK(apply_rows(PixelShuffleRows(s, false), ramp(4)) == ramp(4));
  // 2 channels after, input (1, 2, 8): output (2, 4, 2); output (h, w, c)
  // reads channel c·4 + (h mod 2)·2 + (w mod 2) at position (h/2, w/2).
  const PixelShuffleSpec t{{1, 2}, 2, 2};
  const Function<Q> y = apply_rows(PixelShuffleRows(t, false), ramp(16));
  const Shape out({2, 4, 2});
  for (Index h = 0; h < 2; ++h)
    for (Index w = 0; w < 4; ++w)
      for (Index c = 0; c < 2; ++c)
        CHECK(y[out.flat({h, w, c})] == Q(int((w / 2) * 8 + c * 4 + (h % 2) * 2 + (w % 2))));
  // Unshuffle undoes it.
  CHECK(apply_rows(PixelShuffleRows(t, true), y) == ramp(16));
  // torch.roll([0 1 2 3 4], 2) = [3 4 0 1 2]; by −1: [1 2 3 4 0].
  CHECK(apply_rows(RollRows(Shape({5}), {2}), ramp(5)) ==
        Function<Q>{Q(3), Q(4), Q(0), Q(1), Q(2)});
  CHECK(apply_rows(RollRows(Shape({5}), {-1}), ramp(5)) ==
        Function<Q>{Q(1), Q(2), Q(3), Q(4), Q(0)});
  // 2×3, shifts (1, 1): out(i, j) = x(i − 1, j − 1): [[5 3 4], [2 0 1]].
  CHECK(apply_rows(RollRows(Shape({2, 3}), {1, 1}), ramp(6)) ==
        Function<Q>{Q(5), Q(3), Q(4), Q(2), Q(0), Q(1)});
  check_bounds(PixelShuffleRows(t, false));
  check_bounds(PixelShuffleRows(t, true));
  check_bounds(RollRows(Shape({2, 3}), {1, 1}));
}

TEST_CASE("unfold selects the blocks' pixels, fold sums them back: im2col and col2im") {
  // 1-D, 3 pixels, kernel 2, padding 1: 4 blocks; block l reads x[l + k − 1],
  // nothing in the padding: (·, x0 | x0, x1 | x1, x2 | x2, ·).
  const UnfoldSpec u{{3}, 1, {2}, {1}, {}, {}};
  CHECK(u.columns_shape().extents() == std::vector<Index>{4, 2});
  const UnfoldRows unfold(u, false), fold(u, true);
  CHECK(apply_rows(unfold, Function<Q>{Q(5), Q(6), Q(7)}) ==
        Function<Q>{Q(0), Q(5), Q(5), Q(6), Q(6), Q(7), Q(7), Q(0)});
  // Fold adds the columns that read a pixel: x0 = c1 + c2, x1 = c3 + c4, x2 = c5 + c6.
  CHECK(apply_rows(fold, ramp(8)) == Function<Q>{Q(1 + 2), Q(3 + 4), Q(5 + 6)});
  check_bounds(unfold);
  check_bounds(fold);
  // 2 channels, 2×3 image, kernel 1×2, stride (1, 2), dilation (1, 1):
  // blocks (2, 1); column c·2 + k of block (i, 0) reads (i, k, c). The image
  // (i, j, c) is ramp: 6i + 2j + c.
  const UnfoldSpec v{{2, 3}, 2, {1, 2}, {}, {1, 2}, {}};
  const Function<Q> cols = apply_rows(UnfoldRows(v, false), ramp(12));
  CHECK(cols == Function<Q>{Q(0), Q(2), Q(1), Q(3), Q(6), Q(8), Q(7), Q(9)});
  // The pixels of column 2 (j = 2) are read by no block: fold leaves them 0.
  CHECK(apply_rows(UnfoldRows(v, true), cols) ==
        Function<Q>{Q(0), Q(1), Q(2), Q(3), Q(0), Q(0), Q(6), Q(7), Q(8), Q(9), Q(0), Q(0)});
}
