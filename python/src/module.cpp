// pmach._pmach: the C++ side of the Python package. Every name here is
// re-exported, with its documentation, by python/pmach/__init__.py.
#include <pybind11/stl.h>

#include "callables.hpp"
#include "constructors.hpp"
#include "pm/validate/conformance.hpp"
#include "pm/validate/recover.hpp"
#include "save.hpp"

namespace pmach_py {
namespace {

py::tuple tuple_of(const Shape &s) { return py::cast(s.extents()); }

// Anything NumPy reads as an array (lists, tensors): arguments are taken as
// objects so that a bad one is answered by the shape check's message.
py::array array_arg(const py::object &o) { return py::module_::import("numpy").attr("asarray")(o); }

py::object json_value(const pm::io::Json &j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

void bind_report(py::module_ &m) {
  py::class_<pm::Report>(m, "Report", R"(The verdicts of pmach.check: one row per law run.

``passed`` is True when no row failed or was too weak; ``rows`` lists the rows
as dicts (law, subject, status, cases, exact, max_error, bound, seed,
detail, and on a failure counterexample), whose ``counterexample`` property
gives the failure's tensors as NumPy arrays (name → ndarray) and ``scalars``
its scalars; ``str(report)`` is the table the ``pmach check`` command prints,
with the counterexamples sparse in multi-index coordinates; ``to_json()`` is
the command's ``--json`` output (docs/report.schema.json).)")
      .def_property_readonly("passed", &pm::Report::passed,
                             "True when no row failed or was too weak.")
      .def_property_readonly(
          "rows",
          [](const pm::Report &r) {
            return py::module_::import("pmach._report")
                .attr("rows")(json_value(pm::to_json(r)["results"]));
          },
          "The rows as a list of pmach dicts (pmach._report.Row); row.counterexample is a\n"
          "dict name → ndarray of a failure's tensors, row.scalars its scalars.")
      .def(
          "to_json", [](const pm::Report &r) { return pm::to_json(r).dump(2); },
          "The report as JSON text, as printed by `pmach check --json`.")
      .def("__str__", [](const pm::Report &r) { return pm::to_text(r); })
      .def("__bool__", &pm::Report::passed);
}

const char *precision_doc =
    R"(precision: "float" (float32 in and out), "double" (default) or "exact"
(over the rationals, rounded once to float64 on output). kernels=True runs the
fast CPU kernels (float or double) instead of the reference semantics.)";

void bind_layer(py::module_ &m) {
  py::class_<LayerModel>(m, "Layer", R"(A layer: a parametric span between shaped spaces.

(L_w x)(y) = sum over edges e with t(e) = y of mu(e) w(pi(e)) x(s(e)). Made by
pmach.load, the pmach.layers constructors or pmach.recover. Arrays are in the
model's layout: x has shape (n, *source_shape), the result (n, *target_shape),
w has parameter_shape; an x without the batch axis is one sample.)")
      .def_property_readonly(
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
          "edges", [](const LayerModel &l) { return l.d.span.apex(); },
          "The number of edges of the span.")
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
              return l.forward<decltype(s)>(array_arg(x), w, kernels);
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
              return l.backward<decltype(s)>(array_arg(x), array_arg(g), w, kernels);
            });
          },
          py::arg("x"), py::arg("g"), py::arg("w") = py::none(), py::kw_only(),
          py::arg("precision") = "double", py::arg("kernels") = false,
          (std::string("(grad_x, grad_w) = (L_w^T g, gradient in w of sum_b <g_b, L_w x_b>). ") +
           precision_doc)
              .c_str())
      .def("save", &save_layer, py::arg("path"),
           "Writes the layer as a model file PATH.json (and PATH.W.npy for its weights).")
      .def("__repr__", [](const LayerModel &l) {
        return "<pmach.Layer " + l.d.name + ": " + tuple_text(l.d.source.extents()) + " -> " +
               tuple_text(l.d.target.extents()) + ", parameters " +
               tuple_text(l.d.parameters.extents()) + ", " + std::to_string(l.d.span.apex()) +
               " edges>";
      });
}

