#pragma once
// A random graph convolution for the kernel properties (kernels_span.cpp,
// kernels_graph.cpp): sizes from RapidCheck; the endpoints from the case's
// seed (pm::kernels::with_endpoints).
#include <random>
#include <sstream>
#include <string>

#include <rapidcheck.h>

#include "pm/kernels/check_cases.hpp"

namespace pm_test {

using pm::kernels::GraphCase;
using pm::kernels::with_endpoints;

// 1 to max_nodes nodes, up to max_edges edges (so isolated nodes occur), 1 to
// max_channels channels each way, batches of 1 to 5; the endpoints are left
// to with_endpoints.
inline rc::Gen<GraphCase> graph_cases(pm::Index max_nodes, pm::Index max_edges,
                                      pm::Index max_channels) {
  return rc::gen::exec([=] {
    GraphCase c;
    c.spec.nodes = *rc::gen::inRange<pm::Index>(1, max_nodes + 1);
    c.spec.edges.resize(*rc::gen::inRange<pm::Index>(0, max_edges + 1));
    c.spec.in_channels = *rc::gen::inRange<pm::Index>(1, max_channels + 1);
    c.spec.out_channels = *rc::gen::inRange<pm::Index>(1, max_channels + 1);
    c.spec.self_loops = *rc::gen::arbitrary<bool>();
    c.spec.norm =
        *rc::gen::element(pm::GraphNorm::sum, pm::GraphNorm::mean, pm::GraphNorm::symmetric);
    c.batch = *rc::gen::inRange<pm::Index>(1, 6);
    c.seed = *rc::gen::arbitrary<std::uint32_t>();
    return c;
  });
}

} // namespace pm_test
