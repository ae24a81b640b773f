"""results.py's extractors, the lab's only readers of documents: on documents
the real binary and benchmarks wrote during the test (each value checked
against the field it stands for), on the repository's hand-checkable
hybrid_mvm document, and on small hand-made documents with fields missing,
null or of the wrong type."""

import json
import math
import socket
from pathlib import Path

import pytest

from asyncsolve_lab import plots, report
from asyncsolve_lab import results as rs
from asyncsolve_lab.results import Group, Record, load_results
from conftest import ROOT


def ok_docs(results: Path, experiment: str) -> list[tuple[Record, dict]]:
    recs = [r for r in load_results(results).of(experiment) if r.ok]
    assert recs, experiment
    return [(r, r.doc) for r in recs]


# --------------------------------------------------------------------------
# asyncsolve.result/1, written by `asyncsolve solve` (the tiny suite).

def test_iterations_time_and_residual(tiny_results):
    for experiment in ("jacobi", "krylov"):
        for r, doc in ok_docs(tiny_results, experiment):
            res = doc["result"]
            per = rs.per_rank_iterations(doc)
            assert per == res["iterations"]["per_rank"]
            assert len(per) == r.ranks
            assert rs.iterations(doc, "min") == min(per) == res["iterations"]["min"]
            assert rs.iterations(doc, "max") == max(per) == res["iterations"]["max"]
            assert rs.iterations(doc) == pytest.approx(sum(per) / len(per))
            assert rs.iterations(doc, "mean") == res["iterations"]["mean"]
            assert rs.time_s(doc) == res["time_s"]
            assert rs.time_s(doc) > 0
            assert rs.rate(doc) == pytest.approx(res["iterations"]["mean"] / res["time_s"])
            assert rs.time_per_iteration(doc) == pytest.approx(
                res["time_s"] / res["iterations"]["max"])
            assert rs.true_residual(doc) == res["true_residual"]
            assert 0 < rs.true_residual(doc) < 1


def test_y_quantities_are_the_extractors(tiny_results):
    _, doc = ok_docs(tiny_results, "jacobi")[0]
    fns = {name: fn for name, (fn, _) in rs.Y_QUANTITIES.items()}
    assert fns["time"](doc) == rs.time_s(doc)
    assert fns["rate"](doc) == rs.rate(doc)
    assert fns["iterations"](doc) == rs.iterations(doc, "mean")
    assert fns["time_per_iteration"](doc) == rs.time_per_iteration(doc)
    assert fns["true_residual"](doc) == rs.true_residual(doc)


def test_history(tiny_results):
    for r, doc in ok_docs(tiny_results, "jacobi"):
        points = rs.history(doc)
        assert len(points) == len(doc["history"])
        assert {p.rank for p in points} == set(range(r.ranks))
        for p, h in zip(points, doc["history"], strict=True):
            assert (p.rank, p.iteration, p.time_s, p.residual, p.local_residual) == \
                (h["rank"], h["iteration"], h["time_s"], h["residual"], h["local_residual"])
            assert p.thread is None  # MPI transport: no thread ids
            assert p.residual > 0
        for rank in range(r.ranks):
            mine = sorted((p for p in points if p.rank == rank), key=lambda p: p.time_s)
            its = [p.iteration for p in mine]
            assert its == sorted(its), (rank, its)


def test_phases(tiny_results):
    for _, doc in ok_docs(tiny_results, "krylov"):
        table = doc["phases"]
        assert list(rs.phases(doc)) == list(table)  # the document's order
        for stat in rs.PHASE_STATS:
            assert rs.phases(doc, stat) == {k: v[stat] for k, v in table.items()}
        lo, mean, hi = (rs.phases(doc, s) for s in ("min", "mean", "max"))
        for name in table:
            assert 0 <= lo[name] <= mean[name] <= hi[name]


def test_phase_medians_over_repeats(tiny_results):
    res = load_results(tiny_results)
    for g in rs.groups(res.of("jacobi")):
        med = rs.phase_medians(g)
        assert med
        for name, value in med.items():
            values = sorted(rs.phases(r.doc)[name] for r in g.ok)
            assert values[0] <= value <= values[-1]


