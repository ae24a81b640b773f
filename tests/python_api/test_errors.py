"""Bad input: InputError with one line, on every rank; NotConverged carries its Result."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
import scipy.sparse as sp

import asyncsolve
from conftest import block_of, rhs, whole


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


def test_option_table_ranges_and_messages(comm, spd):
    # The command's own message: asyncsolve solve --tol 2 says the same.
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, tol=2.0)
    assert one_line(e) == "--tol 2.0: expected a positive number from 1e-300 to 1"
    with pytest.raises(asyncsolve.InputError, match="--max-iters -1"):
        asyncsolve.solve(whole(spd, comm), comm=comm, max_iters=-1)
    with pytest.raises(asyncsolve.InputError, match="--method 'gauss'"):
        asyncsolve.solve(whole(spd, comm), comm=comm, method="gauss")
    # An option where it does nothing, refused as the command refuses it.
    with pytest.raises(asyncsolve.InputError, match="--variant async with --method pcg1"):
        asyncsolve.solve(whole(spd, comm), comm=comm, method="pcg1", variant="async")


def test_unknown_and_grid_keywords(comm, spd):
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, colour="blue")
    assert one_line(e).startswith("unexpected keyword 'colour': expected one of method, ")
    # Keywords of the model problems are not keywords of a matrix.
    with pytest.raises(asyncsolve.InputError, match="unexpected keyword 'local'"):
        asyncsolve.solve(whole(spd, comm), comm=comm, local="4,4,4")
    assert "max_iters" in asyncsolve.keywords()
    assert "problem" not in asyncsolve.keywords()


def test_non_square(comm):
    a = sp.random(6, 5, density=0.5, format="csr", random_state=1) + sp.eye(6, 5)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(a, comm), comm=comm)
    assert "6 x 5" in one_line(e)


def test_row_offsets_are_checked_before_any_row_is_read(comm):
    # A middle offset far past the entries, the last one still nnz: row 1
    # used to be read up to offset 100, past the 4 column indices.
    a = sp.identity(4, format="csr")
    a.indptr[2] = 100
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(a, comm), comm=comm, method="gmres")
    assert one_line(e) == "A: row 2: its offsets 100 > 3: expected ascending row offsets"


@pytest.mark.parametrize("part", ["data", "indptr"])
def test_csr_arrays_that_are_not_vectors(comm, spd, part):
    # scipy takes a reshaped array; the refusal used to come from the
    # binding on rank 0 alone, while the other ranks waited.
    a = spd.copy()
    setattr(a, part, getattr(a, part).reshape(1, -1))
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(a, comm), comm=comm, method="gmres")
    assert one_line(e).startswith(f"A.{part}: a 2-D array: expected a 1-D array")


def test_not_a_matrix(comm):
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole([[1.0]], comm), comm=comm)
    assert one_line(e) == "A: a list: expected a scipy.sparse matrix or array"


def test_wrong_length_b(comm, spd):
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), np.ones(5), comm=comm)
    assert one_line(e) == "b: 5 values for a matrix of 144 rows: expected 144"


def test_dtypes(comm, spd):
    with pytest.warns(asyncsolve.DtypeWarning) if comm.rank == 0 else contextlib.nullcontext():
        r = asyncsolve.solve(whole(spd.astype(np.float32), comm), comm=comm, tol=1e-6)
    assert r.converged
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd.astype(np.complex128), comm), comm=comm)
    assert one_line(e) == "A: dtype complex128: expected real numbers (float64)"


def test_rows_with_a_gap(comm, spd):
    block, rows = block_of(spd, comm)
    if comm.size == 1:
        rows = (1, rows[1])
        block = block[1:]
    elif comm.rank == comm.size - 1:
        rows = (rows[0] + 1, rows[1])  # a gap before the last rank's block
        block = block[1:]
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=rows)
    assert "expected" in one_line(e)


def test_rows_not_matching_block(comm, spd):
    block, rows = block_of(spd, comm)
    with pytest.raises(asyncsolve.InputError, match=r"rows=\(.*expected A to hold rows"):
        asyncsolve.solve(block[:-1], comm=comm, rows=rows)


def test_not_a_communicator(spd):
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(spd, comm="world")
    assert one_line(e) == "comm: a str: expected an mpi4py communicator (mpi4py.MPI.Comm)"


def test_not_converged_carries_result(comm, spd):
    with pytest.raises(asyncsolve.NotConverged) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, method="cg", tol=1e-12, max_iters=3)
    result = e.value.result
    assert not result.converged
    assert result.reason == "max_iters"
    assert result.iterations == 3
    assert isinstance(e.value, asyncsolve.Error)


def test_breakdown_is_not_converged(comm):
    # An indefinite matrix: CG breaks down (p^T A p <= 0).
    a = sp.diags([1.0, -1.0, 2.0, -3.0] * 3).tocsr()
    with pytest.raises(asyncsolve.NotConverged) as e:
        asyncsolve.solve(whole(a, comm), np.ones(12), comm=comm, method="cg")
    assert e.value.result.reason == "breakdown"


def test_exception_classes():
    assert issubclass(asyncsolve.InputError, asyncsolve.Error)
    assert issubclass(asyncsolve.RuntimeFailure, asyncsolve.Error)
    assert issubclass(asyncsolve.NotConverged, asyncsolve.Error)


@pytest.mark.parametrize("method", ["cg", "pcg1", "pipecg"])
def test_cg_family_refuses_a_nonsymmetric_matrix(comm, nonsymmetric, method):
    # The command's symmetry check and its one-line refusal, on every rank.
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(nonsymmetric, comm), comm=comm, method=method)
    text = one_line(e)
    assert text.startswith(f"--method {method}: the matrix is not symmetric")
    assert "--force" in text


def test_force_runs_cg_on_a_nonsymmetric_matrix(comm, nonsymmetric):
    # Forced, CG runs (whatever it reaches) and the document says so.
    try:
        r = asyncsolve.solve(whole(nonsymmetric, comm), comm=comm, method="cg", force=True,
                             max_iters=20)
    except asyncsolve.NotConverged as e:
        r = e.result
    symmetry = r.document["problem"]["symmetry"]
    assert symmetry["symmetric"] is False
    assert symmetry["forced"] is True


def test_a_basis_no_node_can_hold_is_refused_as_the_restart(comm):
    # GMRES(1000) on as many rows as make its basis larger than this node's memory on each
    # rank: the set-up's reservation failed first (RuntimeFailure, "out of memory"), where the
    # caller's mistake is the restart.
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if memory > 2**38:
        pytest.skip("a node of more than 256 GiB: the matrix would be too large for a test")
    n = comm.size * (memory // (1005 * 8) + 1)
    first, last = n * comm.rank // comm.size, n * (comm.rank + 1) // comm.size
    block = sp.csr_matrix((np.full(last - first, 2.0), np.arange(first, last),
                           np.arange(last - first + 1)), shape=(last - first, n))
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=(first, last), method="gmres", restart=1000)
    assert one_line(e).startswith("--restart 1000: gmres keeps 1005 vectors and an 1001-square "
                                  "Hessenberg matrix, ")
    assert one_line(e).endswith("expected a shorter restart")


def test_a_given_elsewhere_than_rank_0_in_the_whole_form(comm, spd):
    # Rank 1, which passed the matrix, was told it passed a NoneType.
    if comm.size == 1:
        pytest.skip("needs a rank other than 0")
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(spd if comm.rank == 1 else None, comm=comm)
    assert one_line(e) == ("A: given on rank 1 but None on rank 0, where the whole matrix is "
                           "read: expected A on rank 0 (or rows=(first, last) and a block on "
                           "every rank)")


def test_b_or_x0_given_elsewhere_than_rank_0_in_the_whole_form(comm, spd):
    # b on rank 1 with None on rank 0 was not read: A x = A 1 was solved and "converged".
    if comm.size == 1:
        pytest.skip("needs a rank other than 0")
    n = spd.shape[0]
    b = rhs(n) if comm.rank == 1 else None
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), b, comm=comm)
    assert one_line(e) == ("b: given on rank 1 but None on rank 0, where the whole matrix's b "
                           "is read (None: b = A 1): expected b on rank 0")
    with pytest.raises(asyncsolve.InputError, match=r"^x0: given on rank 1 but None on rank 0"):
        asyncsolve.solve(whole(spd, comm), rhs(n), x0=np.zeros(n) if comm.rank == 1 else None,
                         comm=comm)
    with asyncsolve.Solver(whole(spd, comm), comm=comm) as solver:
        with pytest.raises(asyncsolve.InputError, match=r"^b: given on rank 1 but None"):
            solver.solve(b)
        # The same b on every rank, as the documentation's example passes it: rank 0's read.
        r = solver.solve(rhs(n), gather=True)
    assert r.converged
    assert np.linalg.norm(spd @ r.x - rhs(n)) <= 1e-5 * np.linalg.norm(rhs(n))


def test_an_empty_b_or_x0_is_not_none(comm, spd):
    # An empty array was taken as None: A x = A 1 was solved (or x0 = 0) and "converged".
    n = spd.shape[0]
    empty = np.ones(0)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), empty, comm=comm)
    assert one_line(e) == (f"b: an empty array for {n} rows: expected one value per row, or "
                           "None (b = A 1)")
    with pytest.raises(asyncsolve.InputError, match=r"^x0: an empty array for"):
        asyncsolve.solve(whole(spd, comm), rhs(n), x0=empty, comm=comm)
    block, rows = block_of(spd, comm)
    last = comm.size - 1
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, empty if comm.rank == last else rhs(n)[rows[0]:rows[1]],
                         comm=comm, rows=rows)
    assert one_line(e).startswith(f"rank {last}: b: an empty array for ")
    with (asyncsolve.Solver(whole(spd, comm), comm=comm) as solver,
          pytest.raises(asyncsolve.InputError, match=r"^b: an empty array for")):
        solver.solve(empty)
    with asyncsolve.Solver(block, comm=comm, rows=rows) as solver:
        with pytest.raises(asyncsolve.InputError, match=rf"^rank {last}: b: an empty array"):
            solver.solve(empty if comm.rank == last else rhs(n)[rows[0]:rows[1]])
        assert solver.solve().converged  # the Solver goes on


def test_b_given_on_some_ranks_in_the_rows_form(comm, spd):
    # The last rank's b None beside the others' b: Solver.solve raised MPI_ERR_TRUNCATE there
    # and the others waited for ever; solve() solved A 1 on those rows beside b elsewhere.
    if comm.size == 1:
        pytest.skip("needs two ranks")
    n = spd.shape[0]
    block, rows = block_of(spd, comm)
    b = None if comm.rank == comm.size - 1 else rhs(n)[rows[0]:rows[1]]
    expected = (f"b: given on rank 0 but None on rank {comm.size - 1}: expected each rank's "
                "entries of b on every rank, or None on every rank (b = A 1)")
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, b, comm=comm, rows=rows)
    assert one_line(e) == expected
    with asyncsolve.Solver(block, comm=comm, rows=rows) as solver:
        with pytest.raises(asyncsolve.InputError) as e:
            solver.solve(b)
        assert one_line(e) == expected
        r = solver.solve(rhs(n)[rows[0]:rows[1]], gather=True)
    assert r.converged
    assert np.linalg.norm(spd @ r.x - rhs(n)) <= 1e-5 * np.linalg.norm(rhs(n))


@pytest.mark.parametrize("partition", ["metis", "block:nnz"])
def test_a_partition_of_the_callers_rows_is_refused(comm, spd, partition):
    # The rows stayed where they were and the document named the partition as made.
    block, rows = block_of(spd, comm)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=rows, partition=partition)
    assert one_line(e) == (f"--partition {partition}: the caller's rows (rows=) stay on their "
                           "ranks, expected block (the whole matrix on rank 0 is partitioned)")
    assert asyncsolve.solve(block, comm=comm, rows=rows, partition="block").converged


def test_nonsymmetric_option_ranges(comm, nonsymmetric):
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(nonsymmetric, comm), comm=comm, method="gmres", restart=0)
    assert one_line(e).startswith("--restart 0: expected")
    with pytest.raises(asyncsolve.InputError, match="--cgs-refinement 'often'"):
        asyncsolve.solve(whole(nonsymmetric, comm), comm=comm, method="gmres",
                         cgs_refinement="often")
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(nonsymmetric, comm), comm=comm, method="gmres", pc="chebyshev")
    assert one_line(e).startswith("--pc chebyshev with --method gmres")


def zero_diagonal_in_last_row(comm):
    """A nonsymmetric matrix whose one zero diagonal entry is its last row: row 2
    (0-based) on up to 3 ranks; on more, after as many rows of 4 I as give each rank a row."""
    a = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.3, 0.0]]))
    if comm.size > 3:
        a = sp.block_diag([sp.eye(comm.size) * 4.0, a]).tocsr()  # not on rank 0's rows
    return a, a.shape[0] - 1


@pytest.mark.parametrize(("options", "words"), [
    ({"method": "gmres", "pc": "jacobi"}, "the Jacobi preconditioner of gmres divides"),
    ({"method": "gmres", "pc": "ilu0"}, "--pc ilu0:"),
    ({"method": "jacobi"}, "a_ii = 0 on"),
    ({"method": "gmres", "scale": "unit-diagonal"}, "--scale unit-diagonal: a_ii = 0 on"),
])
def test_zero_diagonal_named_by_the_callers_row(comm, options, words):
    # Refused before the solve, naming the row as the caller numbers it
    # (0-based, "row N of A"), whatever the partition made of it; a Matrix
    # Market file's rows are named "file row N" (1-based) instead.
    a, row = zero_diagonal_in_last_row(comm)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(a, comm), np.ones(a.shape[0]), comm=comm, **options)
    line = one_line(e)
    assert words in line, line
    assert f"row {row} of A" in line, line
    assert "file row" not in line, line
    assert "global row" not in line, line


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("where", ["A", "A by rows", "b", "b by rows", "x0", "Solver b"])
def test_values_that_are_not_finite(comm, spd, where, bad):
    # A caller's NaN or infinity is bad input, as it is in a Matrix Market file:
    # refused on every rank before the solve (it was solved, and the Result's
    # residuals, null in the document, raised TypeError).
    a, b, x0 = spd.copy(), rhs(spd.shape[0]), np.zeros(spd.shape[0])
    {"A": a.data, "A by rows": a.data, "x0": x0}.get(where, b)[0] = bad
    block, rows = block_of(a, comm)

    def attempt():
        if where.endswith("by rows"):
            return asyncsolve.solve(block, b[rows[0]:rows[1]], comm=comm, rows=rows)
        if where == "Solver b":
            with asyncsolve.Solver(whole(spd, comm), comm=comm) as solver:
                return solver.solve(whole(b, comm))
        return asyncsolve.solve(whole(a, comm), whole(b, comm), x0=whole(x0, comm), comm=comm)

    with pytest.raises(asyncsolve.InputError) as e:
        attempt()
    assert "expected finite numbers" in one_line(e)


def test_one_rank_failing_fails_every_rank(comm, spd):
    # Whatever one rank's arguments raise (a keyword of a type no option takes, an
    # array that cannot be read) is shared before anything collective: every rank
    # raises InputError, none waits for the others (they hung).
    last = comm.rank == comm.size - 1
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, tol=object() if last else 1e-6)
    assert one_line(e) == "tol: a object: expected a number, text or a bool"

    class Unreadable:
        def __array__(self, *args, **kwargs):
            raise MemoryError("no room")

    block, rows = block_of(spd, comm)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, Unreadable() if last else np.ones(block.shape[0]), comm=comm,
                         rows=rows)
    assert "out of memory while reading the arrays (no room)" in one_line(e)
    with (asyncsolve.Solver(whole(spd, comm), comm=comm) as solver,
          pytest.raises(asyncsolve.InputError, match="b or x0: out of memory")):
        solver.solve(Unreadable() if comm.rank == 0 else None)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=(rows[0], None) if last else rows)
    assert "expected rows=(first, last), two integers" in one_line(e)


@pytest.mark.parametrize("bad", [lambda first, last: (first + 0.5, last),
                                 lambda first, last: (str(first), str(last)),
                                 lambda first, last: (first, float(last)),
                                 lambda first, last: (False, True)])
def test_rows_are_integers(comm, spd, bad):
    # A fractional, text or bool bound was truncated or parsed into a row number.
    block, rows = block_of(spd, comm)
    last = comm.rank == comm.size - 1
    given = bad(*rows) if last else rows
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=given)
    last_rows = comm.bcast(rows, root=comm.size - 1)
    assert one_line(e).startswith(f"rank {comm.size - 1}: rows={bad(*last_rows)!r}")
    assert "expected rows=(first, last), two integers" in one_line(e)
    # Numpy's integers are integers.
    r = asyncsolve.solve(block, comm=comm, rows=(np.int32(rows[0]), np.int64(rows[1])))
    assert r.converged


def test_rows_beyond_int64_on_one_rank(comm, spd):
    # A bound past 2^63 - 1 passed the check and overflowed in the call into the
    # library, on that rank alone, while the others waited in it.
    block, rows = block_of(spd, comm)
    last = comm.rank == comm.size - 1
    given = (rows[0] + 2**64, rows[1] + 2**64) if last else rows
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=given)
    first, end = comm.bcast(given, root=comm.size - 1)
    assert one_line(e) == (f"rank {comm.size - 1}: rows=({first}, {end}): expected 0 <= first "
                           "<= last < 2^63")


def test_solver_closed_on_one_rank(comm, spd):
    # close() is collective; a rank that closed alone is named on every rank
    # by the next solve (the others waited in it for ever).
    solver = asyncsolve.Solver(whole(spd, comm), comm=comm)
    try:
        if comm.rank == comm.size - 1:
            solver.close()
        with pytest.raises(asyncsolve.InputError) as e:
            solver.solve()
        assert one_line(e) == (f"rank {comm.size - 1}: the Solver is closed: expected an open "
                               "Solver on every rank (close() is collective)")
    finally:
        solver.close()


def test_kernel_is_not_a_keyword(comm, spd):
    # The stencil kernels run on the model problems only: a matrix has none to pick.
    with pytest.raises(asyncsolve.InputError, match="unexpected keyword 'kernel'"):
        asyncsolve.solve(whole(spd, comm), comm=comm, method="jacobi", kernel="portable")
    assert "kernel" not in asyncsolve.keywords()


def test_result_numbers_that_json_cannot_hold_are_nan():
    r = asyncsolve.Result('{"result": {"true_residual": null, "residual_estimate": null}}',
                          np.zeros(0), np.zeros(0, dtype=np.int64))
    assert np.isnan(r.true_residual)
    assert np.isnan(r.residual_estimate)


def test_arguments_that_differ_between_ranks_are_refused_on_every_rank(comm, spd):
    # gather, and the calling form (whole A on rank 0, or rows= on every rank), decide
    # which collectives a rank enters: a rank that differs used to leave the others
    # waiting for ever.
    if comm.size == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, method="cg", gather=comm.rank == 0)
    assert one_line(e).startswith("gather differs between the ranks (rank 0: True, rank 1: False")
    block, rows = block_of(spd, comm)
    a, rows_given = (spd, None) if comm.rank == 0 else (block, rows)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(a, comm=comm, method="cg", rows=rows_given)
    assert one_line(e).startswith("rows differs between the ranks "
                                  "(rank 0: not given, rank 1: given")
    with (asyncsolve.Solver(whole(spd, comm), comm=comm) as solver,
          pytest.raises(asyncsolve.InputError, match="gather differs between the ranks")):
        solver.solve(gather=comm.rank == comm.size - 1)
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, gather="yes")
    assert one_line(e) == "gather='yes': a str: expected True or False"


def test_a_keyword_that_differs_between_ranks_is_named(comm, spd):
    # The command's agreement found it, without naming the keyword or the values.
    if comm.size == 1:
        pytest.skip("needs two ranks")
    last = comm.rank == comm.size - 1
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, method="cg",
                         **({"max_iters": 50} if last else {}))
    given = ", ".join(["rank 0: not given"] + [f"rank {r}: not given"
                                               for r in range(1, comm.size - 1)]
                      + [f"rank {comm.size - 1}: 50"])
    assert one_line(e) == (f"keyword max_iters differs between the ranks ({given}): expected "
                           "the same keywords on every rank")
    with pytest.raises(asyncsolve.InputError, match="keyword pc_option differs between the ranks "
                       r"\(rank 0: lanczos_steps=10, rank 1: lanczos_steps=11"):
        asyncsolve.solve(whole(spd, comm), comm=comm, method="pcg1", pc="chebyshev",
                         pc_option={"lanczos_steps": 10 + min(comm.rank, 1)})


@pytest.mark.parametrize(("keywords", "expected"), [
    ({"max_iters": True, "method": "cg"},
     "max_iters=True: a bool: expected a value of --max-iters (N; True and False are for flags)"),
    ({"tol": False},
     "tol=False: a bool: expected a value of --tol (X; True and False are for flags)"),
    ({"method": b"cg"}, "method: a bytes: expected a number, text or a bool (e.g. method='cg')"),
    ({"pc_option": [("lanczos_steps", 20)]},
     "pc_option: a list of tuple: expected numbers or text (a dict for name=value pairs)"),
    # A list as one name's value was joined into the text and split at its comma.
    ({"pc_option": {"lanczos_steps": [1, 2]}},
     ("pc_option: lanczos_steps=[1, 2]: a list: expected a number or text for each name "
      "(e.g. pc_option={'lanczos_steps': 20})")),
    # A flag given a number or text: 2 and "yes" forced, -1 and "off" silently did not.
    ({"force": 2}, "force=2: expected True or False (--force is a flag)"),
    ({"force": -1}, "force=-1: expected True or False (--force is a flag)"),
    ({"monitor": "yes"}, "monitor=yes: expected True or False (--monitor is a flag)"),
])
def test_keywords_of_the_wrong_kind(comm, spd, keywords, expected):
    # True took the next keyword as its value ("--max-iters --method=cg"); False left
    # the option at its default; bytes were read as a list of numbers.
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, **keywords)
    assert one_line(e) == expected


def test_an_empty_pc_option_is_no_option(comm, spd):
    """pc_option={} became "--pc-option ''" and was refused as "empty value after '='",
    which the user never typed; no name=value pairs is the option not given."""
    plain = asyncsolve.solve(whole(spd, comm), comm=comm, method="pcg1", pc="chebyshev")
    for none in ({}, []):
        empty = asyncsolve.solve(whole(spd, comm), comm=comm, method="pcg1", pc="chebyshev",
                                 pc_option=none)
        assert empty.converged
        assert empty.iterations == plain.iterations
    # An empty text is no value: refused as such, not as "an empty value after '='".
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, method="pcg1", pc="chebyshev",
                         pc_option="")
    assert one_line(e) == ("pc_option='': an empty text: expected a value of --pc-option "
                           "(or None for its default)")


def test_a_misspelled_keyword_is_refused_even_when_none(comm, spd):
    """tolerance=None was dropped with the other None keywords, unnoticed."""
    for value in (None, 1e-3):
        with pytest.raises(asyncsolve.InputError) as e:
            asyncsolve.solve(whole(spd, comm), comm=comm, method="cg", tolerance=value)
        assert one_line(e).startswith("unexpected keyword 'tolerance': expected one of method, ")


def test_blocks_of_a_matrix_that_is_not_square_say_so(comm, spd):
    """Blocks with half of A's columns were refused for their row ranges ("the ranks own
    144 rows in all: expected 72 (the global rows)")."""
    block, rows = block_of(spd, comm)
    half = spd.shape[1] // 2
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block[:, :half], comm=comm, rows=rows)
    assert one_line(e) == (f"A: the blocks hold {spd.shape[0]} rows in all but {half} "
                           "columns: expected a square matrix (each block's columns are all "
                           "of A's)")


