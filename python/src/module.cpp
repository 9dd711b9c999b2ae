// pmach._pmach: the C++ side of the Python package. Every name here is
// re-exported, with its documentation, by python/pmach/__init__.py.
#include <omp.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "callables.hpp"
#include "constructors.hpp"
#include "interrupt.hpp"
#include "pm/validate/conformance.hpp"
#include "pm/validate/recover.hpp"
#include "save.hpp"

namespace pmach_py {
namespace {

// One line, printable: a newline becomes a space, other control characters
// (an ESC that would drive the terminal) and bytes that are not UTF-8 (a
// file name from a foreign file system) are written as \xNN.
std::string one_line(const std::string &msg) {
  std::string out;
  auto escape = [&](unsigned char c) {
    static const char *hex = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (std::size_t k = 0; k < msg.size();) {
    const auto c = static_cast<unsigned char>(msg[k]);
    if (c == '\n') {
      out += ' ';
      ++k;
    } else if (c < 0x20 || c == 0x7f) {
      escape(c);
      ++k;
    } else if (c < 0x80) {
      out += char(c);
      ++k;
    } else {
      // A UTF-8 sequence: its lead byte gives its length; each following
      // byte must be 10xxxxxx, and the code point neither overlong, a
      // surrogate nor beyond U+10FFFF.
      const std::size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      bool ok = len > 0 && c < 0xf5 && k + len <= msg.size();
      std::uint32_t cp = ok ? c & (0x7f >> len) : 0;
      for (std::size_t j = 1; ok && j < len; ++j) {
        const auto b = static_cast<unsigned char>(msg[k + j]);
        ok = (b & 0xc0) == 0x80;
        cp = cp << 6 | (b & 0x3f);
      }
      ok = ok && !(len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) &&
           !(len == 4 && (cp < 0x10000 || cp > 0x10ffff));
      if (ok) {
        out.append(msg, k, len);
        k += len;
      } else {
        escape(c);
        ++k;
      }
    }
  }
  return out;
}

void bind_constructors(py::module_ &m) {
  m.def(
      "load",
      [](const py::object &path) -> py::object {
        auto model = pm::io::read_model(path_arg(path, "load"));
        if (auto *l = std::get_if<pm::io::LayerDescription>(&model))
          return py::cast(LayerModel(std::move(*l)));
        return py::cast(MachineModel(std::get<pm::io::MachineDescription>(std::move(model))));
      },
      py::arg("path"),
      "The layer or machine of a model file (docs/formats.md), as a pmach.Layer or pmach.Machine.");
  m.def("_dense", &dense_layer);
  m.def("_conv", [](std::vector<Index> spatial, Index in, Index out, std::vector<Index> kernel,
                    std::vector<Index> lo, std::vector<Index> hi, std::vector<Index> stride,
                    std::vector<Index> dilation, Index groups, const std::string &padding_mode,
                    bool bias, const std::string &layout) {
    pm::ConvSpec c{spatial, in, out, kernel, lo, hi, stride, dilation, groups};
    c.padding_mode = pm::padding_mode_named(padding_mode);
    return conv_layer(c, bias, layout);
  });
  m.def("_conv_transpose",
        [](std::vector<Index> spatial, Index in, Index out, std::vector<Index> kernel,
           std::vector<Index> lo, std::vector<Index> hi, std::vector<Index> stride,
           std::vector<Index> dilation, std::vector<Index> output_padding, Index groups, bool bias,
           const std::string &layout) {
          return conv_transpose_layer(
              pm::ConvSpec{spatial, in, out, kernel, lo, hi, stride, dilation, groups},
              output_padding, bias, layout);
        });
  m.def("_time_conv",
        [](Index length, Index in, Index out, Index lag, bool bias, const std::string &layout) {
          return time_conv_layer(pm::TimeConvSpec{length, in, out, lag}, bias, layout);
        });
  m.def("_graph",
        [](Index nodes, std::vector<std::pair<Index, Index>> edges, Index in, Index out,
           bool self_loops, const std::string &norm, bool bias, const std::string &layout) {
          return graph_layer(pm::GraphConvSpec{nodes, edges, in, out, self_loops, graph_norm(norm)},
                             bias, layout);
        });
  m.def("_avg_pool", [](std::vector<Index> spatial, Index channels, std::vector<Index> window,
                        std::vector<Index> lo, std::vector<Index> hi, std::vector<Index> stride,
                        bool count_include_pad, bool ceil_mode, const std::string &layout) {
    return avg_pool_layer(
        pm::PoolSpec{spatial, channels, window, lo, hi, stride, count_include_pad, ceil_mode},
        layout);
  });
  m.def("_interpolate", [](std::vector<Index> spatial, Index channels, std::vector<Index> size,
                           const std::string &mode, bool align_corners, const std::string &layout) {
    return interpolate_layer(pm::InterpolateSpec{spatial, channels, size,
                                                 interpolate_mode(mode, spatial.size()),
                                                 align_corners},
                             layout);
  });
  m.def("_pixel_shuffle", [](std::vector<Index> spatial, Index channels, Index factor, bool inverse,
                             const std::string &layout) {
    return pixel_shuffle_layer(pm::PixelShuffleSpec{spatial, channels, factor}, inverse, layout);
  });
  m.def("_unfold", [](std::vector<Index> spatial, Index channels, std::vector<Index> kernel,
                      std::vector<Index> padding, std::vector<Index> stride,
                      std::vector<Index> dilation, bool fold, const std::string &layout) {
    return unfold_layer(pm::UnfoldSpec{spatial, channels, kernel, padding, stride, dilation}, fold,
                        layout);
  });
  m.def("_roll", [](std::vector<Index> shape, std::vector<std::int64_t> shifts, bool flat) {
    return roll_layer(Shape(shape), shifts, flat);
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
    } catch (PythonInterrupt &i) {
      i.error.restore(); // KeyboardInterrupt or SystemExit, untouched
    } catch (const pm::Error &e) {
      error(one_line(e.what()).c_str());
    }
  });
  // A child forked after a kernel ran in the parent has none of the
  // parent's OpenMP threads, and libgomp would wait for them for ever: the
  // child runs the kernels on its one thread (same results: they do not
  // depend on the thread count).
  py::module_::import("os").attr("register_at_fork")(
      py::arg("after_in_child") = py::cpp_function([] { omp_set_num_threads(1); }));
  m.attr("_max_values") = pm::io::max_values_float; // per array, for pmach.torch
  bind_report(m);
  bind_layer(m);
  bind_machine(m);
  bind_constructors(m);
  bind_span_diff(m);
  bind_check(m);
}
