"""asyncsolve's Matrix Market reader against scipy.io.mmread, on files scipy
writes for every format, field and symmetry, on hand-written files with
duplicates, comments, blank lines and CRLF, and its refusals of malformed
files (one line naming the file and the line, exit 2)."""

import io
import itertools
import subprocess

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

RNG = np.random.default_rng(15)


def read_back(roundtrip, path):
    """What asyncsolve read, as scipy reads asyncsolve's own output of it."""
    p = subprocess.run([str(roundtrip), str(path)], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    return scipy.io.mmread(io.StringIO(p.stdout)), p.stdout


def matrix_for(field, symmetry, n=7):
    """A dense n x n matrix with the structure the symmetry needs, zeros included."""
    if field == "integer":
        a = RNG.integers(-9, 10, size=(n, n)).astype(float)
    else:
        a = RNG.standard_normal((n, n)) * 10.0 ** RNG.integers(-5, 5, size=(n, n))
    a[RNG.random((n, n)) < 0.4] = 0.0
    if field == "pattern":
        a = (a != 0).astype(float)
    if symmetry == "symmetric":
        a = np.tril(a) + np.tril(a, -1).T
    elif symmetry == "skew-symmetric":
        a = np.tril(a, -1) - np.tril(a, -1).T
    return a


CASES = [
    (fmt, field, symmetry)
    for fmt, field, symmetry in itertools.product(
        ["coordinate", "array"], ["real", "integer", "pattern"],
        ["general", "symmetric", "skew-symmetric"])
    # array has no pattern; a pattern has no sign to skew
    if not (fmt == "array" and field == "pattern") and not (field == "pattern" and
                                                            symmetry == "skew-symmetric")
]


@pytest.mark.parametrize(("fmt", "field", "symmetry"), CASES)
def test_every_combination_reads_as_scipy_reads_it(roundtrip, tmp_path, fmt, field, symmetry):
    a = matrix_for(field, symmetry)
    path = tmp_path / "a.mtx"
    data = sp.coo_matrix(a) if fmt == "coordinate" else a
    scipy.io.mmwrite(path, data, field=field, symmetry=symmetry)
    banner = path.read_text().splitlines()[0].split()
    assert banner[2:] == [fmt, field, symmetry], banner  # scipy wrote what we asked for
    expected = scipy.io.mmread(path)
    expected = expected.toarray() if sp.issparse(expected) else np.asarray(expected)
    got, _ = read_back(roundtrip, path)
    np.testing.assert_array_equal(got.toarray(), expected.astype(float))


def test_rectangular_and_large_values(roundtrip, tmp_path):
    a = sp.random(40, 25, density=0.1, random_state=3, format="coo") * 1e300
    path = tmp_path / "r.mtx"
    scipy.io.mmwrite(path, a)
    got, _ = read_back(roundtrip, path)
    np.testing.assert_array_equal(got.toarray(), scipy.io.mmread(path).toarray())


def test_duplicates_comments_blank_lines_and_crlf(roundtrip, tmp_path):
    text = ("%%MatrixMarket matrix coordinate real general\r\n% comment\r\n\r\n3 3 5\r\n"
            "1 1 1.5\r\n% between entries\r\n2 3 -2\r\n1 1 2.5\r\n3 1 1e-3\r\n2 3 4\r\n")
    path = tmp_path / "d.mtx"
    path.write_bytes(text.encode())
    got, out = read_back(roundtrip, path)
    # scipy keeps duplicates in COO form; summing them is what both mean.
    clean = "\n".join(line for line in text.replace("\r", "").splitlines()
                      if line.strip() and (line.startswith("%%") or not line.startswith("%")))
    expected = scipy.io.mmread(io.StringIO(clean)).tocsr()
    expected.sum_duplicates()
    np.testing.assert_array_equal(got.toarray(), expected.toarray())
    assert "% duplicates 2 " in out


@pytest.mark.parametrize(("text", "line", "what"), [
    ("", 1, "empty file"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", 3, "row index '3'"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", 4, "end of file after 1"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", 4,
     "more entries than"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n", 3, "not a finite"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 inf\n", 3, "not a finite"),
    ("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 2, "square"),
    ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "complex"),
    ("%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "banner"),
])
def test_malformed_files_are_refused_with_file_and_line(roundtrip, tmp_path, text, line, what):
    path = tmp_path / "bad.mtx"
    path.write_text(text)
    p = subprocess.run([str(roundtrip), str(path)], capture_output=True, text=True, check=False)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"{path}:{line}: "), lines[0]
    assert what in lines[0], lines[0]
