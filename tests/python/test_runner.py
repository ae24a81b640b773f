"""Running suites with the real binary: documents and sidecars, failures,
timeouts, resumption after an interruption, and the capability check."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from asyncsolve_lab import runner
from asyncsolve_lab.capabilities import check_suite, parse_flags, parse_help
from asyncsolve_lab.suite import SuiteError, parse_suite
from conftest import TINY_SUITE, run_text, start_long_suite


def sidecars(results: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((results / "runs").glob("*.lab.json"))]


def test_tiny_suite_records_every_run(tiny_results):
    sides = sidecars(tiny_results)
    assert len(sides) == 16 + 4 + 1
    assert json.loads((tiny_results / "suite.json").read_text())["schema"] == \
        "asyncsolve.lab.suite/1"
    for s in sides:
        assert s["schema"] == "asyncsolve.lab.run/1"
        assert s["command"][:3] == ["mpirun", "-np", str(s["ranks"])]
        if s["experiment"] == "broken":
            continue
        assert s["status"] == "ok", s
        assert s["rc"] == 0
        doc = json.loads((tiny_results / "runs" / s["document"]).read_text())
        assert doc["schema"] == "asyncsolve.result/1"
        assert doc["environment"]["ranks"] == s["ranks"]
        assert doc["method"]["variant"] == s["config"].get("variant", "sync")
    assert isinstance(sides[0]["inherited_env"], dict)
    # the regime is on the command line: shared memory or TCP only
    shm = next(s for s in sides if s["regime"] == "shm")
    tcp = next(s for s in sides if s["regime"] == "tcp")
    assert "self,vader" in shm["command"]
    assert "self,tcp" in tcp["command"]


def test_a_failing_run_is_recorded_and_the_suite_goes_on(tiny_results):
    broken = [s for s in sidecars(tiny_results) if s["experiment"] == "broken"]
    assert len(broken) == 1
    b = broken[0]
    assert b["status"] == "failed"
    assert b["rc"] == 2
    assert "bad input" in b["reason"]
    assert "--local" in b["stderr"]  # the binary's own one-line error is kept


def test_oversubscription_and_root_environment():
    suite = parse_suite(TINY_SUITE.replace("ranks = [1, 2]", "ranks = [64]"))
    run = suite.runs()[0]

    class Caps:
        def argv(self, program):
            return ["asyncsolve", *program.split()]

    launch = runner.build_launch(run, Caps(), Path("/tmp/x.json"))
    assert "--oversubscribe" in launch.argv  # 64 ranks exceed this machine's cores
    assert launch.env["OMPI_MCA_mpi_yield_when_idle"] == "1"
    if os.geteuid() == 0:
        assert launch.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert launch.argv[-2:] == ["--json", "/tmp/x.json"]


def test_oshrun_gets_ucx_osc():
    text = TINY_SUITE.replace('title = "Jacobi sync and async"',
                              'launcher = "oshrun"\ntitle = "x"')
    run = parse_suite(text).runs()[0]

    class Caps:
        def argv(self, program):
            return ["asyncsolve", *program.split()]

    launch = runner.build_launch(run, Caps(), Path("/tmp/x.json"))
    assert launch.argv[0] == "oshrun"
    assert launch.env["OMPI_MCA_osc"] == "ucx"
    assert "pml" not in launch.argv


def test_rerun_skips_finished_runs(tmp_path, caps):
    text = TINY_SUITE.replace("ranks = [1, 2]", "ranks = [1]").replace(
        'regimes = ["shm", "tcp"]', 'regimes = ["shm"]', 1)
    results = tmp_path / "r"
    _, first = run_text(text, results, caps, only=["jacobi"])
    assert first["ran"] == 4
    assert first["ok"] == 4
    mtimes = {p: p.stat().st_mtime_ns for p in (results / "runs").iterdir()}
    _, again = run_text(text, results, caps, only=["jacobi"])
    assert again["ran"] == 0
    assert again["skipped"] == 4
    assert mtimes == {p: p.stat().st_mtime_ns for p in (results / "runs").iterdir()}


def test_a_folder_of_another_suite_is_refused(tmp_path, caps):
    # Two suites with one results folder: the second replaced the first's suite.json
    # without a word, and its report showed the first suite's runs as its own.
    text = TINY_SUITE.replace("ranks = [1, 2]", "ranks = [1]").replace(
        'regimes = ["shm", "tcp"]', 'regimes = ["shm"]', 1)
    results = tmp_path / "r"
    run_text(text, results, caps, only=["jacobi"])
    held = (results / "suite.json").read_text()
    name = json.loads(held)["name"]
    other = text.replace(f'name = "{name}"', 'name = "another"', 1)
    assert other != text
    with pytest.raises(runner.LabError, match=f"holds the results of suite '{name}'.*"
                       "expected an empty folder or one of suite 'another'"):
        run_text(other, results, caps, only=["jacobi"])
    assert (results / "suite.json").read_text() == held


def test_retry_failed_reruns_only_failures(tmp_path, caps):
    results = tmp_path / "r"
    _, first = run_text(TINY_SUITE, results, caps, only=["broken"])
    assert first["failed"] == 1
    _, again = run_text(TINY_SUITE, results, caps, only=["broken"])
    assert again["ran"] == 0
    _, retried = run_text(TINY_SUITE, results, caps, only=["broken"], retry_failed=True)
    assert retried["ran"] == 1
    assert retried["failed"] == 1


def test_timeout_is_recorded_as_failed(tmp_path, caps):
    text = """
