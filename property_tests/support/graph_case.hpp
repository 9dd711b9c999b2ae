#pragma once
// A random graph convolution for the kernel properties (kernels_span.cpp,
// kernels_graph.cpp): sizes from RapidCheck, endpoints from the case's seed,
// and the one-line reproduction of a case.
#include <random>
#include <sstream>
#include <string>

#include <rapidcheck.h>

#include "pm/layers/graph_conv.hpp"

namespace pm_test {

struct GraphCase {
  pm::GraphConvSpec spec;
  pm::Index batch = 1;
  std::uint32_t seed = 0;
};

inline const char *norm_name(pm::GraphNorm n) {
  switch (n) {
  case pm::GraphNorm::sum:
    return "sum";
  case pm::GraphNorm::mean:
    return "mean";
  case pm::GraphNorm::symmetric:
    return "symmetric";
  }
  return "?";
}

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

// The case with its endpoints drawn from its seed, a quarter of the edges
// repeating an earlier one.
inline GraphCase with_endpoints(GraphCase c) {
  std::mt19937 g(c.seed);
  for (auto &[u, v] : c.spec.edges) {
    u = g() % c.spec.nodes;
    v = g() % c.spec.nodes;
  }
  for (pm::Index e = 1; e < c.spec.edges.size(); ++e)
    if (g() % 4 == 0) c.spec.edges[e] = c.spec.edges[g() % e];
  return c;
}

inline std::string graph_repro(const GraphCase &c, const char *type) {
  std::ostringstream os;
  os << "graph<" << type << "> nodes=" << c.spec.nodes << " edges=" << c.spec.edges.size()
     << " channels=" << c.spec.in_channels << "->" << c.spec.out_channels
     << " self_loops=" << c.spec.self_loops << " norm=" << norm_name(c.spec.norm)
     << " batch=" << c.batch << " seed=" << c.seed;
  return os.str();
}

} // namespace pm_test