def test_environment(tiny_results):
    for r, doc in ok_docs(tiny_results, "jacobi"):
        env = rs.environment(doc)
        assert env.mpi_library == doc["environment"]["mpi_library"]
        assert env.mpi_library
        assert env.hostname == socket.gethostname()
        assert env.cores == doc["environment"]["cores"]
        assert env.cores >= 1
        assert rs.environment(r.doc) == env


def test_records_experiments_and_suite(tiny_results):
    res = load_results(tiny_results)
    assert res.name == "tiny"
    assert res.description == "tests/python: the smallest suite worth running"
    exps = res.experiments()
    assert [e.name for e in exps] == ["jacobi", "krylov", "broken"]
    assert exps[0].title == "Jacobi sync and async"
    assert exps[0].program == "solve"
    assert [p["kind"] for p in exps[0].plots] == ["histogram", "convergence", "rate", "line",
                                                  "bars"]
    assert exps[1].title == ""  # none given
    for r in res.records:
        assert r.path.name == f"{r.run_id}.lab.json"
        assert r.command[:3] == ["mpirun", "-np", str(r.ranks)]
        assert isinstance(r.env, dict)
        assert r.program == "solve"
    broken = res.of("broken")[0]
    assert broken.status == "failed"
    assert not broken.ok
    assert broken.doc is None
    assert broken.schema is None
    assert "bad input" in broken.reason
    assert "--local" in broken.stderr
    good = res.of("jacobi")[0]
    assert good.status == "ok"
    assert good.reason == ""
    assert good.schema == "asyncsolve.result"


def test_runs_the_suite_no_longer_makes_are_left_out(tiny_results, tmp_path):
    # A suite changed (here jacobi's tol) and run again into the same folder: the report
    # blended the old configuration's runs with the new ones as repeats of one
    # configuration. The other experiments' runs stay.
    import shutil
    folder = tmp_path / "results"
    shutil.copytree(tiny_results, folder)
    assert load_results(folder).stale == []
    suite = json.loads((folder / "suite.json").read_text())
    jacobi = next(e for e in suite["experiments"] if e["name"] == "jacobi")
    jacobi["options"]["tol"] = 1e-4
    (folder / "suite.json").write_text(json.dumps(suite))
    res = load_results(folder)
    before = load_results(tiny_results)
    assert res.of("jacobi") == []
    assert sorted(p.name for p in res.stale) == sorted(r.path.name for r in before.of("jacobi"))
    assert len(res.records) == len(before.records) - len(before.of("jacobi"))
    # A suite.json the lab cannot expand (hand-edited) takes every run, as before.
    del jacobi["program"]
    (folder / "suite.json").write_text(json.dumps(suite))
    assert len(load_results(folder).records) == len(before.records)


# --------------------------------------------------------------------------
# The benchmarks' documents (the bench suite of conftest.py).

def test_allreduce_latency_and_overlap(bench_results):
    for _, doc in ok_docs(bench_results, "allreduce"):
        algorithms = {e["algorithm"] for e in doc["latency"]}
        lat = rs.allreduce_latency(doc)
        assert len(lat) == len(doc["latency"])
        assert {p.algorithm for p in lat} == algorithms
        assert {p.size_bytes for p in lat} == {8, 16, 32, 64}
        for p, e in zip(lat, doc["latency"], strict=True):
            assert (p.algorithm, p.size_bytes, p.median) == \
                (e["algorithm"], e["bytes"], e["latency_us"]["median"])
            assert p.median > 0
        ovl = rs.allreduce_overlap(doc)
        assert len(ovl) == len(doc["overlap"])
        for p, e in zip(ovl, doc["overlap"], strict=True):
            assert (p.algorithm, p.size_bytes, p.median) == \
                (e["algorithm"], e["bytes"], e["overlap_pct"]["median"])


