"""Bad input to `asyncsolve solve --matrix` and its companions: one line from
rank 0 naming the file, line or value, exit 2 on every rank, nothing
written (neither the --json document nor the --write-solution file)."""

import os
import subprocess

import pytest

GOOD = ("%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 4\n2 1 -1\n2 2 4\n"
        "3 2 -1\n3 3 4\n4 3 -1\n4 4 4\n")


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.mtx"
    path.write_text(GOOD)
    return path


def file_with(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(solve, tmp_path, ranks, *args, timeout=120):
    """Runs, expects exit 2, returns asyncsolve's one error line."""
    solution = tmp_path / "never.mtx"
    rc, out, err, doc = solve(ranks, *args, "--write-solution", solution, timeout=timeout) \
        if "--matrix" in map(str, args) and "--write-solution" not in map(str, args) \
        else solve(ranks, *args, timeout=timeout)
    assert rc == 2, out + err
    assert doc is None
    assert not solution.exists()
    lines = [x for x in err.splitlines() if x.startswith("asyncsolve")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("ranks", [1, 3])
def test_malformed_files(solve, tmp_path, ranks):
    missing = tmp_path / "missing.mtx"
    assert "missing.mtx: cannot open" in refused(solve, tmp_path, ranks, "--matrix", missing)
    assert "is a directory" in refused(solve, tmp_path, ranks, "--matrix", tmp_path)
    empty = file_with(tmp_path, "empty.mtx", "")
    assert "empty.mtx:1: empty file" in refused(solve, tmp_path, ranks, "--matrix", empty)
    bad = file_with(tmp_path, "bad.mtx", GOOD.replace("3 2 -1", "3 9 -1"))
    assert "bad.mtx:6: column index '9'" in refused(solve, tmp_path, ranks, "--matrix", bad)
    nan = file_with(tmp_path, "nan.mtx", GOOD.replace("3 3 4", "3 3 NaN"))
    assert "nan.mtx:7:" in refused(solve, tmp_path, ranks, "--matrix", nan)
    short = file_with(tmp_path, "short.mtx", GOOD.replace("4 4 7", "4 4 8"))
    assert "short.mtx:10: end of file after 7 of the 8" in refused(solve, tmp_path, ranks,
                                                                   "--matrix", short)
    rect = file_with(tmp_path, "rect.mtx",
                     "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n")
    assert "expected a square matrix" in refused(solve, tmp_path, ranks, "--matrix", rect)


def test_limits_and_vectors(solve, tmp_path, good):
    line = refused(solve, tmp_path, 2, "--matrix", good, "--matrix-memory", "1e-9")
    assert "good.mtx:2:" in line
    assert "--matrix-memory" in line
    huge = file_with(tmp_path, "huge.mtx", "%%MatrixMarket matrix coordinate real general\n"
                     "2000000000 2000000000 900000000000\n")
    assert "huge.mtx:2:" in refused(solve, tmp_path, 2, "--matrix", huge)
    rhs = file_with(tmp_path, "rhs.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n")
    line = refused(solve, tmp_path, 2, "--matrix", good, "--rhs", rhs)
    assert "--rhs" in line
    assert "expected 4" in line
    line = refused(solve, tmp_path, 2, "--matrix", good, "--x0", good)
    assert "--x0" in line
    assert "expected a vector" in line


def test_option_combinations(solve, tmp_path, good):
    assert "expected one of them" in refused(solve, tmp_path, 1, "--matrix", good, "--problem",
                                             "ones")
    assert "applies to --matrix" in refused(solve, tmp_path, 1, "--rhs", good)
    assert "applies to --matrix" in refused(solve, tmp_path, 1, "--partition", "metis")
    line = refused(solve, tmp_path, 1, "--matrix", good, "--partition", "parmetis")
    assert "--partition 'parmetis'" in line
    assert "--scale 'diag'" in refused(solve, tmp_path, 1, "--matrix", good, "--scale", "diag")
    assert "--assemble" in refused(solve, tmp_path, 1, "--matrix", good, "--assemble")
    assert "--transport omp" in refused(solve, tmp_path, 1, "--matrix", good, "--transport",
                                        "omp")
    assert "--global" in refused(solve, tmp_path, 1, "--matrix", good, "--global", "4,4,4")
    unwritable = tmp_path / "no" / "such" / "dir" / "x.mtx"
    line = refused(solve, tmp_path, 1, "--matrix", good, "--write-solution", unwritable)
    assert "--write-solution" in line


def test_jacobi_refuses_a_zero_diagonal(solve, tmp_path):
    zero = file_with(tmp_path, "zero.mtx", GOOD.replace("3 3 4", "3 3 0"))
    line = refused(solve, tmp_path, 2, "--matrix", zero, "--method", "jacobi")
    assert "zero diagonal" in line
    assert "file row 3" in line
    line = refused(solve, tmp_path, 2, "--matrix", zero, "--method", "pcg1")
    assert "positive diagonal" in line
    # cg needs no diagonal
    rc, out, err, _doc = solve(2, "--matrix", zero, "--method", "cg", "--max-iters", "5")
    assert rc in (0, 3), out + err


def test_more_ranks_than_rows(solve, tmp_path, good):
    assert "at least one row per rank" in refused(solve, tmp_path, 8, "--matrix", good)


def test_assemble_runs_every_solver(solve):
    for method in ["jacobi", "cg", "pcg-overlap", "pipecg"]:
        counts = []
        for assemble in [[], ["--assemble"]]:
            rc, out, err, doc = solve(2, "--problem", "plume", "--global", "10,8,6", "--method",
                                      method, *assemble)
            assert rc == 0, out + err
            counts.append(doc["result"]["iterations"]["max"])
        assert counts[0] == counts[1], (method, counts)


@pytest.mark.parametrize("ranks", [1, 3])
def test_inputs_that_are_not_regular_files_are_refused_at_once(solve, tmp_path, good, ranks):
    """A FIFO would block rank 0 in its open (and the others in their wait for
    its verdict): refused before anything waits, like a device."""
    fifo = tmp_path / "fifo.mtx"
    os.mkfifo(fifo)

    def line(*args):
        return refused(solve, tmp_path, ranks, *args, timeout=30)

    assert f"{fifo}: is a FIFO, expected a Matrix Market file" in line("--matrix", fifo)
    for option in ("--rhs", "--x0"):
        text = line("--matrix", good, option, fifo)
        assert text.startswith(f"asyncsolve: error: {option} {fifo}: is a FIFO"), text
    assert "/dev/null: is a device" in line("--matrix", "/dev/null")
    assert "/dev/zero: is a device" in line("--matrix", good, "--rhs", "/dev/zero")


def raw(asyncsolve, mpiexec, tmp_path, ranks, *args):
    """`asyncsolve ARGS` as given (no --json added): (rc, stderr)."""
    p = subprocess.run([*mpiexec, "-n", str(ranks), str(asyncsolve), *map(str, args)],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path,
                       env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                                OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                                OMPI_MCA_mpi_yield_when_idle="1",
                                OMPI_MCA_rmaps_base_oversubscribe="1"))
    return p.returncode, p.stderr


def test_outputs_never_overwrite_inputs_or_each_other(asyncsolve, mpiexec, tmp_path, good):
    """Files are compared by identity (links followed; a new file by its
    folder and name), not by spelling."""
    link = tmp_path / "link.mtx"
    link.symlink_to(good)
    (tmp_path / "sub").mkdir()
    rhs = file_with(tmp_path, "b.mtx",
                    "%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n4\n")
    inputs = {p: p.read_bytes() for p in (good, rhs)}
    cases = [
        (["--write-solution", good], "--write-solution", "--matrix"),
        (["--write-solution", tmp_path / "sub" / ".." / "good.mtx"], "--write-solution",
         "--matrix"),
        (["--json", "./good.mtx"], "--json", "--matrix"),
        (["--rhs", rhs, "--write-solution", rhs], "--write-solution", "--rhs"),
        (["--x0", rhs, "--json", rhs], "--json", "--x0"),
        (["--json", "s.mtx", "--write-solution", tmp_path / "s.mtx"], "--write-solution",
         "--json"),
        (["--json", "sub/../s.mtx", "--write-solution", "s.mtx"], "--write-solution", "--json"),
    ]
    for matrix in (good, link):
        for args, output, other in cases:
            rc, err = raw(asyncsolve, mpiexec, tmp_path, 2, "solve", "--matrix", matrix, *args)
            lines = [x for x in err.splitlines() if x.startswith("asyncsolve")]
            assert rc == 2, (args, err)
            assert len(lines) == 1, err
            assert f"error: {output} " in lines[0], lines[0]
            assert f"is the same file as {other} " in lines[0], lines[0]
            assert not (tmp_path / "s.mtx").exists()
            assert {p: p.read_bytes() for p in inputs} == inputs
    # distinct files are fine
    rc, err = raw(asyncsolve, mpiexec, tmp_path, 2, "solve", "--matrix", link, "--rhs", rhs,
                  "--json", "s.json", "--write-solution", "sub/s.mtx")
    assert rc == 0, err
    assert (tmp_path / "s.json").is_file()
    assert (tmp_path / "sub" / "s.mtx").is_file()


def test_sums_that_overflow_are_refused_at_reading(solve, tmp_path, good):
    general = "%%MatrixMarket matrix coordinate real general\n2 2 4\n"
    dup = file_with(tmp_path, "dup.mtx", general + "1 1 1.5e308\n2 2 1\n1 2 1\n1 1 1.5e308\n")
    line = refused(solve, tmp_path, 2, "--matrix", dup)
    assert "dup.mtx:6: the duplicate entries at (1, 1) sum to more than 1.8e308" in line
    # no duplicate, but b = A * 1 overflows in row 2
    row = file_with(tmp_path, "row.mtx", general + "1 1 1\n2 1 1.5e308\n2 2 1.5e308\n1 2 1\n")
    line = refused(solve, tmp_path, 2, "--matrix", row)
    assert "row.mtx: row 2 sums to more than 1.8e308" in line
    assert "--rhs" in line
    rhs = file_with(tmp_path, "rhs.mtx", "%%MatrixMarket matrix coordinate real general\n"
                    "2 1 2\n1 1 -1e308\n1 1 -1e308\n")
    line = refused(solve, tmp_path, 2, "--matrix", row, "--rhs", rhs)
    assert "--rhs" in line
    assert "rhs.mtx:4: the duplicate entries at (1, 1)" in line


def test_matrix_memory_range_and_check_agree(solve, tmp_path, good):
    line = refused(solve, tmp_path, 1, "--matrix", good, "--matrix-memory", "0")
    assert "--matrix-memory 0: expected a positive number from 1e-9 to 1e6" in line
    rc, out, err, _ = solve(1, "--matrix", good, "--matrix-memory", "1e6")
    assert rc == 0, out + err
