"""Claims and verdicts: [[claim]] parsing (good input, and each bad input with
its file and line, exit 2), every verdict on documents the real binary
produced, and the report's Findings table."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from asyncsolve_lab.claims import (
    NOT_ENOUGH,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    evaluate,
    evaluate_all,
)
from asyncsolve_lab.report import print_verdicts, write_report
from asyncsolve_lab.results import load_results
from asyncsolve_lab.suite import SuiteError, parse_suite
from conftest import BENCH_SUITE, ROOT, run_text

# Sync Jacobi on one rank: its iterations are deterministic, so each
# verdict is known in advance. local = "100000,100000,100000" is refused by the
# binary when it runs (exit 2: more memory than the node has; the suite check,
# which only parses, lets it through): the runs of that configuration fail,
# which "not enough runs" needs.
SUITE = """\
[suite]
name = "claims"
repeats = 2
regimes = ["shm"]
timeout_s = 60

[[experiment]]
name = "jacobi"
program = "solve"
ranks = [1]
plots = [{ kind = "bars", x = "tol", y = "iterations" }]
[experiment.options]
variant = "sync"
check-every = 1
[experiment.matrix]
tol = [1e-2, 1e-3]
local = ["8,8,8", "100000,100000,100000"]
"""

CLAIMS = """
[[claim]]
paper = "000"
section = "§6"
claim = "A tighter tolerance takes more iterations."
paper-figure = "more"
experiment = "jacobi"
metric = "iterations"
compare = { tol = 1e-3, local = "8,8,8" }
against = { tol = 1e-2, local = "8,8,8" }
comparison = "ratio >"
threshold = 1.0
min-repeats = 2
plot = 1

[[claim]]
paper = "000"
claim = "A tighter tolerance takes fewer iterations."
experiment = "jacobi"
metric = "iterations"
compare = { tol = 1e-3, local = "8,8,8" }
against = { tol = 1e-2, local = "8,8,8" }
comparison = "ratio <"
threshold = 1.0

[[claim]]
paper = "000"
claim = "Racy needs a thousand nodes."
experiment = "jacobi"
metric = "time"
compare = { tol = 1e-3, local = "8,8,8" }
against = { tol = 1e-2, local = "8,8,8" }
comparison = "ratio <"
threshold = 1.0
not-testable = "needs more than one node"

[[claim]]
paper = "000"
claim = "A grid larger than the node converges faster."
experiment = "jacobi"
metric = "time"
compare = { tol = 1e-3, local = "100000,100000,100000" }
against = { tol = 1e-3, local = "8,8,8" }
comparison = "ratio <"
threshold = 1.0

