// pm_bench_check_equal: the time and peak memory of CONF-EQUAL
// (pm::check_equal) for a plain C++ convolution at the layer shapes of a
// ResNet-50, in float32 and float64, with the time of one forward call
// beside it; then each planted fault class of the validator's tests at a
// ResNet-50 size, its verdict and pattern line in one row, and the
// one-pixel shift at conv 64 -> 64 on 56x56 as a user sees it. The
// specification is given by its rows (a conv rule written here,
// pm::PoolRows for the pooling), never materialised. Not a test: run by
// hand,
//   build/bench/pm_bench_check_equal [--quick] [--only TEXT]
// --quick: float32 only; --only: the rows whose name contains TEXT, and no
// planted fault unless TEXT is "fault".
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "pm/layers/pool.hpp"
#include "pm/validate/conformance.hpp"

namespace {

using pm::Index;

// The faults planted in the implementation: the classes of
// tests/validate/equal.cpp and tests/validate/support/hand_conv.hpp that
// change coefficients, at full size.
enum class Fault {
  none,
  shift,       // the input rows read one too low (a padding offset)
  flipped,     // both kernel axes reversed: a convolution
  wrong_group, // group g reads the input channels of group g + 1
  last_row,    // the last input row never read: an off-by-one at one border
  single,      // one term of output 0 counted twice
  transposed,  // the weight read as (c_out, c_in) (a 1x1 conv or a Linear)
  reversed,    // kernel axis 0 alone reversed
  dilation,    // kernel axis 1 read with dilation 2
  last_group,  // the last group's outputs read nothing
  stride_swap, // axis 0 stepped by the stride of axis 1 and the reverse
  stride_lost, // axis 1 stepped by 1, not by its stride
};

// conv 2-D, channels last: X = (h, w, c), Y = (h', w', o), P = (kh, kw,
// c/groups, o), strides (sh, sw), padding k/2 on each side (pm::conv's
// layout).
struct Conv {
  Index n, c, o, k, groups, sh = 1, sw = 1;
  Index pad() const { return k / 2; }
  Index cg() const { return c / groups; }
  Index og() const { return o / groups; }
  Index oh() const { return (n + 2 * pad() - k) / sh + 1; }
  Index ow() const { return (n + 2 * pad() - k) / sw + 1; }
  pm::Shape source() const { return pm::Shape({n, n, c}); }
  pm::Shape target() const { return pm::Shape({oh(), ow(), o}); }
  pm::Shape parameters() const { return pm::Shape({k, k, cg(), o}); }
  // Calls term(x, p) for every product into output (i, j, co), with `fault`.
  template <class Term> void row(Index i, Index j, Index co, Term &&term, Fault fault) const {
    const Index g = co / og(), gin = fault == Fault::wrong_group ? (g + 1) % groups : g;
    if (fault == Fault::last_group && g == groups - 1) return;
    const Index si = fault == Fault::stride_swap ? sw : sh, sj = fault == Fault::stride_swap   ? sh
                                                                 : fault == Fault::stride_lost ? 1
                                                                                               : sw;
    for (Index a = 0; a < k; ++a)
      for (Index b = 0; b < k; ++b) {
        const bool flip = fault == Fault::flipped;
        const Index ka = flip || fault == Fault::reversed ? k - 1 - a : a,
                    kb = flip ? k - 1 - b : b;
        const long long hi = (long long)(i * si + a) - (long long)pad() + (fault == Fault::shift),
                        wi = (long long)(j * sj + b * (fault == Fault::dilation ? 2 : 1)) -
                             (long long)pad();
        if (hi < 0 || hi >= (long long)n || wi < 0 || wi >= (long long)n) continue;
        if (fault == Fault::last_row && hi == (long long)n - 1) continue;
        for (Index ci = 0; ci < cg(); ++ci) {
          const Index x = (Index(hi) * n + Index(wi)) * c + gin * cg() + ci;
          const Index p = fault == Fault::transposed ? ((ka * k + kb) * o + co) * cg() + ci
                                                     : ((ka * k + kb) * cg() + ci) * o + co;
          term(x, p);
          if (fault == Fault::single && i + j + co + ci == 0 && a == pad() && b == pad())
            term(x, p);
        }
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
    const Index co = y % cv.o, j = (y / cv.o) % cv.ow(), i = y / (cv.o * cv.ow());
    cv.row(
        i, j, co,
        [&](Index x, Index p) {
          out.push_back({x, p, 1});
        },
        Fault::none);
  }
  Index max_row() const override { return cv.k * cv.k * cv.cg(); }
  Index max_column() const override { return cv.k * cv.k * cv.og(); }
  Index max_parameter_use() const override { return cv.n * cv.n; }
};

// The implementation: the same loops in S, with its adjoints, and an
// optional planted fault.
template <class S> struct ConvImpl {
  using scalar_type = S;
  Conv cv;
  Fault fault = Fault::none;
  Index source_size() const { return cv.source().size(); }
  Index target_size() const { return cv.target().size(); }
  Index parameter_size() const { return cv.parameters().size(); }
  template <class Term> void each(Term &&term) const {
#pragma omp parallel for schedule(static)
    for (long long y = 0; y < (long long)target_size(); ++y) {
      const Index co = Index(y) % cv.o, j = (Index(y) / cv.o) % cv.ow(),
                  i = Index(y) / (cv.o * cv.ow());
      cv.row(
          i, j, co, [&](Index x, Index p) { term(Index(y), x, p); }, fault);
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
      const Index co = y % cv.o, j = (y / cv.o) % cv.ow(), i = y / (cv.o * cv.ow());
      cv.row(
          i, j, co, [&](Index x, Index p) { term(y, x, p); }, fault);
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

// Average pooling 3x3, stride 1, padding 1, on n x n x c (channels last),
// times its one parameter. PyTorch's count_include_pad=True divides by 9
// everywhere; `counting` divides by the points inside (the planted fault: a
// wrong divisor at the borders).
template <class S> struct AvgPoolImpl {
  using scalar_type = S;
  Index n, c;
  bool counting = false;
  Index source_size() const { return n * n * c; }
  Index target_size() const { return n * n * c; }
  Index parameter_size() const { return 1; }
  pm::Function<S> apply(const pm::Function<S> &w, const pm::Function<S> &x) const {
    pm::Function<S> y(target_size(), S(0));
#pragma omp parallel for schedule(static)
    for (long long ii = 0; ii < (long long)n; ++ii)
      for (Index i = Index(ii), j = 0; j < n; ++j) {
        const Index i0 = i == 0 ? 0 : i - 1, i1 = std::min(n - 1, i + 1);
        const Index j0 = j == 0 ? 0 : j - 1, j1 = std::min(n - 1, j + 1);
        const S divisor = S(counting ? (i1 - i0 + 1) * (j1 - j0 + 1) : 9);
        for (Index ch = 0; ch < c; ++ch) {
          S sum = 0;
          for (Index a = i0; a <= i1; ++a)
            for (Index b = j0; b <= j1; ++b) sum += x[(a * n + b) * c + ch];
          y[(i * n + j) * c + ch] = w[0] * sum / divisor;
        }
      }
    return y;
  }
};

// The forward row's localisation and pattern lines (the second and third
// of its detail), for a one-row summary.
std::string localised(const pm::Report &rep) {
  for (const pm::LawResult &r : rep.results) {
    if (r.law != "CONF-EQUAL forward") continue;
    std::istringstream lines(r.detail);
    std::string line, out;
    for (int i = 0; i < 3 && std::getline(lines, line); ++i)
      if (i > 0) out += (i > 1 ? "; " : "") + line.substr(line.find_first_not_of(' '));
    return out;
  }
  return "(no CONF-EQUAL forward row)";
}

// Every planted fault class at a ResNet-50 size, in float32: the verdict,
// the time and the pattern line; then the shift's report as a user sees it.
void planted_faults() {
  std::printf(
      "\n| fault | layer | CONF-EQUAL (s) | verdict | localised |\n|---|---|---|---|---|\n");
  struct Planted {
    const char *fault, *layer;
    Conv c;
    Fault f;
  };
  const Planted planted[] = {
      {"one-pixel shift", "conv 3x3 64->64 on 56x56", {56, 64, 64, 3, 1}, Fault::shift},
      {"flipped kernel", "conv 3x3 64->64 on 56x56", {56, 64, 64, 3, 1}, Fault::flipped},
      {"groups wired to the wrong group",
       "conv 3x3 256->256 32 groups 28",
       {28, 256, 256, 3, 32},
       Fault::wrong_group},
      {"last input row never read",
       "conv 3x3 64->64 on 56x56",
       {56, 64, 64, 3, 1},
       Fault::last_row},
      {"one term counted twice", "conv 3x3 64->64 on 56x56", {56, 64, 64, 3, 1}, Fault::single},
      {"transposed weight", "Linear 4096->4096", {1, 4096, 4096, 1, 1}, Fault::transposed},
      {"kernel axis 0 reversed", "conv 3x3 64->64 on 56x56", {56, 64, 64, 3, 1}, Fault::reversed},
      {"dilation 2 on axis 1", "conv 3x3 64->64 on 56x56", {56, 64, 64, 3, 1}, Fault::dilation},
      {"last group reads nothing",
       "conv 3x3 256->256 32 groups 28",
       {28, 256, 256, 3, 32},
       Fault::last_group},
      {"stride on the wrong axis",
       "conv 3x3 64->64 stride (2, 1) on 56x56",
       {56, 64, 64, 3, 1, 2, 1},
       Fault::stride_swap},
      {"stride of axis 1 lost",
       "conv 3x3 128->128 stride 2 on 56x56",
       {56, 128, 128, 3, 1, 2, 2},
       Fault::stride_lost},
  };
  auto row = [](const char *fault, const char *layer, double seconds, const pm::Report &rep) {
    std::printf("| %s | %s | %.1f | %s | %s |\n", fault, layer, seconds,
                rep.passed() ? "passed" : "failed", localised(rep).c_str());
    std::fflush(stdout);
  };
  for (const Planted &p : planted) {
    const auto t = std::chrono::steady_clock::now();
    const pm::Report rep =
        pm::check_equal(description(p.c), ConvRows(p.c), ConvImpl<float>{p.c, p.f}, 1, p.fault);
    row(p.fault, p.layer, seconds_since(t), rep);
  }
  // A wrong divisor at the borders: count_include_pad=False for True.
  const Index n = 56, c = 64;
  pm::io::LayerDescription d;
  d.file = "avg pool";
  d.source = d.target = pm::Shape({n, n, c});
  d.parameters = pm::Shape(std::vector<Index>{});
  const pm::PoolRows pool(pm::PoolSpec{{n, n}, c, {3, 3}, {1, 1}, {1, 1}, {1, 1}, true, false});
  const auto t = std::chrono::steady_clock::now();
  const pm::Report rep = pm::check_equal(d, pool, AvgPoolImpl<float>{n, c, true}, 1, "avg pool");
  row("divisor of the inside points at the borders", "avg pool 3x3 pad 1, 64 on 56x56",
      seconds_since(t), rep);
  const Conv shifted{56, 64, 64, 3, 1};
  std::cout << "\n"
            << pm::to_text(pm::check_equal(description(shifted), ConvRows(shifted),
                                           ConvImpl<float>{shifted, Fault::shift}, 1,
                                           "shifted conv"));
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
      {"conv 3x3 128->128 stride 2 on 56", {56, 128, 128, 3, 1, 2, 2}},
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
  if (only.empty() || only == "fault") planted_faults();
  return 0;
}