def test_allreduce_noise(bench_results):
    for _, doc in ok_docs(bench_results, "allreduce"):
        points = rs.allreduce_noise(doc)
        assert len(points) == len(doc["noise"])
        settings = {(p.noise_us, p.noise_hz) for p in points}
        assert (50.0, 200.0) in settings  # --noise 50:200
        quiet = [p for p in points if p.noise_hz == 0]
        assert quiet
        for p in quiet:  # the quiet run over itself
            assert p.slowdown == pytest.approx(1.0)
        assert {p.method for p in points} <= {"pcg2", "pcg-overlap"}
        for p in points:
            assert p.slowdown > 0
            assert p.allreduce


def test_hybrid_mvm_records(bench_results):
    for _, doc in ok_docs(bench_results, "mvm"):
        recs = rs.mvm_records(doc)
        assert [r.nk_local for r in recs] == [2, 4, 8]
        assert rs.mvm_threads(doc) == 2
        for r, raw in zip(recs, doc["records"], strict=True):
            for scheme in rs.MVM_SCHEMES:
                assert r.time_s(scheme) == raw.get(f"{scheme}_s")
            assert r.masteronly_s > 0
            assert r.funneled_s > 0
            assert r.epsilon_funneled == pytest.approx(r.masteronly_s / r.funneled_s)
            assert r.epsilon_multiple == raw.get("epsilon_multiple")
        with pytest.raises(ValueError, match="'single' is not one of"):
            recs[0].time_s("single")


def test_model_fit(bench_results):
    for _, doc in ok_docs(bench_results, "model"):
        fit = rs.model_fit(doc)
        raw = doc["fit"]
        assert rs.model_quantities(doc) is None  # a --fit document
        assert [r.nk_local for r in fit.records] == [2, 4, 8]
        for r, e in zip(fit.records, raw["records"], strict=True):
            assert r.epsilon_measured == e["epsilon_measured"]
            assert r.epsilon_predicted == e["epsilon_predicted"]
            assert r.epsilon_multiple == e["epsilon_multiple"]
        assert fit.comm_over_overlap == raw["parameters"]["comm_over_overlap"]
        assert fit.non_over_overlap == raw["parameters"]["non_over_overlap"]
        assert fit.rms_epsilon_error == raw["rms_epsilon_error"]
        assert fit.rms_epsilon_error >= 0
        assert fit.nk_best == raw["nk_best"]
        assert fit.epsilon_at_best == raw["epsilon_at_best"]


def test_model_quantities(bench_results):
    qs = [rs.model_quantities(doc) for _, doc in ok_docs(bench_results, "epsilon")]
    assert sorted(q.f_comm for q in qs) == [0.0, 0.2, 0.43]
    for (_, doc), q in zip(ok_docs(bench_results, "epsilon"), qs, strict=True):
        raw = doc["quantities"]
        assert rs.model_fit(doc) is None
        assert q.threads == 8
        assert q.reserved == raw["reserved"]
        assert q.f_comp_non == 0.2
        assert q.epsilon == raw["epsilon"]
        assert q.epsilon > 0
        assert q.limited_by == raw["limited_by"]
        assert q.epsilon_max == raw["epsilon_max"]
        assert q.f_comm_best == raw["f_comm_best"]


def test_beff(bench_results):
    for _, doc in ok_docs(bench_results, "beff"):
        points = rs.beff_measurements(doc)
        assert len(points) == len(doc["measurements"])
        assert {p.pattern for p in points} == {"ring", "random", "3d-cyclic"}
        assert {p.mode for p in points} == {"pure", "hybrid"}
        assert {p.size_bytes for p in points} == {8, 16, 32, 64}
        for p, m in zip(points, doc["measurements"], strict=True):
            assert p.bandwidth_mbs == m["bandwidth_accumulated_mbs"]["median"]
            assert p.bandwidth_mbs > 0
        s = rs.beff_summary(doc)
        assert s.node_size == 2
        assert s.pure_mbs == doc["summary"]["pure"]["b_eff_mbs"]
        assert s.hybrid_mbs == doc["summary"]["hybrid"]["b_eff_mbs"]
        assert s.pure_over_hybrid == pytest.approx(s.pure_mbs / s.hybrid_mbs)
        assert s.cyclic3d_pure_over_hybrid == \
            doc["summary"]["b_pure_over_b_hybrid"]["cyclic3d"]


