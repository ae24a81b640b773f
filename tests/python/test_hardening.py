"""What a hostile user types into asyncsolve-lab: every mistake is exit 2 with
one line on stderr (no traceback), SIGTERM and SIGHUP stop the runs like
Ctrl-C does (process groups ended, nothing half-written, the suite resumable),
and rank counts, repeats, timeouts and matrix sizes are bounded."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asyncsolve_lab import LabError
from asyncsolve_lab.runner import LOCK_NAME, check_ranks, results_lock
from asyncsolve_lab.suite import SuiteError, parse_suite
from conftest import (
    MINIMAL_DOCUMENT,
    ROOT,
    TINY_SUITE,
    assert_one_line_error,
    lab,
    results_with_document,
    start_long_suite,
)

SMALL_SUITE = """
[suite]
name = "small"
[[experiment]]
name = "quick"
program = "solve"
ranks = [1]
[experiment.options]
local = "6,6,6"
"""



def test_a_binary_suite_file_is_one_line(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_bytes(bytes(range(256)) * 4)
    assert_one_line_error(*lab(["run", str(suite)]), "not UTF-8")


@pytest.mark.parametrize(("path", "fragment"), [("/dev/zero", "not a regular file"),
                                           ("/", "is a directory"),
                                           ("/no/such/suite.toml", "No such file")])
def test_a_suite_path_that_is_not_a_file_is_one_line(path, fragment):
    assert_one_line_error(*lab(["run", path], timeout=20), fragment)


def test_results_naming_a_file_or_a_path_through_one(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(SMALL_SUITE)
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert_one_line_error(*lab(["run", str(suite), "--results", str(afile)]), "is not a folder")
    assert_one_line_error(*lab(["run", str(suite), "--results", "/dev/null/x"]),
                          "is not a folder")


def test_a_run_whose_document_lacks_its_sections_is_failed(tmp_path, caps, monkeypatch):
    """The runner checks the document a program wrote as the report does."""
    from asyncsolve_lab import runner
    from conftest import run_text

    def cut_down(run, caps_, doc_path, options=None):
        doc = json.dumps({"schema": "asyncsolve.result/1"})
        return runner.Launch(argv=["sh", "-c", f"echo '{doc}' > '{doc_path}'"], env={},
                             oversubscribed=False)
    monkeypatch.setattr(runner, "build_launch", cut_down)
    _, counts = run_text(SMALL_SUITE, tmp_path / "r", caps)
    assert (counts["ok"], counts["failed"]) == (0, 1)
    side = json.loads(next((tmp_path / "r" / "runs").glob("*.lab.json")).read_text())
    assert side["status"] == "failed"
    assert "without its 'result' section" in side["reason"]


def test_report_out_naming_a_file(tmp_path):
    res = results_with_document(tmp_path, MINIMAL_DOCUMENT)
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert_one_line_error(*lab(["report", str(res), "--out", str(afile)]), "--out")


def test_argument_errors_are_one_line():
    assert_one_line_error(*lab(["run"]), "the following arguments are required")
    assert_one_line_error(*lab(["frobnicate"]), "invalid choice")
    assert_one_line_error(*lab(["run", "x.toml", "--max-ranks", "0"]), "not positive")


def test_ranks_beyond_max_ranks_are_refused(tmp_path, binary):
    text = SMALL_SUITE.replace("ranks = [1]", "ranks = [1000]")
    suite = parse_suite(text, Path("s.toml"))
    with pytest.raises(SuiteError) as err:
        check_ranks(suite, 8)
    assert str(err.value).startswith("s.toml:7: ")
    assert "--max-ranks 8" in str(err.value)
    check_ranks(parse_suite(SMALL_SUITE), 1)  # within the limit: fine
    path = tmp_path / "s.toml"
    path.write_text(text)
    rc, out, err_text = lab(["run", str(path), "--results", str(tmp_path / "r"), "--dry-run"])
    assert_one_line_error(rc, out, err_text, "ranks = 1000 is more than --max-ranks")
    rc, out, _ = lab(["run", str(path), "--results", str(tmp_path / "r"), "--dry-run",
                      "--max-ranks", "1000", "--binary", str(binary)])
    assert rc == 0, out  # raised on purpose: allowed
    assert "-np 1000" in out


@pytest.mark.parametrize("value", ['tol = "abc"', "tol = -5", 'matrix = "/nonexistent.mtx"'])
def test_check_and_run_refuse_a_value_the_program_would_refuse(tmp_path, binary, value):
    """--check said 'valid', and run failed every run yet exited 0."""
    path = tmp_path / "s.toml"
    text = SMALL_SUITE + value + "\n"
    path.write_text(text)
    line = text.splitlines().index(value) + 1
    results = tmp_path / "r"
    for extra in (["--check"], []):
        rc, out, err = lab(["run", str(path), "--results", str(results), "--binary",
                            str(binary), *extra])
        assert_one_line_error(rc, out, err, f"{path}:{line}: experiment 'quick': --")
    assert not list(results.glob("runs/*"))


def test_a_suite_whose_every_run_failed_says_so(tmp_path, binary, capsys):
    """Exit 0 without --strict, as documented, with a warning; 1 with it."""
    from asyncsolve_lab.cli import main
    path = tmp_path / "s.toml"
    # A grid larger than the node: refused when the run starts (the check only parses).
    path.write_text(SMALL_SUITE.replace('local = "6,6,6"', 'local = "100000,6,6000000"')
                    .replace('ranks = [1]', 'ranks = [1]\nlauncher = "none"'))
    args = ["run", str(path), "--results", str(tmp_path / "r"), "--binary", str(binary)]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "small: 0 ok, 1 failed" in out
    assert "warning: every run of suite small failed (1 of 1)" in err
    assert "--strict makes this exit 1" in err
    assert main([*args, "--strict", "--retry-failed"]) == 1
    assert "warning: every run of suite small failed" in capsys.readouterr().err


@pytest.mark.parametrize("only", ["", ",", "quick,"])
def test_an_empty_only_is_refused_like_an_unknown_one(tmp_path, binary, only):
    """--only '' named no experiment and ran them all."""
    path = tmp_path / "s.toml"
    path.write_text(SMALL_SUITE)
    results = tmp_path / "r"
    rc, out, err = lab(["run", str(path), "--results", str(results), "--binary", str(binary),
                        "--only", only])
    assert_one_line_error(rc, out, err, f"--only {only!r}: expected a comma-separated list")
    assert not list(results.glob("runs/*"))
    # --check said "valid" of the same command line.
    rc, out, err = lab(["run", str(path), "--check", "--binary", str(binary), "--only", only])
    assert_one_line_error(rc, out, err, f"--only {only!r}: expected a comma-separated list")


def test_check_refuses_an_unknown_only(tmp_path, binary):
    path = tmp_path / "s.toml"
    path.write_text(SMALL_SUITE)
    rc, out, err = lab(["run", str(path), "--check", "--binary", str(binary), "--only", "nope"])
    assert_one_line_error(rc, out, err, "--only: no experiment named nope in")


BIG_MATRIX = "\n".join(f"k{i} = [{', '.join(str(j) for j in range(20))}]" for i in range(6))


@pytest.mark.parametrize(("old", "new", "fragment"), [
    ('name = "small"', 'name = "small"\ntimeout_s = inf', "timeout_s"),
    ('name = "small"', 'name = "small"\ntimeout_s = nan', "timeout_s"),
    ('name = "small"', 'name = "small"\ntimeout_s = 1e9', "timeout_s"),
    ('name = "small"', 'name = "small"\nrepeats = 1000000000', "repeats"),
    ('local = "6,6,6"', 'local = "6,6,6"\n[experiment.matrix]\n' + BIG_MATRIX,
     "more than 100000 runs"),
])
def test_suite_sizes_and_timeouts_are_bounded(old, new, fragment):
    assert old in SMALL_SUITE
    with pytest.raises(SuiteError) as err:
        parse_suite(SMALL_SUITE.replace(old, new), Path("s.toml"))
    assert fragment in str(err.value)


def test_deeply_nested_toml_is_one_line(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text("a = " + "[" * 100000 + "]" * 100000 + "\n")
    assert_one_line_error(*lab(["run", str(suite)]), "s.toml")


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append(f"{pid}: {cmd}")
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_the_runs_and_the_suite_resumes(tmp_path, binary, signum):
    """The signal to the lab alone (a `kill PID`): its runs' process groups
    must end with it, no document may be left without a sidecar, and a rerun
    resumes."""
    proc, results, cmd, env = start_long_suite(tmp_path, binary, "term", 2)
    suite = tmp_path / "s.toml"  # written by start_long_suite
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _processes_mentioning(str(results / "runs" / "long")):
        time.sleep(0.1)
    time.sleep(1.0)  # the long run is under way
    assert _processes_mentioning(str(results / "runs" / "long")), "the long run did not start"
    os.kill(proc.pid, signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, (out, err)
    assert "Traceback" not in err
    assert "run the same command again to resume" in out + err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _processes_mentioning(str(results)):
        time.sleep(0.2)
    assert not _processes_mentioning(str(results)), "processes of the run outlived the lab"
    names = sorted(p.name for p in (results / "runs").iterdir())
    assert len(names) == 2, names
    assert all(n.startswith("quick-") for n in names), names
    suite.write_text(suite.read_text().replace('[suite]\nname = "term"',
                                               '[suite]\nname = "term"\ntimeout_s = 1'))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "1 already finished" in done.stdout


def test_the_documented_exit_codes_are_the_signals_the_lab_exits_with():
    """docs/lab.md's table named only 130 for an interrupted run; SIGTERM
    gives 143 and SIGHUP 129 (the test above), both resumable."""
    text = (ROOT / "docs" / "lab.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| (.*) \|$", text, re.MULTILINE))
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        assert signum.name in rows.get(str(128 + signum), ""), (signum, rows)
    assert {"0", "1", "2"} <= set(rows), rows


def test_every_option_of_the_commands_is_documented():
    """docs/lab.md never named run's --max-ranks, the option a refused suite
    (`ranks = [100000]`) is told to raise; every option of run, report and
    reproduce that --help lists is on the page."""
    import argparse

    from asyncsolve_lab.cli import _parser
    text = (ROOT / "docs" / "lab.md").read_text()
    commands = next(a for a in _parser()._actions
                    if isinstance(a, argparse._SubParsersAction)).choices
    missing = [f"{name} {opt}" for name, parser in commands.items()
               for action in parser._actions for opt in action.option_strings
               if opt != "--help" and opt.startswith("--")
               and not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text)]
    assert not missing, missing


def test_tiny_suite_still_parses():
    assert len(parse_suite(TINY_SUITE).runs()) == 21


def test_a_second_run_into_the_same_results_folder_is_refused(tmp_path, binary):
    """Two asyncsolve-lab runs on one folder would run the same runs into the
    same files: the second is refused at once, one line, and runs nothing."""
    suite = tmp_path / "s.toml"
    suite.write_text(SMALL_SUITE)
    results = tmp_path / "r"
    (results / "runs").mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", ("import fcntl, os, sys, time\n"
         f"fd = os.open({str(results / 'lab.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\nos.write(fd, b'pid 1 on elsewhere')\n"
         "print('locked', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        rc, out, err = lab(["run", str(suite), "--results", str(results), "--binary", str(binary)])
        assert_one_line_error(rc, out, err, "is in use by another asyncsolve-lab run "
                              "(pid 1 on elsewhere)")
        assert not list((results / "runs").iterdir())
    finally:
        holder.kill()
        holder.wait()
    rc, out, err = lab(["run", str(suite), "--results", str(results), "--binary", str(binary)])
    assert rc == 0, (out, err)  # the lock went with its holder
    assert len(list((results / "runs").glob("*.lab.json"))) == 1
    assert not (results / "lab.lock").exists()  # removed as it is released


@pytest.mark.parametrize(("old", "new", "line", "fragment"), [
    ('ranks = [1]', 'ranks = [1]\nenv = { "A=B" = "c" }', 8,
     "environment variable name 'A=B': expected a non-empty name without '=' or NUL"),
    ('ranks = [1]', 'ranks = [1]\nenv = { "" = "x" }', 8, "environment variable name ''"),
    ('ranks = [1]', 'ranks = [1, 1]', 7, "'ranks' lists 1 twice"),
    ('name = "small"', 'name = "small"\nregimes = ["shm", "shm"]', 4,
     "'regimes' lists 'shm' twice"),
    ('local = "6,6,6"', 'local = "6,6,6"\n[experiment.matrix]\nmethod = ["cg", "cg"]', 11,
     "'matrix.method' lists 'cg' twice"),
    ('ranks = [1]', 'ranks = [1]\nexclude = [{ method = "cg" }]', 8,
     "'exclude' excludes every run of experiment 'quick'"),
])
def test_a_suite_refused_before_it_runs_leaves_nothing_behind(tmp_path, old, new, line,
                                                              fragment):
    """An environment variable name with '=' passed --check, then run ended
    in a traceback (exit 1) with lab.lock left in the results folder; a value
    listed twice ran twice into one file; an exclusion of every run ran
    nothing and exited 0."""
    text = SMALL_SUITE.replace(old, new)
    if "exclude" in new:
        text += '[experiment.matrix]\nmethod = ["cg"]\n'
    path = tmp_path / "s.toml"
    path.write_text(text)
    results = tmp_path / "r"
    for extra in (["--check"], []):
        rc, out, err = lab(["run", str(path), "--results", str(results), *extra])
        assert_one_line_error(rc, out, err, f"{path}:{line}: {fragment}")
    assert not results.exists()


def test_the_lock_is_released_and_removed_however_the_run_ends(tmp_path):
    def hold_and_fail():
        with results_lock(tmp_path):
            assert (tmp_path / LOCK_NAME).read_text().startswith(f"pid {os.getpid()} on ")
            raise RuntimeError("unforeseen")
    with pytest.raises(RuntimeError, match="unforeseen"):
        hold_and_fail()
    assert not (tmp_path / LOCK_NAME).exists()
    with results_lock(tmp_path):  # free again
        with pytest.raises(LabError, match="is in use by another asyncsolve-lab run"), \
                results_lock(tmp_path):
            pass
        assert (tmp_path / LOCK_NAME).exists()  # a refused second run leaves the holder's file
    assert not (tmp_path / LOCK_NAME).exists()


def test_an_unforeseen_error_during_a_run_releases_the_lock(tmp_path, caps, monkeypatch):
    from asyncsolve_lab import runner
    from conftest import run_text

    def broken(*_args, **_kw):
        raise ValueError("unforeseen")
    monkeypatch.setattr(runner, "execute", broken)
    results = tmp_path / "r"
    with pytest.raises(ValueError, match="unforeseen"):
        run_text(SMALL_SUITE, results, caps)
    assert not (results / LOCK_NAME).exists()
    monkeypatch.undo()
    _, counts = run_text(SMALL_SUITE, results, caps)
    assert counts["ok"] == 1
    assert not (results / LOCK_NAME).exists()


def test_a_deleted_document_is_redone_not_reported_ok(tmp_path, caps):
    from asyncsolve_lab.report import write_report
    from asyncsolve_lab.results import load_results
    from conftest import run_text

    results = tmp_path / "r"
    _, counts = run_text(SMALL_SUITE, results, caps)
    assert counts["ok"] == 1
    docs = [p for p in (results / "runs").glob("*.json") if not p.name.endswith(".lab.json")]
    assert len(docs) == 1
    docs[0].unlink()
    record = load_results(results).records[0]
    assert not record.ok
    assert record.status == "missing"
    assert f"its document {docs[0].name} is missing" in record.reason
    md, *_ = write_report(results, tmp_path / "report")
    assert f"missing: its document {docs[0].name} is missing" in md.read_text()
    assert "failed: ok" not in md.read_text()
    _, counts = run_text(SMALL_SUITE, results, caps)  # the run is redone
    assert (counts["ran"], counts["ok"]) == (1, 1)
    assert docs[0].is_file()
    assert load_results(results).records[0].ok


def test_a_failing_run_reports_the_programs_error_line(tmp_path, caps):
    """On several ranks mpirun adds its banner after the program's line: the
    reason is the program's own line."""
    from conftest import run_text

    bad = tmp_path / "bad.mtx"  # exists (the lab checks that), not Matrix Market
    bad.write_text("not a matrix\n")
    text = SMALL_SUITE.replace("ranks = [1]", "ranks = [2]").replace(
        'local = "6,6,6"', f'matrix = "{bad}"')
    results = tmp_path / "r"
    _, counts = run_text(text, results, caps)
    assert counts["failed"] == 1
    side = json.loads(next((results / "runs").glob("*.lab.json")).read_text())
    assert side["reason"].startswith("exit code 2 (bad input): asyncsolve: error: "), side
    assert "bad.mtx:1: found 'not a matrix'" in side["reason"], side


