"""What `asyncsolve-lab report` refuses in a results folder: a document or sidecar
no run of the program writes (not JSON, cut short, edited by hand) is exit 2 with
one line naming the file and the field, and no report is written."""

import json

import pytest

from conftest import (
    MINIMAL_DOCUMENT,
    assert_one_line_error,
    lab,
    result_document,
    results_with_document,
)


def test_report_of_a_document_that_is_not_utf8(tmp_path):
    res = results_with_document(tmp_path, b"\xff\xfe{\x00")
    assert_one_line_error(*lab(["report", str(res)]), "not UTF-8")


@pytest.mark.parametrize(("doc", "missing"), [
    ({"schema": "asyncsolve.result/1"}, "'result'"),
    ({"schema": "asyncsolve.result/1", "result": None, "method": {}}, "'result'"),
    ({"schema": "asyncsolve.bench.beff/1", "summary": {}}, "'measurements'"),
    ({"schema": "asyncsolve.model.hybrid/1"}, "'quantities' or 'fit'"),
])
def test_report_refuses_a_document_without_its_sections(tmp_path, doc, missing):
    """A document cut down to its schema line was counted as an ok run with
    dashes; like a document that is not JSON, it is refused, naming it."""
    res = results_with_document(tmp_path, json.dumps(doc).encode())
    rc, out, err = lab(["report", str(res)])
    assert_one_line_error(rc, out, err, f"{res / 'runs' / 'x.json'}: a {doc['schema'][:-2]} "
                          f"document without its {missing} section")
    assert not (res / "report").exists()


@pytest.mark.parametrize(("result", "fragment"), [
    ({"time_s": float("nan")}, "result.time_s nan: not a value the program writes"),
    ({"time_s": -1.0}, "result.time_s -1.0: not a value the program writes"),
    ({"iterations": {"min": 100, "mean": 100, "max": -5}}, "result.iterations.max -5: "),
    ({"iterations": {"min": 100, "mean": 150, "max": 120}},
     "result.iterations min 100, mean 150, max 120 (not in order)"),
    # Values of another type were taken as missing: the run counted as ok, and a claim
    # on it said "not enough runs".
    ({"time_s": "fast"}, 'result.time_s "fast" (not a number): not a value the program'),
    ({"time_s": True}, "result.time_s true (not a number)"),
    ({"time_s": {"a": 1}}, 'result.time_s {"a": 1} (not a number)'),
    ({"iterations": {"min": "7", "mean": 7, "max": 7}},
     'result.iterations.min "7" (not a number)'),
    # The whole field of another type, or per-rank counts that are not counts, passed
    # as an ok run with dashes.
    ({"iterations": "5"}, 'result.iterations "5" (not an object of min, mean, max'),
    ({"iterations": True}, "result.iterations true (not an object"),
    ({"iterations": -7}, "result.iterations -7 (not an object"),
    ({"iterations": [1, 2]}, "result.iterations [1, 2] (not an object"),
    ({"iterations": {"min": 1, "mean": 1, "max": 1, "per_rank": ["x"]}},
     'result.iterations.per_rank holds "x" (not a count)'),
    ({"iterations": {"min": 1, "mean": 1, "max": 1, "per_rank": 3}},
     "result.iterations.per_rank 3 (not a list of counts)"),
    ({"iterations": {"min": 1, "mean": 1, "max": 1, "per_thread": [1, -2]}},
     "result.iterations.per_thread holds -2 (not a count)"),
    ({"iterations": {"min": 1, "mean": 1.5, "max": 2, "per_rank": [1.5, 2]}},
     "result.iterations.per_rank holds 1.5 (not a count)"),
    # A negative residual gave a claim on true_residual the verdict "reproduced: ratio
    # -9.95e-16"; text was taken as no value.
    ({"true_residual": -1.0}, "result.true_residual -1.0 (not a norm)"),
    ({"true_residual": "x"}, 'result.true_residual "x" (not a number)'),
    ({"residual_estimate": [1]}, "result.residual_estimate [1] (not a number)"),
    ({"error_inf": -0.5}, "result.error_inf -0.5 (not a norm)"),
])
def test_report_refuses_numbers_no_run_writes(tmp_path, result, fragment):
    """A hand-edited NaN time or a max below the min was reported as an ok run."""
    doc = {"schema": "asyncsolve.result/1", "result": result}
    res = results_with_document(tmp_path, json.dumps(doc).encode())
    assert_one_line_error(*lab(["report", str(res)]), fragment)
    assert not (res / "report").exists()