def test_environment_of_bench_documents(bench_results):
    _, allreduce = ok_docs(bench_results, "allreduce")[0]
    assert rs.environment(allreduce).mpi_library == allreduce["environment"]["mpi_library"]
    _, mvm = ok_docs(bench_results, "mvm")[0]
    # hybrid_mvm writes the benchmark kit's environment block too.
    assert rs.environment(mvm).mpi_library == mvm["environment"]["mpi_library"]
    assert rs.environment(mvm).cores == mvm["environment"]["cores"]
    assert rs.environment({"schema": "asyncsolve.bench.hybrid_mvm/1"}) is None


def test_hybrid_mvm_fixture_of_the_repository():
    """tests/data/hybrid_mvm_exact.json: multiple_s null, no ε columns."""
    doc = json.loads((ROOT / "tests" / "data" / "hybrid_mvm_exact.json").read_text())
    recs = rs.mvm_records(doc)
    assert [r.nk_local for r in recs] == [r["nk_local"] for r in doc["records"]]
    assert rs.mvm_threads(doc) == 8
    for r, raw in zip(recs, doc["records"], strict=True):
        assert r.masteronly_s == raw["masteronly_s"]
        assert r.funneled_s == raw["funneled_s"]
        assert r.time_s("multiple") is None
        assert r.epsilon_funneled is None
        assert r.epsilon_multiple is None


# --------------------------------------------------------------------------
# Hand-made documents: missing, null and mistyped fields.

EMPTY_DOCS = [{}, {"schema": "asyncsolve.result/1"}, {"result": None, "phases": None},
              {"result": {"iterations": None}, "history": None, "fit": {}, "quantities": {}},
              {"result": [], "history": {}, "latency": {}, "records": "none", "summary": 3}]


@pytest.mark.parametrize("doc", EMPTY_DOCS)
def test_missing_fields_give_none_or_nothing(doc):
    for which in rs.ITERATION_STATS:
        assert rs.iterations(doc, which) is None
    for fn in (rs.time_s, rs.rate, rs.time_per_iteration, rs.true_residual, rs.environment,
               rs.mvm_threads, rs.model_quantities, rs.model_fit):
        assert fn(doc) is None, fn.__name__
    for fn in (rs.per_rank_iterations, rs.history, rs.allreduce_latency, rs.allreduce_overlap,
               rs.allreduce_noise, rs.mvm_records, rs.beff_measurements):
        assert fn(doc) == [], fn.__name__
    assert rs.phases(doc) == {}
    assert rs.beff_summary(doc) == rs.BeffSummary(None, None, None, None, None)
    for fn, _ in rs.Y_QUANTITIES.values():
        assert fn(doc) is None


def test_environment_of_no_document():
    assert rs.environment(None) is None


def test_mistyped_values_are_left_out():
    doc = {"result": {"time_s": "1.5", "true_residual": math.nan,
                      "iterations": {"min": 1, "mean": True, "max": 0,
                                     "per_rank": [1, "2", None, 3, 2.5, False]}}}
    assert rs.time_s(doc) is None
    assert rs.true_residual(doc) is None  # not finite
    assert rs.iterations(doc, "min") == 1
    assert rs.iterations(doc, "mean") is None  # a bool is no count
    assert rs.iterations(doc, "max") == 0
    assert rs.per_rank_iterations(doc) == [1, 3]


def test_rates_need_a_positive_denominator():
    doc = {"result": {"time_s": 0.0, "iterations": {"min": 0, "mean": 0, "max": 0}}}
    assert rs.time_s(doc) == 0.0
    assert rs.rate(doc) is None
    assert rs.time_per_iteration(doc) is None
    doc = {"result": {"time_s": 2.0, "iterations": {"min": 3, "mean": 4.0, "max": 5}}}
    assert rs.rate(doc) == 2.0
    assert rs.time_per_iteration(doc) == 0.4


