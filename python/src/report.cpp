// pmach._pmach: the class Report (bindings.hpp).
// bindings.hpp first: Python.h comes before the standard headers.
#include "bindings.hpp"

#include "pm/io/json_field.hpp"
#include "pm/validate/report.hpp"

namespace pmach_py {

namespace {

py::object json_value(const pm::io::Json &j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

} // namespace

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

} // namespace pmach_py