[suite]
name = "slow"
timeout_s = 1.5
[[experiment]]
name = "forever"
program = "solve"
ranks = [1]
[experiment.options]
local = "100,100,100"
tol = 1e-30
max-iters = 100000000
"""
    results = tmp_path / "r"
    t0 = time.monotonic()
    _, counts = run_text(text, results, caps)
    assert time.monotonic() - t0 < 20
    (side,) = sidecars(results)
    assert side["status"] == "timeout"
    assert side["rc"] is None
    assert "timed out after 1.5 s" in side["reason"]
    assert counts["failed"] == 1
    # no asyncsolve process left behind
    left = subprocess.run(["pgrep", "-f", str(results)], capture_output=True, text=True)
    assert left.stdout.strip() == ""


def test_interrupted_suite_resumes(tmp_path, caps, monkeypatch):
    """Ctrl-C in the middle: nothing partial is kept; the rerun does the rest."""
    text = TINY_SUITE.replace('regimes = ["shm", "tcp"]', 'regimes = ["shm"]', 1)
    results = tmp_path / "r"
    real = runner.execute
    calls = []

    def interrupt_third(run, *a, **kw):
        calls.append(run.run_id)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(run, *a, **kw)

    monkeypatch.setattr(runner, "execute", interrupt_third)
    with pytest.raises(KeyboardInterrupt):
        run_text(text, results, caps, only=["jacobi"])
    monkeypatch.setattr(runner, "execute", real)
    assert len(sidecars(results)) == 2
    _, counts = run_text(text, results, caps, only=["jacobi"])
    assert counts["skipped"] == 2
    assert counts["ran"] == 6
    assert counts["ok"] == 6


def test_sigint_to_the_command_stops_the_run_and_resumes(tmp_path, binary):
    """A real Ctrl-C (SIGINT to the process group) during a long run."""
    proc, results, cmd, env = start_long_suite(tmp_path, binary, "sigint", 1)
    suite = tmp_path / "s.toml"  # written by start_long_suite
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list((results / "runs").glob("*.lab.json"))) < 1:
        time.sleep(0.1)
    time.sleep(1.0)  # the long run is under way
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "run the same command again to resume" in out
    names = sorted(p.name for p in (results / "runs").iterdir())
    assert len(names) == 2, names
    assert all(n.startswith("quick-") for n in names), names
    # resume: the quick run is skipped; the long one is cut short by a timeout here
    suite.write_text(suite.read_text().replace('[suite]\nname = "sigint"',
                                               '[suite]\nname = "sigint"\ntimeout_s = 1'))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "1 already finished" in done.stdout


def _line(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_capabilities_refuse_options_the_build_lacks(caps):
    # names no build has (sibling branches add `--method lanczos` and `bench
    # stencil2d`, so real future features would make this test merge-fragile)
    text = TINY_SUITE.replace('method = ["cg", "pcg-overlap"]', 'method = ["cg", "qmr-x"]')
    suite = parse_suite(text, Path("s.toml"))
    with pytest.raises(SuiteError) as err:
        check_suite(suite, caps)
    assert str(err.value).startswith(f"s.toml:{_line(text, 'qmr-x')}: ")
    assert "'qmr-x' is not among the choices" in str(err.value)
    text = TINY_SUITE.replace('local = "8,8,8"', 'no-such-option = 2')
    suite = parse_suite(text, Path("s.toml"))
    with pytest.raises(SuiteError) as err:
        check_suite(suite, caps)
    assert str(err.value).startswith(f"s.toml:{_line(text, 'no-such-option')}: ")
    assert "option --no-such-option does not exist in 'solve'" in str(err.value)
    text = TINY_SUITE.replace('program = "solve"\nranks = [1, 2]',
                              'program = "bench no-such-bench"\nranks = [1, 2]')
    suite = parse_suite(text, Path("s.toml"))
    with pytest.raises(SuiteError) as err:
        check_suite(suite, caps)
    assert str(err.value).startswith(f"s.toml:{_line(text, 'no-such-bench')}: ")
    assert "no 'bench no-such-bench'" in str(err.value)


KRYLOV = 'problem = "ones"\nglobal = "12,12,12"'


@pytest.mark.parametrize(("option", "words"), [
    ('tol = "abc"', '--tol abc: expected a number from 1e-300 to 1'),
    ("tol = -5", "--tol -5: expected a number from 1e-300 to 1"),
    ("tol = 2.0", "--tol 2.0: expected a number from 1e-300 to 1"),
    ('tol = "nan"', "--tol nan: expected a number"),
    ("max-iters = 1.5", "--max-iters 1.5: expected an integer from 0 to 1e9"),
    ('max-iters = "1e3"', "--max-iters 1e3: expected an integer from 0 to 1e9"),
    ("max-iters = true", "--max-iters true: expected an integer from 0 to 1e9, not a flag"),
    ("restart = 0", "--restart 0: expected an integer from 1 to 1000"),
    ('matrix = "/nonexistent.mtx"', "--matrix /nonexistent.mtx: no such file"),
    ('matrix = "/"', "--matrix /: not a regular file"),
    # A flag takes true or false; a string or a number was passed on as a value, and
    # every run failed.
    ('monitor = "yes"', '--monitor "yes": --monitor is a flag: expected true (given) or false'),
    ("monitor = 1", "--monitor 1: --monitor is a flag: expected true (given) or false"),
    ('force = "false"', '--force "false": --force is a flag: expected true (given) or false'),
])
def test_capabilities_refuse_values_the_program_would_refuse(caps, option, words):
    """A value outside the range --help prints, or a missing input file, was
    'valid' and then failed every run."""
    assert words in _krylov_refusal(caps, option)


def _krylov_refusal(caps, option: str) -> str:
    """The check's refusal of the tiny suite's Krylov experiment with `option` added,
    which names the option's line."""
    text = TINY_SUITE.replace(KRYLOV, KRYLOV + "\n" + option)
    with pytest.raises(SuiteError) as err:
        check_suite(parse_suite(text, Path("s.toml")), caps)
    assert str(err.value).startswith(f"s.toml:{_line(text, option)}: experiment 'krylov': "), \
        str(err.value)
    return str(err.value)