def test_unknown_statistics_are_refused():
    with pytest.raises(ValueError, match="'median' is not one of min, mean, max"):
        rs.iterations({}, "median")
    with pytest.raises(ValueError, match="'p99' is not one of min, mean, max"):
        rs.phases({}, "p99")


def test_history_entries():
    doc = {"history": [
        {"rank": 1, "iteration": 3, "time_s": 0.5, "residual": 0.1, "local_residual": 0.2},
        {"thread": 2, "iteration": 4, "time_s": 0.6, "residual": 0.05},  # no rank: the thread
        {"rank": 0, "thread": 1, "iteration": 5, "time_s": 0.7, "residual": 0.01},
        {"iteration": 6, "time_s": 0.8, "residual": 0.001},  # neither: rank 0
        {"rank": 0, "iteration": 7, "time_s": 0.9},  # no residual: left out
        {"rank": 0, "time_s": 1.0, "residual": 0.1},  # no iteration: left out
        {"rank": 0, "iteration": 8, "time_s": None, "residual": 0.1},  # no time: left out
        "not an object"]}
    assert rs.history(doc) == [
        rs.HistoryPoint(rank=1, thread=None, iteration=3, time_s=0.5, residual=0.1,
                        local_residual=0.2),
        rs.HistoryPoint(rank=2, thread=2, iteration=4, time_s=0.6, residual=0.05,
                        local_residual=None),
        rs.HistoryPoint(rank=0, thread=1, iteration=5, time_s=0.7, residual=0.01,
                        local_residual=None),
        rs.HistoryPoint(rank=0, thread=None, iteration=6, time_s=0.8, residual=0.001,
                        local_residual=None),
    ]


def test_phases_without_the_statistic():
    doc = {"phases": {"halo": {"max": 1.0, "mean": 0.5}, "sweep": {"mean": 2.0},
                      "odd": 5, "nulls": {"max": None}}}
    assert rs.phases(doc) == {"halo": 1.0}
    assert rs.phases(doc, "mean") == {"halo": 0.5, "sweep": 2.0}
    assert rs.phases(doc, "min") == {}


def test_bench_entries_without_their_key_fields():
    doc = {"latency": [{"algorithm": "rd", "bytes": 8, "latency_us": {"median": 3.0}},
                       {"algorithm": "rd", "bytes": 16},  # no latency
                       {"bytes": 32, "latency_us": {"median": 1.0}},  # no algorithm
                       {"algorithm": "rd", "bytes": "64", "latency_us": {"median": 1.0}}],
           "overlap": [{"algorithm": "impi", "bytes": 8, "overlap_pct": {"median": 40.0}},
                       {"algorithm": "impi", "bytes": 8, "overlap_pct": None}],
           "noise": [{"method": "pcg2", "allreduce": "mpi", "noise_us": 0, "noise_hz": 0,
                      "slowdown": {"median": 1.0}},
                     {"method": "pcg2", "allreduce": "mpi", "noise_us": 50, "noise_hz": 200}],
           "measurements": [{"pattern": "ring", "mode": "pure", "bytes": 8,
                             "bandwidth_accumulated_mbs": {"median": 10.0}},
                            {"pattern": "ring", "mode": "hybrid", "bytes": 8}],
           "records": [{"nk_local": 4, "funneled_s": 2.0}, {"masteronly_s": 1.0}]}
    assert rs.allreduce_latency(doc) == [rs.AllreducePoint("rd", 8, 3.0)]
    assert rs.allreduce_overlap(doc) == [rs.AllreducePoint("impi", 8, 40.0)]
    assert rs.allreduce_noise(doc) == [rs.NoisePoint("pcg2", "mpi", 0, 0, 1.0)]
    assert rs.beff_measurements(doc) == [rs.BeffPoint("ring", "pure", 8, 10.0)]
    assert rs.mvm_records(doc) == [rs.MvmRecord(4, None, 2.0, None, None, None)]


