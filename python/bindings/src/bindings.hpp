#pragma once
// What the extension module's files share: the communicator an mpi4py
// object holds, and the registration function of each part.
#include <mpi.h>

#include <string>
#include <vector>

#include <nanobind/nanobind.h>

namespace asyncsolve::python {

/// The MPI_Comm of an mpi4py communicator (mpi4py's C API, imported on
/// first use). Throws core::InputError, naming `what` and the type given,
/// for anything else and for MPI.COMM_NULL.
MPI_Comm comm_of(nanobind::handle object, const char* what = "comm");

// The arguments of a collective call arrive as Python objects and are
// converted inside its shared check: a type nanobind refused at the call
// would raise on one rank before the check, and leave the others waiting
// in the collective.

/// `value` as an integer (what operator.index takes: an int or a NumPy
/// integer, not a bool) from `low` to `high`. Throws core::InputError
/// "WHAT VALUE: expected EXPECTED" for one out of range, and "WHAT: a
/// TYPE: expected an integer" for anything else.
long long integer_of(nanobind::handle value, const std::string& what, long long low, long long high,
                     const std::string& expected);
/// `value` as text (a str), or core::InputError naming `what` and its type.
std::string text_of(nanobind::handle value, const std::string& what);
/// The items of `value`, a sequence (a list, a tuple, ...; not str or
/// bytes), or core::InputError naming `what` and its type.
std::vector<nanobind::object> items_of(nanobind::handle value, const std::string& what);

/// A rank's own refusal as every rank of a collective call raises it:
/// "rank R: WHAT" where comm has more than one rank, else WHAT.
std::string rank_error(int rank, int ranks, const std::string& what);

/// The solve path: System, keywords() (solve.cpp).
void bind_solve(nanobind::module_& m);
/// Channel (channel.cpp).
void bind_channel(nanobind::module_& m);
/// NonblockingAllreduce (allreduce.cpp).
void bind_allreduce(nanobind::module_& m);

}  // namespace asyncsolve::python
