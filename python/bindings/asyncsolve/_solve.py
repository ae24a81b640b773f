"""asyncsolve.solve and asyncsolve.Solver: scipy.sparse systems on mpi4py communicators."""

from __future__ import annotations

import operator
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse
from mpi4py import MPI

from . import _core
from ._mpi import agree, check_comm
from ._result import NotConverged, Result

MATRIX_NAME = "A"  # how messages and the result document name the matrix


class DtypeWarning(UserWarning):
    """An array was converted to float64 (a copy of its values)."""


class _Refused(Exception):
    """A local verdict, shared with the other ranks before it is raised."""


def _keyword_text(keyword: str, value: Any) -> tuple[str, str, bool] | None:
    """A keyword as the command line takes it: (keyword, text, is_flag); a bool is a flag,
    its text "" (True) or "False" (the command refuses either for an option with a value)."""
    if isinstance(value, bool | np.bool_):  # False: a flag left off (refused for a value)
        return keyword, "" if value else "False", True
    if isinstance(value, bytes | bytearray):
        raise _Refused(f"{keyword}: a {type(value).__name__}: expected a number, text or a bool "
                       f"(e.g. {keyword}={value.decode(errors='replace')!r})")
    if isinstance(value, int | np.integer):
        return keyword, str(int(value)), False
    if isinstance(value, float | np.floating):
        return keyword, repr(float(value)), False
    if isinstance(value, str):
        if not value:  # the command would read "--name=" (an empty value after '=')
            raise _Refused(f"{keyword}='': an empty text: expected a value of "
                           f"--{keyword.replace('_', '-')} (or None for its default)")
        return keyword, value, False
    if isinstance(value, Mapping | Sequence) and not value:
        return None  # no name=value pairs, no values: as if not given
    if isinstance(value, Mapping):  # pc_option={"lanczos_steps": 20}
        for k, v in value.items():
            if not isinstance(v, str | int | float | np.number | np.bool_):
                raise _Refused(f"{keyword}: {k}={v!r}: a {type(v).__name__}: expected a number "
                               f"or text for each name (e.g. {keyword}={{{k!r}: 20}})")
        return keyword, ",".join(f"{k}={v}" for k, v in value.items()), False
    if isinstance(value, Sequence):
        if not all(isinstance(v, str | int | float | np.number) for v in value):
            kinds = sorted({type(v).__name__ for v in value})
            raise _Refused(f"{keyword}: a {type(value).__name__} of {', '.join(kinds)}: expected "
                           "numbers or text (a dict for name=value pairs)")
        return keyword, ",".join(str(v) for v in value), False
    raise _Refused(f"{keyword}: a {type(value).__name__}: expected a number, text or a bool")


