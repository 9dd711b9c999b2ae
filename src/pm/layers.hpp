#pragma once
// Classical layers as parametric spans (see spec/layers.md): dense with and
// without bias, convolution in any dimension and its transpose, causal time
// convolution, graph convolution, average pooling. Each is a constructor of
// an explicit span from a small structured description (DenseSpec, ConvSpec,
// …) that fast kernels can dispatch on. The seed's machines (DenseMachine,
// ConvMachine, RecurMachine) are graded span machines built from them.
#include "pm/layers/conv.hpp"
#include "pm/layers/coproduct.hpp"
#include "pm/layers/dense.hpp"
#include "pm/layers/graph_conv.hpp"
#include "pm/layers/interpolate.hpp"
#include "pm/layers/pool.hpp"
#include "pm/layers/readout.hpp"
#include "pm/layers/seed_machines.hpp"
#include "pm/layers/shuffle.hpp"
#include "pm/layers/time_conv.hpp"
#include "pm/layers/unfold.hpp"
