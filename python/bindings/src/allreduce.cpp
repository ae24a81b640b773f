// asyncsolve._core.NonblockingAllreduce: collectives::NonblockingAllreduce
// with the algorithm named as --allreduce names it (parse_allreduce: a new
// algorithm of the library appears here without change). start() copies
// the values in; test() and wait() return the result in a new array. Every
// call releases the GIL.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "agreement.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "bindings.hpp"

namespace nb = nanobind;

namespace asyncsolve::python {
namespace {

using Doubles = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Result = nb::ndarray<nb::numpy, double, nb::ndim<1>>;

Result new_array(std::vector<double>&& values) {
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return {owned->data(), {owned->size()}, owner};
}

collectives::ReduceOp parse_op(const std::string& op) {
  if (op == "sum") return collectives::ReduceOp::sum;
  if (op == "min") return collectives::ReduceOp::min;
  if (op == "max") return collectives::ReduceOp::max;
  throw core::InputError(fmt::format("op '{}': expected sum, min or max", op));
}

class Allreduce {
 public:
  /// Collective over comm.
  Allreduce(nb::handle comm_object, std::size_t size, const std::string& algorithm,
            const std::string& op) {
    const par::Comm comm = par::Comm::view(comm_of(comm_object));
    nb::gil_scoped_release release;
    std::string error;
    collectives::AllreduceAlgorithm parsed;
    collectives::ReduceOp reduce_op = collectives::ReduceOp::sum;
    try {
      parsed = collectives::parse_allreduce(algorithm);
      reduce_op = parse_op(op);
      if (size == 0) throw core::InputError("size 0: expected at least one value");
    } catch (const core::InputError& e) {
      error = e.what();
    }
    sparse::raise_together(comm, error);
    const std::string agreed = fmt::format("{} {} {}", parsed.name(), size, op);
    if (!app::ranks_agree(comm, app::fnv1a(agreed))) {
      throw core::InputError(
          "the ranks asked for different reductions (algorithm, size or op): expected the "
          "same on every rank of comm");
    }
    reduction_ = collectives::make_nonblocking_allreduce(parsed, comm, size, reduce_op);
  }

  void start(const Doubles& values) {
    if (values.shape(0) != live().size()) {
      throw core::InputError(
          fmt::format("start: {} values: expected {}", values.shape(0), live().size()));
    }
    if (live().active()) {
      throw core::InputError("start: a reduction is active: expected test() or wait() first");
    }
    nb::gil_scoped_release release;
    live().start({values.data(), values.shape(0)});
  }

  std::optional<Result> test() {
    require_active("test");
    std::vector<double> out(live().size());
    bool done = false;
    {
      nb::gil_scoped_release release;
      done = live().test(out);
    }
    if (!done) return std::nullopt;
    return new_array(std::move(out));
  }

  Result wait() {
    require_active("wait");
    std::vector<double> out(live().size());
    {
      nb::gil_scoped_release release;
      live().wait(out);
    }
    return new_array(std::move(out));
  }

  bool active() { return reduction_ != nullptr && reduction_->active(); }
  long completed() { return live().completed(); }
  std::string name() { return std::string(live().name()); }
  std::size_t size() { return live().size(); }

  /// Collective: frees the reduction's communicator.
  void free() {
    if (reduction_ == nullptr) return;
    if (reduction_->active()) {
      throw core::InputError("free: a reduction is active: expected test() or wait() first");
    }
    nb::gil_scoped_release release;
    reduction_->free();
    reduction_.reset();
  }

 private:
  collectives::NonblockingAllreduce& live() {
    if (reduction_ == nullptr) throw core::InputError("the reduction is freed");
    return *reduction_;
  }
  void require_active(const char* what) {
    if (!live().active()) {
      throw core::InputError(
          fmt::format("{}: no reduction is active: expected start() first", what));
    }
  }
  std::unique_ptr<collectives::NonblockingAllreduce> reduction_;
};

}  // namespace

void bind_allreduce(nb::module_& m) {
  nb::class_<Allreduce>(
      m, "NonblockingAllreduce",
      "A reduction of a fixed number of doubles that is started, progressed by test() and "
      "completed without blocking the caller (collectives::NonblockingAllreduce). algorithm "
      "as --allreduce names it: mpi, impi, tree, rd, knomial:K, twolevel:ALG. Collective "
      "construction and free(); a reduction not freed keeps its duplicated communicator.")
      .def(nb::init<nb::handle, std::size_t, const std::string&, const std::string&>(),
           nb::arg("comm").none(), nb::arg("size"), nb::arg("algorithm") = "impi",
           nb::arg("op") = "sum")
      .def("start", &Allreduce::start, nb::arg("values"),
           "Starts the reduction of `values` (size doubles, copied).")
      .def("test", &Allreduce::test,
           "Progresses the active reduction: its result (a new array) once complete, else "
           "None.")
      .def("wait", &Allreduce::wait, "Completes the active reduction and returns its result.")
      .def_prop_ro("active", &Allreduce::active)
      .def_prop_ro("completed", &Allreduce::completed)
      .def_prop_ro("name", &Allreduce::name)
      .def_prop_ro("size", &Allreduce::size)
      .def("free", &Allreduce::free, "Collective: frees the reduction (idempotent).");
}

}  // namespace asyncsolve::python
