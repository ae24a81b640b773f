"""The communicator: mpi4py's, checked, and the one way ranks agree on a verdict."""

from __future__ import annotations

from mpi4py import MPI

from . import _core


def check_library() -> None:
    """Raise InputError unless mpi4py and asyncsolve use the same MPI library.

    Both strings come from MPI_Get_library_version of the library each one
    is linked against; they differ when mpi4py came as a binary wheel for
    another MPI, or was built against another installation.
    """
    ours = _core.mpi_library_version().strip()
    theirs = MPI.Get_library_version().strip()
    if ours != theirs:
        first = lambda text: text.splitlines()[0] if text else "(none)"  # noqa: E731
        raise _core.InputError(
            f"mpi4py runs on '{first(theirs)}' and asyncsolve on '{first(ours)}': expected "
            "one MPI library (build mpi4py against it: pip install --no-binary mpi4py mpi4py)"
        )


def check_comm(comm: object) -> MPI.Comm:
    """The communicator, or InputError (local: a non-communicator cannot agree)."""
    if not isinstance(comm, MPI.Comm):
        raise _core.InputError(
            f"comm: a {type(comm).__name__}: expected an mpi4py communicator (mpi4py.MPI.Comm)"
        )
    if comm == MPI.COMM_NULL:
        raise _core.InputError("comm: MPI.COMM_NULL: expected a communicator")
    if comm.Is_inter():  # every rank of it has one: each refuses alike
        raise _core.InputError("comm: an intercommunicator: expected an intracommunicator "
                               "(e.g. the intercommunicator's Merge())")
    return comm


def agree(comm: MPI.Comm, error: str | None) -> None:
    """Collective: raise InputError on every rank if any rank has an error.

    The message is that of the lowest rank with one, the same everywhere.
    """
    errors = comm.allgather(error)
    for message in errors:
        if message is not None:
            raise _core.InputError(message)
