// Hand-computed examples of the classical layers and their error messages.
// The expected values are worked out on paper in the comments.
#include <catch2/catch.hpp>

#include "pm/category/scalar.hpp"
#include "pm/layers.hpp"

using namespace pm;
using Q = Rational;
using Catch::Contains;

namespace {
Function<Q> q(std::initializer_list<int> v) { return Function<Q>(v.begin(), v.end()); }
} // namespace

TEST_CASE("conv 1-D: padding, stride and dilation on a hand example") {
  const Function<Q> x = q({1, 2, 3, 4}),
                    w = q({1, 10}); // y[o] = w0 x[o·s + 0·d − lo] + w1 x[o·s + d − lo]
  ConvSpec c{{4}, 1, 1, {2}, {1}, {0}, {}, {}, 1};
  CHECK(act(conv<Q>(c), w, x) == q({10, 21, 32, 43}));
  c.stride = {2}; // o = 0, 1 read positions (−1, 0) and (1, 2)
  CHECK(act(conv<Q>(c), w, x) == q({10, 32}));
  c = ConvSpec{{4}, 1, 1, {2}, {2}, {0}, {}, {2}, 1}; // y[o] = x[o − 2] + 10 x[o]
  CHECK(act(conv<Q>(c), w, x) == q({10, 20, 31, 42}));
  c = ConvSpec{{4}, 1, 1, {2}, {0}, {1}, {}, {}, 1}; // asymmetric: padding only at the end
  CHECK(act(conv<Q>(c), w, x) == q({21, 32, 43, 4}));
}

TEST_CASE("conv 2-D depthwise: each channel scaled by its own 1×1 kernel") {
  // Layout (row, column, channel): x(r, c, ch) = 10 r + 2 c + ch.
  const Function<Q> x = q({0, 1, 2, 3, 10, 11, 12, 13}), w = q({2, 3});
  const ConvSpec c{{2, 2}, 2, 2, {1, 1}, {}, {}, {}, {}, 2};
  CHECK(c.parameter_shape().extents() == std::vector<Index>{1, 1, 1, 2});
  CHECK(act(conv<Q>(c), w, x) == q({0, 3, 4, 9, 20, 33, 24, 39}));
}

TEST_CASE("conv 3-D: a 2×2×2 box sum of a 3×3×3 ramp") {
  Function<Q> x(27);
  for (int i = 0; i < 27; ++i) x[i] = Q(i); // x(a, b, c) = 9a + 3b + c
  const ConvSpec c{{3, 3, 3}, 1, 1, {2, 2, 2}, {}, {}, {}, {}, 1};
  // Σ over the box at (a, b, c) = 8 (9a + 3b + c) + 4 (9 + 3 + 1) = 8 (9a + 3b + c) + 52.
  CHECK(act(conv<Q>(c), Function<Q>(8, Q(1)), x) == q({52, 60, 76, 84, 124, 132, 148, 156}));
}

TEST_CASE("conv_transpose is the adjoint: it maps the output space back to the input") {
  const ConvSpec c{{4}, 1, 1, {2}, {1}, {0}, {2}, {}, 1};
  const auto t = conv_transpose<Q>(c);
  CHECK(t.source() == 2);
  CHECK(t.target() == 4);
  // g = (1, 1): output 0 reads x[−1], x[0]; output 1 reads x[1], x[2].
  CHECK(act(t, q({1, 10}), q({1, 1})) == q({10, 1, 10, 0}));
}

TEST_CASE("dense with bias: the bias is the span from the point •") {
  const DenseSpec d{2, 1, true};
  const auto a = dense<Q>(d);
  CHECK(a.source() == 3);
  CHECK(a.parameters() == 3);
  CHECK(act(a, q({2, 3, 5}), adjoin_unit(q({1, 1}))) == q({10}));
  CHECK(act(dense<Q>({2, 2, false}), q({1, 2, 3, 4}), q({1, 10})) == q({31, 42}));
}

TEST_CASE("time convolution: lag 0 and lag 1") {
  const TimeConvSpec c{3, 1, 1, 1};
  CHECK(act(time_conv<Q>(c), q({1, 10}), q({1, 2, 3})) == q({1, 12, 23}));
}

TEST_CASE("graph convolution, symmetric normalisation exact over Q on square degrees") {
  // 1→0, 2→0, 3→0 plus self loops: deg(0) = 4, deg(1..3) = 1, so
  // y0 = x0/4 + (x1 + x2 + x3)/2 and yv = xv otherwise.
  const GraphConvSpec g{4, {{1, 0}, {2, 0}, {3, 0}}, 1, 1, true, GraphNorm::symmetric};
  CHECK(act(graph_conv<Q>(g), q({1}), q({4, 8, 12, 16})) == q({19, 8, 12, 16}));
  GraphConvSpec mean = g;
  mean.norm = GraphNorm::mean; // y0 = (4 + 8 + 12 + 16)/4
  CHECK(act(graph_conv<Q>(mean), q({1}), q({4, 8, 12, 16})) == q({10, 8, 12, 16}));
  GraphConvSpec bad = g;
  bad.edges.emplace_back(2, 1); // deg(1) = 2
  CHECK_THROWS_WITH(graph_conv<Q>(bad),
                    Contains("node 1 has degree 2") && Contains("perfect square"));
  CHECK(graph_conv<double>(bad).apex() == 8);
}

TEST_CASE("average pooling: window 2, stride 2, and a padded window") {
  CHECK(act(average_pool<Q>({{4}, 1, {2}, {}, {}, {}}), q({1, 3, 5, 7})) == q({2, 6}));
  // Padding (1, 0): windows (−1, 0) and (1, 2); the padded zero counts.
  CHECK(act(average_pool<Q>({{3}, 1, {2}, {1}, {0}, {}}), q({2, 4, 6})) == q({1, 5}));
}

TEST_CASE("layer specs: bad geometry is reported by field and axis") {
  CHECK_THROWS_WITH(conv<Q>({{4, 4}, 1, 1, {2}, {}, {}, {}, {}, 1}),
                    Contains("ConvSpec.kernel has 1 entries, expected 2"));
  CHECK_THROWS_WITH(conv<Q>({{4}, 3, 2, {2}, {}, {}, {}, {}, 2}), Contains("ConvSpec.groups"));
  CHECK_THROWS_WITH(
      conv<Q>({{2}, 1, 1, {2}, {}, {}, {}, {2}, 1}),
      Contains("axis 0 has padded extent 2, expected at least the dilated kernel extent 3"));
  CHECK_THROWS_WITH(conv<Q>({{4}, 1, 1, {2}, {}, {}, {0}, {}, 1}),
                    Contains("ConvSpec.stride[0] is 0"));
  CHECK_THROWS_WITH(conv<Q>({{}, 1, 1, {}, {}, {}, {}, {}, 1}),
                    Contains("ConvSpec: spatial has no axes"));
  CHECK_THROWS_WITH(graph_conv<Q>({2, {{0, 1}, {1, 2}}, 1, 1, false, GraphNorm::sum}),
                    Contains("GraphConvSpec.edges[1] is (1, 2), expected node indices < 2"));
  CHECK_THROWS_WITH(time_conv<Q>({0, 1, 1, 0}), Contains("TimeConvSpec.length is 0"));
}
