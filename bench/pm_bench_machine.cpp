// pm_bench_machine: times one machine's kernels on given inputs and prints
// the result as JSON; bench/compare_pytorch.py drives it with the inputs it
// also gives PyTorch, and reads back the outputs to check agreement.
//
//   pm_bench_machine dense --dims 32,32,32,32,32 --batch 32 [common options]
//   pm_bench_machine conv --dims ... --batch B --length L --pad-lo P --pad-hi Q [...]
//   pm_bench_machine conv --dims ... --batch B --extents E0,E1[,E2] --pad LO0,HI0,LO1,HI1,... [...]
//   pm_bench_machine recur --dims ... --batch B --length L --max-lag P --timeblock T [...]
//   pm_bench_machine graph --nodes N --edges E --channels CI,CO --batch B --io DIR [...]
//   pm_bench_machine gemm --size N [--dtype ...] [--threads T] [--budget SECONDS]
//   pm_bench_machine isa   (the vector instructions the kernels were compiled for)
// common options: [--dtype float32|float64] [--threads T] [--io DIR] [--budget SECONDS]
//                 [--fan-in F] (Glorot scale of the generated weights without --io)
//                 [--slope auto|kept|recomputed] (whether the forward keeps σ'(y) for
//                 the dual: auto follows keeps_slope, as kernels::forward does)
//                 [--layout auto|channels_last|channels_first] (conv and recur: the kernels'
//                 states position-major (B, positions..., N) or channel-major
//                 (B, N, positions...), SequencePlan::channels_first; auto: channel-major
//                 where the plan takes the direct path, whose rows are channel-major)
//
// With --io, inputs are read from DIR/{w,y0,z0,gy,gz}.bin (raw little-endian
// arrays in the library's layout: states position-major, converted to
// --layout's outside the timing, as at the boundary of a call) and outputs written to
// DIR/{y,z,ybar,zbar,dw}.bin. Each pass is timed call by call, as many calls
// as fit the budget (at least 11); the JSON holds the median and minimum in
// microseconds.
#include "problems.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

using namespace pm::kernels;
using pm::Index;

namespace {

struct Args {
  std::string command;
  std::map<std::string, std::string> options;

  std::string get(const std::string &key, const std::string &fallback) const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  }
};

Args parse(int argc, char **argv) {
  pm::require(argc >= 2, "usage: pm_bench_machine dense|gemm [--option value]...");
  Args a{argv[1], {}};
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    pm::require(key.rfind("--", 0) == 0 && i + 1 < argc, "pm_bench_machine: argument ", i, " (",
                key, ") expected --option value");
    a.options[key.substr(2)] = argv[i + 1];
  }
  return a;
}

std::vector<Index> parse_dims(const std::string &text) {
  std::vector<Index> dims;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) dims.push_back(std::stoul(item));
  return dims;
}

struct Timing {
  double median_us, min_us, min_cpu_us;
  Index calls;
};

// The widest vector instruction set the compiler was allowed (-march): the
// one Eigen's packet code, and so every kernel, uses.
constexpr const char *compiled_isa() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__)
  return "avx2";
#elif defined(__AVX__)
  return "avx";
#else
  return "sse2";
#endif
}

// CPU time of the whole process (all threads): with one thread, the time a
// call ran on its core, whatever else the machine was running.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Times f call by call until `budget` seconds have passed (at least 11 calls,
// after 2 untimed warm-up calls): the median and minimum of the elapsed
// times, and the minimum CPU time of a call.
template <class F> Timing time_calls(F &&f, double budget) {
  using clock = std::chrono::steady_clock;
  f();
  f();
  std::vector<double> us;
  double cpu = 1e300;
  const auto start = clock::now();
  while (us.size() < 11 || std::chrono::duration<double>(clock::now() - start).count() < budget) {
    const double c0 = cpu_seconds();
    const auto t0 = clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
    cpu = std::min(cpu, 1e6 * (cpu_seconds() - c0));
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front(), cpu, us.size()};
}

std::string json(const std::string &name, const Timing &t) {
  std::ostringstream os;
  os << "\"" << name << "\": {\"median_us\": " << t.median_us << ", \"min_us\": " << t.min_us
     << ", \"min_cpu_us\": " << t.min_cpu_us << ", \"calls\": " << t.calls << "}";
  return os.str();
}

