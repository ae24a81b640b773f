"""Loading a results folder (JSON only) and aggregating runs over repeats.

Loading, aggregation and plotting are kept apart: this module knows the
documents' fields, plots.py and report.py only what it returns.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from . import RUN_SCHEMA, SUITE_SCHEMA, LabError, check_schema


@dataclass
class Record:
    """One run: the lab's sidecar and, where it has one, the program's document."""

    sidecar: dict
    doc: dict | None
    path: Path

    @property
    def experiment(self) -> str:
        return self.sidecar["experiment"]

    @property
    def regime(self) -> str:
        return self.sidecar.get("regime", "shm")

    @property
    def ranks(self) -> int:
        return int(self.sidecar.get("ranks", 1))

    @property
    def repeat(self) -> int:
        return int(self.sidecar.get("repeat", 0))

    @property
    def config(self) -> dict:
        return self.sidecar.get("config", {})

    @property
    def ok(self) -> bool:
        return self.sidecar.get("status") == "ok" and self.doc is not None

    @property
    def schema(self) -> str | None:
        return self.doc.get("schema", "").rpartition("/")[0] if self.doc else None

    def key(self) -> tuple:
        """What identifies a configuration (every repeat of it shares the key)."""
        return (self.regime, self.ranks, tuple(self.config.items()))


@dataclass
class Results:
    root: Path
    suite: dict | None
    records: list[Record]

    def experiments(self) -> list[dict]:
        """The experiments in suite order (or as found), each a dict with name, title, plots."""
        listed = []
        if self.suite:
            names = {r.experiment for r in self.records}
            listed = [e for e in self.suite.get("experiments", []) if e["name"] in names]
        seen: dict[str, dict] = {e["name"]: e for e in listed}
        for r in self.records:  # runs of experiments the suite no longer lists come last
            seen.setdefault(r.experiment, {"name": r.experiment, "title": "", "plots": [],
                                           "program": r.sidecar.get("program", "")})
        return list(seen.values())

    def of(self, experiment: str) -> list[Record]:
        return [r for r in self.records if r.experiment == experiment]


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise LabError(f"{path}: cannot read: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise LabError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None
    if not isinstance(data, dict):
        raise LabError(f"{path}: not a JSON object")
    return data


def load_results(root: str | Path) -> Results:
    """Every run under `root` (ROOT/runs/*.lab.json, or ROOT/*.lab.json).
    Documents of a schema this lab does not read are refused (SchemaError)."""
    root = Path(root)
    if not root.is_dir():
        raise LabError(f"{root}: no such results folder")
    runs = root / "runs" if (root / "runs").is_dir() else root
    suite = None
    if (root / "suite.json").is_file():
        suite = _read_json(root / "suite.json")
        check_schema(suite.get("schema"), str(root / "suite.json"),
                     {SUITE_SCHEMA.split("/")[0]: 1})
    records = []
    for side_path in sorted(runs.glob("*.lab.json")):
        side = _read_json(side_path)
        check_schema(side.get("schema"), str(side_path), {RUN_SCHEMA.split("/")[0]: 1})
        doc = None
        if side.get("document"):
            doc_path = runs / side["document"]
            if doc_path.is_file():
                doc = _read_json(doc_path)
                check_schema(doc.get("schema"), str(doc_path))
        records.append(Record(sidecar=side, doc=doc, path=side_path))
    if not records:
        raise LabError(f"{root}: no runs (no *.lab.json sidecars); run a suite into it first")
    return Results(root=root, suite=suite, records=records)


# --------------------------------------------------------------------------
# Aggregation over repeats.

@dataclass
class Spread:
    median: float | None
    lo: float | None
    hi: float | None
    n: int = 0

    @staticmethod
    def of(values) -> Spread:
        vals = [float(v) for v in values if v is not None]
        if not vals:
            return Spread(None, None, None, 0)
        return Spread(statistics.median(vals), min(vals), max(vals), len(vals))


@dataclass
class Group:
    """Every repeat of one configuration."""

    regime: str
    ranks: int
    config: dict
    records: list[Record] = field(default_factory=list)

    @property
    def ok(self) -> list[Record]:
        return [r for r in self.records if r.ok]

    def label(self, keys: list[str]) -> str:
        return ", ".join(f"{k}={self.config[k]}" for k in keys if k in self.config) or "—"

    def spread(self, fn) -> Spread:
        out = []
        for r in self.ok:
            try:
                out.append(fn(r.doc))
            except (KeyError, TypeError, ZeroDivisionError):
                continue
        return Spread.of(out)

    def first_ok(self) -> Record | None:
        ok = sorted(self.ok, key=lambda r: r.repeat)
        return ok[0] if ok else None


def groups(records: list[Record]) -> list[Group]:
    """Configurations in first-seen order, each with its repeats."""
    out: dict[tuple, Group] = {}
    for r in sorted(records, key=lambda r: (r.sidecar.get("order", 0), r.repeat, str(r.path))):
        g = out.get(r.key())
        if g is None:
            g = out[r.key()] = Group(regime=r.regime, ranks=r.ranks, config=dict(r.config))
        g.records.append(r)
    return list(out.values())


def varying_keys(gs: list[Group]) -> list[str]:
    """Matrix keys whose values differ between configurations."""
    keys: list[str] = []
    for g in gs:
        for k in g.config:
            if k not in keys:
                keys.append(k)
    return [k for k in keys if len({repr(g.config.get(k)) for g in gs}) > 1]


# Quantities of an asyncsolve.result/1 document.

def time_s(doc: dict) -> float:
    return doc["result"]["time_s"]


def iterations_mean(doc: dict) -> float:
    return doc["result"]["iterations"]["mean"]


def rate(doc: dict) -> float:
    """Iterations per second of the average rank."""
    return doc["result"]["iterations"]["mean"] / doc["result"]["time_s"]


def time_per_iteration(doc: dict) -> float:
    return doc["result"]["time_s"] / doc["result"]["iterations"]["max"]


def true_residual(doc: dict) -> float:
    return doc["result"]["true_residual"]


Y_QUANTITIES = {
    "time": (time_s, "time to solution (s)"),
    "rate": (rate, "iteration rate (iterations/s, mean rank)"),
    "iterations": (iterations_mean, "iterations (mean over ranks)"),
    "time_per_iteration": (time_per_iteration, "time per iteration (s)"),
    "true_residual": (true_residual, "true residual ‖b−Au‖/‖b‖"),
}


def phase_medians(g: Group, stat: str = "max") -> dict[str, float]:
    """Median over repeats of each phase's `stat` (max over ranks by default), seconds."""
    names: list[str] = []
    for r in g.ok:
        for k in r.doc.get("phases", {}):
            if k not in names:
                names.append(k)
    out = {}
    for k in names:
        s = g.spread(lambda d, k=k: d["phases"][k][stat])
        if s.median is not None:
            out[k] = s.median
    return out


# Quantities of an asyncsolve.bench.stencil2d/1 document: `asyncsolve bench
# stencil2d` (transports mpi, rma, shmem) and asyncsolve-stencil2d-caf
# (Coarray Fortran, "model": "caf"). A record's model is its "model" field,
# else its transport: the programming model the paper compares.

#: The models of paper 004's Stencil2D comparison, in the order shown.
STENCIL2D_MODELS = {"caf": "Coarray Fortran", "mpi": "MPI two-sided", "rma": "MPI-3 RMA",
                    "shmem": "OpenSHMEM"}


@dataclass(frozen=True)
class Stencil2dPoint:
    """One variant at one size in one document: the medians over its repeats (µs)."""

    model: str
    variant: str
    ranks: int
    radius: int
    local: int
    iteration_us: float | None
    exchange_us: float | None
    filter_us: float | None


def stencil2d_model(result: dict) -> str:
    """The programming model of one record of a stencil2d document."""
    return str(result.get("model") or result.get("transport") or "?")


def _median_of(series: object) -> float | None:
    if isinstance(series, dict) and isinstance(series.get("median"), (int, float)):
        return float(series["median"])
    return None


def stencil2d_points(doc: dict) -> list[Stencil2dPoint]:
    """Every record of a stencil2d document (none for another schema)."""
    if not str(doc.get("schema", "")).startswith("asyncsolve.bench.stencil2d/"):
        return []
    ranks = doc.get("environment", {}).get("ranks")
    out = []
    for r in doc.get("results", []):
        if not isinstance(r, dict):
            continue
        out.append(Stencil2dPoint(
            model=stencil2d_model(r), variant=str(r.get("variant", "?")),
            ranks=int(r.get("ranks", ranks) or 0), radius=int(r.get("radius", 0) or 0),
            local=int(r.get("local", 0) or 0), iteration_us=_median_of(r.get("iteration_us")),
            exchange_us=_median_of(r.get("exchange_us")),
            filter_us=_median_of(r.get("filter_us"))))
    return out


def stencil2d_spreads(records: list[Record], quantity: str = "iteration_us"
                      ) -> dict[tuple, Spread]:
    """(regime, model, variant, ranks, radius, local) -> the spread over the lab's
    repeats of the documents' medians of `quantity`, in the order first seen
    (models in STENCIL2D_MODELS order)."""
    values: dict[tuple, list] = {}
    for rec in records:
        if not rec.ok:
            continue
        for p in stencil2d_points(rec.doc):
            key = (rec.regime, p.model, p.variant, p.ranks, p.radius, p.local)
            values.setdefault(key, []).append(getattr(p, quantity))
    order = list(STENCIL2D_MODELS)
    keys = sorted(values, key=lambda k: (order.index(k[1]) if k[1] in order else len(order),
                                         list(values).index(k)))
    return {k: Spread.of(values[k]) for k in keys}
