"""Loading a results folder (JSON only), reading its documents, and aggregating
runs over repeats.

Loading, aggregation and plotting are kept apart. This module is the only one
that knows the documents' fields: the lab's sidecars and suite summary (through
Record, Results and Experiment), the binary's result document
(asyncsolve.result/1) and the benchmarks' documents (asyncsolve.bench.*/1,
asyncsolve.model.hybrid/1), through the extractor functions below. plots.py
and report.py use only what these return.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from . import RUN_SCHEMA, SUITE_SCHEMA, LabError, check_document, check_schema


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
    def run_id(self) -> str:
        return self.sidecar.get("run_id", self.path.name.removesuffix(".lab.json"))

    @property
    def program(self) -> str:
        return self.sidecar.get("program", "")

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
    def order(self) -> int:
        return int(self.sidecar.get("order", 0))

    @property
    def config(self) -> dict:
        return self.sidecar.get("config", {})

    @property
    def status(self) -> str | None:
        """ok, failed or timeout (None before the run finished); "missing" when
        the sidecar says ok but the document is gone."""
        status = self.sidecar.get("status")
        return "missing" if status == "ok" and self.doc is None else status

    @property
    def reason(self) -> str:
        """Why the run failed ("" when it did not)."""
        if self.status == "missing":
            return (f"its document {self.sidecar.get('document') or '(none named)'} is missing; "
                    "asyncsolve-lab run redoes the run")
        return self.sidecar.get("reason") or ""

    @property
    def stderr(self) -> str:
        return self.sidecar.get("stderr") or ""

    @property
    def command(self) -> list[str]:
        """The launched command line (empty when the run never started)."""
        return list(self.sidecar.get("command") or [])

    @property
    def env(self) -> dict[str, str]:
        """The environment variables the lab set for the run."""
        return dict(self.sidecar.get("env") or {})

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.doc is not None

    @property
    def started(self) -> str | None:
        """When the run started (ISO 8601): the sidecar's time, else the document's."""
        started = self.sidecar.get("started")
        if isinstance(started, str) and started:
            return started
        return provenance(self.doc).started if self.doc else None

    @property
    def cores(self) -> int | None:
        """The cores of the machine the lab ran the run on (the sidecar's count)."""
        return _int(self.sidecar.get("cores"))

    @property
    def schema(self) -> str | None:
        """The document's schema name without its version (None without a document)."""
        return self.doc.get("schema", "").rpartition("/")[0] if self.doc else None

    def key(self) -> tuple:
        """What identifies a configuration (every repeat of it shares the key)."""
        return (self.regime, self.ranks, tuple(self.config.items()))


@dataclass
class Experiment:
    """An experiment of the results folder: from the suite, or from its runs'
    sidecars when the suite no longer lists it. `plots` are the suite's plot
    specs (dicts with kind, and x, y, series, title where given)."""

    name: str
    title: str = ""
    notes: str = ""
    program: str = ""
    plots: list[dict] = field(default_factory=list)

    @staticmethod
    def from_suite(entry: dict) -> Experiment:
        return Experiment(name=entry["name"], title=entry.get("title") or "",
                          notes=entry.get("notes") or "", program=entry.get("program") or "",
                          plots=list(entry.get("plots") or []))


@dataclass
class Results:
    root: Path
    suite: dict | None
    records: list[Record]
    #: sidecars left out: runs of an experiment the suite lists, made with options it no
    #: longer gives (the suite changed, then ran into the same folder)
    stale: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The suite's name (the folder's name when it has no suite.json)."""
        return (self.suite or {}).get("name") or self.root.name

    @property
    def description(self) -> str:
        return (self.suite or {}).get("description") or ""

    def experiments(self) -> list[Experiment]:
        """The experiments in suite order (or as found)."""
        listed = []
        if self.suite:
            names = {r.experiment for r in self.records}
            listed = [Experiment.from_suite(e) for e in self.suite.get("experiments", [])
                      if e["name"] in names]
        seen: dict[str, Experiment] = {e.name: e for e in listed}
        for r in self.records:  # runs of experiments the suite no longer lists come last
            seen.setdefault(r.experiment, Experiment(name=r.experiment, program=r.program))
        return list(seen.values())

    def of(self, experiment: str) -> list[Record]:
        return [r for r in self.records if r.experiment == experiment]


#: The largest document or sidecar the lab reads (a long history is a few MiB).
MAX_DOCUMENT_BYTES = 256 << 20


def read_json(path: Path) -> dict:
    """The JSON object `path` holds; LabError naming the file where it holds none:
    not readable, not UTF-8, not JSON, or JSON that Python's parser refuses (nested
    deeper than its recursion limit, an integer of more than 4300 digits)."""
    try:
        data = json.loads(read_limited(path, MAX_DOCUMENT_BYTES).decode("utf-8"))
    except UnicodeDecodeError as err:
        raise LabError(f"{path}: not UTF-8 text (byte {err.start}): not a JSON document") from None
    except json.JSONDecodeError as err:
        raise LabError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None
    except RecursionError:
        raise LabError(f"{path}: JSON nested too deeply") from None
    except ValueError as err:  # int("1" + 5000 zeros): "Exceeds the limit (4300 digits) ..."
        digits = re.search(r"limit \((\d+) digits\).*has (\d+) digits", str(err))
        why = (f"an integer of {digits[2]} digits (at most {digits[1]} are read)" if digits
               else str(err).partition(";")[0])
        raise LabError(f"{path}: not JSON the lab reads: {why}") from None
    if not isinstance(data, dict):
        raise LabError(f"{path}: not a JSON object")
    return data


def read_limited(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, a regular file of at most `max_bytes` (a device,
    FIFO or directory is refused without reading it); LabError otherwise."""
    import os
    import stat
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise LabError(f"{path}: cannot read: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise LabError(f"{path}: is {kind}, expected a file")
        if st.st_size > max_bytes:
            raise LabError(f"{path}: is {st.st_size} bytes, more than the {max_bytes} read")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise LabError(f"{path}: more than the {max_bytes} bytes read")
        return b"".join(chunks)
    except OSError as err:
        raise LabError(f"{path}: cannot read: {err.strerror}") from None
    finally:
        os.close(fd)


#: The sidecar's fields the report reads: their types, whether every sidecar
#: has it (asyncsolve-lab run writes them all), and what is expected.
_SIDECAR_FIELDS: dict[str, tuple[tuple[type, ...], bool, str]] = {
    "experiment": ((str,), True, "an experiment's name"),
    "status": ((str,), True, "ok, failed or timeout"),
    "run_id": ((str,), False, "a run's name"),
    "program": ((str,), False, "a program's name"),
    "regime": ((str,), False, "a regime's name"),
    "ranks": ((int,), False, "a number of ranks, at least 1"),
    "repeat": ((int,), False, "a repeat number, 0 or more"),
    "order": ((int,), False, "the run's place in the suite, 0 or more"),
    "config": ((dict,), False, "an object of the run's configuration"),
    "options": ((dict,), False, "an object of the options the program was given"),
    "document": ((str, type(None)), False, "a document's file name or null"),
    "wall_s": ((int, float, type(None)), False, "the run's seconds, a finite number >= 0"),
}
_STATUSES = ("ok", "failed", "timeout")


def _check_sidecar(side: dict, path: Path) -> None:
    """LabError naming `path` and the field if a sidecar lacks a field every
    sidecar has, or holds one of the wrong type or range."""
    for key, (types, required, what) in _SIDECAR_FIELDS.items():
        if key not in side:
            if required:
                raise LabError(f"{path}: no '{key}': expected {what} (asyncsolve-lab run "
                               "writes it in every run's sidecar)")
            continue
        value = side[key]
        wrong = (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)
                 or (key == "status" and value not in _STATUSES)
                 or (key == "ranks" and isinstance(value, int) and value < 1)
                 or (key in ("repeat", "order") and isinstance(value, int) and value < 0)
                 or (key == "wall_s" and isinstance(value, int | float)
                     and not (math.isfinite(value) and value >= 0)))
        if wrong:
            raise LabError(f"{path}: {key} {json.dumps(value)[:80]}: expected {what}")