@pytest.mark.parametrize(("option", "words"), [
    # Any word of the option's help text passed for a choice ("paper", "newest"), and the
    # choice options the lab did not list were not checked at all; every run then failed.
    ('pc = "preconditioner"', "--pc 'preconditioner': expected none, jacobi, chebyshev,"),
    ('allreduce = "knomial:1"', "--allreduce 'knomial:1': expected one of"),
    ('cgs-refinement = "sometimes"', "--cgs-refinement 'sometimes': expected one of never,"),
    ('scale = "diagonal"', "--scale 'diagonal': expected one of none, unit-diagonal"),
    # A combination the program refuses: the Krylov experiment runs cg and pcg-overlap.
    ('variant = "async"', "--variant async with --method cg: --variant applies to"),
])
def test_capabilities_ask_the_program_about_each_run(caps, option, words):
    message = _krylov_refusal(caps, option)
    assert words in message
    assert "(the program refuses the run krylov shm np=1 " in message


@pytest.mark.parametrize("method", ["paper", "CG"])
def test_capabilities_ask_the_program_about_a_matrix_value(caps, method):
    text = TINY_SUITE.replace('method = ["cg", "pcg-overlap"]', f'method = ["cg", "{method}"]')
    with pytest.raises(SuiteError) as err:
        check_suite(parse_suite(text, Path("s.toml")), caps)
    assert str(err.value).startswith(f"s.toml:{_line(text, method)}: experiment 'krylov': "
                                     f"--method '{method}': expected one of jacobi, cg,")


