#pragma once
// The parts of the module pmach._pmach compiled in translation units of their
// own, so that they build in parallel: the report (report.cpp), the layer
// (layer.cpp) and the machine (machine.cpp) classes; module.cpp binds the
// rest and calls these.
#include "arrays.hpp"
#include "save.hpp"

namespace pmach_py {

inline py::tuple tuple_of(const Shape &s) { return py::cast(s.extents()); }

// Anything NumPy reads as an array of real numbers (lists, tensors):
// arguments are taken as objects so that a bad one is answered by the
// shape check's message, naming the argument.
inline py::array array_arg(const py::object &o, const char *what) { return real_array(o, what); }

// Models are copied as they are (the derived spans and plans are rebuilt on
// use) and pickled as their model file (save.hpp).
template <class Model, class Class> void bind_copies(Class &c) {
  c.def("__copy__", [](const Model &m) { return Model(m); })
      .def(
          "__deepcopy__", [](const Model &m, const py::dict &) { return Model(m); },
          py::arg("memo"))
      .def(py::pickle([](const Model &m) { return model_state(m); },
                      [](const py::tuple &t) { return model_from_state<Model>(t); }));
}

inline const char *precision_doc =
    R"(precision: "float" (float32 in and out), "double" (default) or "exact"
(over the rationals, rounded once to float64 on output). kernels=True runs the
fast CPU kernels (float or double) instead of the reference semantics.)";

void bind_report(py::module_ &m);
void bind_layer(py::module_ &m);
void bind_machine(py::module_ &m);

} // namespace pmach_py
