#pragma once
// What the extension module's files share: the communicator an mpi4py
// object holds, and the registration function of each part.
#include <mpi.h>

#include <nanobind/nanobind.h>

namespace asyncsolve::python {

/// The MPI_Comm of an mpi4py communicator (mpi4py's C API, imported on
/// first use). Throws core::InputError, naming `what` and the type given,
/// for anything else and for MPI.COMM_NULL.
MPI_Comm comm_of(nanobind::handle object, const char* what = "comm");

/// The solve path: System, keywords() (solve.cpp).
void bind_solve(nanobind::module_& m);
/// Channel (channel.cpp).
void bind_channel(nanobind::module_& m);
/// NonblockingAllreduce (allreduce.cpp).
void bind_allreduce(nanobind::module_& m);

}  // namespace asyncsolve::python
