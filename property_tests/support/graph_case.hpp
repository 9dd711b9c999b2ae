#pragma once
// A random graph convolution for the kernel properties (kernels_span.cpp,
// kernels_graph.cpp): sizes from RapidCheck within the given ranges; the
// endpoints from the case's seed (pm::kernels::with_endpoints).
#include <random>
#include <sstream>
#include <string>

#include <rapidcheck.h>

#include "pm/kernels/check_cases.hpp"
#include "support/case_ranges.hpp"

namespace pm_test {

using pm::kernels::GraphCase;
using pm::kernels::with_endpoints;

// The sizes of pm::kernels::case_ranges::GraphSizes; the endpoints are left
// to with_endpoints.
inline rc::Gen<GraphCase> graph_cases(const pm::kernels::case_ranges::GraphSizes &sizes) {
  return rc::gen::exec([=] {
    GraphCase c;
    c.spec.nodes = *in({1, sizes.max_nodes});
    c.spec.edges.resize(*in({0, sizes.max_edges}));
    c.spec.in_channels = *in({1, sizes.max_channels});
    c.spec.out_channels = *in({1, sizes.max_channels});
    c.spec.self_loops = *rc::gen::arbitrary<bool>();
    c.spec.norm = *one_of(pm::kernels::case_ranges::norms);
    c.batch = *in(sizes.batch);
    c.seed = *rc::gen::arbitrary<std::uint32_t>();
    return c;
  });
}

} // namespace pm_test
