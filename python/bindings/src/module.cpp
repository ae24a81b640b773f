// asyncsolve._core: the extension module under the asyncsolve package. The
// library's errors become the package's exceptions (InputError for bad
// input, RuntimeFailure for MPI and runtime failures); the communicator
// comes from mpi4py through its C API.
#include <mpi4py/mpi4py.h>

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/version.hpp"
#include "bindings.hpp"

namespace nb = nanobind;

namespace asyncsolve::python {

MPI_Comm comm_of(nb::handle object, const char* what) {
  if (PyMPIComm_Get == nullptr && import_mpi4py() < 0) throw nb::python_error();
  if (object.is_none() || PyObject_TypeCheck(object.ptr(), &PyMPIComm_Type) == 0) {
    throw core::InputError(
        fmt::format("{}: a {}: expected an mpi4py communicator (mpi4py.MPI.Comm)", what,
                    nb::type_name(object.type()).c_str()));
  }
  MPI_Comm* comm = PyMPIComm_Get(object.ptr());
  if (comm == nullptr) throw nb::python_error();
  if (*comm == MPI_COMM_NULL) {
    throw core::InputError(fmt::format("{}: MPI.COMM_NULL: expected a communicator", what));
  }
  // Every rank of an intercommunicator holds one, so each refuses alike.
  int inter = 0;
  MPI_Comm_test_inter(*comm, &inter);
  if (inter != 0) {
    throw core::InputError(
        fmt::format("{}: an intercommunicator: expected an intracommunicator (e.g. the "
                    "intercommunicator's Merge())",
                    what));
  }
  return *comm;
}

namespace {
/// "a float", "an int": the type of `value`, for a refusal.
std::string a_type(nb::handle value) {
  const std::string name = nb::type_name(value.type()).c_str();
  const bool vowel =
      !name.empty() && std::string_view("aeiouAEIOU").find(name[0]) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", name);
}
}  // namespace

std::string rank_error(int rank, int ranks, const std::string& what) {
  return ranks > 1 ? fmt::format("rank {}: {}", rank, what) : what;
}

long long integer_of(nb::handle value, const std::string& what, long long low, long long high,
                     const std::string& expected) {
  if (PyBool_Check(value.ptr()) != 0 || PyIndex_Check(value.ptr()) == 0) {
    throw core::InputError(fmt::format("{}: {}: expected an integer", what, a_type(value)));
  }
  const nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred() != nullptr) throw nb::python_error();
  if (overflow != 0 || v < low || v > high) {
    throw core::InputError(
        fmt::format("{} {}: expected {}", what, nb::cast<std::string>(nb::str(index)), expected));
  }
  return v;
}

std::string text_of(nb::handle value, const std::string& what) {
  if (!nb::isinstance<nb::str>(value)) {
    throw core::InputError(fmt::format("{}: {}: expected a str", what, a_type(value)));
  }
  return nb::cast<std::string>(value);
}

std::vector<nb::object> items_of(nb::handle value, const std::string& what) {
  if (PySequence_Check(value.ptr()) == 0 || nb::isinstance<nb::str>(value) ||
      nb::isinstance<nb::bytes>(value)) {
    throw core::InputError(fmt::format("{}: {}: expected a list", what, a_type(value)));
  }
  std::vector<nb::object> items;
  const Py_ssize_t n = PySequence_Size(value.ptr());
  if (n < 0) throw nb::python_error();
  items.reserve(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    nb::object item = nb::steal(PySequence_GetItem(value.ptr(), i));
    if (!item.is_valid()) throw nb::python_error();
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace asyncsolve::python

NB_MODULE(_core, m) {
  using namespace asyncsolve;
  m.doc() = "asyncsolve's C++ library (nanobind); use the asyncsolve package, not this module";
  m.attr("version") = version;
  m.attr("git_commit") = git_commit;
  m.def(
      "mpi_library_version",
      [] {
        // The whole text (par::mpi_library_version keeps its first part only):
        // mpi4py's MPI.Get_library_version() is compared with it.
        char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
        int length = 0;
        par::check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
        return std::string(text, static_cast<std::size_t>(length));
      },
      "The MPI library this module is linked against (MPI_Get_library_version, the whole "
      "text).");
  // The exception classes, created once and kept for the process's life.
  static PyObject* error = PyErr_NewExceptionWithDoc(
      "asyncsolve._core.Error", "Base of asyncsolve's exceptions.", nullptr, nullptr);
  static PyObject* input_error = PyErr_NewExceptionWithDoc(
      "asyncsolve._core.InputError",
      "Bad input (the command's exit code 2): one line naming the value and what was expected.",
      error, nullptr);
  static PyObject* runtime_failure = PyErr_NewExceptionWithDoc(
      "asyncsolve._core.RuntimeFailure",
      "A runtime failure (the command's exit code 4): MPI or the system failed.", error, nullptr);
  m.attr("Error") = nb::borrow(error);
  m.attr("InputError") = nb::borrow(input_error);
  m.attr("RuntimeFailure") = nb::borrow(runtime_failure);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const core::InputError& e) {
      PyErr_SetString(input_error, e.what());
    } catch (const core::RuntimeFailure& e) {
      PyErr_SetString(runtime_failure, e.what());
    } catch (const par::MpiError& e) {
      PyErr_SetString(runtime_failure, e.what());
    }
  });
  python::bind_solve(m);
  python::bind_channel(m);
  python::bind_allreduce(m);
}