def test_blocks_with_more_columns_than_rows_say_so(comm, spd):
    """Blocks with 5 columns more than A has rows were refused for their row count
    ("the ranks own 144 rows in all: expected 149 (the global rows)"), the columns
    unnamed."""
    block, rows = block_of(spd, comm)
    wide = sp.hstack([block, sp.csr_matrix((block.shape[0], 5))], format="csr")
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(wide, comm=comm, rows=rows)
    assert one_line(e).startswith(f"A: the blocks hold {spd.shape[0]} rows in all but "
                                  f"{spd.shape[1] + 5} columns: expected a square matrix")


def test_overlapping_blocks_are_named_as_such(comm, spd):
    """Rank 1's block starting one row early (2 ranks: (0, 72) and (71, 144)) was
    refused as "the blocks hold 145 rows in all but 144 columns: expected a square
    matrix"; the overlap is what is wrong."""
    if comm.size == 1:
        pytest.skip("needs two ranks")
    block, (first, last) = block_of(spd, comm)
    if comm.rank == 1:
        first -= 1
        block = spd[first:last]
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=(first, last))
    start, end = spd.shape[0] // comm.size, 2 * spd.shape[0] // comm.size  # rank 1's rows
    assert one_line(e) == (f"rank 1: rows from {start - 1} to {end}: expected rows from "
                           f"{start} (each rank's block follows the previous rank's, without "
                           "overlap or gap)")


