// pmach check --kernels --law/--subject: the kernel rows a selection leaves
// out are not run. Counted on the problems a row draws: a row that runs
// draws one problem per case, a row left out none.
#include <catch2/catch.hpp>

#include "pm/validate/kernel_checks.hpp"

using namespace pm;
namespace kc = pm::kernel_checks;

namespace {

ValidateOptions selecting(const std::string &law, std::size_t cases) {
  ValidateOptions o{cases, 1};
  o.select = [law](const std::string &l, const std::string &) { return l == law; };
  return o;
}

const std::array<std::string, 3> dense_laws{"KERNEL-DENSE-FORWARD", "KERNEL-DENSE-DUAL",
                                            "KERNEL-DENSE-GRADIENT"};

} // namespace

TEST_CASE("check --kernels: a selection of one law draws only that row's cases") {
  std::size_t drawn = 0;
  auto counting = [&](auto t, std::mt19937 &g) {
    ++drawn;
    return kernels::problem<decltype(t)>(kc::dense_case(g));
  };
  const kc::Source source{"pmach check --kernels"};
  Report all;
  kc::machine_rows<double>(all, dense_laws, "dense machine", ValidateOptions{3, 1}, 1, source,
                           counting);
  CHECK(all.results.size() == 4);
  CHECK(drawn == 4 * 3); // four rows of three cases
  drawn = 0;
  Report one;
  kc::machine_rows<double>(one, dense_laws, "dense machine", selecting("KERNEL-DENSE-DUAL", 3), 1,
                           source, counting);
  REQUIRE(one.results.size() == 1);
  CHECK(one.results[0].law == "KERNEL-DENSE-DUAL");
  CHECK(one.results[0].subject == "dense machine dual (double)");
  CHECK(one.results[0].cases == 3);
  CHECK(drawn == 3);
  REQUIRE(one.left_out.size() == 3);
  CHECK(one.left_out[0].first == "KERNEL-DENSE-FORWARD");
  CHECK(one.left_out[2].first == "KERNEL-THREADS");
  CHECK(one.left_out[2].second == kc::threads_subject("dense machine (double)"));
}

TEST_CASE(
    "check --kernels: a selection of the thread rows runs them for every kernel, and no other") {
  const Report r = check_kernels(selecting("KERNEL-THREADS", 2));
  // Seven kernels (dense, conv 1/2/3-D, recurrent, span, graph) in float and double.
  CHECK(r.results.size() == 14);
  CHECK(r.left_out.size() == 14 * 3);
  for (const auto &row : r.results) {
    CHECK(row.law == "KERNEL-THREADS");
    CHECK(row.cases == (omp_get_max_threads() > 1 ? 2u : 0u));
  }
}
