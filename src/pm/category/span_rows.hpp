#pragma once
// A parametric span given by its rows: for each target point y, the edges
// e with t(e) = y as (s(e), π(e), μ(e)). A catalogue layer (dense, conv,
// pooling, graph, …) is a rule that generates its rows from a few integers
// (shapes, stride, padding, groups), so a specification held this way costs
// O(parameters + activations) memory at any size and is evaluated row by row
// (spec/validator.md, CONF-EQUAL). An edge list is one way to give the rows
// (EdgeListRows); the catalogue's rules are others (src/pm/layers/).
//
// The pairing Σ_e μ(e) φ(s(e)) w(π(e)) g(t(e)) reads the same rows for the
// three adjoints: apply gathers into y, the transpose scatters into s(e), the
// parameter gradient into π(e).
#include <memory>
#include <type_traits>
#include <vector>

#include "pm/category/parametric_span.hpp"
#include "pm/category/scalar.hpp"

namespace pm {

// One edge of a row: its source point, its parameter and its weight μ. A
// weight that is not rational (e.g. 1/√(d_i d_j) of a graph's symmetric
// normalisation) is held as the nearest double with `exact` false, and the
// comparisons that read it use a derived bound instead of ==.
struct RowEdge {
  Index source = 0;
  Index parameter = 0;
  Rational weight = 1;
};

// An edge whose weight is a machine integer: what CONF-EQUAL's exact probes
// read from a rule whose weights are small integers (dense, conv, unfold, …),
// with no Rational built per edge (at ResNet-50 sizes a check reads 10⁸ edges).
struct IntegerEdge {
  Index source = 0;
  Index parameter = 0;
  long long weight = 1;
};

class SpanRows {
public:
  virtual ~SpanRows() = default;
  virtual Index source() const = 0;
  virtual Index target() const = 0;
  virtual Index parameters() const = 0;
  // Appends the edges into target point y to `out` (which the caller clears);
  // the order is the rule's own, and an edge may repeat (weights add).
  virtual void row(Index y, std::vector<RowEdge> &out) const = 0;
  // Upper bounds on the number of edges: into one target (the forward's
  // fan-in), out of one source (the transpose's) and through one parameter
  // (the gradient's, per sample). They size the exact-arithmetic bounds of
  // docs/tolerances.md; a bound may exceed the true count, never fall short.
  virtual Index max_row() const = 0;
  virtual Index max_column() const = 0;
  virtual Index max_parameter_use() const = 0;
  // Every weight is rational and held exactly (false: some are doubles'
  // nearest values, see RowEdge).
  virtual bool exact() const { return true; }
  // Every weight is an integer (dense, conv, unfold, …): the probes can then
  // be evaluated in int64 within the bound of docs/tolerances.md.
  virtual bool integral() const = 0;
  // The rows again with int64 weights (the same edges in the same order),
  // when integer_rows() says the rule gives them.
  virtual bool integer_rows() const { return false; }
  virtual void integer_row(Index, std::vector<IntegerEdge> &) const {
    require(false, "integer_row: this rule's weights are not given as machine integers");
  }
};

// A rule whose weights are all small integers writes its edges once, as
// Rule::edges(y, out) over either edge type, and serves both row interfaces.
template <class Rule> class IntegerRule : public SpanRows {
public:
  void row(Index y, std::vector<RowEdge> &out) const final { rule().edges(y, out); }
  void integer_row(Index y, std::vector<IntegerEdge> &out) const final { rule().edges(y, out); }
  bool integer_rows() const final { return true; }
  bool integral() const final { return true; }

private:
  const Rule &rule() const { return static_cast<const Rule &>(*this); }
};

// The rows of an edge list: grouped by target once, O(edges) memory, which
// is what a hand-written span costs anyway.
class EdgeListRows final : public SpanRows {
public:
  explicit EdgeListRows(const ParametricSpan<Rational> &a)
      : source_(a.source()), target_(a.target()), parameters_(a.parameters()),
        start_(static_cast<std::size_t>(a.target()) + 1, 0) {
    for (Index e = 0; e < a.apex(); ++e) ++start_[a.span.t(e) + 1];
    for (std::size_t y = 0; y + 1 < start_.size(); ++y) start_[y + 1] += start_[y];
    edges_.resize(a.apex());
    std::vector<Index> next(start_.begin(), start_.end() - 1);
    std::vector<Index> column(a.source(), 0), use(a.parameters(), 0);
    for (Index e = 0; e < a.apex(); ++e) {
      edges_[next[a.span.t(e)]++] = {a.span.s(e), a.pi(e), a.span.mu[e]};
      max_column_ = std::max(max_column_, ++column[a.span.s(e)]);
      max_use_ = std::max(max_use_, ++use[a.pi(e)]);
      integral_ = integral_ && denominator(a.span.mu[e]) == 1;
    }
    for (std::size_t y = 0; y + 1 < start_.size(); ++y)
      max_row_ = std::max(max_row_, start_[y + 1] - start_[y]);
  }
  Index source() const override { return source_; }
  Index target() const override { return target_; }
  Index parameters() const override { return parameters_; }
  void row(Index y, std::vector<RowEdge> &out) const override {
    out.insert(out.end(), edges_.begin() + start_[y], edges_.begin() + start_[y + 1]);
  }
  Index max_row() const override { return max_row_; }
  Index max_column() const override { return max_column_; }
  Index max_parameter_use() const override { return max_use_; }
  bool integral() const override { return integral_; }

private:
  Index source_, target_, parameters_;
  std::vector<Index> start_;
  std::vector<RowEdge> edges_;
  Index max_row_ = 0, max_column_ = 0, max_use_ = 0;
  bool integral_ = true;
};

// The edge list of a span given by its rows, for the small sizes where the
// whole span is wanted (recovery, span_diff, pmach dot), with its weights in S
// (exact for Rational; weight 1, every conv and dense edge's, converted
// without a division). The caller bounds the size first (edges ≤ target ·
// max_row).
template <class S> ParametricSpan<S> materialise_as(const SpanRows &r) {
  ParametricSpan<S> a{Span<S>{FinMap{r.source(), {}}, FinMap{r.target(), {}}, {}},
                      FinMap{r.parameters(), {}}};
  std::vector<RowEdge> row;
  for (Index y = 0; y < r.target(); ++y) {
    row.clear();
    r.row(y, row);
    for (const RowEdge &e : row) {
      a.span.s.images.push_back(e.source);
      a.span.t.images.push_back(y);
      a.pi.images.push_back(e.parameter);
      if constexpr (std::is_same_v<S, Rational>)
        a.span.mu.push_back(e.weight);
      else
        a.span.mu.push_back(e.weight == 1 ? S(1) : e.weight.template convert_to<S>());
    }
  }
  return a;
}

inline ParametricSpan<Rational> materialise(const SpanRows &r) {
  return materialise_as<Rational>(r);
}

} // namespace pm
