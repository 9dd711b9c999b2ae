#pragma once
// The JSON description of shaped spaces, parametric spans and gradings (see
// docs/formats.md). A parametric span is given either
//  - by affine index maps: the apex is the product of ranges R = Π [0, r_j);
//    for each multi-index i ∈ R, s(i) = A_s i + b_s, t(i) = A_t i + b_t and
//    π(i) = A_π i + b_π are multi-indices of X, Y and P; an index whose image
//    falls outside its space is dropped (that is how padding, strides and
//    borders are expressed). Edges keep the row-major order of R.
//  - or by an explicit edge list (inline, .npy or CSV) of flat indices
//    s, t, [π,] [μ]; here an index out of range is an error, not dropped.
// Measures are exact rationals; the reader never rounds.
#include <sstream>

#include "pm/category/parametric_span.hpp"
#include "pm/io/csv.hpp"
#include "pm/io/json_field.hpp"
#include "pm/io/npy.hpp"
#include "pm/machine/grading.hpp"

namespace pm::io {

inline constexpr Index max_space_size = Index{1} << 24;
inline constexpr Index max_edges = Index{1} << 22;
inline constexpr long long max_coefficient = 1LL << 24;

// A list of extents [n_0, …] whose product is at most `max_total`.
inline Shape read_extents(const Field &list, Index max_total, const char *what) {
  std::vector<Index> extents;
  Index total = 1;
  for (std::size_t j = 0; j < list.size(); ++j) {
    const Index e = list[j].as_size(0, max_total);
    require(j < 16, list.file(), ": ", list.pointer(), ": expected at most 16 dimensions");
    require(e == 0 || total <= max_total / e, list.file(), ": ", list.pointer(), ": expected ",
            what, " of at most ", max_total, " points in total");
    total *= e;
    extents.push_back(e);
  }
  return Shape(std::move(extents));
}

// (n_0, n_1, …), for messages.
inline std::string shape_text(const Shape &s) {
  std::string t = "(";
  for (std::size_t j = 0; j < s.rank(); ++j) t += (j ? ", " : "") + std::to_string(s.extents()[j]);
  return t + ")";
}

// {"shape": [n_0, …]}: a shaped space, row-major; [] is the one-point space.
inline Shape read_space(const Field &f) {
  f.allow_only({"shape"});
  return read_extents(f.at("shape"), max_space_size, "a space");
}

// i ↦ A i + b from Z^in to Z^out.
struct AffineMap {
  std::vector<std::vector<long long>> matrix; // out rows of in coefficients
  std::vector<long long> offset;              // out entries