void bind_machine(py::module_ &m) {
  py::class_<MachineModel>(m, "Machine", R"(A machine of finite depth: a graded span machine.

The state (y, z) solves y = y0 + L_w~ z, z = z0 + sigma(y), where w~ keeps the
weights whose every edge raises the grade. Made by pmach.load or the
constructors pmach.DenseMachine, pmach.ConvMachine, pmach.RecurMachine.
States have shape (n, *space_shape); w has parameter_shape.)")
      .def_property_readonly(
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
             const std::string &p, bool kernels, bool keep_slope) {
            return with_precision(precision_of(p), [&](auto s) -> py::object {
              return k.forward<decltype(s)>(array_arg(y0), z0, w, kernels, keep_slope);
            });
          },
          py::arg("y0"), py::arg("z0") = py::none(), py::arg("w") = py::none(), py::kw_only(),
          py::arg("precision") = "double", py::arg("kernels") = false,
          py::arg("keep_slope") = false,
          (std::string("(y, z), the solution of the machine equation; z0=None is zero. "
                       "keep_slope=True gives (y, z, slope): sigma'(y) where the kernel keeps it "
                       "for backward (a dense, convolution or recurrent machine with kernels=True "
                       "whose pieces of samples are small enough to gain by it; a convolution's "
                       "or recurrent machine's slope is in the kernel's own order, for backward "
                       "only), else None. ") +
           precision_doc)
              .c_str())
      .def(
          "backward",
          [](const MachineModel &k, const py::object &y0, const py::object &z0,
             const py::object &ybar, const py::object &zbar, const py::object &w,
             const std::string &p, const py::object &state, bool kernels) {
            return with_precision(precision_of(p), [&](auto s) -> py::object {
              return k.backward<decltype(s)>(y0, z0, ybar, zbar, w, state, kernels);
            });
          },
          py::arg("y0") = py::none(), py::arg("z0") = py::none(), py::arg("ybar") = py::none(),
          py::arg("zbar") = py::none(), py::arg("w") = py::none(), py::kw_only(),
          py::arg("precision") = "double", py::arg("state") = py::none(),
          py::arg("kernels") = false,
          (std::string("(grad_y0, grad_z0, grad_w) for the cotangents ybar of y and zbar of z "
                       "(None is zero); grad_w is summed over the batch and cleaned. "
                       "state=(y, z) from forward at the same w skips recomputing it; "
                       "state=(y, z, slope) from forward(keep_slope=True) also skips sigma'. ") +
           precision_doc)
              .c_str())
      .def("save", &save_machine, py::arg("path"),
           "Writes the machine as a model file PATH.json (and PATH.W.npy for its weights).")
      .def("__repr__", [](const MachineModel &k) {
        return "<pmach.Machine " + (k.d.name.empty() ? k.who() : k.d.name) + ": space " +
               tuple_text(k.d.space.extents()) + ", parameters " +
               tuple_text(k.d.parameters.extents()) + ", sigma " + k.d.sigma.name + ", " +
               std::to_string(k.d.grading.levels()) + " levels>";
      });
}

void bind_constructors(py::module_ &m) {
  m.def(
      "load",
      [](const std::string &path) -> py::object {
        auto model = pm::io::read_model(path);
        if (auto *l = std::get_if<pm::io::LayerDescription>(&model))
          return py::cast(LayerModel(std::move(*l)));
        return py::cast(MachineModel(std::get<pm::io::MachineDescription>(std::move(model))));
      },
      py::arg("path"),
      "The layer or machine of a model file (docs/formats.md), as a pmach.Layer or pmach.Machine.");
  m.def("_dense", &dense_layer);
  m.def("_conv", [](std::vector<Index> spatial, Index in, Index out, std::vector<Index> kernel,
                    std::vector<Index> lo, std::vector<Index> hi, std::vector<Index> stride,
                    std::vector<Index> dilation, Index groups, bool transposed) {
    return conv_layer(pm::ConvSpec{spatial, in, out, kernel, lo, hi, stride, dilation, groups},
                      transposed);
  });
  m.def("_time_conv", [](Index length, Index in, Index out, Index lag) {
    return time_conv_layer(pm::TimeConvSpec{length, in, out, lag});
  });
  m.def("_graph", [](Index nodes, std::vector<std::pair<Index, Index>> edges, Index in, Index out,
                     bool self_loops, const std::string &norm) {
    return graph_layer(pm::GraphConvSpec{nodes, edges, in, out, self_loops, graph_norm(norm)});
  });
  m.def("_avg_pool", [](std::vector<Index> spatial, Index channels, std::vector<Index> window,
                        std::vector<Index> lo, std::vector<Index> hi, std::vector<Index> stride) {
    return avg_pool_layer(pm::PoolSpec{spatial, channels, window, lo, hi, stride});
  });
  m.def("_seed_machine", [](const std::string &fields, const std::string &kind) {
    return seed_model(pm::io::parse_json(fields, "pmach." + kind), kind);
  });
}

pm::ValidateOptions validate_options(std::size_t cases, std::uint64_t seed) {
  pm::require(cases >= 1, "check: cases is 0, expected at least 1");
  return {cases, seed};
}

py::tuple index_tuple(const std::vector<Index> &v) { return py::cast(v); }