template <class T> void read(const std::string &path, std::vector<T> &v) {
  std::ifstream in(path, std::ios::binary);
  pm::require(bool(in), "pm_bench_machine: cannot open ", path);
  in.read(reinterpret_cast<char *>(v.data()), std::streamsize(v.size() * sizeof(T)));
  pm::require(in.gcount() == std::streamsize(v.size() * sizeof(T)), "pm_bench_machine: ", path,
              " has fewer than the expected ", v.size(), " values");
}

template <class T> void write(const std::string &path, const std::vector<T> &v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(v.data()), std::streamsize(v.size() * sizeof(T)));
  pm::require(bool(out), "pm_bench_machine: cannot write ", path);
}

// A machine's three kernels on flat buffers, and their sizes.
template <class T> struct Machine {
  Index states, weights, flops; // flops per pass, over the weights that can be non-zero
  std::function<void(const std::vector<T> &, const std::vector<T> &, const std::vector<T> &,
                     std::vector<T> &, std::vector<T> &)>
      forward;
  std::function<void(const std::vector<T> &, const std::vector<T> &, const std::vector<T> &,
                     const std::vector<T> &, std::vector<T> &, std::vector<T> &)>
      dual;
  std::function<void(const std::vector<T> &, const std::vector<T> &, std::vector<T> &)> gradient;
  // The states' layout: channel-major samples of `channels` × `positions`
  // (else position-major, the library's).
  bool channels_first = false;
  Index channels = 0, positions = 0;

  // A state in the library's layout in the kernels' (to_kernels) or back.
  std::vector<T> relayout(const std::vector<T> &v, bool to_kernels) const {
    if (!channels_first) return v;
    std::vector<T> out(v.size());
    const Index rows = to_kernels ? positions : channels, cols = to_kernels ? channels : positions;
    pm::kernels::detail::transpose_samples(v.data(), out.data(), rows, cols,
                                           v.size() / (rows * cols));
    return out;
  }
};

// Whether the forward keeps σ'(y): by default where the shape gains by it
// (`keeps`), as training and pmach.torch do (kernels::forward with a slope).
bool slope_kept(const Args &a, bool keeps) {
  const std::string v = a.get("slope", "auto");
  pm::require(v == "auto" || v == "kept" || v == "recomputed", "pm_bench_machine: --slope ", v,
              ", expected auto, kept or recomputed");
  return v == "auto" ? keeps : v == "kept";
}