def _suite_runs(suite: dict) -> tuple[set[str], set[str]] | None:
    """The run IDs the suite of suite.json makes and the names of its experiments, or
    None where suite.json cannot be expanded (hand-edited, or written by an older lab):
    then every run is taken."""
    from .suite import Experiment as SuiteExperiment
    from .suite import expand
    try:
        exps = [SuiteExperiment(**{k: v for k, v in e.items() if k != "plots"})
                for e in suite["experiments"]]
        ids = {run.run_id for run in expand(exps)}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return ids, {e.name for e in exps}


def load_results(root: str | Path) -> Results:
    """Every run under `root` (ROOT/runs/*.lab.json, or ROOT/*.lab.json).
    Documents of a schema this lab does not read are refused (SchemaError). With a
    suite.json, a run of an experiment it lists whose ID the suite no longer makes
    (its options, ranks, regime or repeats changed since) is left out and named in
    `stale`: it is no repeat of any configuration the suite runs now."""
    root = Path(root)
    if not root.is_dir():
        raise LabError(f"{root}: no such results folder")
    runs = root / "runs" if (root / "runs").is_dir() else root
    suite = None
    if (root / "suite.json").is_file():
        suite = read_json(root / "suite.json")
        check_schema(suite.get("schema"), str(root / "suite.json"),
                     {SUITE_SCHEMA.split("/")[0]: 1})
    made = _suite_runs(suite) if suite else None
    records = []
    stale = []
    for side_path in sorted(runs.glob("*.lab.json")):
        side = read_json(side_path)
        check_schema(side.get("schema"), str(side_path), {RUN_SCHEMA.split("/")[0]: 1})
        _check_sidecar(side, side_path)
        if made is not None and side["experiment"] in made[1] and \
                side.get("run_id", side_path.name.removesuffix(".lab.json")) not in made[0]:
            stale.append(side_path)
            continue
        doc = None
        if side.get("document"):
            doc_path = runs / side["document"]
            if doc_path.is_file():
                doc = read_json(doc_path)
                check_document(doc, str(doc_path), sidecar=side)
        records.append(Record(sidecar=side, doc=doc, path=side_path))
    if not records:
        raise LabError(f"{root}: no runs (no *.lab.json sidecars); run a suite into it first"
                       + (f" ({len(stale)} left out, made with options the suite in "
                          "suite.json no longer gives)" if stale else ""))
    return Results(root=root, suite=suite, records=records, stale=stale)


