#pragma once
// The parts of the module pmach._pmach compiled in translation units of their
// own, so that they build in parallel: the report (report.cpp), the layer
// (layer.cpp) and the machine (machine.cpp) classes; module.cpp binds the
// rest and calls these.
#include "arrays.hpp"

namespace pmach_py {

inline py::tuple tuple_of(const Shape &s) { return py::cast(s.extents()); }

// Anything NumPy reads as an array (lists, tensors): arguments are taken as
// objects so that a bad one is answered by the shape check's message.
inline py::array array_arg(const py::object &o) {
  return py::module_::import("numpy").attr("asarray")(o);
}

inline const char *precision_doc =
    R"(precision: "float" (float32 in and out), "double" (default) or "exact"
(over the rationals, rounded once to float64 on output). kernels=True runs the
fast CPU kernels (float or double) instead of the reference semantics.)";

void bind_report(py::module_ &m);
void bind_layer(py::module_ &m);
void bind_machine(py::module_ &m);

} // namespace pmach_py