#: A run that stopped without converging, as the program writes it.
STOPPED = {"converged": False, "reason": "max_iters"}


@pytest.mark.parametrize(("doc", "fragment"), [
    # A verdict the program never writes was counted as an ok run, and toward the claim.
    ({"result": {"converged": "yes"}}, 'result.converged "yes" (not true or false)'),
    ({"result": {"converged": 1}}, "result.converged 1 (not true or false)"),
    ({"result": {"converged": False, "reason": "tolerance"}},
     'result.converged false with reason "tolerance"'),
    ({"result": {"converged": True, "reason": "max_iters"}},
     'result.converged true with reason "max_iters"'),
    ({"result": {"converged": True, "reason": "tolerance", "true_residual": 0.5},
      "method": {"name": "cg", "tol": 1e-4}},
     "result.converged true with a true residual 0.5 not below --tol 0.0001"),
    # A method section that contradicts the command line the run recorded.
    ({"result": STOPPED, "method": {"name": "gmres"},
      "command": ["asyncsolve", "solve", "--method", "pipecg"]},
     'method.name "gmres" for a run of --method pipecg'),
    ({"result": STOPPED, "method": {"name": "gmres"},
      "command": ["asyncsolve", "solve", "--method=cg"]},
     'method.name "gmres" for a run of --method cg'),
    # A result that is a list gave a traceback; a verdict that is missing, null or
    # without the residual that decides it, or a reason the program never writes, was
    # reported as an ok run.
    ({"result": []}, "result [] (not an object)"),
    ({"result": [{"converged": True}]}, 'result [{"converged": true}] (not an object)'),
    ({"result": {}}, "result.converged null (not true or false)"),
    ({"result": {"converged": None, "reason": "tolerance"}},
     "result.converged null (not true or false)"),
    ({"result": {"converged": True, "reason": "bogus"}}, 'result.reason "bogus" (expected one'),
    ({"result": {"converged": True, "reason": "tolerance", "true_residual": None},
      "method": {"name": "cg", "tol": 1e-4}},
     "result.converged true with a true residual null"),
])
def test_report_refuses_a_verdict_or_method_no_run_writes(tmp_path, doc, fragment):
    """converged "yes", converged false with reason tolerance, and a method name other
    than the --method run were accepted; a run's consistent verdict passes."""
    res = results_with_document(
        tmp_path, json.dumps({"schema": "asyncsolve.result/1"} | doc).encode())
    assert_one_line_error(*lab(["report", str(res)]), fragment)
    assert not (res / "report").exists()
    good = result_document(command=["asyncsolve", "solve", "--method", "cg"],
                           method={"name": "cg", "variant": "sync", "tol": 1e-4})
    good["result"] |= {"converged": True, "reason": "tolerance", "true_residual": 5e-5}
    (res / "runs" / "x.json").write_text(json.dumps(good))
    rc, _, err = lab(["report", str(res)])
    assert rc == 0, err


@pytest.mark.parametrize(("schema", "fragment"), [
    (None, 'no schema field ("name/version")'),
    ("x", 'schema "x": expected "name/version" (e.g. asyncsolve.result/1)'),
    (7, 'schema 7: expected "name/version"'),
])
def test_report_names_a_malformed_schema(tmp_path, schema, fragment):
    """A schema "x" was reported as no schema field at all."""
    doc = {"result": {}} if schema is None else {"schema": schema, "result": {}}
    res = results_with_document(tmp_path, json.dumps(doc).encode())
    assert_one_line_error(*lab(["report", str(res)]), fragment)


def test_report_refuses_per_rank_counts_not_one_per_rank(tmp_path):
    """A run of 2 ranks whose per_rank held no count (or three) was reported ok, its
    histogram short of a rank; one count per rank passes."""
    doc = result_document()
    doc["environment"]["ranks"] = 2
    doc["result"]["iterations"] = {"min": 3, "mean": 3, "max": 3, "per_rank": []}
    res = results_with_document(tmp_path, json.dumps(doc).encode(), ranks=2)
    assert_one_line_error(*lab(["report", str(res)]),
                          "result.iterations.per_rank holds 0 counts for a run of 2 ranks")
    doc["result"]["iterations"]["per_rank"] = [3, 3, 3]
    (res / "runs" / "x.json").write_text(json.dumps(doc))
    assert_one_line_error(*lab(["report", str(res)]),
                          "result.iterations.per_rank holds 3 counts for a run of 2 ranks")
    doc["result"]["iterations"]["per_rank"] = [3, 3]
    (res / "runs" / "x.json").write_text(json.dumps(doc))
    rc, _, err = lab(["report", str(res)])
    assert rc == 0, err