# --------------------------------------------------------------------------
# Extractors: what the documents say, one function per quantity. Each takes
# a document and never raises on its content: a field that is missing, null
# or not of its type gives None (a value), an empty list (a series) or
# leaves the entry out (an entry of a series without its key fields), so a
# partial or older document drops out of a table cell or a plot point
# instead of breaking the report.

def _at(doc: object, *path: str) -> object:
    """doc[path[0]][path[1]]..., or None where a step is not an object or lacks the key."""
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _num(value: object) -> float | None:
    """A finite JSON number (int or float, not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _int(value: object) -> int | None:
    """A JSON integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _objects(value: object) -> list[dict]:
    """The objects of a JSON array (an empty list when it is not an array)."""
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _median(stats: object) -> float | None:
    """The median of a {repeats, min, median, max} object."""
    return _num(_at(stats, "median"))


# asyncsolve.result/1 (asyncsolve solve): docs/design.md's result document.

#: The statistics over ranks of the result's iteration counts.
ITERATION_STATS = ("min", "mean", "max")
#: The statistics over ranks of each phase's time.
PHASE_STATS = ("min", "mean", "max")


def iterations(doc: dict, which: str = "mean") -> float | None:
    """Iterations completed, `which` of min, mean, max over ranks."""
    if which not in ITERATION_STATS:
        raise ValueError(f"iterations: {which!r} is not one of {', '.join(ITERATION_STATS)}")
    return _num(_at(doc, "result", "iterations", which))


def per_rank_iterations(doc: dict) -> list[int]:
    """Iterations completed by each rank, in rank order (empty when not recorded)."""
    per_rank = _at(doc, "result", "iterations", "per_rank")
    if not isinstance(per_rank, list):
        return []
    return [v for v in (_int(x) for x in per_rank) if v is not None]


def time_s(doc: dict) -> float | None:
    """Time to solution, seconds: the maximum over ranks."""
    return _num(_at(doc, "result", "time_s"))


def rate(doc: dict) -> float | None:
    """Iterations per second of the average rank (None without a positive time)."""
    its, t = iterations(doc, "mean"), time_s(doc)
    return its / t if its is not None and t else None


