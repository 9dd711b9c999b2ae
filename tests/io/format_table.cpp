// The table of docs/formats.md §2.8 (each catalogue layer as ranges, s, t,
// π and μ) checked against the constructors: every row is written here as
// the table gives it, as an "edges" object read by the reader, on small cases
// with stride, dilation, groups and asymmetric padding, and its coefficient
// tensor must equal the constructor's (span_diff, nothing differing, some
// coefficient compared). The output extent formula m_j is checked against
// the constructor's shapes. A row with one coefficient changed must differ.
#include <catch2/catch.hpp>

#include "pm/io/layer_format.hpp"
#include "pm/layers.hpp"
#include "pm/validate/span_diff.hpp"

using pm::Index;
using pm::Shape;
using pm::io::Json;
using Q = pm::Rational;
using LL = long long;

namespace {

// An affine map given row by row: (coefficients, offset).
using Rows = std::vector<std::pair<std::vector<long long>, long long>>;

Json affine(const Rows &rows) {
  Json m = Json::array(), o = Json::array();
  for (const auto &[c, b] : rows) {
    m.push_back(c);
    o.push_back(b);
  }
  return Json{{"matrix", m}, {"offset", o}};
}

pm::ParametricSpan<Q> read(const Json &edges, const Shape &x, const Shape &y, const Shape &p,
                           bool has_pi) {
  return pm::io::read_edges(pm::io::Field(edges, "table"), x, y, p, has_pi);
}

// The table's row and the constructor agree coefficient for coefficient.
void require_same(const pm::ParametricSpan<Q> &table, const pm::ParametricSpan<Q> &made,
                  const Shape &x, const Shape &y, const Shape &p) {
  REQUIRE(table.source() == made.source());
  REQUIRE(table.target() == made.target());
  REQUIRE(table.parameters() == made.parameters());
  const pm::SpanDiff d = pm::span_diff(table, made, pm::SpaceShapes{x, y, p, {}, {}, {}});
  INFO(d.pattern);
  CHECK(d.compared > 0);
  CHECK(d.same());
}

bool differs(const pm::ParametricSpan<Q> &table, const pm::ParametricSpan<Q> &made, const Shape &x,
             const Shape &y, const Shape &p) {
  return !pm::span_diff(table, made, pm::SpaceShapes{x, y, p, {}, {}, {}}).same();
}

// One column of a row of length n with value v at column k.
std::vector<long long> unit(std::size_t n, std::size_t k, long long v = 1) {
  std::vector<long long> r(n, 0);
  r[k] = v;
  return r;
}

// The conv row: ranges (o_j…, G, q, k_j…, c). `bump` adds 1 to the first
// dilation coefficient (the planted change).
struct ConvRow {
  Json edges;
  std::vector<Index> m; // output extents by the table's formula
};

ConvRow conv_row(const pm::ConvSpec &c, bool bump = false) {
  const std::size_t r = c.rank(), n = 2 * r + 3;
  const Index Cg = c.in_channels / c.groups, Og = c.out_channels / c.groups;
  ConvRow row;
  std::vector<Index> ranges;
  for (std::size_t j = 0; j < r; ++j) {
    row.m.push_back(
        (c.spatial[j] + c.lo(j) + c.hi(j) - c.dil(j) * (c.kernel[j] - 1) - 1) / c.step(j) + 1);
    ranges.push_back(row.m[j]);
  }
  ranges.push_back(c.groups);
  ranges.push_back(Og);
  for (std::size_t j = 0; j < r; ++j) ranges.push_back(c.kernel[j]);
  ranges.push_back(Cg);
  const std::size_t G = r, q = r + 1, k0 = r + 2, cc = 2 * r + 2;
  Rows s, t, pi;
  for (std::size_t j = 0; j < r; ++j) {
    std::vector<long long> sj(n, 0);
    sj[j] = LL(c.step(j));
    sj[k0 + j] = LL(c.dil(j)) + (bump && j == 0 ? 1 : 0);
    s.push_back({sj, -LL(c.lo(j))});
    t.push_back({unit(n, j), 0});
    pi.push_back({unit(n, k0 + j), 0});
  }
  std::vector<long long> sc = unit(n, cc), tc = unit(n, q), pc = unit(n, q);
  sc[G] = LL(Cg);
  tc[G] = pc[G] = LL(Og);
  s.push_back({sc, 0});
  t.push_back({tc, 0});
  pi.push_back({unit(n, cc), 0});
  pi.push_back({pc, 0});
  row.edges = Json{{"ranges", ranges}, {"s", affine(s)}, {"t", affine(t)}, {"pi", affine(pi)}};
  return row;
}

const std::vector<pm::ConvSpec> conv_cases = {
    // spatial, C, O, kernel, lo, hi, stride, dilation, groups
    {{7}, 2, 4, {3}, {1}, {2}, {2}, {1}, 2},
    {{9}, 3, 3, {2}, {0}, {1}, {1}, {3}, 3},
    {{5, 6}, 2, 4, {2, 3}, {1, 0}, {1, 2}, {2, 1}, {1, 2}, 2},
    {{4, 5}, 1, 3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1},
    {{4, 3, 5}, 2, 2, {2, 1, 3}, {0, 1, 2}, {1, 0, 0}, {1, 2, 1}, {2, 1, 1}, 1},
};

} // namespace

TEST_CASE("formats.md §2.8, dense: ranges (y, x), s = x, t = y, pi = (x, y)") {
  for (const auto &[C, O] : {std::pair<Index, Index>{3, 2}, {1, 4}, {5, 5}}) {
    const Json edges{{"ranges", {O, C}},
                     {"s", affine({{{0, 1}, 0}})},
                     {"t", affine({{{1, 0}, 0}})},
                     {"pi", affine({{{0, 1}, 0}, {{1, 0}, 0}})}};
    const Shape x({C}), y({O}), p({C, O});
    require_same(read(edges, x, y, p, true), pm::dense<Q>({C, O, false}), x, y, p);
  }
}