  // The flat index of A i + b in `shape`, or nothing when outside it.
  std::optional<Index> operator()(const std::vector<Index> &i, const Shape &shape) const {
    Index flat = 0;
    for (std::size_t r = 0; r < matrix.size(); ++r) {
      long long v = offset[r];
      for (std::size_t c = 0; c < i.size(); ++c) v += matrix[r][c] * static_cast<long long>(i[c]);
      if (v < 0 || static_cast<unsigned long long>(v) >= shape.extents()[r]) return std::nullopt;
      flat = flat * shape.extents()[r] + static_cast<Index>(v);
    }
    return flat;
  }
};

// {"matrix": [[…], …], "offset": […]}, with one row per coordinate of the
// codomain space and one column per range.
inline AffineMap read_affine(const Field &f, Index in_rank, Index out_rank) {
  f.allow_only({"matrix", "offset"});
  AffineMap a;
  const Field m = f.at("matrix");
  if (m.size() != out_rank)
    m.fail("an array of " + std::to_string(out_rank) + " rows (one per coordinate of the space)");
  for (std::size_t r = 0; r < out_rank; ++r) {
    const Field row = m[r];
    if (row.size() != in_rank)
      row.fail("a row of " + std::to_string(in_rank) + " integers (one per range)");
    std::vector<long long> coeffs;
    for (std::size_t c = 0; c < in_rank; ++c)
      coeffs.push_back(row[c].as_int(-max_coefficient, max_coefficient));
    a.matrix.push_back(std::move(coeffs));
  }
  a.offset.assign(out_rank, 0);
  if (const auto o = f.find("offset")) {
    if (o->size() != out_rank) o->fail("an array of " + std::to_string(out_rank) + " integers");
    for (std::size_t r = 0; r < out_rank; ++r)
      a.offset[r] = (*o)[r].as_int(-max_coefficient, max_coefficient);
  }
  return a;
}

namespace detail {

// The integer in an edge-list cell, which must be a valid index below
// `bound`; `value` is the cell read exactly (nothing when it is not a
// number) and `text` how it was written, for the message.
inline Index edge_index(const std::optional<Rational> &value, const std::string &text, Index bound,
                        const std::string &where, const char *column, const char *space) {
  const bool ok = value && boost::multiprecision::denominator(*value) == 1 && *value >= 0 &&
                  *value < Rational(bound);
  require(ok, where, ", column '", column, "': is ", value ? "" : "'", printable(text, 40),
          value ? "" : "'", ", expected an integer index in [0, ", bound, ") of the ", space);
  return boost::multiprecision::numerator(*value).convert_to<Index>();
}

// An edge-list cell: its exact value (nothing when it is not a number) and
// its text as written.
struct EdgeCell {
  std::optional<Rational> value;
  std::string text;
};

// Adds the rows of an explicit edge list: columns s, t, [π when the layer
// has parameters], [μ]. columns(e) is the number of cells of row e, where(e)
// its place for messages, cell(e, k) its k-th cell.
template <class Columns, class Where, class Cell>
void add_edge_rows(ParametricSpan<Rational> &a, bool has_pi, Index rows, const std::string &what,
                   Columns &&columns, Where &&where, Cell &&cell, const Rational &default_mu) {
  require(rows <= max_edges, what, ": expected at most ", max_edges, " edges, found ", rows);
  const char *names[] = {"s", "t", "pi"};
  const Index bounds[] = {a.span.s.codomain, a.span.t.codomain, a.pi.codomain};
  const char *spaces[] = {"source space", "target space", "parameter space"};
  const std::size_t n_idx = has_pi ? 3 : 2;
  for (Index e = 0; e < rows; ++e) {
    const std::size_t n = columns(e);
    require(n == n_idx || n == n_idx + 1, where(e), ": expected ", n_idx, " or ", n_idx + 1,
            " columns (s, t", has_pi ? ", pi" : "", "[, mu]), found ", n);
    Index idx[3] = {0, 0, 0};
    for (std::size_t k = 0; k < n_idx; ++k) {
      const EdgeCell c = cell(e, k);
      idx[k] = edge_index(c.value, c.text, bounds[k], where(e), names[k], spaces[k]);
    }
    a.span.s.images.push_back(idx[0]);
    a.span.t.images.push_back(idx[1]);
    a.pi.images.push_back(idx[2]);
    if (n > n_idx) {
      const EdgeCell mu = cell(e, n_idx);
      require(bool(mu.value), where(e), ", column 'mu': is '", printable(mu.text, 40),
              "', expected a finite number or a rational p/q");
      a.span.mu.push_back(*mu.value);
    } else {
      a.span.mu.push_back(default_mu);
    }
  }
}

} // namespace detail

// The "edges" object of a layer from X to Y with parameters P (P is the
// one-point space when the layer has none; then π is omitted and constant).
inline ParametricSpan<Rational> read_edges(const Field &f, const Shape &x, const Shape &y,
                                           const Shape &p, bool has_pi) {
  ParametricSpan<Rational> a;
  a.span.s.codomain = x.size();
  a.span.t.codomain = y.size();
  a.pi.codomain = p.size();
  // A constant measure for every edge ("mu": number), 1 when absent.
  auto constant_mu = [&]() {
    const auto mu = f.find("mu");
    if (mu && mu->json().is_object())
      mu->fail("a number or a rational \"p/q\" (per-edge weights go in a 'mu' column)");
    return mu ? mu->as_rational() : Rational(1);
  };

  if (f.has("ranges")) {
    if (has_pi)
      f.allow_only({"ranges", "s", "t", "pi", "mu"});
    else
      f.allow_only({"ranges", "s", "t", "mu"});
    const Shape r = read_extents(f.at("ranges"), max_edges, "ranges");
    const AffineMap s = read_affine(f.at("s"), r.rank(), x.rank());
    const AffineMap t = read_affine(f.at("t"), r.rank(), y.rank());
    const AffineMap pi = has_pi ? read_affine(f.at("pi"), r.rank(), p.rank()) : AffineMap{};
    std::optional<NpyArray> mu_array;
    if (const auto mu = f.find("mu"); mu && mu->json().is_object()) {
      mu->allow_only({"npy"});
      mu_array = read_npy(mu->at("npy").as_path());
      require(mu_array->shape == r.extents(), mu->at("npy").as_path(),
              ": npy field 'shape': expected the shape of the ranges at ", f.pointer(), "/ranges");
    }
    const Rational mu0 = mu_array ? Rational(0) : constant_mu();
    const Shape one_point;
    for (Index e = 0; e < r.size(); ++e) {
      const std::vector<Index> i = r.multi(e);
      const auto se = s(i, x), te = t(i, y), pe = pi(i, has_pi ? p : one_point);
      if (!se || !te || !pe) continue;
      a.span.s.images.push_back(*se);
      a.span.t.images.push_back(*te);
      a.pi.images.push_back(*pe);
      a.span.mu.push_back(mu_array ? Rational(mu_array->data[e]) : mu0);
    }
  } else if (f.has("list")) {
    f.allow_only({"list", "mu"});
    const Field list = f.at("list");
    detail::add_edge_rows(
        a, has_pi, list.size(), f.file() + ": " + list.pointer(),
        [&](Index e) { return list[e].size(); },
        [&](Index e) { return f.file() + ": " + list[e].pointer(); },
        [&](Index e, std::size_t k) -> detail::EdgeCell {
          const Field c = list[e][k];
          if (k < (has_pi ? 3u : 2u)) {
            const long long i = c.as_int(0, 1LL << 40);
            return {Rational(i), std::to_string(i)};
          }
          return {c.as_rational(), ""};
        },
        constant_mu());
  } else if (f.has("npy")) {
    f.allow_only({"npy", "mu"});
    const std::string path = f.at("npy").as_path();
    const NpyArray arr = read_npy(path);
    require(arr.shape.size() == 2, path, ": npy field 'shape': expected (edges, columns)");
    detail::add_edge_rows(
        a, has_pi, arr.shape[0], path, [&](Index) { return arr.shape[1]; },
        [&](Index e) { return path + ": row " + std::to_string(e); },
        [&](Index e, std::size_t k) -> detail::EdgeCell {
          const double v = arr.data[e * arr.shape[1] + k];
          std::ostringstream text;
          text << v;
          return {Rational(v), text.str()};
        },
        constant_mu());
  } else if (f.has("csv")) {
    f.allow_only({"csv", "mu"});
    const std::string path = f.at("csv").as_path();
    const CsvTable table = read_csv(path, max_edges);
    detail::add_edge_rows(
        a, has_pi, table.size(), path, [&](Index e) { return table.row(e).size(); },
        [&](Index e) { return path + ": line " + std::to_string(table.lines[e]); },
        [&](Index e, std::size_t k) -> detail::EdgeCell {
          const std::string_view cell = table.row(e)[k];
          return {rational_from_text(cell), std::string(cell)};
        },
        constant_mu());
  } else {
    f.fail("an edges object with one of 'ranges' (affine maps), 'list', 'npy' or 'csv'");
  }
  return a;
}

// Levels taken at their word would cost their value (a solver walks every
// level): gradings are renumbered densely, keeping the order, so that
// D ≤ points. Gradings compared with each other (a layer's source and
// target) are renumbered together.
inline void renumber_levels(std::initializer_list<Grading *> gradings) {
  std::vector<Index> used;
  for (const Grading *g : gradings) used.insert(used.end(), g->grades().begin(), g->grades().end());
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (Grading *g : gradings) {
    std::vector<Index> dense(g->size());
    for (Index i = 0; i < g->size(); ++i)
      dense[i] = Index(std::lower_bound(used.begin(), used.end(), (*g)(i)) - used.begin()) + 1;
    *g = Grading(used.size(), std::move(dense));
  }
}

// A grading of a space: each point gets a level 1…D. Given as
//  - {"levels": [l_0, …]} or {"npy": file}: one level per point (row-major);
//  - {"blocks": [{"axis": a, "dims": [d_0, …]} | {"axis": a, "size": b}, …]}:
//    the axis a is cut into consecutive blocks (of sizes d_0, d_1, … summing
//    to the extent, or of b points each); the level is the lexicographic rank
//    of the point's block numbers, in the order the axes are listed.
inline Grading read_grading(const Field &f, const Shape &space) {
  const Index n = space.size();
  std::vector<Index> grades(n);
  Index levels = 0;
  if (f.has("levels") || f.has("npy")) {
    std::vector<double> given;
    std::string where;
    if (f.has("levels")) {
      f.allow_only({"levels"});
      const Field l = f.at("levels");
      if (l.size() != n) l.fail("an array of " + std::to_string(n) + " levels (one per point)");
      for (std::size_t i = 0; i < n; ++i) given.push_back(double(l[i].as_int(1, 1LL << 30)));
      where = f.file() + ": " + l.pointer();
    } else {
      f.allow_only({"npy"});
      where = f.at("npy").as_path();
      const NpyArray arr = read_npy(where);
      require(arr.shape == space.extents(), where,
              ": npy field 'shape': expected the shape of the graded space");
      given = arr.data;
    }
    for (Index i = 0; i < n; ++i) {
      const double v = given[i];
      require(v >= 1 && v <= double(1 << 30) && v == std::floor(v), where, ": level of point ", i,
              " is ", v, ", expected an integer ≥ 1");
      grades[i] = Index(v);
      levels = std::max(levels, grades[i]);
    }
    return Grading(levels, std::move(grades));
  }
  f.allow_only({"blocks"});
  const Field blocks = f.at("blocks");
  std::vector<std::vector<Index>> block_of_coord; // per listed axis: coordinate ↦ block
  std::vector<Index> axes, counts;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Field b = blocks[k];
    b.allow_only({"axis", "dims", "size"});
    const Index axis = b.at("axis").as_size(0, space.rank() == 0 ? 0 : space.rank() - 1);
    if (space.rank() == 0) b.at("axis").fail("no axis: the space has rank 0");
    if (std::find(axes.begin(), axes.end(), axis) != axes.end())
      b.at("axis").fail("an axis not listed before");
    const Index extent = space.extents()[axis];
    std::vector<Index> map(extent);
    Index count = 0;
    if (b.has("dims")) {
      if (b.has("size")) b.fail("either 'dims' or 'size', not both");
      const Field dims = b.at("dims");
      Index pos = 0;
      for (std::size_t j = 0; j < dims.size(); ++j) {
        const Index d = dims[j].as_size(1, max_space_size);
        if (pos + d > extent)
          dims.fail("block sizes summing to the extent " + std::to_string(extent) + " of axis " +
                    std::to_string(axis));
        for (Index c = pos; c < pos + d; ++c) map[c] = j;
        pos += d;
      }
      if (pos != extent)
        dims.fail("block sizes summing to the extent " + std::to_string(extent) + " of axis " +
                  std::to_string(axis));
      count = dims.size();
    } else {
      const Index size = b.at("size").as_size(1, max_space_size);
      for (Index c = 0; c < extent; ++c) map[c] = c / size;
      count = (extent + size - 1) / size;
    }
    axes.push_back(axis);
    counts.push_back(count);
    block_of_coord.push_back(std::move(map));
  }
  if (axes.empty()) blocks.fail("at least one block specification");
  levels = 1;
  for (Index c : counts) {
    require(levels <= (Index{1} << 30) / std::max<Index>(c, 1), f.file(), ": ", blocks.pointer(),
            ": expected at most 2^30 levels");
    levels *= c;
  }
  for (Index i = 0; i < n; ++i) {
    const std::vector<Index> m = space.multi(i);
    Index level = 0;
    for (std::size_t k = 0; k < axes.size(); ++k)
      level = level * counts[k] + block_of_coord[k][m[axes[k]]];
    grades[i] = level + 1;
  }
  return Grading(levels, std::move(grades));
}

} // namespace pm::io