def _keywords(named: dict[str, Any], options: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """The keywords as text; _Refused for a value of a type no option takes."""
    given = dict(options) | {k: v for k, v in named.items() if v is not None}
    # None leaves an option at its default, but a name no option has is a mistake
    # (a misspelled keyword) whatever its value.
    known = list(_core.keywords())
    for k, v in options.items():
        if v is None and k not in known:
            raise _Refused(f"unexpected keyword {k!r}: expected one of {', '.join(known)}")
    texts = [_keyword_text(k, v) for k, v in given.items() if v is not None]
    return [t for t in texts if t is not None]


def _local_error(e: BaseException, what: str) -> str:
    """A rank's own failure while it reads its arguments, as the message every rank raises."""
    if isinstance(e, _Refused):
        return str(e)
    if isinstance(e, MemoryError):
        return f"{what}: out of memory while reading the arrays ({e}): expected a smaller system"
    return f"{what}: {e}"


def _rows(rows: Any) -> tuple[int, int]:
    """rows=(first, last) as two integers, or a refusal."""
    try:
        first, last = (operator.index(r) for r in rows)
    except (TypeError, ValueError) as e:
        raise _Refused(f"rows={rows!r}: {e}: expected rows=(first, last), two integers") from e
    if any(isinstance(r, bool | np.bool_) for r in rows):
        raise _Refused(f"rows={rows!r}: a bool: expected rows=(first, last), two integers")
    if not 0 <= first <= last < 2**63:
        raise _Refused(f"rows=({first}, {last}): expected 0 <= first <= last < 2^63")
    return first, last


def _vector(v: Any, name: str) -> np.ndarray | None:
    """A float64 vector (converted with a DtypeWarning), or None."""
    if v is None:
        return None
    if scipy.sparse.issparse(v):
        raise _Refused(f"{name}: a scipy.sparse {v.format} matrix of shape {v.shape}: expected a "
                       f"NumPy vector (e.g. {name}.toarray().ravel())")
    a = np.asarray(v)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.ndim != 1:
        raise _Refused(f"{name}: an array of shape {a.shape}: expected a vector")
    return np.ascontiguousarray(_float64(a, name))


def _not_empty(vectors: dict[str, np.ndarray | None], rows: int) -> None:
    """Refuses an empty b or x0 for `rows` rows: None means the default (b = A 1,
    x0 = 0); an empty array is an array of the wrong length (it was taken as None)."""
    for name, v in vectors.items():
        if v is not None and v.size == 0 and rows > 0:
            default = "b = A 1" if name == "b" else "x0 = 0"
            raise _Refused(f"{name}: an empty array for {rows} rows: expected one value per "
                           f"row, or None ({default})")


def _float64(a: np.ndarray, name: str) -> np.ndarray:
    if a.dtype == np.float64:
        return a
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)
            or a.dtype == np.bool_):
        raise _Refused(f"{name}: dtype {a.dtype}: expected real numbers (float64)")
    warnings.warn(f"asyncsolve: {name} converted from {a.dtype} to float64 (a copy)",
                  DtypeWarning, stacklevel=4)
    return a.astype(np.float64)


def _csr(a: Any) -> scipy.sparse.csr_array | scipy.sparse.csr_matrix:
    """A CSR form of `a` (no copy when it is one), or a refusal."""
    if not scipy.sparse.issparse(a):
        raise _Refused(f"A: a {type(a).__name__}: expected a scipy.sparse matrix or array")
    if a.ndim != 2:
        raise _Refused(f"A: {a.ndim} dimensions: expected a matrix")
    return a if a.format == "csr" else a.tocsr()


def _indices32(indices: np.ndarray, name: str) -> np.ndarray:
    if indices.dtype == np.int32:
        return indices
    if indices.size and int(indices.max()) > np.iinfo(np.int32).max:
        raise _Refused(f"{name}: a column above 2^31 - 1: expected at most 2^31 rows")
    return indices.astype(np.int32)