[[claim]]
paper = "000"
claim = "Sync needs at least one iteration."
experiment = "jacobi"
metric = "iterations"
compare = { tol = 1e-2, local = "8,8,8" }
comparison = "value >="
threshold = 1
min-repeats = 1
"""


def error_of(text: str) -> str:
    with pytest.raises(SuiteError) as info:
        parse_suite(text, Path("c.toml"))
    return str(info.value)


# --------------------------------------------------------------------------
# Parsing.

def test_claims_parse_with_their_lines_and_defaults():
    suite = parse_suite(SUITE + CLAIMS, Path("c.toml"))
    assert len(suite.claims) == 5
    first, second = suite.claims[0], suite.claims[1]
    assert first.line == SUITE.count("\n") + 2  # the [[claim]] header
    assert (first.paper, first.section, first.metric, first.statistic) == \
        ("000", "§6", "iterations", "median")
    assert first.compare.config == {"tol": 1e-3, "local": "8,8,8"}
    assert first.compare.ranks == 1
    assert first.regimes == ["shm"]
    assert second.min_repeats == 2  # the experiment's repeats
    assert suite.claims[4].against is None
    assert suite.to_json()["claims"][0]["comparison"] == "ratio >"


BAD = [
    # a configuration the suite does not run: a matrix value, an excluded one,
    # a rank count, a regime
    (('compare = { tol = 1e-3, local = "8,8,8" }\nagainst = { tol = 1e-2, local = "8,8,8" }\n'
     'comparison = "ratio >"'),
     ('compare = { tol = 1e-4, local = "8,8,8" }\nagainst = { tol = 1e-2, local = "8,8,8" }\n'
     'comparison = "ratio >"'), 0, "tol = 0.0001: experiment 'jacobi' does not run it"),
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = 1.0\nmin-repeats = 2\nranks = 4', 0,
     "ranks = 4: experiment 'jacobi' runs 1 ranks"),
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = 1.0\nmin-repeats = 2\nregime = "tcp"', 0,
     "regime 'tcp': experiment 'jacobi' runs shm"),
    (('compare = { tol = 1e-3, local = "8,8,8" }\nagainst = { tol = 1e-2, local = "8,8,8" }\n'
     'comparison = "ratio >"'),
     ('compare = { tol = 1e-3 }\nagainst = { tol = 1e-2, local = "8,8,8" }\n'
     'comparison = "ratio >"'), 0, "names 2 configurations"),
    (('compare = { tol = 1e-3, local = "8,8,8" }\nagainst = { tol = 1e-2, local = "8,8,8" }\n'
     'comparison = "ratio >"'),
     ('compare = { tol = 1e-3, local = "8,8,8", varaint = "racy" }\n'
     'against = { tol = 1e-2, local = "8,8,8" }\ncomparison = "ratio >"'), 0,
     "'varaint' is not a matrix key"),
    # an unknown comparison, metric, statistic, experiment, key
    ('comparison = "ratio >"', 'comparison = "ratio >>"', 0, "unknown comparison 'ratio >>'"),
    ('metric = "iterations"', 'metric = "iteration"', 0, "unknown metric 'iteration'"),
    # a phase no solver times; a metric of documents the experiment's program does not write
    ('metric = "iterations"', 'metric = "phase:nonexistent"', 0,
     "unknown metric 'phase:nonexistent'"),
    ('metric = "iterations"', 'metric = "phase:"', 0, "unknown metric 'phase:'"),
    ('metric = "iterations"', 'metric = "allreduce.latency_us"', 0,
     ("metric 'allreduce.latency_us' is read from asyncsolve.bench.allreduce documents, but "
     "experiment 'jacobi' runs 'solve'")),
    ('metric = "iterations"', 'metric = "iterations"\nstatistic = "mean"', 0,
     "'statistic' is 'mean'; expected one of median, min, max"),
    ('experiment = "jacobi"', 'experiment = "jacobj"', 0, "no experiment named 'jacobj'"),
    ('paper-figure = "more"', 'paper-figure = "more"\nfigure = "x"', 0, "unknown key 'figure'"),
    # a malformed threshold
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = "0.6x"\nmin-repeats = 2', 0,
     "threshold '0.6x': expected a finite number"),
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = nan\nmin-repeats = 2', 0,
     "threshold nan: expected a finite number"),
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = -1\nmin-repeats = 2', 0,
     "a ratio's threshold must be positive"),
    # more repeats than the experiment runs; a ratio without against; a plot it lacks
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = 1.0\nmin-repeats = 3', 0,
     "min-repeats = 3 but experiment 'jacobi' (compare) runs 2 repeats"),
    ('against = { tol = 1e-2, local = "8,8,8" }\ncomparison = "ratio >"', 'comparison = "ratio >"',
     0, "needs 'against'"),
    ('plot = 1', 'plot = 2', 0, "experiment 'jacobi' has 1 plots"),
    # a ratio of a configuration with itself (1 by construction); a bool threshold in TOML's
    # spelling
    (('compare = { tol = 1e-3, local = "8,8,8" }\nagainst = { tol = 1e-2, local = "8,8,8" }\n'
     'comparison = "ratio >"'),
     ('compare = { tol = 1e-3, local = "8,8,8" }\nagainst = { tol = 1e-3, local = "8,8,8" }\n'
     'comparison = "ratio >"'), 0,
     "'compare' and 'against' select the same configuration (tol=0.001, local=8,8,8)"),
    ('threshold = 1.0\nmin-repeats = 2', 'threshold = true\nmin-repeats = 2', 0,
     "threshold true: expected a finite number"),
]


@pytest.mark.parametrize(("old", "new", "_", "words"), BAD)
def test_bad_claims_name_file_and_line(old, new, _, words):
    text = SUITE + CLAIMS.replace(old, new, 1)
    assert text != SUITE + CLAIMS
    msg = error_of(text)
    # the offending key's line (or the claim's header, for a whole selector)
    lines = text.splitlines()
    line = int(msg.split(":")[1])
    header = SUITE.count("\n") + 2
    assert header <= line <= header + new.count("\n") + 14, msg
    assert lines[header - 1] == "[[claim]]"
    assert msg.startswith(f"c.toml:{line}: "), msg
    assert words in msg, msg


@pytest.mark.parametrize("reason", ['""', '"  "'])
def test_an_empty_not_testable_reason_is_refused(reason):
    """An empty reason was ignored (the claim was judged as if testable), a blank one
    gave the verdict "not testable here:   ." with no reason."""
    text = SUITE + CLAIMS.replace('not-testable = "needs more than one node"',
                                  f"not-testable = {reason}", 1)
    msg = error_of(text)
    line = text.splitlines().index(f"not-testable = {reason}") + 1
    assert msg.startswith(f"c.toml:{line}: "), msg
    assert "not-testable is empty: expected the reason the claim cannot be tested here" in msg


def test_excluded_configuration_is_refused():
    text = SUITE.replace("plots = [", 'exclude = [{ tol = 1e-2, local = "8,8,8" }]\nplots = [') \
        + CLAIMS
    line = text.splitlines().index('against = { tol = 1e-2, local = "8,8,8" }') + 1
    msg = error_of(text)
    assert msg.startswith(f"c.toml:{line}: "), msg
    assert "the suite does not run this configuration of experiment 'jacobi'" in msg, msg


def test_a_bad_claim_exits_2_with_the_line_before_anything_runs(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SUITE + CLAIMS.replace('comparison = "ratio >"', 'comparison = "faster"', 1))
    line = (SUITE + CLAIMS).splitlines().index('comparison = "ratio >"') + 1
    proc = subprocess.run([sys.executable, "-m", "asyncsolve_lab", "run", str(bad), "--results",
                           str(tmp_path / "r"), "--binary", "/nonexistent/asyncsolve"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stderr
    assert f"{bad}:{line}: unknown comparison 'faster'" in proc.stderr
    assert not (tmp_path / "r").exists()  # nothing ran, no folder made


# --------------------------------------------------------------------------
# Verdicts on documents the real binary produced.

@pytest.fixture(scope="module")
def claim_results(tmp_path_factory, caps) -> Path:
    results = tmp_path_factory.mktemp("claims") / "results"
    run_text(SUITE + CLAIMS, results, caps)
    return results


def test_every_verdict_on_real_documents(claim_results):
    verdicts = evaluate_all(load_results(claim_results))
    assert [v.verdict for v in verdicts] == [REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE,
                                             NOT_ENOUGH, REPRODUCED]
    more, fewer, remote, empty, single = verdicts
    assert more.figure > 1
    assert fewer.figure == more.figure
    assert len(more.compare.values) == 2
    assert len(more.against.values) == 2
    assert remote.reason == "needs more than one node"
    assert remote.figure is not None  # measured anyway, shown beside the verdict
    assert empty.figure is None
    assert empty.compare.ok == 0
    assert empty.compare.runs == 2
    assert "0 successful runs with a value (0 ok of 2), the claim needs 2" in empty.reason
    assert single.against is None
    assert single.figure >= 1


def test_too_few_successful_runs_is_never_a_guess(claim_results, tmp_path):
    import shutil
    root = tmp_path / "r"
    shutil.copytree(claim_results, root)
    # one repeat of the compared configuration lost: 1 < min-repeats = 2
    side = next(p for p in (root / "runs").glob("*.lab.json")
                if "tol=0.001-local=8_8_8-r1" in p.name)
    side.unlink()
    verdicts = evaluate_all(load_results(root))
    assert verdicts[0].verdict == NOT_ENOUGH
    assert verdicts[0].figure is not None  # the figure is shown, the verdict withheld
    assert "has 1 successful run with a value" in verdicts[0].reason
    assert verdicts[4].verdict == REPRODUCED  # min-repeats = 1


def test_claims_over_benchmark_documents(bench_results):
    text = BENCH_SUITE + """