def test_partial_model_and_beff_documents():
    q = rs.model_quantities({"quantities": {"threads": 4, "epsilon": 1.2, "limited_by": 7}})
    assert q == rs.ModelQuantities(threads=4, reserved=None, f_comp_non=None, f_comm=None,
                                   epsilon=1.2, limited_by=None, epsilon_max=None,
                                   f_comm_best=None)
    fit = rs.model_fit({"fit": {"records": [{"nk_local": 2, "epsilon_measured": 1.1},
                                            {"epsilon_measured": 0.9}],
                                "parameters": {"comm_over_overlap": 4.57}}})
    assert fit.records == [rs.FitRecord(2, 1.1, None, None)]
    assert fit.comm_over_overlap == 4.57
    assert fit.non_over_overlap is None
    assert fit.nk_crossover is None
    s = rs.beff_summary({"parameters": {"node_size": 4},
                         "summary": {"pure": {"b_eff_mbs": 100.0}, "hybrid": None}})
    assert s == rs.BeffSummary(node_size=4, pure_mbs=100.0, hybrid_mbs=None,
                               pure_over_hybrid=None, cyclic3d_pure_over_hybrid=None)


def _group(*docs: dict, status: str = "ok") -> Group:
    recs = [Record(sidecar={"experiment": "e", "status": status, "repeat": i, "run_id": f"e-{i}"},
                   doc=d, path=Path(f"e-{i}.lab.json")) for i, d in enumerate(docs)]
    return Group(regime="shm", ranks=1, config={}, records=recs)


def test_spread_skips_repeats_without_the_value():
    g = _group({"result": {"time_s": 1.0}}, {"result": {}}, {"result": {"time_s": 3.0}})
    s = g.spread(rs.time_s)
    assert (s.median, s.lo, s.hi, s.n) == (2.0, 1.0, 3.0, 2)
    assert g.spread(rs.true_residual) == rs.Spread(None, None, None, 0)


def test_report_tables_on_partial_documents():
    """The tables show '–' where a document lacks a value, instead of failing."""
    solve = report.solve_table([_group({"result": {"time_s": 2.0}})], "partial")
    row = dict(zip(solve.columns, solve.rows[0], strict=True))
    assert row["time (s)"] == "2"
    assert row["iter. mean"] == "–"
    assert row["iter./s"] == "–"
    assert row["true residual"] == "–"
    model = report.model_table([_group({"quantities": {"threads": 4}})], "partial")
    assert model.rows == [["4", "–", "–", "–", "–", "–", "–", "–"]]
    beff = report.beff_table([_group({"schema": "asyncsolve.bench.beff/1"})], "partial")
    assert beff.rows == [["shm", "1", "–", "–", "–", "–", "–"]]
    assert report.mvm_table([_group({"records": [{"nk_local": "x"}]})], "partial") is None
    assert report.allreduce_table([_group({"latency": None})], "partial") is None


@pytest.mark.parametrize("kind", ["histogram", "convergence", "phases", "noise", "time"])
def test_plots_of_documents_without_their_data_are_skipped(kind):
    g = _group({"schema": "asyncsolve.result/1"}, {"result": {"iterations": {"per_rank": [3]}}})
    assert plots.make({"kind": kind}, g.records) is None


# An empty legend warns; the figure is still drawn.
@pytest.mark.filterwarnings("ignore:No artists with labels found")
@pytest.mark.parametrize(("kind", "doc"), [
    ("allreduce", {"latency": [{"algorithm": "rd", "bytes": 8}]}),
    ("model", {"quantities": {"threads": 4, "f_comm": 0.2}}),
    ("model", {"fit": {"records": [{"nk_local": 2}, {"nk_local": 4, "epsilon_measured": 1.1}]}}),
    ("mvm", {"records": [{"nk_local": 2, "masteronly_s": 1e-3}, {"funneled_s": 1e-3}]}),
    ("beff", {"measurements": [{"pattern": "ring", "mode": "pure", "bytes": 8}]}),
])
def test_plots_of_partial_bench_documents_do_not_fail(kind, doc):
    import matplotlib.pyplot as plt
    fig = plots.make({"kind": kind}, _group(doc).records)
    assert fig is not None
    plt.close(fig)
