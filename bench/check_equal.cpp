// pm_bench_check_equal: the time and peak memory of CONF-EQUAL
// (pm::check_equal) for a plain C++ convolution at the layer shapes of a
// ResNet-50, in float32 and float64, with the time of one forward call
// beside it; then one planted fault (a one-pixel shift) at conv 64 -> 64 on
// 56x56, printed as a user sees it. The specification is given by its rows
// (a conv rule written here), never materialised. Not a test: run by hand,
//   build/bench/pm_bench_check_equal [--quick] [--only TEXT]
// --quick: float32 only; --only: the rows whose name contains TEXT, and no
// planted fault unless TEXT is "fault".
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "pm/validate/conformance.hpp"

namespace {

using pm::Index;

// conv 2-D, channels last: X = (h, w, c), Y = (h', w', o), P = (kh, kw,
// c/groups, o), stride 1, padding k/2 on each side (pm::conv's layout).
struct Conv {
  Index n, c, o, k, groups;
  Index pad() const { return k / 2; }
  Index cg() const { return c / groups; }
  Index og() const { return o / groups; }
  pm::Shape source() const { return pm::Shape({n, n, c}); }
  pm::Shape target() const { return pm::Shape({n, n, o}); }
  pm::Shape parameters() const { return pm::Shape({k, k, cg(), o}); }
  // Calls term(y, x, p) for every product into output (i, j, co).
  template <class Term> void row(Index i, Index j, Index co, Term &&term, long long shift) const {
    const Index g = co / og();
    for (Index a = 0; a < k; ++a)
      for (Index b = 0; b < k; ++b) {
        const long long hi = (long long)(i + a) - (long long)pad() + shift,
                        wi = (long long)(j + b) - (long long)pad();
        if (hi < 0 || hi >= (long long)n || wi < 0 || wi >= (long long)n) continue;
        for (Index ci = 0; ci < cg(); ++ci)
          term((Index(hi) * n + Index(wi)) * c + g * cg() + ci, ((a * k + b) * cg() + ci) * o + co);
      }
  }
};

// The specification: the conv's rows, by rule.
struct ConvRows final : pm::IntegerRule<ConvRows> {
  Conv cv;
  explicit ConvRows(Conv c) : cv(c) {}
  Index source() const override { return cv.source().size(); }
  Index target() const override { return cv.target().size(); }
  Index parameters() const override { return cv.parameters().size(); }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    const Index co = y % cv.o, j = (y / cv.o) % cv.n, i = y / (cv.o * cv.n);
    cv.row(
        i, j, co,
        [&](Index x, Index p) {
          out.push_back({x, p, 1});
        },
        0);
  }
  Index max_row() const override { return cv.k * cv.k * cv.cg(); }
  Index max_column() const override { return cv.k * cv.k * cv.og(); }
  Index max_parameter_use() const override { return cv.n * cv.n; }
};

// The implementation: the same loops in S, with its adjoints, and an
// optional shift of the input rows by one (the planted fault).
template <class S> struct ConvImpl {
  using scalar_type = S;
  Conv cv;
  long long shift = 0;
  Index source_size() const { return cv.source().size(); }
  Index target_size() const { return cv.target().size(); }
  Index parameter_size() const { return cv.parameters().size(); }
  template <class Term> void each(Term &&term) const {
#pragma omp parallel for schedule(static)
    for (long long y = 0; y < (long long)target_size(); ++y) {
      const Index co = Index(y) % cv.o, j = (Index(y) / cv.o) % cv.n, i = Index(y) / (cv.o * cv.n);
      cv.row(
          i, j, co, [&](Index x, Index p) { term(Index(y), x, p); }, shift);
    }
  }
  pm::Function<S> apply(const pm::Function<S> &w, const pm::Function<S> &x) const {
    pm::Function<S> out(target_size(), S(0));
    each([&](Index y, Index xi, Index p) { out[y] += w[p] * x[xi]; });
    return out;
  }
  // The adjoints scatter; one thread (a race otherwise), in the order of
  // the forward.
  template <class Term> void serial(Term &&term) const {
    for (Index y = 0; y < target_size(); ++y) {
      const Index co = y % cv.o, j = (y / cv.o) % cv.n, i = y / (cv.o * cv.n);
      cv.row(
          i, j, co, [&](Index x, Index p) { term(y, x, p); }, shift);
    }
  }
  pm::Function<S> apply_transpose(const pm::Function<S> &w, const pm::Function<S> &g) const {
    pm::Function<S> out(source_size(), S(0));
    serial([&](Index y, Index xi, Index p) { out[xi] += w[p] * g[y]; });
    return out;
  }
  pm::Function<S> parameter_gradient(const pm::Function<S> &x, const pm::Function<S> &g) const {
    pm::Function<S> out(parameter_size(), S(0));
    serial([&](Index y, Index xi, Index p) { out[p] += x[xi] * g[y]; });
    return out;
  }
};

pm::io::LayerDescription description(const Conv &c) {
  pm::io::LayerDescription d;
  d.file = "conv";
  d.source = c.source();
  d.target = c.target();
  d.parameters = c.parameters();
  d.has_parameters = true;
  return d;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024;
}

template <class S> void time_one(const char *name, const Conv &c) {
  const ConvImpl<S> impl{c};
  const ConvRows rows(c);
  const pm::Function<S> w(impl.parameter_size(), S(1)), x(impl.source_size(), S(1));
  auto t = std::chrono::steady_clock::now();
  (void)impl.apply(w, x);
  const double forward = seconds_since(t);
  t = std::chrono::steady_clock::now();
  const pm::Report rep = pm::check_equal(description(c), rows, impl, 1, name);
  const double check = seconds_since(t);
  std::printf("| %-28s | %-7s | %8.3f | %8.1f | %8.0f | %s |\n", name,
              pm::dtype_name(pm::dtype_of<S>()), forward, check, peak_rss_mb(),
              rep.passed() ? "passed" : "FAILED");
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr, "usage: pm_bench_check_equal [--quick] [--only TEXT]\n");
      return 2;
    }
  }
  std::printf("| layer | dtype | forward (s) | CONF-EQUAL (s) | peak RSS (MB) | verdict |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const std::pair<const char *, Conv> shapes[] = {
      {"conv 3x3 64->64 on 56x56", {56, 64, 64, 3, 1}},
      {"conv 3x3 128->128 on 28x28", {28, 128, 128, 3, 1}},
      {"conv 3x3 256->256 on 14x14", {14, 256, 256, 3, 1}},
      {"conv 3x3 512->512 on 7x7", {7, 512, 512, 3, 1}},
      {"conv 1x1 256->64 on 56x56", {56, 256, 64, 1, 1}},
      {"conv 3x3 256->256 32 groups 28", {28, 256, 256, 3, 32}},
      {"depthwise 3x3 32 on 112x112", {112, 32, 32, 3, 32}},
      {"Linear 2048->1000", {1, 2048, 1000, 1, 1}},
      {"Linear 4096->4096", {1, 4096, 4096, 1, 1}},
  };
  for (const auto &[name, c] : shapes) {
    if (!only.empty() && std::string(name).find(only) == std::string::npos) continue;
    time_one<float>(name, c);
    if (!quick) time_one<double>(name, c);
  }
  if (!only.empty() && only != "fault") return 0;
  // One planted fault at full size, as a user sees it.
  const Conv c{56, 64, 64, 3, 1};
  const pm::Report rep =
      pm::check_equal(description(c), ConvRows(c), ConvImpl<float>{c, 1}, 1, "shifted conv");
  std::cout << "\n" << pm::to_text(rep);
  return 0;
}
