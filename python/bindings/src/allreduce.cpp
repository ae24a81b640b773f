// asyncsolve._core.NonblockingAllreduce: collectives::NonblockingAllreduce
// with the algorithm named as --allreduce names it (parse_allreduce: a new
// algorithm of the library appears here without change). start() copies
// the values in; test() and wait() return the result in a new array. Every
// call releases the GIL.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "agreement.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/stats.hpp"
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

/// What `values` is, for a refusal: its dtype and shape where it has
/// numpy's (a Python error while asking is no answer), else its type.
std::string describe(nb::handle values) {
  try {
    if (nb::hasattr(values, "dtype") && nb::hasattr(values, "shape")) {
      return fmt::format("an array of dtype {} and shape {}",
                         nb::cast<std::string>(values.attr("dtype").attr("name")),
                         nb::cast<std::string>(nb::repr(values.attr("shape"))));
    }
  } catch (const std::exception&) {  // a Python error, or a name that is not text
  }
  return fmt::format("a {}", nb::type_name(values.type()).c_str());
}

/// The reduction carries one value more than the caller's: a flag that a
/// rank's start() was refused. A rank whose arguments are bad still starts
/// its share (the flag set, its values zero) and completes it before it
/// raises, so the others' test() and wait() complete too, and raise.
class Allreduce {
 public:
  /// Collective over comm. The arguments are converted inside the shared
  /// check (a bad one is an InputError on every rank).
  Allreduce(nb::handle comm_object, nb::handle size_value, nb::handle algorithm_name,
            nb::handle op_name) {
    const par::Comm comm = par::Comm::view(comm_of(comm_object));
    std::string error;
    std::size_t size = 0;
    std::string algorithm;
    std::string op;
    collectives::AllreduceAlgorithm parsed;
    try {
      // One value more travels (the refused-start flag), and a count is an int.
      size = static_cast<std::size_t>(
          integer_of(size_value, "size", 1, std::numeric_limits<int>::max() - 1,
                     fmt::format("1 to {} values (an MPI count, less the reduction's flag)",
                                 std::numeric_limits<int>::max() - 1)));
      algorithm = text_of(algorithm_name, "algorithm");
      op = text_of(op_name, "op");
      parsed = collectives::parse_allreduce(algorithm);
      op_ = parse_op(op);
    } catch (const std::exception& e) {  // InputError, or a Python error while converting
      error = rank_error(comm.rank(), comm.size(), e.what());
    }
    nb::gil_scoped_release release;
    sparse::raise_together(comm, error);
    const std::string agreed = fmt::format("{} {} {}", parsed.name(), size, op);
    if (!app::ranks_agree(comm, app::fnv1a(agreed))) {
      throw core::InputError(
          "the ranks asked for different reductions (algorithm, size or op): expected the "
          "same on every rank of comm");
    }
    size_ = size;
    // The buffers start(), test() and wait() use are allocated here, where a
    // rank that runs out of memory can tell the others: an allocation in
    // start() that failed on one rank would leave the others waiting in
    // wait() for a share that never comes.
    bool allocated = true;
    try {
      reduction_ = collectives::make_nonblocking_allreduce(parsed, comm, size + 1, op_);
      send_.assign(size + 1, 0.0);
      receive_.assign(size + 1, 0.0);
    } catch (const std::bad_alloc&) {
      allocated = false;
    }
    if (par::any_rank(comm, !allocated)) {
      reduction_.reset();
      throw core::RuntimeFailure(
          allocated
              ? "out of memory on another rank of comm while allocating the reduction"
              : fmt::format("rank {}: out of memory allocating a reduction of {} values "
                            "({:.1f} MiB a buffer)",
                            comm.rank(), size, 8.0 * static_cast<double>(size + 1) / 1048576.0));
    }
  }

  /// Starts the reduction of `values`. Anything but `size` doubles in a
  /// 1-D array (or what converts to one) starts a refused share, completes
  /// it and raises here; the other ranks raise from test() or wait().
  void start(nb::handle values) {
    if (live().active()) {
      throw core::InputError("start: a reduction is active: expected test() or wait() first");
    }
    Doubles array;
    std::string error;
    if (!nb::try_cast<Doubles>(values, array)) {
      error = fmt::format(
          "start: values is {}: expected a 1-D array of {} float64 values (or what numpy "
          "converts to one)",
          describe(values), size_);
    } else if (array.shape(0) != size_) {
      error = fmt::format("start: {} values: expected {}", array.shape(0), size_);
    }
    // No allocation from here until the share is started (the buffers are
    // the constructor's).
    std::fill(send_.begin(), send_.end(), 0.0);
    if (error.empty()) {
      std::copy(array.data(), array.data() + size_, send_.begin());
    } else {
      send_[size_] = refused_flag();
    }
    nb::gil_scoped_release release;
    live().start(send_);
    if (error.empty()) return;
    live().wait(receive_);
    throw core::InputError(error);
  }

  std::optional<Result> test() {
    require_active("test");
    bool done = false;
    {
      nb::gil_scoped_release release;
      done = live().test(receive_);
    }
    if (!done) return std::nullopt;
    return result();
  }

  Result wait() {
    require_active("wait");
    {
      nb::gil_scoped_release release;
      live().wait(receive_);
    }
    return result();
  }

  bool active() { return reduction_ != nullptr && reduction_->active(); }
  long completed() { return live().completed(); }
  std::string name() { return std::string(live().name()); }
  std::size_t size() {
    live();
    return size_;
  }

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
  /// The flag of a refused share: nonzero under every op once reduced
  /// (min: -1 against the others' 0; sum and max: 1).
  double refused_flag() const { return op_ == collectives::ReduceOp::min ? -1.0 : 1.0; }
  /// The caller's values (a copy of the completed reduction's), or
  /// InputError if some rank's start() was refused. Every rank's share is
  /// complete by then, so a failure here is this rank's alone.
  Result result() {
    if (receive_[size_] != 0.0) {
      throw core::InputError(
          fmt::format("start() was refused on another rank of comm (its values were not {} float64 "
                      "values): this reduction has no result",
                      size_));
    }
    return new_array(std::vector<double>(receive_.begin(), receive_.end() - 1));
  }

  std::unique_ptr<collectives::NonblockingAllreduce> reduction_;
  std::vector<double> send_;     // start()'s values and the refused-start flag
  std::vector<double> receive_;  // the reduced values and flag
  std::size_t size_ = 0;
  collectives::ReduceOp op_ = collectives::ReduceOp::sum;
};

}  // namespace

void bind_allreduce(nb::module_& m) {
  nb::class_<Allreduce>(
      m, "NonblockingAllreduce",
      "A reduction of a fixed number of doubles that is started, progressed by test() and "
      "completed without blocking the caller (collectives::NonblockingAllreduce). algorithm "
      "as --allreduce names it: mpi, impi, tree, rd, knomial:K, twolevel:ALG. Collective "
      "construction and free(); a reduction not freed keeps its duplicated communicator.")
      .def(nb::init<nb::handle, nb::handle, nb::handle, nb::handle>(), nb::arg("comm").none(),
           nb::arg("size").none(), nb::arg("algorithm").none() = "impi",
           nb::arg("op").none() = "sum")
      .def("start", &Allreduce::start, nb::arg("values").none(),
           "Starts the reduction of `values` (size doubles, copied). Bad values are an "
           "InputError here and on every other rank of comm, from its test() or wait().")
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