def _open(a: Any, b: Any, comm: Any, rows: tuple[int, int] | None, x0: Any,
          named: dict[str, Any], options: dict[str, Any],
          keep: bool) -> tuple[_core.System, MPI.Comm]:
    """Collective: the system set up on every rank, or InputError on every rank.

    Whatever a rank finds wrong with its own arguments (keywords included),
    and any exception while it reads them, is shared before anything
    collective: no rank is left waiting for one that raised.
    """
    comm = check_comm(comm)
    whole = rows is None
    args: dict[str, Any] = {}
    keywords: list[tuple[str, str, bool]] = []
    agree(comm, _same_on_every_rank(comm, "rows", whole,
                                    "rows=(first, last) on every rank, or on none (the whole A "
                                    "on rank 0)", lambda w: "not given" if w else "given"))
    if whole:
        agree(comm, _read_on_rank_0(comm, b, x0, a=a, with_a=True))
    else:
        agree(comm, _b_on_every_rank(comm, b, _block_rows(a)))
    error = None
    try:
        keywords = _keywords(named, options)
        if whole and comm.rank != 0:
            args = {"indptr": None, "indices": None, "data": None, "b": None, "x0": None,
                    "rows": 0, "cols": 0}
        else:
            m = _csr(a)
            data = np.ascontiguousarray(_float64(m.data, "A"))
            indptr = np.ascontiguousarray(m.indptr, dtype=np.int64)  # rows + 1 values
            args = {"data": data, "indptr": indptr, "b": _vector(b, "b"),
                    "x0": _vector(x0, "x0")}
            _not_empty({"b": args["b"], "x0": args["x0"]}, m.shape[0])
            if whole:
                args |= {"indices": np.ascontiguousarray(_indices32(m.indices, "A")),
                         "rows": m.shape[0], "cols": m.shape[1]}
            else:
                first, last = _rows(rows)
                if last - first != m.shape[0]:
                    raise _Refused(
                        f"rows=({first}, {last}): {last - first} rows, "
                        f"but A has {m.shape[0]}: expected A to hold rows {first} to {last - 1}")
                # Global columns: 64-bit (a copy when scipy holds 32-bit indices).
                args |= {"indices": np.ascontiguousarray(m.indices, dtype=np.int64),
                         "global_rows": m.shape[1], "first_row": first}
            # scipy lets a CSR's arrays be reshaped; the binding takes 1-D
            # ones only, and its refusal would come on this rank alone.
            for part in ("data", "indptr", "indices"):
                if args[part].ndim != 1:
                    raise _Refused(f"A.{part}: a {args[part].ndim}-D array: expected a 1-D "
                                   "array (a CSR's data, indices and indptr are vectors)")
    except Exception as e:  # every local failure is shared, then raised
        error = _local_error(e, "A" if whole else f"rank {comm.rank}")
        if not whole and isinstance(e, _Refused):
            error = f"rank {comm.rank}: {error}"  # which rank's block it is
    agree(comm, error)
    agree(comm, _keywords_differ(comm, keywords))
    if not whole:
        agree(comm, _blocks_square(comm, args["first_row"], len(args["indptr"]) - 1,
                                   args["global_rows"]))
    if whole:
        system = _core.System.whole(comm, keywords, MATRIX_NAME, args["rows"], args["cols"],
                                    args["indptr"], args["indices"], args["data"], args["b"],
                                    args["x0"], keep)
    else:
        system = _core.System.from_rows(comm, keywords, MATRIX_NAME, args["global_rows"],
                                        args["first_row"], args["indptr"], args["indices"],
                                        args["data"], args["b"], args["x0"], keep)
    return system, comm


def _blocks_square(comm: MPI.Comm, first: int, rows: int, cols: int) -> str | None:
    """Collective (rows=): None unless the blocks overlap or leave a gap, or their
    rows add up to other than their column count (A not square), else the message,
    the same on every rank (a column count that differs between ranks is left to
    the command's own check)."""
    shapes = comm.allgather((first, rows, cols))
    expected = 0
    for r, (f, n, _) in enumerate(shapes):
        if f != expected:  # named before the sum, which an overlap also breaks
            return (f"rank {r}: rows from {f} to {f + n}: expected rows from {expected} "
                    "(each rank's block follows the previous rank's, without overlap or gap)")
        expected += n
    total = expected
    if len({c for _, _, c in shapes}) == 1 and total > cols:
        return (f"A: the blocks hold {total} rows in all but {cols} columns: expected a "
                "square matrix (each block's columns are all of A's)")
    if len({c for _, _, c in shapes}) == 1 and total < cols:
        # more columns than rows: A is not square, or the last rank's rows stop short
        return (f"A: the blocks hold {total} rows in all but {cols} columns: expected a "
                f"square matrix (each block's columns are all of A's), the last rank's rows "
                f"reaching row {cols}")
    return None


def _keywords_differ(comm: MPI.Comm, keywords: list[tuple[str, str, bool]]) -> str | None:
    """Collective: None when every rank gave the same keywords, else the message naming
    the first keyword that differs and each rank's value (the same on every rank)."""
    every = comm.allgather({k: ("True" if flag and not text else text)
                            for k, text, flag in keywords})
    for name in dict.fromkeys(k for given in every for k in given):
        message = _differs(f"keyword {name}", [given.get(name) for given in every],
                           "the same keywords on every rank",
                           lambda v: "not given" if v is None else v)
        if message is not None:
            return message
    return None


def _same_on_every_rank(comm: MPI.Comm, name: str, value: Any, expected: str,
                        text: Any = repr) -> str | None:
    """Collective: None when every rank passed the same `value`, else the message naming
    each rank's (the same on every rank): a value that differs between ranks would
    leave some of them waiting in a collective the others never enter."""
    return _differs(name, comm.allgather(value), expected, text)


