// asyncsolve._core.System: a scipy matrix solved by the command's sparse
// path (app::EmbeddedSystem). The keywords are parsed by the command
// line's own code on every rank; a verdict reached on some ranks is shared
// (sparse::raise_together) and the ranks check that they run the same
// configuration (app::ranks_agree) before anything else is collective.
// Every call that communicates or computes releases the GIL.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "agreement.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "bindings.hpp"
#include "embedded_options.hpp"
#include "embedded_system.hpp"

namespace nb = nanobind;

namespace asyncsolve::python {
namespace {

template <class T>
using Array = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Doubles = Array<double>;
/// A keyword as the Python side passes it: (keyword, value as text, flag).
using Keyword = std::tuple<std::string, std::string, bool>;

/// The elements of an optional array (empty when absent). No copy.
template <class T>
std::span<const T> span_of(const std::optional<Array<T>>& a) {
  if (!a) return {};
  return {a->data(), a->shape(0)};
}

/// Collective over `comm`: the command of the keywords, the same on every
/// rank, or core::InputError on every rank.
app::Command agreed_command(const par::Comm& comm, const std::vector<Keyword>& keywords,
                            const std::string& matrix_name, std::vector<std::string>& args) {
  std::vector<app::NamedOption> options;
  options.reserve(keywords.size());
  for (const auto& [keyword, value, flag] : keywords) options.push_back({keyword, value, flag});
  app::Command command;
  std::string error;
  try {
    command = app::parse_embedded(options, matrix_name, &args);
  } catch (const core::InputError& e) {
    error = e.what();
  }
  sparse::raise_together(comm, error);
  if (!app::ranks_agree(comm, app::fnv1a(app::canonical(command)))) {
    throw core::InputError(app::disagreement_message());
  }
  return command;
}

/// A NumPy array that owns `field`'s `n` values (no copy).
nb::ndarray<nb::numpy, double, nb::ndim<1>> owning_array(grid::Field&& field, std::size_t n) {
  auto* owned = new grid::Field(std::move(field));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<grid::Field*>(p); });
  return {owned->origin(), {n}, owner};
}

/// A NumPy array holding `values` (moved, no copy).
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> owning_array(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return {owned->data(), {owned->size()}, owner};
}

/// The Python side's handle of an EmbeddedSystem.
class System {
 public:
  /// Collective: the whole matrix on rank 0 (arrays read there only).
  static System whole(nb::handle comm_object, const std::vector<Keyword>& keywords,
                      const std::string& name, std::int64_t rows, std::int64_t cols,
                      const std::optional<Array<std::int64_t>>& indptr,
                      const std::optional<Array<std::int32_t>>& indices,
                      const std::optional<Doubles>& data, const std::optional<Doubles>& b,
                      const std::optional<Doubles>& x0, bool keep) {
    const par::Comm comm = par::Comm::view(comm_of(comm_object));
    app::EmbeddedMatrix m;
    m.whole = true;
    m.system.matrix = sparse::CsrView(rows, cols, span_of(indptr), span_of(indices), span_of(data));
    m.system.b = span_of(b);
    m.system.x0 = span_of(x0);
    nb::gil_scoped_release release;
    std::vector<std::string> args;
    app::Command command = agreed_command(comm, keywords, name, args);
    return System(app::EmbeddedSystem(comm, std::move(command), std::move(args), m, keep));
  }

  /// Collective: each rank's rows [first_row, first_row + rows) with global columns.
  static System from_rows(nb::handle comm_object, const std::vector<Keyword>& keywords,
                          const std::string& name, std::int64_t global_rows, std::int64_t first_row,
                          const Array<std::int64_t>& indptr, const Array<std::int64_t>& indices,
                          const Doubles& data, const std::optional<Doubles>& b,
                          const std::optional<Doubles>& x0, bool keep) {
    const par::Comm comm = par::Comm::view(comm_of(comm_object));
    app::EmbeddedMatrix m;
    m.whole = false;
    m.global_rows = global_rows;
    m.first_row = first_row;
    m.rows = {{indptr.data(), indptr.shape(0)},
              {indices.data(), indices.shape(0)},
              {data.data(), data.shape(0)}};
    m.b = span_of(b);
    m.x0 = span_of(x0);
    nb::gil_scoped_release release;
    std::vector<std::string> args;
    app::Command command = agreed_command(comm, keywords, name, args);
    return System(app::EmbeddedSystem(comm, std::move(command), std::move(args), m, keep));
  }

