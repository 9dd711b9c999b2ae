#pragma once
// Interrupts of Python code called from C++ (an implementation under
// pmach.check, a forward given to pmach.recover). The laws catch
// std::exception to fail an implementation that throws; a KeyboardInterrupt
// or SystemExit, or whatever a signal handler raises, is no failure of the
// implementation but the user stopping the run, so it travels as
// PythonInterrupt, which is not a std::exception, and module.cpp raises it
// again untouched.
#include <pybind11/pybind11.h>

#include <utility>

namespace pmach_py {

namespace py = pybind11;

struct PythonInterrupt {
  py::error_already_set error; // the exception, as raised
};

// Raises a pending signal's exception (Ctrl-C's KeyboardInterrupt, the
// TimeoutError of a SIGALRM handler) as PythonInterrupt: whatever a signal
// handler raises stops the run. Called between cases of a long run.
inline void check_signals() {
  if (PyErr_CheckSignals() != 0) throw PythonInterrupt{py::error_already_set()};
}

// f(args…), with pending signals checked first and an interrupt raised by f
// passed on as PythonInterrupt.
template <class... Args> py::object call_python(const py::handle &f, Args &&...args) {
  check_signals();
  try {
    return f(std::forward<Args>(args)...);
  } catch (py::error_already_set &e) {
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit))
      throw PythonInterrupt{std::move(e)};
    throw;
  }
}

} // namespace pmach_py