def test_report_refuses_a_solve_longer_than_its_run(tmp_path):
    """A time of 1e308 s in a run the lab timed at 0.3 s was taken as the run's time
    (the claim's ratio came out inf); one within the run passes."""
    doc = result_document()
    doc["result"]["time_s"] = 1e308
    res = results_with_document(tmp_path, json.dumps(doc).encode(), wall_s=0.299)
    assert_one_line_error(*lab(["report", str(res)]),
                          "result.time_s 1e+308, longer than the whole run (0.299 s)")
    doc["result"]["time_s"] = 0.25
    (res / "runs" / "x.json").write_text(json.dumps(doc))
    rc, _, err = lab(["report", str(res)])
    assert rc == 0, err


@pytest.mark.parametrize(("change", "fragment"), [
    ({"experiment": None}, "no 'experiment': expected an experiment's name"),
    ({"status": None}, "no 'status': expected ok, failed or timeout"),
    ({"status": "done"}, 'status "done": expected ok, failed or timeout'),
    ({"ranks": "one"}, 'ranks "one": expected a number of ranks, at least 1'),
    ({"ranks": 0}, "ranks 0: expected a number of ranks, at least 1"),
    ({"ranks": True}, "ranks true: expected a number of ranks"),
    ({"repeat": 1.5}, "repeat 1.5: expected a repeat number"),
    ({"config": []}, "config []: expected an object"),
    ({"experiment": 7}, "experiment 7: expected an experiment's name"),
    # A negative run time was blamed on the document's time_s; a string was taken as
    # unknown.
    ({"wall_s": -1}, "wall_s -1: expected the run's seconds, a finite number >= 0"),
    ({"wall_s": "1"}, 'wall_s "1": expected the run\'s seconds'),
])
def test_report_refuses_a_sidecar_without_its_fields(tmp_path, change, fragment):
    """A sidecar edited by hand or cut short gave a traceback (KeyError,
    ValueError), or without a status counted as a failed run."""
    res = results_with_document(tmp_path, MINIMAL_DOCUMENT)
    path = res / "runs" / "x.lab.json"
    side = json.loads(path.read_text())
    for key, value in change.items():
        if value is None:
            del side[key]
        else:
            side[key] = value
    path.write_text(json.dumps(side))
    rc, out, err = lab(["report", str(res)])
    assert_one_line_error(rc, out, err, f"{path}: {fragment}")
    assert not (res / "report").exists()


#: JSON that Python's parser refuses with a ValueError that is no JSONDecodeError
#: (an integer of more than 4300 digits), or with a RecursionError (arrays nested
#: 100000 deep).
HUGE_INTEGER = b'{"schema": "asyncsolve.result/1", "extra": 1' + b"0" * 5000 + b"}"
DEEP_NESTING = b'{"schema": "asyncsolve.result/1", "extra": ' + b"[" * 100000 + b"]" * 100000 + b"}"


@pytest.mark.parametrize("file", ["x.json", "x.lab.json"])
@pytest.mark.parametrize(("content", "fragment"), [
    (HUGE_INTEGER, "not JSON the lab reads: an integer of 5001 digits"),
    (DEEP_NESTING, "JSON nested too deeply"),
], ids=["huge-integer", "deep-nesting"])
def test_report_refuses_json_the_parser_cannot_read(tmp_path, file, content, fragment):
    """A document or sidecar with a 5001-digit integer gave a traceback (ValueError:
    Exceeds the limit (4300 digits) for integer string conversion) and exit 1: like
    malformed JSON, it is one line naming the file, exit 2."""
    res = results_with_document(tmp_path, MINIMAL_DOCUMENT)
    path = res / "runs" / file
    path.write_bytes(content)
    rc, out, err = lab(["report", str(res)])
    assert_one_line_error(rc, out, err, f"{path}: {fragment}")
    assert not (res / "report").exists()