[[claim]]
paper = "003"
claim = "Noise slows pcg2 down."
experiment = "allreduce"
metric = "noise.slowdown"
compare = { method = "pcg2", noise-us = 50, noise-hz = 200 }
comparison = "value >"
threshold = 0
min-repeats = 1

[[claim]]
paper = "003"
claim = "impi's latency over mpi's at 8 bytes."
experiment = "allreduce"
metric = "allreduce.latency_us"
compare = { algorithm = "impi", bytes = 8 }
against = { algorithm = "mpi", bytes = 8 }
comparison = "ratio <"
threshold = 1e9

[[claim]]
paper = "003"
claim = "Ambiguous: every size."
experiment = "allreduce"
metric = "allreduce.latency_us"
compare = { algorithm = "impi" }
comparison = "value >"
threshold = 0

[[claim]]
paper = "002"
claim = "b_eff of pure MPI over hybrid is positive."
experiment = "beff"
metric = "beff.pure_over_hybrid"
compare = {}
comparison = "value >"
threshold = 0

[[claim]]
paper = "002"
claim = "The sweep has an epsilon."
experiment = "mvm"
metric = "mvm.epsilon_funneled_max"
compare = {}
comparison = "value >"
threshold = 0
"""
    suite = parse_suite(text, Path("b.toml"))
    res = load_results(bench_results)
    got = [evaluate(c, res)[0] for c in suite.claims]
    assert [v.verdict for v in got] == [REPRODUCED, REPRODUCED, NOT_TESTABLE, REPRODUCED,
                                        REPRODUCED], [v.sentence() for v in got]
    assert "matches" in got[2].reason
    assert "records of one document" in got[2].reason


# --------------------------------------------------------------------------
# The Findings table and the sentences.

def test_report_opens_with_the_findings_table(claim_results, tmp_path):
    md, page, _res, _ = write_report(claim_results, tmp_path / "out")
    text = md.read_text()
    findings = text.index("## Findings")
    assert findings < text.index("## jacobi")  # before the first experiment's section
    table = text[findings:text.index("## jacobi")]
    assert "| claim | paper | paper's figure | check | this machine | verdict | plot |" in table
    rows = [r for r in table.splitlines() if r.startswith("| ")][1:]  # past the header
    assert len(rows) == 5
    assert "A tighter tolerance takes more iterations. | 000 §6 | more |" in rows[0]
    assert "**reproduced**" in rows[0]
    assert "[plot](plots/jacobi-0-bars.png)" in rows[0]
    assert "shm, 1 rank: ratio " in rows[0]
    assert "n=2" in rows[0]
    assert "**not reproduced**" in rows[1]
    assert "**not testable here**: needs more than one node" in rows[2]
    assert "**not enough runs**" in table
    assert (tmp_path / "out" / "plots" / "jacobi-0-bars.png").is_file()
    html = page.read_text()
    assert html.index('id="findings"') < html.index('id="jacobi"')
    assert "not testable here" in html
    assert 'href="#jacobi"' in html


def test_verdicts_print_as_sentences(claim_results):
    from rich.console import Console
    out = io.StringIO()
    print_verdicts(evaluate_all(load_results(claim_results)), Console(file=out, width=300))
    lines = out.getvalue().splitlines()
    assert lines[0] == "Findings (the papers' claims on this machine):"
    assert len(lines) == 6
    assert lines[1].startswith('- paper 000 §6, "A tighter tolerance takes more iterations." '
                               "(shm, 1 rank): reproduced: ratio ")
    assert "not testable here: needs more than one node." in lines[3]


def test_cli_report_ends_with_the_verdicts(claim_results, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "asyncsolve_lab", "report", str(claim_results),
                           "--out", str(tmp_path / "o")], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT / "python"),
                                         "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    tail = proc.stdout[proc.stdout.index("Findings (the papers' claims"):]
    assert tail.count("\n- paper 000") == 5


# One configuration of each solver family: their documents' phases must all be
# names a claim may give as phase:NAME (results.PHASE_NAMES).
PHASE_RUNS = [
    "--local 6,6,6 --method jacobi --variant sync",
    "--local 6,6,6 --method jacobi --variant async",
    "--local 6,6,6 --transport omp --variant async",
    "--local 6,6,6 --transport omp --variant sync",
    "--problem ones --global 8,8,8 --method cg",
    "--problem ones --global 8,8,8 --method pcg1 --pc chebyshev",
    "--problem ones --global 8,8,8 --method pcg2",
    "--problem ones --global 8,8,8 --method pcg-overlap",
    "--problem ones --global 8,8,8 --method pipecg",
    "--problem ones --global 8,8,8 --method pgmres",
    "--problem ones --global 8,8,8 --method pipebicgstab",
    "--problem ones --global 8,8,8 --assemble --method jacobi --variant async",
    "--problem ones --global 8,8,8 --assemble --method jacobi --variant sync",
    "--problem tfim --method lanczos --sites 8",
]


@pytest.mark.parametrize("args", PHASE_RUNS)
def test_every_phase_a_solve_times_is_one_a_claim_may_name(binary, tmp_path, args):
    from asyncsolve_lab.results import PHASE_NAMES, phases

    doc = tmp_path / "d.json"
    p = subprocess.run([str(binary), "solve", *args.split(), "--max-iters", "20", "--json",
                        str(doc)], capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode in (0, 3), p.stderr
    timed = phases(json.loads(doc.read_text()))
    assert timed, args
    assert set(timed) <= set(PHASE_NAMES), set(timed) - set(PHASE_NAMES)