def time_per_iteration(doc: dict) -> float | None:
    """Time to solution over the largest rank's iterations, seconds (None without iterations)."""
    t, its = time_s(doc), iterations(doc, "max")
    return t / its if t is not None and its else None


def true_residual(doc: dict) -> float | None:
    """‖b − Au‖₂ / ‖b‖₂ measured after termination."""
    return _num(_at(doc, "result", "true_residual"))


def phases(doc: dict, stat: str = "max") -> dict[str, float]:
    """Each phase's time in seconds, `stat` of min, mean, max over ranks, in the
    document's order; phases without that number are left out."""
    if stat not in PHASE_STATS:
        raise ValueError(f"phases: {stat!r} is not one of {', '.join(PHASE_STATS)}")
    table = _at(doc, "phases")
    if not isinstance(table, dict):
        return {}
    out = {}
    for name, entry in table.items():
        v = _num(_at(entry, stat))
        if v is not None:
            out[name] = v
    return out


@dataclass(frozen=True)
class HistoryPoint:
    """One residual check of the convergence history."""

    rank: int  #: the rank that recorded it (the thread where only that is given)
    thread: int | None  #: the OpenMP thread (--transport omp), else None
    iteration: int  #: that rank's (thread's) own iteration count
    time_s: float  #: since the solve started
    residual: float  #: the global residual estimate
    local_residual: float | None  #: the rank's own part, where recorded


def history(doc: dict) -> list[HistoryPoint]:
    """The convergence history in document order; checks without an iteration,
    a time and a residual are left out."""
    out = []
    for h in _objects(_at(doc, "history")):
        it, t, res = _int(h.get("iteration")), _num(h.get("time_s")), _num(h.get("residual"))
        if it is None or t is None or res is None:
            continue
        thread = _int(h.get("thread"))
        rank = _int(h.get("rank"))
        out.append(HistoryPoint(rank=rank if rank is not None else thread or 0, thread=thread,
                                iteration=it, time_s=t, residual=res,
                                local_residual=_num(h.get("local_residual"))))
    return out


@dataclass(frozen=True)
class Environment:
    """Where a document was produced (any field may be unknown)."""

    mpi_library: str | None
    hostname: str | None
    cores: int | None


def environment(doc: dict | None) -> Environment | None:
    """The document's environment (asyncsolve.result/1, bench allreduce), or None."""
    env = _at(doc, "environment")
    if not isinstance(env, dict) or not env:
        return None
    return Environment(mpi_library=_str(env.get("mpi_library")),
                       hostname=_str(env.get("hostname")), cores=_int(env.get("cores")))


@dataclass(frozen=True)
class Provenance:
    """What a document says of its making (any field may be unknown): the
    header every asyncsolve document carries (git commit, start time) and
    the machine its environment names."""

    git: str | None
    started: str | None
    hostname: str | None
    cpu_model: str | None
    mpi_library: str | None


def provenance(doc: dict | None) -> Provenance:
    """The document's commit (`git`), start time, host name, CPU model (where
    the document records one: `environment.cpu_model` or `host.cpu_model`) and
    MPI library."""
    env = _at(doc, "environment")
    cpu = _str(_at(doc, "environment", "cpu_model")) or _str(_at(doc, "host", "cpu_model"))
    return Provenance(git=_str(_at(doc, "git")) or None, started=_str(_at(doc, "started")),
                      hostname=_str(_at(env, "hostname")) or _str(_at(doc, "hostname")),
                      cpu_model=cpu or None, mpi_library=_str(_at(env, "mpi_library")))


# asyncsolve.bench.allreduce/1 (asyncsolve bench allreduce).

@dataclass(frozen=True)
class AllreducePoint:
    """One algorithm at one message size: the median over the benchmark's repeats."""

    algorithm: str
    size_bytes: int
    median: float


def _allreduce_points(doc: dict, section: str, quantity: str) -> list[AllreducePoint]:
    out = []
    for e in _objects(_at(doc, section)):
        algo, size, med = _str(e.get("algorithm")), _int(e.get("bytes")), _median(e.get(quantity))
        if algo is not None and size is not None and med is not None:
            out.append(AllreducePoint(algorithm=algo, size_bytes=size, median=med))
    return out


