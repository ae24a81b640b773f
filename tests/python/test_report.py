"""Reports from documents the real binary produced during the test, and the
refusal of documents of another schema version."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from asyncsolve_lab import SchemaError
from asyncsolve_lab.report import doc_links, write_report
from asyncsolve_lab.results import groups, load_results, time_s
from conftest import ROOT


def test_report_from_the_tiny_suite(tiny_results, tmp_path):
    md, page, _, sections = write_report(tiny_results, tmp_path / "out")
    text = md.read_text()
    html = page.read_text()
    # one section per experiment, in suite order
    assert [s.name for s in sections] == ["jacobi", "krylov", "broken"]
    # the paper-layout table: iterations min/mean/max and time per configuration
    jac = sections[0].tables[0]
    assert jac.columns[:3] == ["regime", "ranks", "variant"]
    assert {"iter. min", "iter. mean", "iter. max", "time (s)"} <= set(jac.columns)
    assert len(jac.rows) == 2 * 2 * 2  # regimes x ranks x variants
    assert all(r[jac.columns.index("runs ok")] == "2/2" for r in jac.rows)
    assert "| shm | 2 | async |" in text
    # figures: histogram, convergence, rate vs ranks, iterations vs variant
    kinds = [name.split("-")[-1] for _, name, _ in sections[0].figures]
    assert kinds == ["histogram.png", "convergence.png", "rate.png", "line.png", "bars.png"]
    for _, name, _ in sections[0].figures:
        assert (tmp_path / "out" / "plots" / name).stat().st_size > 5000
        assert f"](plots/{name})" in text
    # the HTML page is self-contained: every plot embedded, no external file
    assert html.count("data:image/png;base64,") == sum(len(s.figures) for s in sections)
    assert not re.search(r'src="(?!data:)', html)
    # Krylov: phase table and stacked bars
    kry = sections[1]
    assert any("phase breakdown" in t.title for t in kry.tables)
    assert [name.split("-")[-1] for _, name, _ in kry.figures] == \
        ["phases.png", "time.png", "line.png"]  # the last: speedup over 1 rank
    # the failed run is listed with its reason and stderr
    assert sections[2].failures
    assert "bad input" in sections[2].failures[0]["reason"]
    assert "Failed runs" in html
    assert "--local" in html
    # links to the documentation: claims and verdicts, the performance page and the
    # papers' verdicts, each a path from the report's folder to a file of this checkout
    hrefs = re.findall(r'<a href="([^"#]+)(#[^"]*)?">', html)
    pages = {Path(h).name: h for h, _ in hrefs if not h.startswith("#")}
    for name in ("lab", "PERFORMANCE", "REPRODUCTION"):
        href = pages.get(f"{name}.md") or pages.get(f"{name}.html")
        assert href, (name, pages)
        assert (page.parent / href).resolve().is_file(), href
        assert f"]({href}" in text
    assert "#claims-and-verdicts" in html


def test_doc_links_lead_from_the_report_folder_to_the_pages(tmp_path):
    """The built site's page where `make docs` made it, else the Markdown source;
    nothing outside a checkout."""
    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    for name in ("lab", "PERFORMANCE", "REPRODUCTION"):
        (checkout / "docs" / f"{name}.md").write_text(f"# {name}\n")
    out = checkout / "results" / "demo" / "report"
    out.mkdir(parents=True)
    links = doc_links(out, checkout)
    assert [d.href for d in links] == ["../../../docs/lab.md#claims-and-verdicts",
                                       "../../../docs/PERFORMANCE.md",
                                       "../../../docs/REPRODUCTION.md"]
    site = checkout / "build" / "docs" / "html"
    site.mkdir(parents=True)
    (site / "lab.html").write_text("<h1>lab</h1>")
    lab, perf, _ = doc_links(out, checkout)
    assert lab.href == "../../../build/docs/html/lab.html#claims-and-verdicts"
    assert perf.href == "../../../docs/PERFORMANCE.md"
    assert doc_links(out, tmp_path / "elsewhere") == []
    # this checkout: every link reaches a file
    for d in doc_links(tmp_path):
        assert (tmp_path / d.href.split("#")[0]).resolve().is_file(), d


def test_report_from_every_benchmark_document(bench_results, tmp_path):
    _, _, res, sections = write_report(bench_results, tmp_path / "out")
    by = {s.name: s for s in sections}
    assert set(by) == {"allreduce", "mvm", "model", "epsilon", "beff"}
    eps = by["epsilon"].tables[0]
    assert eps.columns[:4] == ["n", "m", "f_comp,non", "f_comm"]
    assert len(eps.rows) == 3
    for name, section in by.items():
        assert section.counts.endswith("0 failed"), (name, section.failures)
        assert section.tables, name
        assert section.figures, name
        assert all(b64 for _, _, b64 in section.figures), name
    # model hybrid --fit read the hybrid_mvm document of this suite ({doc:mvm})
    model = res.of("model")[0]
    assert model.doc["fit"]["input_schema"] == "asyncsolve.bench.hybrid_mvm/1"
    assert model.doc["fit"]["input"].endswith(res.of("mvm")[0].sidecar["document"])
    assert "latency" in by["allreduce"].tables[0].note.lower()


def test_aggregation_over_repeats(tiny_results):
    res = load_results(tiny_results)
    gs = groups(res.of("jacobi"))
    assert len(gs) == 8
    assert all(len(g.records) == 2 for g in gs)
    for g in gs:
        s = g.spread(time_s)
        assert s.n == 2
        assert s.lo <= s.median <= s.hi


def test_incompatible_schema_is_refused(tiny_results, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_results, copy)
    side = json.loads(next((copy / "runs").glob("jacobi-*.lab.json")).read_text())
    doc_path = copy / "runs" / side["document"]
    doc = json.loads(doc_path.read_text())
    doc["schema"] = "asyncsolve.result/2"
    doc_path.write_text(json.dumps(doc))
    with pytest.raises(SchemaError) as err:
        load_results(copy)
    msg = str(err.value)
    assert str(doc_path) in msg
    assert "asyncsolve.result/2 is incompatible" in msg
    assert "asyncsolve.result/1" in msg
    # the command says so on stderr, exit code 2, and writes nothing
    proc = subprocess.run([sys.executable, "-m", "asyncsolve_lab", "report", str(copy)],
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert "asyncsolve.result/2 is incompatible" in proc.stderr
    assert not (copy / "report" / "report.html").exists()


def test_unknown_sidecar_schema_and_empty_folder(tiny_results, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_results, copy)
    path = next((copy / "runs").glob("*.lab.json"))
    side = json.loads(path.read_text())
    side["schema"] = "asyncsolve.lab.run/9"
    path.write_text(json.dumps(side))
    with pytest.raises(SchemaError, match=r"asyncsolve\.lab\.run/9 is incompatible"):
        load_results(copy)
    empty = tmp_path / "empty"
    empty.mkdir()
    from asyncsolve_lab import LabError
    with pytest.raises(LabError, match="no runs"):
        load_results(empty)


def test_cli_end_to_end(tmp_path, binary):
    """asyncsolve-lab run SUITE --report, as a user types it."""
    suite = tmp_path / "e2e.toml"
    suite.write_text("""
[suite]
name = "e2e"
regimes = ["shm", "tcp"]
[[experiment]]
name = "jacobi"
program = "solve"
ranks = [2]
plots = ["histogram", "convergence"]
[experiment.options]
local = "8,8,8"
tol = 1e-3
[experiment.matrix]
variant = ["sync", "racy"]
""")
    results = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "asyncsolve_lab", "run", str(suite),
                           "--results", str(results), "--binary", str(binary), "--report",
                           "--strict"],
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin",
                               "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 ok, 0 failed" in proc.stdout
    assert f"report: {results / 'report' / 'report.html'}" in proc.stdout
    assert (results / "report" / "report.md").is_file()
    assert len(list((results / "runs").glob("*.lab.json"))) == 4


def test_runs_of_an_experiment_the_suite_no_longer_lists_are_reported(tiny_results, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_results, copy)
    suite = json.loads((copy / "suite.json").read_text())
    suite["experiments"] = [e for e in suite["experiments"] if e["name"] != "krylov"]
    (copy / "suite.json").write_text(json.dumps(suite))
    res = load_results(copy)
    assert [e.name for e in res.experiments()] == ["jacobi", "broken", "krylov"]