def test_a_run_whose_document_python_cannot_parse_is_failed(tmp_path, monkeypatch):
    """`run` read the document a program wrote with its own json.loads and caught
    only JSONDecodeError: a 5001-digit integer stopped the whole suite with a
    traceback. The run is recorded as failed, naming the document, and the suite
    goes on (no binary needed: the launch writes the document)."""
    from asyncsolve_lab import runner
    from asyncsolve_lab.suite import parse_suite
    from conftest import TINY_SUITE

    written = tmp_path / "written.json"

    def launch(run, caps_, doc_path, options=None):
        return runner.Launch(argv=["cp", str(written), str(doc_path)], env={},
                             oversubscribed=False)
    monkeypatch.setattr(runner, "build_launch", launch)
    run = parse_suite(TINY_SUITE).runs()[0]
    folder = runner.RunFolder(tmp_path / "r")
    folder.runs.mkdir(parents=True)
    for content, fragment in ((HUGE_INTEGER, "an integer of 5001 digits"),
                              (DEEP_NESTING, "nested too deeply")):
        written.write_bytes(content)
        record = runner.execute(run, None, folder, "tiny")
        assert record["status"] == "failed", record
        assert record["reason"].startswith(f"{folder.doc(run.run_id)}: "), record["reason"]
        assert fragment in record["reason"], record["reason"]


def _history(**entry) -> list[dict]:
    """The document's history with its first check changed (None: the field left out)."""
    first = result_document()["history"][0] | entry
    return [{k: v for k, v in first.items() if v is not None}]


def _result(**fields) -> dict:
    """The document's result section with `fields` changed (None: left out)."""
    result = result_document()["result"] | fields
    return {k: v for k, v in result.items() if v is not None}


#: What the report's phases table, convergence plot and histogram read, each way
#: a hand-edited document had it: with every one the document was reported (exit 0)
#: and its run's column, curve or bars left out without a word.
@pytest.mark.parametrize(("change", "fragment"), [
    ({"phases": {"halo": "x"}},
     'phases.halo "x" (not an object of its max, mean and min seconds)'),
    ({"phases": [1]}, "phases [1] (not an object of each phase's max, mean and min seconds)"),
    ({"phases": None}, "phases absent (not an object of each phase's"),
    ({"phases": {"halo": {"max": 1.0, "mean": 0.5}}}, "phases.halo.min absent (not seconds"),
    ({"phases": {"halo": {"max": -1.0, "mean": 0.5, "min": 0.1}}},
     "phases.halo.max -1.0 (not seconds: a finite number >= 0)"),
    ({"phases": {"halo": {"max": "1", "mean": 0.5, "min": 0.1}}}, 'phases.halo.max "1" (not'),
    ({"history": "x"}, 'history "x" (not a list of residual checks)'),
    ({"history": [{}]}, "history[0].rank absent (not a rank of the run"),
    ({"history": None}, "history absent (not a list of residual checks)"),
    ({"history": [5]}, "history[0] 5 (not an object of rank, iteration, time_s and residual)"),
    ({"history": _history(iteration=1.5)}, "history[0].iteration 1.5 (not an iteration count"),
    ({"history": _history(time_s=None)}, "history[0].time_s absent (not seconds"),
    ({"history": _history(residual="small")}, 'history[0].residual "small" (not a residual'),
    ({"history": _history(residual=-1)}, "history[0].residual -1 (not a residual"),
    ({"history": _history(local_residual=[1])}, "history[0].local_residual [1] (not a residual"),
    ({"history": _history(rank=1)}, "history[0].rank 1 (not a rank of the run's 1)"),
    ({"history": _history(thread=-1)}, "history[0].thread -1 (not a thread"),
    ({"environment": {"ranks": "two"}},
     'environment.ranks "two" (not a number of ranks, at least 1)'),
    ({"environment": None}, "environment absent (not an object"),
    ({"environment": {"ranks": 1, "cores": 0}}, "environment.cores 0 (not a number of cores"),
    ({"environment": {"ranks": 1, "hostname": 7}}, "environment.hostname 7 (not a string)"),
    ({"git": ["abc"]}, 'git ["abc"] (not a string)'),
    ({"method": None}, "method absent (not an object of the solver's options)"),
    ({"method": {"name": "jacobi", "variant": 3}}, "method.variant 3 (not a string)"),
    ({"method": {"name": "jacobi", "tol": "1e-4"}}, 'method.tol "1e-4" (not a tolerance'),
    ({"result": _result(time_s=None)}, "result.time_s absent (not a number)"),
    ({"result": _result(iterations=None)}, "result.iterations absent (not an object of min"),
    ({"result": _result(iterations={"min": 1, "mean": 1, "max": 1})},
     "result.iterations.per_rank absent (not a list of counts)"),
    # The document's own command line ran --variant async.
    ({"method": {"name": "jacobi", "variant": "racy", "transport": "mpi"}},
     'method.variant "racy" for a run of --variant async'),
], ids=lambda v: json.dumps(v)[:60] if isinstance(v, dict) else None)
def test_report_refuses_a_field_it_reads_that_no_run_writes(tmp_path, change, fragment):
    """phases {"halo": "x"}, [1] or none, history "x" or [{}], environment.ranks
    "two": every field the report reads is checked before it is used, so that none
    drops out of a table or plot unsaid (the document as the program writes it
    passes: the test below)."""
    res = results_with_document(tmp_path, json.dumps(result_document(**change)).encode())
    rc, out, err = lab(["report", str(res)])
    assert_one_line_error(rc, out, err, f"{res / 'runs' / 'x.json'}: {fragment}")
    assert ": not a value the program writes (edited?)" in err
    assert not (res / "report").exists()