template <class T> Machine<T> machine(const Args &a) {
  const std::vector<Index> dims = parse_dims(a.get("dims", ""));
  const Index batch = std::stoul(a.get("batch", "1"));
  const Activation s = Activation::tanh;
  if (a.command == "dense") {
    const DenseMachineShape d{dims, batch};
    auto slope =
        std::make_shared<std::vector<T>>(slope_kept(a, d.keeps_slope()) ? d.state_size() : 0);
    return {d.state_size(),
            d.weight_size(),
            2 * batch * d.valid_weights(),
            [=](auto &w, auto &y0, auto &z0, auto &y, auto &z) {
              dense_forward<T>(d, s, w, y0, z0, y, z, *slope);
            },
            [=](auto &w, auto &y, auto &gy, auto &gz, auto &yb, auto &zb) {
              if (slope->empty())
                dense_dual<T>(d, s, w, y, gy, gz, yb, zb);
              else
                dense_dual<T>(d, w, *slope, gy, gz, yb, zb);
            },
            [=](auto &z, auto &yb, auto &dw) { dense_weight_gradient<T>(d, z, yb, dw); }};
  }
  const Index length = std::stoul(a.get("length", "1"));
  SequencePlan p;
  if (a.command == "conv" && !a.get("extents", "").empty()) {
    p = plan(
        ConvGridShape{dims, parse_dims(a.get("extents", "")), batch, parse_dims(a.get("pad", ""))});
  } else if (a.command == "conv") {
    p = plan(ConvMachineShape{dims, length, batch, std::stoul(a.get("pad-lo", "0")),
                              std::stoul(a.get("pad-hi", "0"))});
  } else {
    pm::require(a.command == "recur", "pm_bench_machine: command ", a.command,
                ", expected dense, conv, recur or gemm");
    p = plan(RecurMachineShape{dims, length, batch, std::stoul(a.get("max-lag", "0")),
                               std::stoul(a.get("timeblock", "1"))});
  }
  const std::string layout = a.get("layout", "auto");
  pm::require(layout == "auto" || layout == "channels_last" || layout == "channels_first",
              "pm_bench_machine: --layout ", layout,
              ", expected auto, channels_last or channels_first");
  p.channels_first = layout == "auto" ? direct_wanted(p) : layout == "channels_first";
  auto slope = std::make_shared<std::vector<T>>(slope_kept(a, keeps_slope(p)) ? p.state_size() : 0);
  return {p.state_size(),
          p.weight_size(),
          2 * p.valid_terms(),
          [=](auto &w, auto &y0, auto &z0, auto &y, auto &z) {
            sequence_forward<T>(p, s, w, y0, z0, y, z, *slope);
          },
          [=](auto &w, auto &y, auto &gy, auto &gz, auto &yb, auto &zb) {
            if (slope->empty())
              sequence_dual<T>(p, s, w, y, gy, gz, yb, zb);
            else
              sequence_dual<T>(p, w, *slope, gy, gz, yb, zb);
          },
          [=](auto &z, auto &yb, auto &dw) { sequence_weight_gradient<T>(p, z, yb, dw); },
          p.channels_first,
          p.n,
          p.length};
}

template <class T> void run(const Args &a) {
  const Machine<T> m = machine<T>(a);
  const double budget = std::stod(a.get("budget", "0.5"));
  pm_bench::Inputs<T> in(m.states, m.weights, std::stoul(a.get("fan-in", "1")));
  const std::string io = a.get("io", "");
  if (!io.empty())
    for (auto [v, name] : {std::pair{&in.w, "w"}, std::pair{&in.y0, "y0"}, std::pair{&in.z0, "z0"},
                           std::pair{&in.gy, "gy"}, std::pair{&in.gz, "gz"}})
      read(io + "/" + name + ".bin", *v);
  for (auto *v : {&in.y0, &in.z0, &in.gy, &in.gz}) *v = m.relayout(*v, true);
  std::vector<T> y(m.states), z(y.size()), yb(y.size()), zb(y.size()), dw(in.w.size());
  const Timing f = time_calls([&] { m.forward(in.w, in.y0, in.z0, y, z); }, budget);
  const Timing d = time_calls([&] { m.dual(in.w, y, in.gy, in.gz, yb, zb); }, budget);
  const Timing g = time_calls([&] { m.gradient(z, yb, dw); }, budget);
  if (!io.empty())
    for (auto [v, name] : {std::pair{&y, "y"}, std::pair{&z, "z"}, std::pair{&yb, "ybar"},
                           std::pair{&zb, "zbar"}, std::pair{&dw, "dw"}})
      write(io + "/" + name + ".bin", v == &dw ? dw : m.relayout(*v, false));
  const SigmaError e = sigma_error<T>(Activation::tanh);
  std::cout << "{" << json("forward", f) << ", " << json("dual", d) << ", " << json("gradient", g)
            << ", \"flops_per_pass\": " << m.flops << ", \"threads\": " << omp_get_max_threads()
            << ", \"layout\": \"" << (m.channels_first ? "channels_first" : "channels_last") << "\""

            << ", \"flags\": \"" << PM_BENCH_FLAGS << "\", \"isa\": \"" << compiled_isa()
            << "\", \"sigma_error\": [" << double(e.value) << ", " << double(e.derivative)
            << "]}\n";
}

