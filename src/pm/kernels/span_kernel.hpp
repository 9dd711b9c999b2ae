#pragma once
// The layer of any parametric span X ←s− E −t→ Y, π : E → P (seeds.md §2,
// src/pm/category/parametric_span.hpp) on a batch, in float and double:
//   forward    (L_w φ)(y, b)   = Σ_{t(e)=y} μ(e) w(π(e)) φ(s(e), b)
//   transpose  (L_wᵀ g)(x, b)  = Σ_{s(e)=x} μ(e) w(π(e)) g(t(e), b)
//   gradient   ∂w(p)           = Σ_{π(e)=p} Σ_b μ(e) φ(s(e), b) g(t(e), b)
// This is the graph convolution kernel (a graph span of
// src/pm/layers/graph_conv.hpp is a parametric span) and the fallback for
// spans without a structured kernel.
//
// Each of the three is a sum per output row, so the plan stores the edges in
// compressed rows (CSR) grouped by the output leg: by target, by source and by
// parameter. Within a row the edges keep their increasing order, so each
// output is summed in one fixed order. Batches are column-major (column b of
// a batch with r rows starts at b · r, like pm::Batch). All three run in
// parallel over pieces of output rows: every output is written by one thread
// and no sum crosses threads, so the bits depend neither on the thread count
// nor on the pieces.
#include <span>
#include <vector>

#include "pm/category/parametric_span.hpp"
#include "pm/kernels/partition.hpp"

namespace pm::kernels {

// The edges of a span grouped by one leg (`row`), each entry holding the
// indices of the other two legs and μ. Row r is entries [start[r], start[r+1]).
template <class T> struct SpanRows {
  struct Entry {
    Index read;  // the index read from the input batch (or the first factor)
    Index other; // the parameter (or the second factor's index)
    T mu;
  };
  Index rows = 0;
  std::vector<Index> start;
  std::vector<Entry> entries;
};

// Groups the edges by row(e), stably (a counting sort): edges within a row
// stay in increasing order.
template <class T>
SpanRows<T> rows_by(const FinMap &row, const FinMap &read, const FinMap &other,
                    const Measure<T> &mu) {
  SpanRows<T> r;
  r.rows = row.codomain;
  r.start.assign(r.rows + 1, 0);
  for (Index e = 0; e < row.domain(); ++e) ++r.start[row(e) + 1];
  for (Index k = 0; k < r.rows; ++k) r.start[k + 1] += r.start[k];
  r.entries.resize(row.domain());
  std::vector<Index> next(r.start.begin(), r.start.end() - 1);
  for (Index e = 0; e < row.domain(); ++e) r.entries[next[row(e)]++] = {read(e), other(e), mu[e]};
  return r;
}

template <class T> struct SpanPlan {
  Index source = 0, target = 0, parameters = 0;
  SpanRows<T> by_target, by_source, by_parameter;
};

// Output rows computed by one task: enough work to pay for handing it out,
// and many tasks for a graph of a few hundred nodes. A parameter's row holds
// many edges (a graph span shares every weight across its edges), so the
// gradient's pieces are smaller.
constexpr Index span_row_piece = 64, span_parameter_piece = 4;

template <class T> SpanPlan<T> span_plan(const ParametricSpan<T> &a) {
  a.validate("span_plan: span");
  const Span<T> &sp = a.span;
  return {a.source(),
          a.target(),
          a.parameters(),
          rows_by(sp.t, sp.s, a.pi, sp.mu),
          rows_by(sp.s, sp.t, a.pi, sp.mu),
          rows_by(a.pi, sp.s, sp.t, sp.mu)};
}

namespace detail {

inline void require_span_buffer(Index size, Index rows, Index batch, const char *kernel,
                                const char *name) {
  require(size == rows * batch, kernel, ": ", name, " has ", size, " entries, expected ", rows,
          " × ", batch);
}

// out(r, b) = Σ_{k ∈ row r} μ_k w(other_k) in(read_k, b), in entry order;
// `in` has in_rows rows. The names are those of the calling kernel.
template <class T>
void apply_rows(const SpanRows<T> &r, Index in_rows, Index parameters, std::span<const T> w,
                std::span<const T> in, Index batch, std::span<T> out, const char *kernel,
                const char *in_name) {
  require(w.size() == parameters, kernel, ": w has ", w.size(), " entries, expected ", parameters);
  require_span_buffer(in.size(), in_rows, batch, kernel, in_name);
  require_span_buffer(out.size(), r.rows, batch, kernel, "out");
  for_each_piece(
      r.rows, span_row_piece,
      [&](Index r0, Index r1) {
        for (Index b = 0; b < batch; ++b) {
          const T *x = in.data() + b * in_rows;
          T *y = out.data() + b * r.rows;
          for (Index i = r0; i < r1; ++i) {
            T acc = T(0);
            for (Index k = r.start[i]; k < r.start[i + 1]; ++k) {
              const auto &e = r.entries[k];
              acc += e.mu * (w[e.other] * x[e.read]);
            }
            y[i] = acc;
          }
        }
      },
      3.0 * double(r.entries.size()) * double(batch));
}

} // namespace detail

// out = L_w φ on a batch of `batch` columns (φ: source × batch, out: target × batch).
template <class T>
void span_forward(const SpanPlan<T> &p, std::span<const T> w, std::span<const T> phi, Index batch,
                  std::span<T> out) {
  detail::apply_rows(p.by_target, p.source, p.parameters, w, phi, batch, out, "span_forward",
                     "phi");
}

// out = L_wᵀ g (g: target × batch, out: source × batch).
template <class T>
void span_transpose(const SpanPlan<T> &p, std::span<const T> w, std::span<const T> g, Index batch,
                    std::span<T> out) {
  detail::apply_rows(p.by_source, p.target, p.parameters, w, g, batch, out, "span_transpose", "g");
}

// out = Σ_b π_!^μ(s*φ_b · t*g_b), the gradient of Σ_b ⟨g_b, L_w φ_b⟩ in w.
// Row p sums its edges in order, each over the batch in order.
template <class T>
void span_parameter_gradient(const SpanPlan<T> &p, std::span<const T> phi, std::span<const T> g,
                             Index batch, std::span<T> out) {
  detail::require_span_buffer(phi.size(), p.source, batch, "span_parameter_gradient", "phi");
  detail::require_span_buffer(g.size(), p.target, batch, "span_parameter_gradient", "g");
  require(out.size() == p.by_parameter.rows, "span_parameter_gradient: out has ", out.size(),
          " entries, expected ", p.by_parameter.rows);
  const SpanRows<T> &r = p.by_parameter;
  for_each_piece(
      r.rows, span_parameter_piece,
      [&](Index q0, Index q1) {
        for (Index q = q0; q < q1; ++q) {
          T acc = T(0);
          for (Index k = r.start[q]; k < r.start[q + 1]; ++k) {
            const auto &e = r.entries[k];
            for (Index b = 0; b < batch; ++b)
              acc += e.mu * (phi[b * p.source + e.read] * g[b * p.target + e.other]);
          }
          out[q] = acc;
        }
      },
      3.0 * double(r.entries.size()) * double(batch));
}

} // namespace pm::kernels
