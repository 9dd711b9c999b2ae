// pmach._pmach: the class Machine (bindings.hpp).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "save.hpp"

namespace pmach_py {

// The keyword channels_first of Machine.forward and backward.
constexpr const char *channels_first_doc =
    "channels_first=True: every state (y0, z0, y, z, ybar, zbar and the results) has the last "
    "axis of space_shape, a machine's channels, first: (n, N, *positions) for space_shape "
    "(*positions, N); the kernels read it in place, the reference solver through a copy. ";

void bind_machine(py::module_ &m) {
  py::class_<MachineModel> c(m, "Machine", R"(A machine of finite depth: a graded span machine.

The state (y, z) solves y = y0 + L_w~ z, z = z0 + sigma(y), where w~ keeps the
weights whose every edge raises the grade. Made by pmach.load or the
constructors pmach.DenseMachine, pmach.ConvMachine, pmach.RecurMachine.
States have shape (n, *space_shape), channels last; with channels_first=True
the last axis comes first, (n, N, *positions) as PyTorch's NCHW. w has
parameter_shape.)");
  bind_copies<MachineModel>(c);
  c.def_property_readonly(
       "name", [](const MachineModel &k) { return k.d.name; }, "The model's name.")
      .def_property_readonly(
          "kind",
          [](const MachineModel &k) {
            return k.d.seed ? k.d.seed->kind : std::string("graded span machine");
          },
          "DenseMachine, ConvMachine, RecurMachine or graded span machine.")
      .def_property_readonly(
          "sigma", [](const MachineModel &k) { return k.d.sigma.name; },
          "The name of the nonlinearity sigma.")
      .def_property_readonly(
          "dims",
          [](const MachineModel &k) -> py::object {
            if (!k.d.seed) return py::none();
            return py::cast(k.d.seed->dims);
          },
          "The channel blocks of a seed machine (None for other machines).")
      .def_property_readonly(
          "space_shape", [](const MachineModel &k) { return tuple_of(k.d.space); },
          "The shape of the graded index set I (a state is (n, *space_shape)).")
      .def_property_readonly(
          "parameter_shape", [](const MachineModel &k) { return tuple_of(k.d.parameters); },
          "The shape of the parameters W.")
      .def_property_readonly(
          "levels", [](const MachineModel &k) { return k.d.grading.levels(); },
          "The number of levels of the grading (the depth bound).")
      .def_property(
          "weights",
          [](const MachineModel &k) { return weights_array(k.d.weights, k.d.parameters); },
          [](MachineModel &k, const py::object &w) {
            k.d.weights = stored_weights(w, k.d.parameters);
          },
          "The default parameters (an array of parameter_shape), or None.")
      .def(
          "init_weights",
          [](MachineModel &k, std::uint64_t seed) { k.d.weights = glorot(k.d.parameters, seed); },
          py::arg("seed") = 1, "Sets Glorot-uniform default weights from a seed.")
      .def(
          "forward",
          [](const MachineModel &k, const py::object &y0, const py::object &z0, const py::object &w,
             const std::string &p, bool kernels, bool keep_slope, bool channels_first) {
            return with_precision(precision_of(p), [&](auto s) -> py::object {
              return k.forward<decltype(s)>(array_arg(y0, "y0"), z0, w, kernels, keep_slope,
                                            StateLayout{channels_first});
            });
          },
          py::arg("y0"), py::arg("z0") = py::none(), py::arg("w") = py::none(), py::kw_only(),
          py::arg("precision") = "double", py::arg("kernels") = false,
          py::arg("keep_slope") = false, py::arg("channels_first") = false,
          (std::string("(y, z), the solution of the machine equation; z0=None is zero. "
                       "keep_slope=True gives (y, z, slope): sigma'(y) where the kernel keeps it "
                       "for backward (a dense, convolution or recurrent machine with kernels=True "
                       "whose pieces of samples are small enough to gain by it; a convolution's "
                       "or recurrent machine's slope is in the kernel's own order, for backward "
                       "only), else None. ") +
           channels_first_doc + precision_doc)
              .c_str())
      .def(
          "backward",
          [](const MachineModel &k, const py::object &y0, const py::object &z0,
             const py::object &ybar, const py::object &zbar, const py::object &w,
             const std::string &p, const py::object &state, bool kernels, bool channels_first) {
            return with_precision(precision_of(p), [&](auto s) -> py::object {
              return k.backward<decltype(s)>(y0, z0, ybar, zbar, w, state, kernels,
                                             StateLayout{channels_first});
            });
          },
          py::arg("y0") = py::none(), py::arg("z0") = py::none(), py::arg("ybar") = py::none(),
          py::arg("zbar") = py::none(), py::arg("w") = py::none(), py::kw_only(),
          py::arg("precision") = "double", py::arg("state") = py::none(),
          py::arg("kernels") = false, py::arg("channels_first") = false,
          (std::string("(grad_y0, grad_z0, grad_w) for the cotangents ybar of y and zbar of z "
                       "(None is zero); grad_w is summed over the batch and cleaned. "
                       "state=(y, z) from forward at the same w skips recomputing it; "
                       "state=(y, z, slope) from forward(keep_slope=True) also skips sigma' "
                       "(with the same channels_first). ") +
           channels_first_doc + precision_doc)
              .c_str())
      .def(
          "save",
          [](const MachineModel &k, const py::object &path) {
            save_machine(k, path_arg(path, "save"));
          },
          py::arg("path"),
          "Writes the machine as a model file PATH.json (and PATH.W.npy for its weights).")
      .def("__repr__", [](const MachineModel &k) {
        return "<pmach.Machine " + (k.d.name.empty() ? k.who() : k.d.name) + ": space " +
               tuple_text(k.d.space.extents()) + ", parameters " +
               tuple_text(k.d.parameters.extents()) + ", sigma " + k.d.sigma.name + ", " +
               std::to_string(k.d.grading.levels()) + " levels>";
      });
}

} // namespace pmach_py