def allreduce_latency(doc: dict) -> list[AllreducePoint]:
    """Latency (start + wait) per algorithm and size, microseconds."""
    return _allreduce_points(doc, "latency", "latency_us")


def allreduce_overlap(doc: dict) -> list[AllreducePoint]:
    """Share of the reduction hidden behind computation (IMB-NBC), percent."""
    return _allreduce_points(doc, "overlap", "overlap_pct")


@dataclass(frozen=True)
class NoisePoint:
    """A Krylov method's slowdown under one injected-noise setting."""

    method: str
    allreduce: str
    noise_us: float  #: length of one interruption
    noise_hz: float  #: interruptions per second and rank (0: the quiet run)
    slowdown: float  #: time / quiet time, median over repeats


def allreduce_noise(doc: dict) -> list[NoisePoint]:
    """The noise mode's measurements."""
    out = []
    for e in _objects(_at(doc, "noise")):
        method, algo = _str(e.get("method")), _str(e.get("allreduce"))
        us, hz, slow = _num(e.get("noise_us")), _num(e.get("noise_hz")), _median(e.get("slowdown"))
        if None not in (method, algo, us, hz, slow):
            out.append(NoisePoint(method=method, allreduce=algo, noise_us=us, noise_hz=hz,
                                  slowdown=slow))
    return out


# asyncsolve.bench.hybrid_mvm/1 (bench/hybrid_mvm).

#: The hybrid schemes of paper 002, as the document names them.
MVM_SCHEMES = ("masteronly", "funneled", "multiple")


@dataclass(frozen=True)
class MvmRecord:
    """One n_k^loc of the sweep: time per MVM of each scheme (s, median) and the ratios."""

    nk_local: int
    masteronly_s: float | None
    funneled_s: float | None
    multiple_s: float | None
    epsilon_funneled: float | None
    epsilon_multiple: float | None

    def time_s(self, scheme: str) -> float | None:
        """The time per MVM of one of MVM_SCHEMES (None where not measured)."""
        if scheme not in MVM_SCHEMES:
            raise ValueError(f"MvmRecord.time_s: {scheme!r} is not one of "
                             f"{', '.join(MVM_SCHEMES)}")
        return getattr(self, f"{scheme}_s")


def mvm_records(doc: dict) -> list[MvmRecord]:
    """The sweep over n_k^loc in document order (records without n_k^loc left out)."""
    out = []
    for r in _objects(_at(doc, "records")):
        nk = _int(r.get("nk_local"))
        if nk is None:
            continue
        out.append(MvmRecord(nk_local=nk, masteronly_s=_num(r.get("masteronly_s")),
                             funneled_s=_num(r.get("funneled_s")),
                             multiple_s=_num(r.get("multiple_s")),
                             epsilon_funneled=_num(r.get("epsilon_funneled")),
                             epsilon_multiple=_num(r.get("epsilon_multiple"))))
    return out


def mvm_threads(doc: dict) -> int | None:
    """OpenMP threads per rank of the hybrid MVM benchmark."""
    return _int(_at(doc, "threads"))


# asyncsolve.bench.beff/1 (bench/beff).

@dataclass(frozen=True)
class BeffPoint:
    """One pattern, mode and message size: accumulated bandwidth, MB/s (median)."""

    pattern: str
    mode: str  #: "pure" (MPI everywhere) or "hybrid" (masteronly)
    size_bytes: int
    bandwidth_mbs: float


def beff_measurements(doc: dict) -> list[BeffPoint]:
    out = []
    for m in _objects(_at(doc, "measurements")):
        pat, mode, size = _str(m.get("pattern")), _str(m.get("mode")), _int(m.get("bytes"))
        bw = _median(m.get("bandwidth_accumulated_mbs"))
        if None not in (pat, mode, size, bw):
            out.append(BeffPoint(pattern=pat, mode=mode, size_bytes=size, bandwidth_mbs=bw))
    return out


@dataclass(frozen=True)
class BeffSummary:
    """b_eff of both modes (MB/s) and their ratios; any of them may be unknown."""

    node_size: int | None
    pure_mbs: float | None
    hybrid_mbs: float | None
    pure_over_hybrid: float | None  #: of b_eff
    cyclic3d_pure_over_hybrid: float | None


