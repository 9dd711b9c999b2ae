#pragma once
// Fast CPU kernels for the structured machines, in float and double. Each is
// cross-checked against the reference semantics by differential property
// tests (property_tests/kernels*.cpp, docs/tolerances.md).
#include "pm/kernels/dense_machine.hpp"
#include "pm/kernels/dispatch.hpp"
#include "pm/kernels/graph_conv.hpp"
#include "pm/kernels/sequence_machine.hpp"
#include "pm/kernels/weight_gradient.hpp"