void bind_span_diff(py::module_ &m) {
  py::class_<pm::SpanDiff>(m, "SpanDiff", R"(The coefficients in which two spans differ.

``count`` differing coefficients of ``compared`` (non-zero in either span);
``differences`` the first ones as dicts with the multi-indices ``target``,
``source``, ``parameter`` and the values ``intended``, ``implemented``;
``pattern`` one line when all share a simple pattern (else empty);
``str(diff)`` the text the validator prints.)")
      .def_readonly("count", &pm::SpanDiff::count, "The number of differing coefficients.")
      .def_readonly("compared", &pm::SpanDiff::compared,
                    "The number of coefficients non-zero in either span.")
      .def_readonly("pattern", &pm::SpanDiff::pattern,
                    "One line naming a pattern shared by all differences, or empty.")
      .def_property_readonly("same", &pm::SpanDiff::same, "True when no coefficient differs.")
      .def_property_readonly(
          "differences",
          [](const pm::SpanDiff &d) {
            py::list out;
            for (const auto &c : d.differences) {
              py::dict row;
              row["target"] = index_tuple(c.target);
              row["source"] = index_tuple(c.source);
              row["parameter"] = index_tuple(c.parameter);
              row["intended"] = pm::io::to_double(c.intended);
              row["implemented"] = pm::io::to_double(c.implemented);
              out.append(row);
            }
            return out;
          },
          "The first differences as dicts of multi-indices and values.")
      .def("__str__", [](const pm::SpanDiff &d) { return pm::to_text(d); })
      .def("__bool__", [](const pm::SpanDiff &d) { return !d.same(); });
  m.def(
      "span_diff",
      [](const LayerModel &intended, const LayerModel &implemented) {
        const auto &a = intended.d, &b = implemented.d;
        pm::require(a.source == b.source && a.target == b.target && a.parameters == b.parameters,
                    "span_diff: the layers have shapes ", tuple_text(a.source.extents()), " -> ",
                    tuple_text(a.target.extents()), " with parameters ",
                    tuple_text(a.parameters.extents()), " and ", tuple_text(b.source.extents()),
                    " -> ", tuple_text(b.target.extents()), " with parameters ",
                    tuple_text(b.parameters.extents()), ", expected the same shapes");
        return pm::span_diff(a.span, b.span, pm::validation::shapes_of(a));
      },
      py::arg("intended"), py::arg("implemented"),
      "The coefficients in which the span of `implemented` differs from `intended`'s.");
}

void bind_check(py::module_ &m) {
  // The callables take and return float64 arrays whatever the framework
  // computes in; `dtype` ("float64" or "float32") is that precision, which
  // sizes CONF-EQUAL's probes and the recovery's exact range.
  m.def(
      "_check_layer",
      [](const LayerModel &spec, const py::object &forward, const py::object &transpose,
         const py::object &gradient, std::size_t cases, std::uint64_t seed,
         const std::string &dtype) {
        const pm::ValidateOptions opt = validate_options(cases, seed);
        pm::EqualOptions eo;
        eo.dtype = pm::parse_dtype(dtype);
        pm::RecoverOptions ro;
        ro.unit_roundoff = pm::unit_roundoff(*eo.dtype);
        const PyForwardLayer f{spec.d.source, spec.d.target, spec.d.parameters, forward,
                               callable_name(forward, "forward")};
        if (transpose.is_none() && gradient.is_none())
          return pm::check_layer(spec.d, f, opt, f.name, ro, eo);
        pm::require(!transpose.is_none() && !gradient.is_none(),
                    "check: expected both transpose= and gradient=, or neither (forward only)");
        return pm::check_layer(spec.d, PyLayer{f, transpose, gradient}, opt, f.name, ro, eo);
      },
      py::arg("model"), py::arg("forward"), py::arg("transpose"), py::arg("gradient"),
      py::arg("cases"), py::arg("seed"), py::arg("dtype") = "float64");
  m.def("_check_machine", [](const MachineModel &spec, const py::object &forward,
                             const py::object &backward, std::size_t cases, std::uint64_t seed) {
    const pm::ValidateOptions opt = validate_options(cases, seed);
    const PyMachine f{spec.d.space, spec.d.parameters, forward, py::none(),
                      callable_name(forward, "forward")};
    if (backward.is_none()) return pm::check_machine(spec.d, f, opt, f.name);
    PyMachineWithBackward b{f};
    b.backward_fn = backward;
    return pm::check_machine(spec.d, b, opt, f.name);
  });
  m.def("_recover",
        [](const py::object &forward, std::vector<Index> source, std::vector<Index> target,
           std::vector<Index> parameters, std::uint64_t seed) {
          const PyForwardLayer f{Shape(source), Shape(target), Shape(parameters), forward,
                                 callable_name(forward, "forward")};
          pm::RecoverOptions opt;
          opt.seed = seed;
          pm::Recovery<double> r = pm::recover_span(f, opt);
          pm::require(r.recovered(), "recover: ", f.name, ": ", pm::recovery_status_name(r.status),
                      ": ", r.detail);
          return layer_model("recovered from " + f.name, f.source, f.target, f.parameters,
                             !parameters.empty(), std::move(r.span));
        });
}

} // namespace
} // namespace pmach_py

PYBIND11_MODULE(_pmach, m) {
  using namespace pmach_py;
  m.doc() = "The C++ core of pmach (parametric machines); use the package pmach.";
  static py::exception<pm::Error> error(m, "Error", PyExc_ValueError);
  error.doc() = "Bad input: one line naming the file or argument, the field or index, and what "
                "was expected (the message of the pmach command).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const pm::Error &e) {
      // The command's one line: newlines inside a message become spaces.
      std::string msg = e.what();
      for (char &c : msg)
        if (c == '\n') c = ' ';
      error(msg.c_str());
    }
  });
  bind_report(m);
  bind_layer(m);
  bind_machine(m);
  bind_constructors(m);
  bind_span_diff(m);
  bind_check(m);
}