TEST_CASE("formats.md §2.8, conv N-d and transposed conv: stride, dilation, groups, padding") {
  for (const pm::ConvSpec &c : conv_cases) {
    INFO("rank " << c.rank() << ", groups " << c.groups);
    const ConvRow row = conv_row(c);
    CHECK(pm::ConvSpec::with_channels(row.m, c.out_channels) == c.output_shape());
    const Shape x = c.input_shape(), y = c.output_shape(), p = c.parameter_shape();
    require_same(read(row.edges, x, y, p, true), pm::conv<Q>(c), x, y, p);
    // Transposed: s and t of the row exchanged, spaces exchanged.
    Json tr = row.edges;
    std::swap(tr["s"], tr["t"]);
    require_same(read(tr, y, x, p, true), pm::conv_transpose<Q>(c), y, x, p);
    // The row can fail: one dilation coefficient off by one.
    CHECK(differs(read(conv_row(c, true).edges, x, y, p, true), pm::conv<Q>(c), x, y, p));
  }
}

TEST_CASE("formats.md §2.8, average pooling: s = (σ o + k - lo, c), μ = 1/Π K") {
  const std::vector<pm::PoolSpec> cases = {
      {{6}, 2, {2}, {}, {}, {}},
      {{5, 7}, 3, {2, 3}, {1, 0}, {0, 2}, {1, 2}},
  };
  for (const pm::PoolSpec &pool : cases) {
    const pm::ConvSpec c = pool.as_conv();
    const std::size_t r = c.rank(), n = 2 * r + 1;
    std::vector<Index> ranges;
    Rows s, t;
    Index window = 1;
    for (std::size_t j = 0; j < r; ++j) {
      ranges.push_back((c.spatial[j] + c.lo(j) + c.hi(j) - (c.kernel[j] - 1) - 1) / c.step(j) + 1);
      std::vector<long long> sj(n, 0);
      sj[j] = LL(c.step(j));
      sj[r + 1 + j] = 1;
      s.push_back({sj, -LL(c.lo(j))});
      t.push_back({unit(n, j), 0});
      window *= c.kernel[j];
    }
    ranges.insert(ranges.begin() + long(r), pool.channels);
    for (std::size_t j = 0; j < r; ++j) ranges.push_back(c.kernel[j]);
    s.push_back({unit(n, r), 0});
    t.push_back({unit(n, r), 0});
    std::ostringstream mu;
    mu << "1/" << window;
    const Json edges{{"ranges", ranges}, {"s", affine(s)}, {"t", affine(t)}, {"mu", mu.str()}};
    const Shape x = c.input_shape(), y = c.output_shape(), p;
    const pm::Span<Q> made = pm::average_pool<Q>(pool);
    require_same(read(edges, x, y, p, false),
                 pm::ParametricSpan<Q>{made, pm::terminal_map(made.apex())}, x, y, p);
  }
}

TEST_CASE("formats.md §2.8, causal time conv and the recurrent machine: s = (τ - l, c)") {
  for (const auto &[T, C, O, L] :
       {std::tuple<Index, Index, Index, Index>{5, 2, 3, 2}, {4, 1, 1, 0}, {3, 2, 2, 4}}) {
    const Json edges{{"ranges", {T, O, L + 1, C}},
                     {"s", affine({{{1, 0, -1, 0}, 0}, {{0, 0, 0, 1}, 0}})},
                     {"t", affine({{{1, 0, 0, 0}, 0}, {{0, 1, 0, 0}, 0}})},
                     {"pi", affine({{{0, 0, 1, 0}, 0}, {{0, 0, 0, 1}, 0}, {{0, 1, 0, 0}, 0}})}};
    const pm::TimeConvSpec tc{T, C, O, L};
    const Shape x({T, C}), y({T, O}), p = tc.parameter_shape();
    const pm::ParametricSpan<Q> row = read(edges, x, y, p, true);
    require_same(row, pm::time_conv<Q>(tc), x, y, p);
    if (C == O) {
      pm::SeedDescription d{"RecurMachine", {C}, "identity", {T}, {L}, 1};
      const auto m = pm::make_seed_machine<Q>(d, pm::Sigma<Q>::identity());
      require_same(row, m.machine().span(), x, y, p);
    }
  }
}

TEST_CASE("formats.md §2.8, graph: the list A × [C) × [O), s = (u, c), t = (v, o), pi = (c, o)") {
  pm::GraphConvSpec g;
  g.nodes = 4;
  g.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {2, 0}};
  g.in_channels = 2;
  g.out_channels = 3;
  for (const pm::GraphNorm norm : {pm::GraphNorm::sum, pm::GraphNorm::mean}) {
    for (const bool loops : {false, true}) {
      g.norm = norm;
      g.self_loops = loops;
      auto all = g.edges;
      if (loops)
        for (Index v = 0; v < g.nodes; ++v) all.emplace_back(v, v);
      std::vector<Index> deg(g.nodes, 0);
      for (const auto &[u, v] : all) ++deg[v];
      Json list = Json::array();
      for (const auto &[u, v] : all)
        for (Index c = 0; c < 2; ++c)
          for (Index o = 0; o < 3; ++o)
            list.push_back({u * 2 + c, v * 3 + o, c * 3 + o,
                            norm == pm::GraphNorm::sum ? "1" : "1/" + std::to_string(deg[v])});
      const Shape x({4, 2}), y({4, 3}), p({2, 3});
      require_same(read(Json{{"list", list}}, x, y, p, true), pm::graph_conv<Q>(g), x, y, p);
    }
  }
}