  /// Collective: (converged, document, x).
  std::tuple<bool, std::string, nb::ndarray<nb::numpy, double, nb::ndim<1>>> solve(bool take_x) {
    app::EmbeddedResult r;
    {
      nb::gil_scoped_release release;
      r = live().solve(take_x);
    }
    const auto n = static_cast<std::size_t>(live().local_rows());
    return {r.converged, std::move(r.document), owning_array(std::move(r.x), n)};
  }

  /// Collective: a new b (and x0).
  void set_rhs(const std::optional<Doubles>& b, const std::optional<Doubles>& x0) {
    nb::gil_scoped_release release;
    live().set_rhs(span_of(b), span_of(x0));
  }

  /// Collective: `x` gathered in the caller's numbering on every rank.
  nb::ndarray<nb::numpy, double, nb::ndim<1>> gather(const Doubles& x) {
    std::vector<double> out;
    {
      nb::gil_scoped_release release;
      out = live().gather({x.data(), x.shape(0)});
    }
    return owning_array(std::move(out));
  }

  /// This rank's rows in the caller's numbering (a copy).
  nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>> rows() {
    const std::span<const std::int64_t> r = live().rows();
    return owning_array(std::vector<std::int64_t>(r.begin(), r.end()));
  }

  int local_rows() { return live().local_rows(); }
  std::int64_t global_rows() { return live().global_rows(); }
  bool closed() const { return !system_.has_value(); }

  /// Collective: frees the system (idempotent).
  void close() {
    if (!system_) return;
    nb::gil_scoped_release release;
    system_->free();
    system_.reset();
  }

 private:
  explicit System(app::EmbeddedSystem&& s) : system_(std::move(s)) {}
  app::EmbeddedSystem& live() {
    if (!system_) throw core::InputError("the system is closed: expected an open Solver");
    return *system_;
  }
  std::optional<app::EmbeddedSystem> system_;
};

}  // namespace

void bind_solve(nb::module_& m) {
  m.def("keywords", &app::embedded_keywords,
        "The solve options a matrix takes as keywords (max_iters for --max-iters), in the "
        "order of `asyncsolve solve --help`.");
  m.def("methods", &app::embedded_methods,
        "The methods a matrix can be solved with (--method's choices but lanczos).");
  nb::class_<System>(m, "System",
                     "A distributed sparse system set up for solves (internal: use "
                     "asyncsolve.solve or asyncsolve.Solver).")
      .def_static("whole", &System::whole, nb::arg("comm"), nb::arg("keywords"), nb::arg("name"),
                  nb::arg("rows"), nb::arg("cols"), nb::arg("indptr").none(),
                  nb::arg("indices").none(), nb::arg("data").none(), nb::arg("b").none(),
                  nb::arg("x0").none(), nb::arg("keep"),
                  "Collective: the whole CSR matrix on rank 0 (the other ranks pass None), "
                  "partitioned and distributed as `asyncsolve solve --matrix` does.")
      .def_static("from_rows", &System::from_rows, nb::arg("comm"), nb::arg("keywords"),
                  nb::arg("name"), nb::arg("global_rows"), nb::arg("first_row"), nb::arg("indptr"),
                  nb::arg("indices"), nb::arg("data"), nb::arg("b").none(), nb::arg("x0").none(),
                  nb::arg("keep"),
                  "Collective: each rank's consecutive rows with global column indices.")
      .def("solve", &System::solve, nb::arg("take_x"),
           "Collective: (converged, result document as JSON, this rank's x).")
      .def("set_rhs", &System::set_rhs, nb::arg("b").none(), nb::arg("x0").none(),
           "Collective: a new right-hand side and initial guess.")
      .def("gather", &System::gather, nb::arg("x"),
           "Collective: x gathered in the matrix's numbering on every rank.")
      .def("rows", &System::rows, "This rank's rows in the matrix's numbering.")
      .def_prop_ro("local_rows", &System::local_rows)
      .def_prop_ro("global_rows", &System::global_rows)
      .def_prop_ro("closed", &System::closed)
      .def("close", &System::close, "Collective: frees the system.");
}

}  // namespace asyncsolve::python