def beff_summary(doc: dict) -> BeffSummary:
    s = _at(doc, "summary")
    return BeffSummary(node_size=_int(_at(doc, "parameters", "node_size")),
                       pure_mbs=_num(_at(s, "pure", "b_eff_mbs")),
                       hybrid_mbs=_num(_at(s, "hybrid", "b_eff_mbs")),
                       pure_over_hybrid=_num(_at(s, "b_pure_over_b_hybrid", "b_eff")),
                       cyclic3d_pure_over_hybrid=_num(_at(s, "b_pure_over_b_hybrid", "cyclic3d")))


# asyncsolve.model.hybrid/1 (asyncsolve model hybrid): eq. 3's quantities, or
# with --fit the fit of eq. 14 to a hybrid_mvm document.

@dataclass(frozen=True)
class ModelQuantities:
    threads: int | None  #: n
    reserved: int | None  #: m, threads reserved for communication
    f_comp_non: float | None
    f_comm: float | None
    epsilon: float | None  #: T_masteronly / T_funneled
    limited_by: str | None
    epsilon_max: float | None
    f_comm_best: float | None


def model_quantities(doc: dict) -> ModelQuantities | None:
    """The quantities of `model hybrid` without --fit (None in a --fit document)."""
    q = _at(doc, "quantities")
    if not isinstance(q, dict) or not q:
        return None
    return ModelQuantities(threads=_int(q.get("threads")), reserved=_int(q.get("reserved")),
                           f_comp_non=_num(q.get("f_comp_non")), f_comm=_num(q.get("f_comm")),
                           epsilon=_num(q.get("epsilon")), limited_by=_str(q.get("limited_by")),
                           epsilon_max=_num(q.get("epsilon_max")),
                           f_comm_best=_num(q.get("f_comm_best")))


@dataclass(frozen=True)
class FitRecord:
    """One n_k^loc of the fitted sweep: ε measured and predicted by eq. 14."""

    nk_local: int
    epsilon_measured: float | None
    epsilon_predicted: float | None
    epsilon_multiple: float | None  #: T_masteronly / T_multiple where measured


@dataclass(frozen=True)
class ModelFit:
    records: list[FitRecord]
    comm_over_overlap: float | None  #: x_comm / x_MVM,overlap
    non_over_overlap: float | None  #: x_MVM,non / x_MVM,overlap
    nk_crossover: float | None  #: n_k^loc where ε = 1
    nk_best: float | None
    epsilon_at_best: float | None
    rms_epsilon_error: float | None


def model_fit(doc: dict) -> ModelFit | None:
    """The fit of `model hybrid --fit` (None in a document without one)."""
    fit = _at(doc, "fit")
    if not isinstance(fit, dict) or not fit:
        return None
    records = [FitRecord(nk_local=nk, epsilon_measured=_num(r.get("epsilon_measured")),
                         epsilon_predicted=_num(r.get("epsilon_predicted")),
                         epsilon_multiple=_num(r.get("epsilon_multiple")))
               for r in _objects(fit.get("records"))
               if (nk := _int(r.get("nk_local"))) is not None]
    return ModelFit(records=records,
                    comm_over_overlap=_num(_at(fit, "parameters", "comm_over_overlap")),
                    non_over_overlap=_num(_at(fit, "parameters", "non_over_overlap")),
                    nk_crossover=_num(fit.get("nk_crossover")), nk_best=_num(fit.get("nk_best")),
                    epsilon_at_best=_num(fit.get("epsilon_at_best")),
                    rms_epsilon_error=_num(fit.get("rms_epsilon_error")))


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

    def spread(self, fn: Callable[[dict], float | None]) -> Spread:
        """An extractor's value over the successful repeats (None values left out)."""
        return Spread.of(fn(r.doc) for r in self.ok)

    def first_ok(self) -> Record | None:
        ok = sorted(self.ok, key=lambda r: r.repeat)
        return ok[0] if ok else None


def groups(records: list[Record]) -> list[Group]:
    """Configurations in first-seen order, each with its repeats."""
    out: dict[tuple, Group] = {}
    for r in sorted(records, key=lambda r: (r.order, r.repeat, str(r.path))):
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