def test_blocks_with_different_column_counts_name_every_rank(comm, spd):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    block, rows = block_of(spd, comm)
    if comm.rank == 1:
        block = block[:, :-1]
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(block, comm=comm, rows=rows)
    assert f"(rank 0: {spd.shape[1]}, rank 1: {spd.shape[1] - 1}" in one_line(e)
    # A rank's own bad block is named by its rank.
    bad = block.astype(np.complex128) if comm.rank == comm.size - 1 else block
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(bad, comm=comm, rows=rows)
    assert one_line(e) == (f"rank {comm.size - 1}: A: dtype complex128: "
                           "expected real numbers (float64)")


def test_vectors_that_are_not_numpy_vectors(comm, spd):
    b = sp.csr_matrix(np.ones((spd.shape[0], 1)))
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), whole(b, comm), comm=comm)
    assert one_line(e).startswith(f"b: a scipy.sparse csr matrix of shape ({spd.shape[0]}, 1): "
                                  "expected a NumPy vector")


def test_an_empty_keyword_value_is_refused_as_empty(comm, spd):
    # An empty value must not take the next keyword as its value; it is named as the
    # keyword the user gave (the command's "--allreduce=" form is not what was typed).
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, method="cg", allreduce="", tol=1e-8)
    assert one_line(e) == ("allreduce='': an empty text: expected a value of --allreduce "
                           "(or None for its default)")


