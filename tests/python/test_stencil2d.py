"""Paper 004's Stencil2D in the lab: documents of bench stencil2d and of
asyncsolve-stencil2d-caf (Coarray Fortran) read, tabled and plotted model by
model; the CAF program launched by cafrun; the shipped sawyer2013 suite."""

from pathlib import Path

import pytest

from asyncsolve_lab import runner
from asyncsolve_lab.capabilities import Capabilities, check_suite
from asyncsolve_lab.report import write_report
from asyncsolve_lab.results import STENCIL2D_MODELS, load_results, stencil2d_points
from asyncsolve_lab.suite import SuiteError, load_suite, parse_suite
from conftest import ROOT, run_text

STENCIL_SUITE = """
[suite]
name = "stencil"
repeats = 2
regimes = ["shm"]
timeout_s = 120

[[experiment]]
name = "cxx"
program = "bench stencil2d"
ranks = [2]
[experiment.options]
local = "6,8"
iterations = 2
warmup = 1
repeats = 2
[experiment.matrix]
radius = [1, 2]
"""

CAF_EXPERIMENT = """
[[experiment]]
name = "caf"
program = "asyncsolve-stencil2d-caf"
launcher = "cafrun"
ranks = [2]
plots = ["stencil2d"]
[experiment.options]
local = "6,8"
iterations = 2
warmup = 1
repeats = 2
[experiment.matrix]
radius = [1, 2]
"""


def caf_built(caps: Capabilities) -> bool:
    return (caps.binary.parent / "asyncsolve-stencil2d-caf").is_file()


@pytest.fixture(scope="module")
def stencil_results(tmp_path_factory, caps) -> Path:
    """bench stencil2d (mpi and rma) and, where it is built, the CAF program."""
    text = STENCIL_SUITE + (CAF_EXPERIMENT if caf_built(caps) else "")
    results = tmp_path_factory.mktemp("stencil") / "results"
    _, counts = run_text(text, results, caps)
    assert counts["failed"] == 0, counts
    return results


def test_points_of_both_programs(stencil_results, caps):
    res = load_results(stencil_results)
    cxx = [p for r in res.of("cxx") for p in stencil2d_points(r.doc)]
    # bench stencil2d's records have no "model": their transport is it
    assert {p.model for p in cxx} == {"mpi", "rma"}
    assert {p.variant for p in cxx} == {"trivial", "sendrecv", "halo", "put", "get", "get0",
                                        "get1"}
    assert {(p.local, p.radius, p.ranks) for p in cxx} == {(n, r, 2) for n in (6, 8)
                                                           for r in (1, 2)}
    assert all(p.iteration_us is not None and p.iteration_us >= 0 for p in cxx)
    if caf_built(caps):
        caf = [p for r in res.of("caf") for p in stencil2d_points(r.doc)]
        assert {p.model for p in caf} == {"caf"}
        assert {p.variant for p in caf} == {"trivial", "put", "get", "get0", "get1"}
        side = res.of("caf")[0].sidecar
        assert side["command"][:3] == ["cafrun", "-np", "2"]
        assert side["env"]["OMPI_MCA_btl"] == "self,vader"


def test_report_tables_and_the_model_by_model_section(stencil_results, caps, tmp_path):
    md, _, _, sections = write_report(stencil_results, tmp_path / "out")
    by = {s.name: s for s in sections}
    table = by["cxx"].tables[0]
    assert table.columns[:2] == ["model", "variant"]
    assert len(table.rows) == 7
    assert len(table.columns) == 2 + 4  # 2 radii x 2 sizes
    assert [name.split("-")[-1] for _, name, _ in by["cxx"].figures] == ["stencil2d.png"]
    if not caf_built(caps):
        assert "stencil2d-models" not in by  # one program, no comparison section
        return
    models = by["stencil2d-models"]
    assert models.tables[0].rows[0][0] == STENCIL2D_MODELS["caf"]
    assert {row[0] for row in models.tables[0].rows} == {"Coarray Fortran", "MPI two-sided",
                                                         "MPI-3 RMA"}
    assert len(models.tables[0].rows) == 5 + 7
    (caption, name, b64), = models.figures
    assert "model by model" in caption
    assert b64
    assert (tmp_path / "out" / "plots" / name).stat().st_size > 5000
    assert "## Stencil2D model by model (paper 004)" in md.read_text()


def test_cafrun_passes_the_regime_through_the_environment():
    text = STENCIL_SUITE.replace('regimes = ["shm"]', 'regimes = ["tcp"]') + CAF_EXPERIMENT
    suite = parse_suite(text.replace("ranks = [2]\nplots", "ranks = [64]\nplots"))
    run = next(r for r in suite.runs() if r.experiment == "caf")

    class Caps:
        def argv(self, program):
            return [f"/build/{program}"]

    launch = runner.build_launch(run, Caps(), Path("/tmp/x.json"))
    assert launch.argv[:4] == ["cafrun", "-np", "64", "/build/asyncsolve-stencil2d-caf"]
    assert "--mca" not in launch.argv
    assert "--oversubscribe" not in launch.argv
    assert launch.env["OMPI_MCA_btl"] == "self,tcp"
    assert launch.env["OMPI_MCA_btl_tcp_if_include"] == "lo"
    assert launch.env["OMPI_MCA_rmaps_base_oversubscribe"] == "1"


def test_a_missing_sibling_program_is_named(tmp_path):
    fake = tmp_path / "asyncsolve"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    suite = parse_suite(STENCIL_SUITE.replace('program = "bench stencil2d"',
                                              'program = "asyncsolve-stencil2d-caf"'))
    with pytest.raises(SuiteError, match=r"no asyncsolve-stencil2d-caf .*OpenCoarrays"):
        check_suite(suite, Capabilities(fake))


def test_the_sawyer2013_suite_checks_against_this_build(caps):
    suite = load_suite(ROOT / "suites" / "sawyer2013.toml")
    programs = {e.program for e in suite.experiments}
    assert programs == {"bench stencil2d", "asyncsolve-stencil2d-caf", "solve"}
    assert {e.launcher for e in suite.experiments} == {"mpirun", "oshrun", "cafrun"}
    if caf_built(caps):
        check_suite(suite, caps)  # every option and value exists in this build