def test_the_programs_check_of_command_lines(binary):
    lines = [["solve", "--method", "cg"], ["solve", "--method", "paper"], "not a list",
             ["bench", "stencil2d", "--transport", "shmem"]]
    done = subprocess.run([str(binary), "--check-command-lines"], capture_output=True,
                          text=True, timeout=60,
                          input="".join(json.dumps(line) + "\n" for line in lines))
    assert done.returncode == 0, done.stderr
    verdicts = done.stdout.splitlines()
    assert verdicts[0] == "ok"
    assert verdicts[1].startswith("error: --method 'paper': expected one of jacobi, cg")
    assert verdicts[2].startswith("error: a line that is not a JSON array of strings")
    # Whether a launcher started the process is asked when it runs, not by the parse: the
    # same answer wherever the lab checks a suite of oshrun runs.
    assert verdicts[3] == "ok"
    assert len(verdicts) == 4


def test_capabilities_check_every_value_of_a_matrix_list(caps):
    text = TINY_SUITE.replace('method = ["cg", "pcg-overlap"]',
                              'method = ["cg", "pcg-overlap"]\nmax-iters = [10, -1]')
    with pytest.raises(SuiteError) as err:
        check_suite(parse_suite(text, Path("s.toml")), caps)
    assert str(err.value).startswith(f"s.toml:{_line(text, 'max-iters = [10, -1]')}: ")
    assert "--max-iters -1: expected an integer from 0 to 1e9" in str(err.value)


def test_capabilities_accept_values_within_the_ranges(caps, tmp_path):
    matrix = tmp_path / "a.mtx"
    matrix.write_text("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n")
    text = TINY_SUITE.replace(KRYLOV, f'matrix = "{matrix}"\ntol = 1\nmax-iters = 0\n'
                              "slow-rank = -1\nfinal-sync = false\nmonitor = true")
    check_suite(parse_suite(text, Path("s.toml")), caps)  # every value at its range's end
    # (the shift applies to the model problems: with --matrix the program refuses it)
    check_suite(parse_suite(TINY_SUITE.replace(KRYLOV, KRYLOV + "\nshift = -1e12"),
                            Path("s.toml")), caps)


def test_parse_help_reads_cli11_output():
    text = """Options:
  -h,--help                   Print this help message and exit
  --method TEXT=jacobi        Solver: jacobi, cg
  -m,--message-size TEXT=8:8192
                              Message sizes MIN:MAX
  --copy                      Copy u_new
"""
    opts = parse_help(text)
    assert set(opts) == {"method", "message-size", "copy"}
    assert "MIN:MAX" in opts["message-size"]
    assert parse_flags(text) == {"copy"}


def test_eta_uses_the_earlier_repeat_of_each_configuration():
    runs = parse_suite(TINY_SUITE).runs()
    walls = runner.Walls()
    assert walls.estimate(runs[:3]) == 0.0
    walls.add(runs[0], 10.0)
    walls.add(runs[1], 2.0)
    first_again = next(r for r in runs if r.repeat == 1 and r.config == runs[0].config
                       and r.ranks == runs[0].ranks and r.regime == runs[0].regime)
    assert walls.estimate([first_again]) == 10.0
    assert walls.estimate([runs[2]]) == 6.0  # unseen: the mean so far