def test_shmem_transport_is_the_commands_only(comm, spd):
    with pytest.raises(asyncsolve.InputError) as e:
        asyncsolve.solve(whole(spd, comm), comm=comm, method="jacobi", variant="async",
                         transport="shmem")
    # A build with OpenSHMEM says where it runs; one without (the MPICH
    # build) says so. Both name what an embedding program may use.
    line = one_line(e)
    assert line.startswith(("--transport shmem: OpenSHMEM runs under the asyncsolve command",
                            "--transport shmem: this build of asyncsolve has no OpenSHMEM")), line
    assert "expected mpi or rma" in line, line


@pytest.mark.parametrize("method", ["gmres", "jacobi"])
def test_an_empty_row_with_b_zero_reports_no_error(comm, method):
    # b = A 1 is 0 on the empty row: the solution is not unique, and the error
    # against all ones (1.0 for gmres) was reported beside the warning that says
    # it is not. jacobi refuses the zero diagonal.
    a = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(40, 40)).tolil()
    a[7, :] = 0
    a = a.tocsr()
    if method == "jacobi":
        with pytest.raises(asyncsolve.InputError, match="a_ii = 0 on row 7"):
            asyncsolve.solve(whole(a, comm), comm=comm, method=method)
        return
    r = asyncsolve.solve(whole(a, comm), comm=comm, method=method, pc="none")
    assert r.converged
    assert r.to_dict()["error_inf"] is None
    assert r.to_dict()["warnings"][0].startswith(
        "row 7 of A is empty (no non-zero entry) and b is 0 there")


def test_a_subdomain_that_cannot_be_factorised_is_a_breakdown(comm, spd):
    # -A of a Laplacian: every subdomain is negative definite, and cholmod cannot
    # factorise it. The command reports a breakdown with its document; here
    # solve() and a Solver's solve() raise NotConverged with the Result (the
    # Solver raised RuntimeFailure from its constructor).
    neg = whole(-spd, comm)
    b = rhs(spd.shape[0]) if comm.rank == 0 else None
    for run in (lambda: asyncsolve.solve(neg, b, comm=comm, method="pcg1", pc="asm",
                                         local_solver="cholmod"),
                lambda: asyncsolve.Solver(neg, comm=comm, method="pcg1", pc="asm",
                                          local_solver="cholmod").solve(b)):
        with pytest.raises(asyncsolve.NotConverged) as e:
            run()
        r = e.value.result
        assert r.reason == "breakdown"
        assert r.iterations == 0
        assert "subdomain" in r.detail, r.detail
        assert "not positive definite" in r.detail, r.detail
        assert r.to_dict()["true_residual"] == pytest.approx(1.0)