def test_report_takes_a_document_as_the_program_writes_it(tmp_path):
    """The checks above refuse no document the program writes: RESULT_DOCUMENT (of
    one rank), and the same of an OpenMP run (thread in its history) and of a Lanczos
    run (no local_residual, a residual null at its first step, other fields beside)."""
    res = results_with_document(tmp_path, MINIMAL_DOCUMENT)
    rc, _, err = lab(["report", str(res)])
    assert rc == 0, err
    from asyncsolve_lab import check_document
    omp = result_document(history=[{"rank": 0, "iteration": 10, "time_s": 0.001,
                                    "residual": 0.1, "local_residual": 0.1, "thread": 1}])
    omp["result"]["iterations"]["per_thread"] = [200, 190]
    lanczos = result_document(
        command=["asyncsolve", "solve", "--method", "lanczos"],
        method={"name": "lanczos", "transport": "mpi", "tol": 1e-10},
        history=[{"rank": 0, "iteration": 1, "time_s": 0.001, "residual": None,
                  "energy": -1.2, "change": None, "alpha": 0.5, "beta": 0.1,
                  "residual_bound": None}])
    for doc in (omp, lanczos):
        assert check_document(doc, "x.json", sidecar={"ranks": 1, "wall_s": 0.5}) == \
            "asyncsolve.result"


@pytest.mark.parametrize(("change", "side", "fragment"), [
    # The document's method and command both edited to racy; the sidecar ran async.
    ({"method": {"name": "jacobi", "variant": "racy", "transport": "mpi"},
      "command": ["asyncsolve", "solve", "--variant", "racy"]},
     {"config": {"variant": "async"}, "options": {"variant": "async"}},
     'method.variant "racy" for a run of --variant async (its .lab.json)'),
    ({"method": {"name": "cg", "variant": "sync", "transport": "mpi"},
      "command": ["asyncsolve", "solve", "--method", "cg"]},
     {"config": {"method": "pcg2"}, "options": {"method": "pcg2"}},
     'method.name "cg" for a run of --method pcg2 (its .lab.json)'),
    ({"method": {"name": "jacobi", "variant": "async", "transport": "rma"}},
     {"options": {"transport": "shmem"}},
     'method.transport "rma" for a run of --transport shmem (its .lab.json)'),
    ({}, {"ranks": 2}, "environment.ranks 1 for a run of 2 ranks (its .lab.json)"),
])
def test_report_refuses_a_document_its_sidecar_contradicts(tmp_path, change, side, fragment):
    """A document whose method.variant said racy in a run its sidecar ran (and the
    report grouped) as async was reported as an async run; the report takes a run's
    configuration from the sidecar, so the two must agree. The same document under
    a sidecar that agrees passes."""
    doc = result_document(**change)
    res = results_with_document(tmp_path, json.dumps(doc).encode(), **side)
    rc, out, err = lab(["report", str(res)])
    assert_one_line_error(rc, out, err, f"{res / 'runs' / 'x.json'}: {fragment}: not a value")
    side_path = res / "runs" / "x.lab.json"
    agreeing = json.loads(side_path.read_text()) | {"ranks": 1, "config": {}, "options": {}}
    side_path.write_text(json.dumps(agreeing))
    rc, _, err = lab(["report", str(res)])
    assert rc == 0, err