def _block_rows(a: Any) -> int:
    """The rows of a rank's block as far as its shape tells (0 when it has none)."""
    shape = getattr(a, "shape", None)
    try:
        return int(shape[0]) if shape else 0
    except (TypeError, ValueError, IndexError):
        return 0


def _b_on_every_rank(comm: MPI.Comm, b: Any, rows: int) -> str | None:
    """Collective: in the rows= form b is given by every rank that has rows, or by none
    (b = A 1); a None among given b's would make those rows' b A 1 (another system),
    and the ranks would disagree on whether b = A 1 was solved."""
    given = comm.allgather((b is not None, rows))
    with_rows = [(r, g) for r, (g, n) in enumerate(given) if n > 0]
    if any(g for _, g in with_rows) and not all(g for _, g in with_rows):
        some = next(r for r, g in with_rows if g)
        none = next(r for r, g in with_rows if not g)
        return (f"b: given on rank {some} but None on rank {none}: expected each rank's "
                "entries of b on every rank, or None on every rank (b = A 1)")
    return None


def _read_on_rank_0(comm: MPI.Comm, b: Any, x0: Any, a: Any = None,
                    with_a: bool = False) -> str | None:
    """Collective: in the whole-matrix form rank 0's A (with_a), b and x0 are read, the
    other ranks' are not (every rank may pass the same); one given elsewhere while rank 0
    passes None is a mistake (for b and x0 one that would solve another system), named
    here the same on every rank."""
    given = comm.allgather((with_a and a is not None, b is not None, x0 is not None))
    if with_a and not given[0][0] and (elsewhere := [r for r, g in enumerate(given) if g[0]]):
        return (f"A: given on rank {elsewhere[0]} but None on rank 0, where the whole matrix "
                "is read: expected A on rank 0 (or rows=(first, last) and a block on every "
                "rank)")
    for k, (name, default) in enumerate((("b", "b = A 1"), ("x0", "x0 = 0")), start=1):
        elsewhere = [r for r, g in enumerate(given) if g[k]]
        if elsewhere and not given[0][k]:
            return (f"{name}: given on rank {elsewhere[0]} but None on rank 0, where the whole "
                    f"matrix's {name} is read (None: {default}): expected {name} on rank 0")
    return None


def _differs(name: str, values: list[Any], expected: str, text: Any) -> str | None:
    """None when every rank's value (values[rank]) is the same, else the message naming
    each rank's, as text(value) shows it."""
    if all(v == values[0] for v in values):
        return None
    given = ", ".join(f"rank {r}: {text(v)}" for r, v in enumerate(values))
    return f"{name} differs between the ranks ({given}): expected {expected}"


def _result(system: _core.System, comm: MPI.Comm, take_x: bool, gather: Any) -> Result:
    error = None
    if not isinstance(gather, bool | np.bool_):
        error = f"gather={gather!r}: a {type(gather).__name__}: expected True or False"
    agree(comm, error)
    agree(comm, _same_on_every_rank(comm, "gather", bool(gather), "the same on every rank"))
    converged, document, x = system.solve(take_x)
    if gather:
        x = system.gather(x)
        rows = np.arange(system.global_rows, dtype=np.int64)
    else:
        rows = system.rows()
    result = Result(document, x, rows)
    if not converged:
        raise NotConverged(result)
    return result


