// pmach._pmach: the class Layer (bindings.hpp).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "save.hpp"

namespace pmach_py {

void bind_layer(py::module_ &m) {
  py::class_<LayerModel> c(m, "Layer", R"(A layer: a parametric span between shaped spaces.

(L_w x)(y) = sum over edges e with t(e) = y of mu(e) w(pi(e)) x(s(e)). Made by
pmach.load, the pmach.layers constructors or pmach.recover. Arrays are in the
model's layout: x has shape (n, *source_shape), the result (n, *target_shape),
w has parameter_shape; an x without the batch axis is one sample.)");
  bind_copies<LayerModel>(c);
  c.def_property_readonly(
       "name", [](const LayerModel &l) { return l.d.name; }, "The model's name.")
      .def_property_readonly(
          "source_shape", [](const LayerModel &l) { return tuple_of(l.d.source); },
          "The shape of the input space X.")
      .def_property_readonly(
          "target_shape", [](const LayerModel &l) { return tuple_of(l.d.target); },
          "The shape of the output space Y.")
      .def_property_readonly(
          "parameter_shape", [](const LayerModel &l) { return tuple_of(l.d.parameters); },
          "The shape of the parameter space P (() when the layer has none).")
      .def_property_readonly(
          "edges", [](const LayerModel &l) { return pm::io::edges_of(l.d, l.who()).apex(); },
          "The number of edges of the span (an error for a layer held by its rule alone).")
      .def_property(
          "weights", [](const LayerModel &l) { return weights_array(l.d.weights, l.d.parameters); },
          [](LayerModel &l, const py::object &w) {
            l.d.weights = stored_weights(w, l.d.parameters);
          },
          "The default parameters (an array of parameter_shape), or None.")
      .def(
          "init_weights",
          [](LayerModel &l, std::uint64_t seed) { l.d.weights = glorot(l.d.parameters, seed); },
          py::arg("seed") = 1, "Sets Glorot-uniform default weights from a seed.")
      .def(
          "forward",
          [](const LayerModel &l, const py::object &x, const py::object &w, const std::string &p,
             bool kernels) {
            return with_precision(precision_of(p), [&](auto s) -> py::object {
              return l.forward<decltype(s)>(array_arg(x, "x"), w, kernels);
            });
          },
          py::arg("x"), py::arg("w") = py::none(), py::kw_only(), py::arg("precision") = "double",
          py::arg("kernels") = false,
          (std::string("L_w x. w=None uses the layer's weights. ") + precision_doc).c_str())
      .def(
          "backward",
          [](const LayerModel &l, const py::object &x, const py::object &g, const py::object &w,
             const std::string &p, bool kernels) {
            return with_precision(precision_of(p), [&](auto s) -> py::object {
              return l.backward<decltype(s)>(array_arg(x, "x"), array_arg(g, "g"), w, kernels);
            });
          },
          py::arg("x"), py::arg("g"), py::arg("w") = py::none(), py::kw_only(),
          py::arg("precision") = "double", py::arg("kernels") = false,
          (std::string("(grad_x, grad_w) = (L_w^T g, gradient in w of sum_b <g_b, L_w x_b>). ") +
           precision_doc)
              .c_str())
      .def(
          "save",
          [](const LayerModel &l, const py::object &path) {
            save_layer(l, path_arg(path, "save"));
          },
          py::arg("path"),
          "Writes the layer as a model file PATH.json (and PATH.W.npy for its weights).")
      .def("__repr__", [](const LayerModel &l) {
        return "<pmach.Layer " + l.d.name + ": " + tuple_text(l.d.source.extents()) + " -> " +
               tuple_text(l.d.target.extents()) + ", parameters " +
               tuple_text(l.d.parameters.extents()) + ", " +
               (l.d.span_held
                    ? std::to_string(l.d.span.apex()) + " edges>"
                    : "held by its rule, up to " +
                          std::to_string(l.d.rows->target() * l.d.rows->max_row()) + " edges>");
      });
}

} // namespace pmach_py