// The graph kernel on the graph of DIR/edges.bin (int64 pairs u, v, from u
// into v), self loops added, mean normalisation: forward L_W φ, transpose
// L_Wᵀ g and the weight gradient, from DIR/{w,phi,g}.bin to
// DIR/{out,back,dw}.bin.
template <class T> void graph(const Args &a) {
  const std::string io = a.get("io", "");
  pm::require(!io.empty(), "pm_bench_machine graph: --io DIR is required");
  pm::GraphConvSpec spec;
  spec.nodes = std::stoul(a.get("nodes", "1"));
  std::vector<std::int64_t> ends(2 * std::stoul(a.get("edges", "0")));
  read(io + "/edges.bin", ends);
  for (Index e = 0; e < ends.size(); e += 2) spec.edges.emplace_back(ends[e], ends[e + 1]);
  const std::vector<Index> channels = parse_dims(a.get("channels", "1,1"));
  pm::require(channels.size() == 2, "pm_bench_machine graph: --channels expects C_in,C_out");
  spec.in_channels = channels[0];
  spec.out_channels = channels[1];
  spec.self_loops = true;
  spec.norm = pm::GraphNorm::mean;
  const Index batch = std::stoul(a.get("batch", "1"));
  const GraphPlan<T> p = graph_plan<T>(spec);
  std::vector<T> w(channels[0] * channels[1]), phi(spec.nodes * channels[0] * batch),
      g(spec.nodes * channels[1] * batch);
  read(io + "/w.bin", w);
  read(io + "/phi.bin", phi);
  read(io + "/g.bin", g);
  // The forward keeps the aggregation H for the gradient, as autograd does.
  std::vector<T> out(g.size()), back(phi.size()), dw(w.size()), h(phi.size());
  const double budget = std::stod(a.get("budget", "0.5"));
  const Timing f = time_calls([&] { graph_forward<T>(p, w, phi, batch, out, h); }, budget);
  const Timing d = time_calls([&] { graph_transpose<T>(p, w, g, batch, back); }, budget);
  const Timing gr =
      time_calls([&] { graph_weight_gradient_from_aggregate<T>(p, h, g, batch, dw); }, budget);
  write(io + "/out.bin", out);
  write(io + "/back.bin", back);
  write(io + "/dw.bin", dw);
  std::cout << "{" << json("forward", f) << ", " << json("dual", d) << ", " << json("gradient", gr)
            << ", \"flops_per_pass\": " << p.flops(batch, channels[0])
            << ", \"threads\": " << omp_get_max_threads() << ", \"flags\": \"" << PM_BENCH_FLAGS
            << "\", \"isa\": \"" << compiled_isa() << "\"}\n";
}

// The matrix-product peak of Eigen on this machine: C = A B, all N × N, the
// columns of C split evenly among the threads (Eigen's own threading is off
// in the kernels' build).
template <class T> void gemm(const Args &a) {
  const Index n = std::stoul(a.get("size", "1024"));
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const M x = M::Random(n, n), y = M::Random(n, n);
  M c(n, n);
  const Timing t = time_calls(
      [&] {
#pragma omp parallel
        {
          const Index k = omp_get_num_threads(), i = omp_get_thread_num();
          const Index c0 = n * i / k, c1 = n * (i + 1) / k;
          c.middleCols(c0, c1 - c0).noalias() = x * y.middleCols(c0, c1 - c0);
        }
      },
      std::stod(a.get("budget", "0.5")));
  std::cout << "{" << json("gemm", t) << ", \"flops_per_pass\": " << 2 * n * n * n
            << ", \"threads\": " << omp_get_max_threads() << ", \"isa\": \"" << compiled_isa()
            << "\"}\n";
}

} // namespace

int main(int argc, char **argv) {
  try {
    const Args a = parse(argc, argv);
    omp_set_num_threads(std::stoi(a.get("threads", "1")));
    const bool single = a.get("dtype", "float32") == "float32";
    pm::require(single || a.get("dtype", "") == "float64", "pm_bench_machine: --dtype is ",
                a.get("dtype", ""), ", expected float32 or float64");
    if (a.command == "isa")
      std::cout << "{\"isa\": \"" << compiled_isa() << "\", \"flags\": \"" << PM_BENCH_FLAGS
                << "\"}\n";
    else if (a.command == "gemm")
      single ? gemm<float>(a) : gemm<double>(a);
    else if (a.command == "graph")
      single ? graph<float>(a) : graph<double>(a);
    else
      single ? run<float>(a) : run<double>(a);
  } catch (const std::exception &e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
