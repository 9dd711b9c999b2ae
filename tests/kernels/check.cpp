// pmach check --kernels decides with the rows of src/pm/validate/kernel_checks.hpp:
// a planted wrong kernel fails its row, with the case's description and a
// reproduction that, run alone, fails again on the same case; a kernel whose
// bits change with the thread count fails KERNEL-THREADS; the correct kernels
// pass on the same cases.
#include "pm/validate/kernel_checks.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cmath>
#include <limits>

using namespace pm;
namespace kc = pm::kernel_checks;

namespace {

const kc::Source source{"pmach check --kernels"};

kernels::MachineProblem<double> correct(std::mt19937 &g) {
  return kernels::problem<double>(kc::dense_case(g));
}

// The dense forward sweep reading W transposed.
kernels::MachineProblem<double> transposed(std::mt19937 &g) {
  const kernels::DenseCase dc = kc::dense_case(g);
  kernels::MachineProblem<double> p = kernels::problem<double>(dc);
  const kernels::DenseMachineShape shape = kernels::shape_of(dc);
  const Index n = shape.channels();
  p.kernel.forward = [=](auto w, auto y0, auto z0, auto y, auto z) {
    std::vector<double> wt(w.size());
    for (Index x = 0; x < n; ++x)
      for (Index t = 0; t < n; ++t) wt[x * n + t] = w[t * n + x];
    kernels::dense_forward<double>(shape, dc.c.sigma, wt, y0, z0, y, z);
  };
  return p;
}

// A weight gradient one ulp off in its first entry when run with more than
// one thread.
kernels::MachineProblem<double> thread_dependent(std::mt19937 &g) {
  kernels::MachineProblem<double> p = correct(g);
  auto gradient = p.kernel.gradient;
  p.kernel.gradient = [gradient](auto z, auto yb, auto dw) {
    gradient(z, yb, dw);
    if (omp_get_max_threads() > 1 && !dw.empty())
      dw[0] = std::nextafter(dw[0], std::numeric_limits<double>::infinity());
  };
  return p;
}

const auto compare_forward = [](const auto &p) { return kernels::compare_forward(p); };

std::uint64_t reproduction_seed(const std::string &detail) {
  const std::string key = "reproduce: pmach check --kernels --seed ";
  const auto at = detail.find(key);
  REQUIRE(at != std::string::npos);
  return std::stoull(detail.substr(at + key.size()));
}

} // namespace

TEST_CASE("pmach check --kernels: a planted transposed read fails, and its reproduction too") {
  const ValidateOptions opt{30, 5};
  const LawResult good =
      kc::row("KERNEL-DENSE-FORWARD", "dense", opt, 1, source, correct, compare_forward);
  CHECK(good.status == Status::passed);
  CHECK(good.cases == 30);
  CHECK(good.bound > 0);
  CHECK(good.max_error <= good.bound);

  const LawResult bad =
      kc::row("KERNEL-DENSE-FORWARD", "dense", opt, 1, source, transposed, compare_forward);
  INFO(bad.detail);
  REQUIRE(bad.status == Status::failed);
  CHECK(bad.max_error > bad.bound);
  CHECK(bad.detail.find("dense<double> sigma=") == 0); // the case's description first
  CHECK(bad.detail.find(" --cases 1") != std::string::npos);
  // The reproduction, run alone, fails first on the same case.
  const LawResult again =
      kc::row("KERNEL-DENSE-FORWARD", "dense", {1, reproduction_seed(bad.detail)}, 1, source,
              transposed, compare_forward);
  CHECK(again.status == Status::failed);
  CHECK(again.cases == 1);
  CHECK(again.detail == bad.detail);
}

TEST_CASE("pmach check --kernels: bits that change with the thread count fail KERNEL-THREADS") {
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  const ValidateOptions opt{10, 3};
  CHECK(kc::threads_row("dense", opt, 1, source, correct).status == Status::passed);
  const LawResult bad = kc::threads_row("dense", opt, 1, source, thread_dependent);
  CHECK(bad.status == Status::failed);
  CHECK(bad.detail.find("differ between 1 and 2 threads") != std::string::npos);
  omp_set_num_threads(1);
  CHECK(kc::threads_row("dense", opt, 1, source, thread_dependent).status ==
        Status::not_applicable);
  omp_set_num_threads(before);
}

TEST_CASE("pmach check --kernels: a row whose every case is too weak is not passed") {
  // σ = identity, W = 0 and y0 = z0 = 0 make every output 0, below its bound.
  auto zeros = [](std::mt19937 &g) {
    kernels::DenseCase dc = kc::dense_case(g);
    dc.c.sigma = kernels::Activation::identity;
    kernels::MachineProblem<double> p = kernels::problem<double>(dc);
    for (auto *v : {&p.w, &p.a, &p.b}) std::fill(v->begin(), v->end(), 0.0);
    return p;
  };
  const LawResult r =
      kc::row("KERNEL-DENSE-FORWARD", "dense", {5, 1}, 1, source, zeros, compare_forward);
  CHECK(r.status == Status::too_weak);
  CHECK(r.cases == 5);
}
