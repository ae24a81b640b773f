"""asyncsolve from Python: latency-tolerant parallel solvers on scipy.sparse matrices.

Run under mpirun with mpi4py::

    from mpi4py import MPI
    import asyncsolve
    result = asyncsolve.solve(A, b, comm=MPI.COMM_WORLD, method="pcg1", pc="chebyshev",
                              tol=1e-8)

- :func:`solve`: one solve, as ``asyncsolve solve --matrix`` runs it (every
  option of the command that applies to a matrix is a keyword);
  :class:`Solver`: the setup kept for many right-hand sides.
- :class:`Result`: x, converged, reason, iterations, the residual history,
  the phase times, and ``to_dict()``, the ``result`` part of the command's
  JSON document.
- :class:`Channel`: asynchronous channels over NumPy buffers;
  :class:`NonblockingAllreduce`: started, tested and waited reductions.
- Errors: :class:`InputError` (bad input), :class:`NotConverged` (carries
  the Result), :class:`RuntimeFailure`, all :class:`Error`; raised on every
  rank alike.

Importing the package initialises MPI through mpi4py and checks that both
use the same MPI library.
"""

from mpi4py import MPI  # noqa: F401  (initialises MPI before the library is used)

from . import _core
from ._core import Channel, Error, InputError, NonblockingAllreduce, RuntimeFailure
from ._mpi import check_library
from ._result import NotConverged, Result
from ._solve import DtypeWarning, Solver, keywords, methods, solve

__version__: str = _core.version
__all__ = [
    "Channel",
    "DtypeWarning",
    "Error",
    "InputError",
    "NonblockingAllreduce",
    "NotConverged",
    "Result",
    "RuntimeFailure",
    "Solver",
    "__version__",
    "keywords",
    "methods",
    "solve",
]

check_library()
