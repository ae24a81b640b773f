"""asyncsolve-lab reproduce: a page's generated parts written from results
folders (synthetic ones: the suite parsed and saved by the lab, every run's
sidecar and document written as the runner would), text outside the markers
left byte for byte, --check, and the refusals that leave the page as it was."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from asyncsolve_lab.reproduce import find_blocks, read_page
from asyncsolve_lab.runner import RunFolder, write_json_atomic
from asyncsolve_lab.suite import parse_suite
from conftest import ROOT

SUITE = """
[suite]
name = "{name}"
description = "tests/python: a suite whose runs are written by the test"
repeats = 3
regimes = ["shm"]

[[experiment]]
name = "jacobi"
program = "solve"
ranks = [2]
[experiment.options]
local = "8,8,8"
[experiment.matrix]
variant = ["sync", "async"]

[[claim]]
paper = "000"
section = "§6"
claim = "Async is faster than sync."
paper-figure = "async up to 2x faster"
experiment = "jacobi"
metric = "time"
compare = {{ variant = "async" }}
against = {{ variant = "sync" }}
comparison = "ratio <"
threshold = 1.0
"""

#: Seconds per run, by variant: async 0.8 of sync's median.
TIMES = {"sync": [1.0, 1.1, 0.9], "async": [0.8, 0.85, 0.75]}


def make_results(root: Path, name: str = "synth", times: dict | None = None) -> Path:
    """RESULTS/suite.json and RESULTS/runs/: a sidecar and an asyncsolve.result/1
    document for every run of the suite, all ok, started a minute apart."""
    times = times or TIMES
    suite = parse_suite(SUITE.format(name=name), root.parent / f"suites/{name}.toml")
    root.mkdir(parents=True)
    write_json_atomic(root / "suite.json", suite.to_json())
    folder = RunFolder(root)
    folder.runs.mkdir()
    for i, run in enumerate(suite.runs()):
        started = f"2026-11-2{1 + i // 4}T10:{i:02d}:00+00:00"
        time_s = times[run.config["variant"]][run.repeat]
        doc = {"schema": "asyncsolve.result/1", "version": "0.1.0", "git": "abc1234def56",
               "started": started.replace("+00:00", "Z"),
               "command": ["asyncsolve", "solve", "--variant", run.config["variant"]],
               "environment": {"mpi_library": "Open MPI v4.1.4", "ranks": 2,
                               "hostname": "testhost", "cores": 2,
                               "cpu_model": "Test CPU 9000"},
               "method": {"name": "jacobi", "variant": run.config["variant"], "tol": 1e-4},
               "result": {"converged": True, "reason": "tolerance", "time_s": time_s,
                          "true_residual": 5e-5,
                          "iterations": {"min": 100, "mean": 100.0, "max": 100,
                                         "per_rank": [100, 100]}},
               "phases": {"sweep": {"max": time_s, "mean": time_s, "min": time_s}},
               "history": [{"rank": r, "iteration": 100, "time_s": time_s, "residual": 5e-5,
                            "local_residual": 3e-5} for r in range(2)]}
        write_json_atomic(folder.doc(run.run_id), doc)
        write_json_atomic(folder.sidecar(run.run_id), {
            "schema": "asyncsolve.lab.run/1", "suite": name, "run_id": run.run_id,
            "order": run.order, "experiment": run.experiment, "program": run.program,
            "regime": run.regime, "ranks": run.ranks, "repeat": run.repeat,
            "config": run.config, "options": run.options, "cores": 2, "started": started,
            "command": ["mpirun", "-np", "2", "asyncsolve", "solve"], "env": {}, "rc": 0,
            "document": folder.doc(run.run_id).name, "status": "ok", "reason": ""})
    return root


BEFORE = "# Reproduction\n\nHand-written text, kept as it is: ≤ 0.6×, a | bar,  two spaces  \n\n"
BETWEEN = "\n## Paper 000\n\nThe reasons, by hand.\n\n"
AFTER = "\nThe end, without a final newline"


def page_text(suite_part: str = "\n", summary_part: str = "\n", name: str = "synth") -> str:
    return (BEFORE + "<!-- reproduce-summary -->\n" + summary_part +
            "<!-- /reproduce-summary -->\n" + BETWEEN + f"<!-- reproduce: {name} -->\n" +
            suite_part + f"<!-- /reproduce: {name} -->\n" + AFTER)


def lab(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    p = subprocess.run([sys.executable, "-m", "asyncsolve_lab", *map(str, args)], env=env,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def parts(text: str) -> dict[str, str]:
    """The generated parts of a page, by label."""
    return {b.label: text[b.start:b.end] for b in find_blocks(Path("page.md"), text)}


def outside(text: str) -> str:
    """The page without its generated parts."""
    blocks = find_blocks(Path("page.md"), text)
    out, at = [], 0
    for b in blocks:
        out.append(text[at:b.start])
        at = b.end
    return "".join(out) + text[at:]


@pytest.fixture
def results(tmp_path) -> Path:
    return make_results(tmp_path / "results" / "synth")


@pytest.fixture
def page(tmp_path) -> Path:
    p = tmp_path / "docs" / "PAGE.md"
    p.parent.mkdir()
    p.write_text(page_text(), encoding="utf-8")
    p.chmod(0o644)
    return p


def test_the_tables_go_between_the_markers_and_nothing_else_changes(results, page):
    before = page.read_text(encoding="utf-8")
    rc, out, err = lab("reproduce", page, results)
    assert rc == 0, (out, err)
    assert out.strip() == f"{page}: rewrote summary, synth", out
    text = page.read_text(encoding="utf-8")
    assert outside(text) == outside(before)  # byte for byte, the final newline too
    assert text.startswith(BEFORE)
    assert text.endswith(AFTER)
    assert page.stat().st_mode & 0o777 == 0o644  # the page keeps its permissions
    suite = parts(text)["synth"]
    lines = suite.split("\n")
    assert lines[0] == ""  # blank lines around the body
    assert suite.endswith("\n\n")
    head = lines[1]
    for fragment in ("suite `synth`", "6 runs (6 ok)",
                     "from 2026-11-21 10:00 to 2026-11-22 10:05 UTC", "commit abc1234def56",
                     "host testhost", "Open MPI v4.1.4", "2 cores", "CPU Test CPU 9000",
                     "`asyncsolve-lab run suites/synth.toml`"):
        assert fragment in head, (fragment, head)
    assert lines[3] == ("| claim | paper | paper's finding | where | verdict | measured | "
                        "runs with a value / runs |")
    # the figures are report's: medians over the repeats, min–max, the ratio 0.8 / 1.0
    assert lines[5] == ("| Async is faster than sync. | 000 §6 | async up to 2x faster | "
                        "shm, 2 ranks | **reproduced** (ratio < 1) | ratio 0.8: 0.8 "
                        "(0.75–0.85), n=3 / 1 (0.9–1.1), n=3 | 3 of 3 / 3 of 3 |")
    summary = parts(text)["summary"]
    assert ("| `synth` | 000 §6 | Async is faster than sync. | shm, 2 ranks | **reproduced** | "
            "ratio 0.8 |") in summary
    # a second run writes nothing new
    mtime = page.stat().st_mtime_ns
    rc, out, _ = lab("reproduce", page, results / "suite.json")  # a folder as its suite.json
    assert rc == 0
    assert "already up to date" in out
    assert page.stat().st_mtime_ns == mtime


def test_check_agrees_then_finds_the_page_stale(results, page):
    assert lab("reproduce", page, results)[0] == 0
    rc, out, err = lab("reproduce", "--check", page, results)
    assert (rc, err) == (0, ""), out
    assert out.strip() == f"{page}: up to date: summary, synth"
    written = page.read_bytes()
    # new runs in which async is slower: the page no longer says what the folder does
    fresh = make_results(results.parent / "again", "synth",
                         {"sync": [1.0, 1.0, 1.0], "async": [1.2, 1.3, 1.25]})
    rc, out, err = lab("reproduce", "--check", page, fresh)
    assert rc == 1, (out, err)
    assert len(out.strip().splitlines()) == 1, out
    assert out.startswith(f"{page}: out of date: summary (2 lines differ), synth (2 lines "
                          "differ); asyncsolve-lab reproduce"), out
    assert page.read_bytes() == written  # --check writes nothing
    # an edit by hand inside the markers is found too
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("**reproduced** (ratio < 1)", "**reproduced**"),
                    encoding="utf-8")
    rc, out, _ = lab("reproduce", "--check", page, results)
    assert rc == 1
    assert "synth (2 lines differ)" in out, out
    assert lab("reproduce", page, fresh)[0] == 0
    assert "**not reproduced** (ratio < 1)" in page.read_text(encoding="utf-8")


def test_a_suite_without_its_folder_is_left_and_so_is_the_summary(tmp_path, results):
    page = tmp_path / "two.md"
    page.write_text(page_text() + "\n<!-- reproduce: other -->\nby hand\n"
                    "<!-- /reproduce: other -->\n", encoding="utf-8")
    rc, out, _ = lab("reproduce", page, results)
    assert rc == 0
    assert "rewrote synth; left as they were (no results folder given): summary, other" in out
    got = parts(page.read_text(encoding="utf-8"))
    assert got["other"] == "by hand\n"
    assert got["summary"] == "\n"  # a summary without other's rows would mislead
    assert "Async is faster than sync." in got["synth"]
    rc, out, _ = lab("reproduce", "--check", page, results)
    assert rc == 0
    assert "left as they were (no results folder given): summary, other" in out


def _refused(page: Path, args, fragment: str):
    before = page.read_bytes()
    mtime = page.stat().st_mtime_ns
    rc, out, err = lab("reproduce", *args)
    assert rc == 2, (rc, out, err)
    lines = [s for s in err.splitlines() if s.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert fragment in lines[0], lines[0]
    assert page.read_bytes() == before
    assert page.stat().st_mtime_ns == mtime
    assert [p.name for p in page.parent.iterdir()] == [page.name]  # no temporary left


def test_a_wrong_folder_is_one_line_exit_2_and_the_page_untouched(tmp_path, results, page):
    (tmp_path / "empty").mkdir()
    other = make_results(tmp_path / "results" / "other", "other")
    plain = tmp_path / "plain" / "runs"
    plain.mkdir(parents=True)
    for sidecar in (results / "runs").glob("*.lab.json"):
        (plain / sidecar.name).write_bytes(sidecar.read_bytes())
    for args, fragment in [
            ((page, tmp_path / "missing"), "missing: no such results folder"),
            ((page, tmp_path / "empty"), "empty: no runs"),
            ((page, results, other), "results of suite 'other', but"),
            ((page, plain.parent), "no suite.json: not the results folder of a suite"),
            ((page, results, results), "a second results folder of suite 'synth'"),
            (("--check", page, other), "has no <!-- reproduce: other --> marker")]:
        _refused(page, args, fragment)


@pytest.mark.parametrize(("text", "fragment"), [
    ("<!-- reproduce: synth -->\nx\n", ":1: <!-- reproduce: synth --> has no closing"),
    ("<!-- reproduce: synth -->\n<!-- /reproduce: other -->\n",
     ":2: <!-- /reproduce: other --> closes no"),
    ("<!-- reproduce:synth -->\n", ":1: not a marker"),
    ("<!-- reproduce-summary -->\n<!-- /reproduce-summary -->\n", "no <!-- reproduce: SUITE"),
    ("<!-- reproduce: synth -->\n<!-- /reproduce: synth -->\n" * 2, ":3: a second"),
])
def test_a_page_with_bad_markers_is_refused(tmp_path, results, text, fragment):
    page = tmp_path / "bad" / "page.md"
    page.parent.mkdir()
    page.write_text(text, encoding="utf-8")
    _refused(page, (page, results), fragment)


def test_the_reproduction_page_marks_suites_that_exist():
    """docs/REPRODUCTION.md: each marker names a suite of suites/, once, and the
    summary is there; what the generator writes is checked against the results
    by `asyncsolve-lab reproduce --check` where the folders exist (docs/lab.md)."""
    path = ROOT / "docs" / "REPRODUCTION.md"
    blocks = find_blocks(path, read_page(path))
    names = [b.label for b in blocks]
    assert "summary" in names
    for name in names:
        if name != "summary":
            assert (ROOT / "suites" / f"{name}.toml").is_file(), name