def solve(A: Any,  # noqa: N803  (the matrix is A, as in scipy.sparse.linalg)
          b: Any = None, comm: Any = MPI.COMM_WORLD, method: str | None = "pcg1",
          pc: str | None = None, tol: float | None = None, *, rows: tuple[int, int] | None = None,
          x0: Any = None, gather: bool = False, **options: Any) -> Result:
    """Collective over ``comm``: solve A x = b as ``asyncsolve solve --matrix`` does.

    A is a scipy.sparse matrix: the whole matrix on rank 0 (the other ranks
    pass anything, e.g. None), partitioned and distributed as ``--matrix``
    is (``partition="metis"``); or, with ``rows=(first, last)``, this rank's
    rows first..last-1 with global column indices (ranks in order, the
    blocks without overlap or gap). b (None: b = A 1, whose solution is all
    ones) and x0 (None: zero) are whole vectors on rank 0 (the other ranks'
    are not read, but one given where rank 0 passes None is refused), or
    this rank's entries with ``rows``.

    method, pc, tol and every other keyword are the options of ``asyncsolve
    solve`` that apply to a matrix, named with underscores (``max_iters``
    for ``--max-iters``; ``keywords()`` lists them), validated by the
    command's own option table: same ranges, same messages. None leaves
    the command's default (tol: 1e-6 for the Krylov methods, 1e-4 for
    jacobi; pc: auto). A flag is True or False.

    Returns a Result; ``x`` is this rank's rows (``Result.rows`` their
    indices), or the whole solution on every rank with ``gather=True``.
    Raises InputError (bad input: one line, on every rank), NotConverged
    (carrying the Result) or RuntimeFailure.
    """
    named = {"method": method, "pc": pc, "tol": tol}
    system, comm = _open(A, b, comm, rows, x0, named, options, keep=False)
    try:
        return _result(system, comm, take_x=True, gather=gather)
    finally:
        system.close()


class Solver:
    """A system set up once (partition, operator, preconditioner) for many right-hand sides.

    Collective construction, ``solve`` and ``close`` (or use it in a
    ``with`` block). Takes the matrix and the keywords of :func:`solve`;
    ``solve(b)`` then runs the method from that b without setting anything
    up again, as ``--repeat-solve`` does for one b. The Krylov methods keep
    their preconditioner (chebyshev's bounds, BoomerAMG's hierarchy);
    jacobi keeps the operator.
    """

    def __init__(self, A: Any,  # noqa: N803
                 comm: Any = MPI.COMM_WORLD, method: str | None = "pcg1",
                 pc: str | None = None, tol: float | None = None, *,
                 rows: tuple[int, int] | None = None, **options: Any) -> None:
        comm = check_comm(comm)
        # Any value, 1 included, and of any type (an array has no truth value).
        agree(comm, "repeat_solve: a Solver repeats through solve(): expected no repeat_solve"
              if "repeat_solve" in options else None)
        named = {"method": method, "pc": pc, "tol": tol}
        self._whole = rows is None
        self._system, self.comm = _open(A, None, comm, rows, None, named, options, keep=True)

    def solve(self, b: Any = None, x0: Any = None, *, gather: bool = False) -> Result:
        """Collective: solve A x = b (None: b = A 1) from x0 (None: zero).

        b and x0 as in :func:`solve`: whole vectors on rank 0, or this rank's
        entries when the Solver was given ``rows``.
        """
        error = None
        vectors: dict[str, np.ndarray | None] = {"b": None, "x0": None}
        if self._system.closed:  # shared: the open ranks must not wait for this one
            error = (f"rank {self.comm.rank}: the Solver is closed: expected an open Solver on "
                     "every rank (close() is collective)")
        else:
            try:
                if not self._whole or self.comm.rank == 0:
                    vectors = {"b": _vector(b, "b"), "x0": _vector(x0, "x0")}
                    _not_empty(vectors, self._system.global_rows if self._whole
                               else self._system.local_rows)
            except Exception as e:  # shared with the other ranks, then raised
                error = _local_error(e, "b or x0")
                if not self._whole and isinstance(e, _Refused):
                    error = f"rank {self.comm.rank}: {error}"
        agree(self.comm, error)
        if self._whole:
            agree(self.comm, _read_on_rank_0(self.comm, b, x0))
        else:
            agree(self.comm, _b_on_every_rank(self.comm, b, self._system.local_rows))
        self._system.set_rhs(vectors["b"], vectors["x0"])  # b None: A 1
        return _result(self._system, self.comm, take_x=False, gather=gather)

    def close(self) -> None:
        """Collective: free the system (idempotent)."""
        self._system.close()

    def __enter__(self) -> Solver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def keywords() -> list[str]:
    """The keywords of solve() and Solver beyond A, b, comm and rows: the options of
    ``asyncsolve solve`` that apply to a matrix, in ``--help``'s order."""
    return list(_core.keywords())


def methods() -> list[str]:
    """The values of ``method``: the methods of ``asyncsolve solve`` that take a matrix."""
    return list(_core.methods())