#: The y quantities of line and bar plots: extractor and axis label.
Y_QUANTITIES: dict[str, tuple[Callable[[dict], float | None], str]] = {
    "time": (time_s, "time to solution (s)"),
    "rate": (rate, "iteration rate (iterations/s, mean rank)"),
    "iterations": (partial(iterations, which="mean"), "iterations (mean over ranks)"),
    "time_per_iteration": (time_per_iteration, "time per iteration (s)"),
    "true_residual": (true_residual, "true residual ‖b−Au‖/‖b‖"),
}


def phase_medians(g: Group, stat: str = "max") -> dict[str, float]:
    """Median over repeats of each phase's `stat` (max over ranks by default), seconds."""
    names: list[str] = []
    for r in g.ok:
        names += [k for k in phases(r.doc, stat) if k not in names]
    out = {}
    for k in names:
        s = g.spread(lambda d, k=k: phases(d, stat).get(k))
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


# --------------------------------------------------------------------------
# Metrics of claims (claims.py): one number per document, named in a suite's
# [[claim]] tables. A metric of a document with several records (a
# benchmark's algorithms and sizes, Stencil2D's variants) picks its record
# by the claim's selector: `fields` are the record keys it may name (as the
# suite writes them), and exactly one record must match.

@dataclass(frozen=True)
class Metric:
    """A quantity a claim compares: `value(doc, where)` is the number, or
    None where the document lacks it; AmbiguousRecord when `where` selects
    more than one record of the document."""

    name: str
    label: str  #: what it is, with its unit, for the Findings table
    fields: tuple[str, ...] = ()  #: record keys a selector may name
    extract: Callable[[dict, dict], float | None] | None = None
    schema: str = "asyncsolve.result"  #: the documents that carry it (schema name)

    def value(self, doc: dict, where: dict) -> float | None:
        return self.extract(doc, {k: v for k, v in where.items() if k in self.fields})


class AmbiguousRecord(LabError):
    """A claim's selector matches several records of one document."""


