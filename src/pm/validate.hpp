#pragma once
// The validator (see docs/formats.md, "Validation"): pm::validate(layer) runs
// the laws of spec/ on any type satisfying pm::Layer and returns a Report of
// passed / failed / too weak / not applicable results with shrunk
// counterexamples.
#include "pm/validate/layer.hpp"
#include "pm/validate/layer_laws.hpp"
#include "pm/validate/machine_laws.hpp"
#include "pm/validate/report.hpp"