def test_the_reason_skips_the_launchers_notices():
    from asyncsolve_lab.runner import why

    banner = ("-" * 55 + "\nPrimary job  terminated normally, but 1 process returned\n"
              + "-" * 55 + "\n" + "-" * 74 + "\nmpirun detected that one or more processes "
              "exited with non-zero status\n\n  Exit code:    3\n" + "-" * 74 + "\n")
    assert why("asyncsolve: error: a.mtx:3: bad\n" + banner) == "asyncsolve: error: a.mtx:3: bad"
    assert why("asyncsolve: rank 1: error: out of memory\nasyncsolve: rank 0: error: x\n"
               + banner) == "asyncsolve: rank 1: error: out of memory"
    assert why("solve: stopped after 10 iterations\n" + banner) == \
        "solve: stopped after 10 iterations"
    assert why(banner) == "Exit code:    3"
    assert why("") == ""


def test_damaged_sidecars_are_redone_never_waited_on(tmp_path, caps):
    """A sidecar that is a FIFO (reading it would wait for a writer), not JSON
    or not an object: the run is redone."""
    from conftest import run_text

    results = tmp_path / "r"
    (results / "runs").mkdir(parents=True)
    run_id = parse_suite(SMALL_SUITE, tmp_path / "suite.toml").runs()[0].run_id
    side = results / "runs" / f"{run_id}.lab.json"
    for damage in ("fifo", "[1]", "{"):
        side.unlink(missing_ok=True)
        if damage == "fifo":
            os.mkfifo(side)
        else:
            side.write_text(damage)
        _, counts = run_text(SMALL_SUITE, results, caps)
        assert (counts["ran"], counts["ok"]) == (1, 1), damage
        assert json.loads(side.read_text())["status"] == "ok"


def test_the_report_replaces_a_fifo_never_waits_on_it(tmp_path):
    """The lab writes whole files through a rename: a FIFO where report.md
    goes is replaced, not opened (which would wait for a reader)."""
    res = results_with_document(tmp_path, MINIMAL_DOCUMENT)
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "report.md")
    rc, stdout, err = lab(["report", str(res), "--out", str(out), "--quiet"], timeout=60)
    assert rc == 0, (stdout, err)
    assert (out / "report.md").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".lab-")]