def _same(a: object, b: object) -> bool:
    """Equal as a suite means it: numbers by value, bools and strings exactly."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return str(a) == str(b)


def _one(entries: list[dict], where: dict, quantity: Callable[[dict], float | None]
         ) -> float | None:
    hits = [e for e in entries if all(_same(e.get(k), v) for k, v in where.items())]
    if len(hits) > 1:
        shown = ", ".join(f"{k}={v}" for k, v in where.items()) or "no record fields"
        raise AmbiguousRecord(f"{shown} matches {len(hits)} records of one document")
    return quantity(hits[0]) if hits else None


def _solve_metric(fn: Callable[[dict], float | None]) -> Callable[[dict, dict], float | None]:
    return lambda doc, _where: fn(doc)


def _stencil2d(quantity: str) -> Callable[[dict, dict], float | None]:
    def value(doc: dict, where: dict) -> float | None:
        entries = [{"model": p.model, "variant": p.variant, "radius": p.radius, "local": p.local,
                    "value": getattr(p, quantity)} for p in stencil2d_points(doc)]
        return _one(entries, where, lambda e: e["value"])
    return value


def _allreduce(section: Callable[[dict], list[AllreducePoint]]
               ) -> Callable[[dict, dict], float | None]:
    def value(doc: dict, where: dict) -> float | None:
        entries = [{"algorithm": p.algorithm, "bytes": p.size_bytes, "value": p.median}
                   for p in section(doc)]
        return _one(entries, where, lambda e: e["value"])
    return value


def _noise(doc: dict, where: dict) -> float | None:
    entries = [{"method": p.method, "allreduce": p.allreduce, "noise-us": p.noise_us,
                "noise-hz": p.noise_hz, "value": p.slowdown} for p in allreduce_noise(doc)]
    return _one(entries, where, lambda e: e["value"])


def _mvm_epsilon_max(doc: dict, _where: dict) -> float | None:
    values = [r.epsilon_funneled for r in mvm_records(doc) if r.epsilon_funneled is not None]
    return max(values) if values else None


def _fit_epsilon_at_best(doc: dict) -> float | None:
    fit = model_fit(doc)
    return fit.epsilon_at_best if fit else None


def _phase(name: str) -> Callable[[dict, dict], float | None]:
    return lambda doc, _where: phases(doc, "max").get(name)


#: The phases a result document (asyncsolve.result/1) times, by the solvers
#: that time them: Jacobi (synchronous, asynchronous, OpenMP), the Krylov
#: methods and Lanczos. A claim's "phase:NAME" must name one of them.
PHASES: dict[str, tuple[str, ...]] = {
    "jacobi": ("halo", "sweep", "copy", "residual", "reduce", "recv", "send", "idle",
               "barrier"),
    "krylov": ("matvec_interior", "halo_start", "halo_wait", "matvec_boundary", "sdotp_start",
               "sdotp_wait", "gamma_start", "gamma_wait", "iprod_start", "iprod_wait",
               "dots_start", "dots_wait", "precond", "axpy", "vector_scale", "precond_setup",
               "precond_hidden", "orthog", "reduce_start", "reduce_wait", "matvec_hidden"),
    "lanczos": ("local", "remote", "reduce", "tridiagonal", "vector", "start"),
}
PHASE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(p for ps in PHASES.values() for p in ps))

#: The document schema each program writes (programs not listed: unknown).
PROGRAM_SCHEMAS = {
    "solve": "asyncsolve.result",
    "bench allreduce": "asyncsolve.bench.allreduce",
    "bench stencil2d": "asyncsolve.bench.stencil2d",
    "asyncsolve-stencil2d-caf": "asyncsolve.bench.stencil2d",
    "bench/hybrid_mvm": "asyncsolve.bench.hybrid_mvm",
    "bench/beff": "asyncsolve.bench.beff",
    "model hybrid": "asyncsolve.model.hybrid",
}

#: Metrics by name; "phase:NAME" (a phase's time, maximum over ranks) is made on demand.
METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("time", "time to solution (s)", extract=_solve_metric(time_s)),
    Metric("iterations", "iterations (mean over ranks)",
           extract=_solve_metric(partial(iterations, which="mean"))),
    Metric("iterations_max", "iterations (max over ranks)",
           extract=_solve_metric(partial(iterations, which="max"))),
    Metric("time_per_iteration", "time per iteration (s)",
           extract=_solve_metric(time_per_iteration)),
    Metric("rate", "iterations/s (mean rank)", extract=_solve_metric(rate)),
    Metric("true_residual", "true residual", extract=_solve_metric(true_residual)),
    Metric("stencil2d.iteration_us", "Stencil2D µs per iteration",
           ("model", "variant", "radius", "local"), _stencil2d("iteration_us"),
           "asyncsolve.bench.stencil2d"),
    Metric("stencil2d.exchange_us", "Stencil2D halo exchange µs per iteration",
           ("model", "variant", "radius", "local"), _stencil2d("exchange_us"),
           "asyncsolve.bench.stencil2d"),
    Metric("allreduce.latency_us", "allreduce latency (µs)", ("algorithm", "bytes"),
           _allreduce(allreduce_latency), "asyncsolve.bench.allreduce"),
    Metric("allreduce.overlap_pct", "allreduce overlap (%)", ("algorithm", "bytes"),
           _allreduce(allreduce_overlap), "asyncsolve.bench.allreduce"),
    Metric("noise.slowdown", "slowdown under noise (time / quiet time)",
           ("method", "allreduce", "noise-us", "noise-hz"), _noise, "asyncsolve.bench.allreduce"),
    Metric("mvm.epsilon_funneled_max", "largest ε = T_masteronly / T_funneled of the sweep",
           extract=_mvm_epsilon_max, schema="asyncsolve.bench.hybrid_mvm"),
    Metric("beff.pure_over_hybrid", "b_eff pure MPI / hybrid masteronly",
           extract=lambda doc, _w: beff_summary(doc).pure_over_hybrid,
           schema="asyncsolve.bench.beff"),
    Metric("fit.epsilon_at_best", "ε of eq. 14 at its best n_k^loc",
           extract=lambda doc, _w: _fit_epsilon_at_best(doc), schema="asyncsolve.model.hybrid"),
)}


def metric(name: str) -> Metric | None:
    """The metric called `name` (None for an unknown one, "phase:NAME" included
    where NAME is not one of PHASE_NAMES)."""
    phase = name.removeprefix("phase:")
    if phase != name:
        if phase not in PHASE_NAMES:
            return None
        return Metric(name, f"phase {phase} (s, max over ranks)", extract=_phase(phase))
    return METRICS.get(name)
