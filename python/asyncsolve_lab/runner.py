"""Running a suite: one process tree per run, one document and one sidecar per run.

Results folder layout:
    RESULTS/suite.json            the normalised suite (asyncsolve.lab.suite/1)
    RESULTS/runs/ID.json          the program's own --json document
    RESULTS/runs/ID.lab.json      the lab's sidecar (asyncsolve.lab.run/1): configuration,
                                  regime, command, environment, rc, status, stderr
    RESULTS/lab.lock              held (flock) by the asyncsolve-lab running into the folder,
                                  removed when it ends
A run is finished when its sidecar exists (it is written last, atomically) and,
if it says ok, its document too, so rerunning a suite skips finished runs and
an interrupted one resumes. One asyncsolve-lab at a time runs into a folder.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import (
    RUN_SCHEMA,
    LabError,
    __version__,
    check_document,
    check_schema,
    simulation,
)
from .capabilities import Capabilities, check_suite, option_argv
from .files import write_atomic
from .results import read_json, read_limited
from .suite import DOC_REF, RunSpec, Suite

#: Open MPI's transports for the two network regimes (paper 001 Fig. 3:
#: InfiniBand vs Gigabit Ethernet, here shared memory vs TCP over loopback).
REGIME_MCA = {
    "shm": [("pml", "ob1"), ("btl", "self,vader")],
    "tcp": [("pml", "ob1"), ("btl", "self,tcp"), ("btl_tcp_if_include", "lo")],
}
#: Variables of the lab's own environment that steer the runs (recorded).
INHERITED_PREFIXES = ("OMPI_", "OMP_", "UCX_", "ASAN_", "UBSAN_", "TSAN_")
STDERR_KEEP = 20000
STDOUT_KEEP = 4000


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def check_ranks(suite: Suite, max_ranks: int) -> None:
    """SuiteError (with the suite's line) for an experiment with more ranks
    than `max_ranks` (--max-ranks, default 4 x the cores): a typo such as
    ranks = [1000] must not start a thousand processes. Simulated regimes
    (sim:PLATFORM) are bounded by their platform's hosts instead (suite.py)."""
    for exp in suite.experiments:
        if all(simulation.is_sim(r) for r in exp.regimes):
            continue
        for r in exp.ranks:
            if r > max_ranks:
                raise suite.error(("experiment", exp.index, "ranks"),
                                  f"experiment '{exp.name}': ranks = {r} is more than --max-ranks "
                                  f"{max_ranks} (default: 4 x the {cores()} cores of this "
                                  "machine); expected fewer ranks, or a larger --max-ranks")


def check_results_folder(root: Path, what: str, create: bool = True) -> None:
    """LabError unless `root` is a folder or (`create`) can be made one."""
    root = Path(root)
    for p in [root, *root.parents]:
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                raise LabError(f"{what} {root}: {p} is not a folder, expected a folder for the "
                               "results")
            break
    if not create:
        return
    try:
        (root / "runs").mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise LabError(f"{what} {root}: cannot make the folder: {err.strerror or err}") from None


def write_json_atomic(path: Path, data: dict) -> None:
    """Write to a short temporary name in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=1) + "\n")


def _threads(options: dict) -> int:
    t = options.get("threads")
    return t if isinstance(t, int) and not isinstance(t, bool) and t > 0 else 1


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]  # what the lab adds to the environment (recorded)
    oversubscribed: bool


def build_launch(run: RunSpec, caps: Capabilities, doc_path: Path,
                 options: dict | None = None) -> Launch:
    """The command line and environment of one run."""
    options = run.options if options is None else options
    n_cores = cores()
    over = run.ranks * _threads(options) > n_cores and run.platform is None
    env: dict[str, str] = {}
    if hasattr(os, "geteuid") and os.geteuid() == 0 and run.platform is None:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    argv: list[str] = []
    if run.platform is not None:  # sim:PLATFORM: smpirun, one rank per simulated host
        argv = simulation.launch_prefix(run.platform, run.ranks, hostfile_path(run, doc_path))
    elif run.launcher == "cafrun":
        argv, cafrun_env = _cafrun_launch(run, over)
        env.update(cafrun_env)
    elif run.launcher != "none":
        argv = [run.launcher, "-np", str(run.ranks)]
        if over:
            argv.append("--oversubscribe")
            env["OMPI_MCA_mpi_yield_when_idle"] = "1"
        for key, value in REGIME_MCA[run.regime]:
            if run.launcher == "oshrun" and key == "pml":
                continue  # OSHMEM picks its own PML (UCX)
            argv += ["--mca", key, value]
        if run.launcher == "oshrun":
            env["OMPI_MCA_osc"] = "ucx"  # Debian's OSHMEM crashes in shmem_finalize otherwise
    env.update(run.env)
    argv += caps.argv(run.program)
    argv += option_argv(options)
    argv += ["--json", str(doc_path)]
    return Launch(argv=argv, env=env, oversubscribed=over)


def hostfile_path(run: RunSpec, doc_path: Path) -> Path:
    """The host file of a sim run's platform: RESULTS/hosts/PLATFORM.hosts."""
    return doc_path.parent.parent / "hosts" / f"{run.platform.path.stem}.hosts"


def _cafrun_launch(run: RunSpec, oversubscribed: bool) -> tuple[list[str], dict[str, str]]:
    """OpenCoarrays' cafrun: it passes only `-np N PROGRAM ARGS` on to mpiexec,
    so the regime's MCA parameters and oversubscription go through the
    environment (OMPI_MCA_*), which Open MPI reads the same way."""
    env = {f"OMPI_MCA_{key}": value for key, value in REGIME_MCA[run.regime]}
    if oversubscribed:
        env.update(OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")
    return ["cafrun", "-np", str(run.ranks)], env


def _read_sidecar(path: Path) -> dict | None:
    """The JSON object of a sidecar; None where there is none or it is damaged
    (not a regular file, not JSON, not an object)."""
    if not path.exists():
        return None
    try:
        return read_json(path)
    except LabError:
        return None


class RunFolder:
    """The results folder of one suite."""

    def __init__(self, root: Path):
        self.root = Path(root).absolute()
        self.runs = self.root / "runs"

    def doc(self, run_id: str) -> Path:
        return self.runs / f"{run_id}.json"

    def sidecar(self, run_id: str) -> Path:
        return self.runs / f"{run_id}.lab.json"

    def load_sidecar(self, run_id: str) -> dict | None:
        """The run's sidecar; None when the run is to be done (again): no
        sidecar, a damaged one, or one that says ok while its document is gone."""
        path = self.sidecar(run_id)
        data = _read_sidecar(path)
        if data is None:
            return None  # none, or a damaged one: the run is redone
        check_schema(data.get("schema"), str(path), {RUN_SCHEMA.split("/")[0]: 1})
        if data.get("status") == "ok" and not self.has_document(data):
            return None  # its document was deleted: the run is redone
        return data

    def has_document(self, sidecar: dict) -> bool:
        """Whether the document a sidecar names is there."""
        name = sidecar.get("document")
        return isinstance(name, str) and bool(name) and (self.runs / name).is_file()

    def find_document(self, experiment: str, regime: str, repeat: int) -> Path | None:
        """A finished document of `experiment` in `regime`, preferably of the same repeat."""
        best = None
        for path in sorted(self.runs.glob("*.lab.json")):
            data = _read_sidecar(path)
            if data is None:
                continue
            if (data.get("experiment") == experiment and data.get("regime") == regime
                    and data.get("status") == "ok" and self.has_document(data)):
                doc = self.runs / data["document"]
                if data.get("repeat") == repeat:
                    return doc
                best = best or doc
        return best


#: The line a program of asyncsolve ends with when it fails ("asyncsolve: error: ...",
#: "asyncsolve: rank 3: error: ...", "asyncsolve-stencil2d-caf: error: ...").
_ERROR_LINE = re.compile(r"^asyncsolve[\w/-]*: (rank \d+: )?error: ")
#: A line of dashes that opens or closes a notice of mpirun's (or oshrun's).
_LAUNCHER_RULE = re.compile(r"^-{20,}$")


def why(stderr: str) -> str:
    """Why a run failed, from its stderr: the program's own error line (the
    first, which rank 0 prints), else the last line outside the launcher's
    notices (the blocks between lines of dashes), else the notices' last."""
    lines = [x.strip() for x in (stderr or "").splitlines() if x.strip()]
    errors = [x for x in lines if _ERROR_LINE.match(x)]
    if errors:
        return errors[0]
    outside, inside = [], False
    for x in lines:
        if _LAUNCHER_RULE.match(x):
            inside = not inside
        elif not inside:
            outside.append(x)
    return (outside or [x for x in lines if not _LAUNCHER_RULE.match(x)] or [""])[-1]


def _tail(text: str, keep: int) -> str:
    return text if len(text) <= keep else "…" + text[-keep:]


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state, ppid, ...; the start time
    is [19]), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # pid (comm) state ppid ...: comm may hold spaces and parentheses
    return stat[stat.rfind(")") + 2:].split()


def _descendants(pid: int) -> dict[int, str]:
    """The processes below `pid` (children, their children, ...) as /proc shows them
    now, with their start times (a pid reused later is another process); empty where
    there is no /proc."""
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return {}
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in entries:
        fields = _stat(entry)
        if fields and len(fields) > 19 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append((entry, fields[19]))
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child, started in children.get(todo.pop(), []):
            if child not in found:
                found[child] = started
                todo.append(child)
    return found


def _alive(pid: int, started: str) -> bool:
    """Whether the process `pid` that started at `started` still runs (a zombie,
    waiting to be reaped, does not)."""
    fields = _stat(pid)
    return bool(fields) and len(fields) > 19 and fields[19] == started and fields[0] != "Z"


def _kill_tree(proc: subprocess.Popen) -> None:
    """Stop the run's processes (mpirun and its ranks): TERM, then KILL. Done when
    the whole group is gone and so is every process below mpirun: mpirun may exit
    while its ranks still do, and a launcher may put its ranks in a process group of
    their own."""
    below = _descendants(proc.pid)
    _kill_group(proc)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid, started in below.items():
            if _alive(pid, started):
                with suppress(ProcessLookupError):
                    os.kill(pid, sig)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(*p) for p in below.items()):
            time.sleep(0.02)


def _kill_group(proc: subprocess.Popen) -> None:
    """The run's process group: TERM, then KILL, until it is gone."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)  # anyone of the group left?
            except ProcessLookupError:
                return
            time.sleep(0.02)


def execute(run: RunSpec, caps: Capabilities, folder: RunFolder, suite_name: str) -> dict:
    """Run one configuration; write its sidecar; return it. KeyboardInterrupt
    stops the run, removes its partial document and propagates."""
    doc_path = folder.doc(run.run_id)
    doc_path.unlink(missing_ok=True)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    record = {"schema": RUN_SCHEMA, "lab_version": __version__, "suite": suite_name,
              "run_id": run.run_id, "order": run.order, "experiment": run.experiment,
              "program": run.program,
              "regime": run.regime, "ranks": run.ranks, "repeat": run.repeat,
              "config": run.config, "options": run.options, "launcher": run.launcher,
              "timeout_s": run.timeout_s, "cores": cores(), "started": started}
    # {doc:EXPERIMENT} references: a finished document of that experiment.
    options = dict(run.options)
    for key, value in run.options.items():
        m = DOC_REF.match(value) if isinstance(value, str) else None
        if m:
            found = folder.find_document(m.group(1), run.regime, run.repeat)
            if not found:
                record.update(status="failed", rc=None, wall_s=0.0, document=None,
                              reason=f"--{key} {value}: no finished document of experiment "
                              f"'{m.group(1)}' in regime {run.regime}", stderr="", stdout="")
                write_json_atomic(folder.sidecar(run.run_id), record)
                return record
            options[key] = str(found)
    launch = build_launch(run, caps, doc_path, options)
    if run.platform is not None:
        simulation.write_hostfile(run.platform, hostfile_path(run, doc_path).parent)
        record.update(platform=str(run.platform.path), platform_hosts=len(run.platform.hosts))
    record.update(command=launch.argv, env=launch.env, oversubscribed=launch.oversubscribed,
                  inherited_env={k: v for k, v in sorted(os.environ.items())
                                 if k.startswith(INHERITED_PREFIXES) and k not in launch.env})
    env = {**os.environ, **launch.env}
    t0 = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.Popen(launch.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", env=env,
                                start_new_session=True)
    except OSError as err:
        record.update(status="failed", rc=None, wall_s=0.0, document=None, stdout="",
                      stderr=str(err), reason=f"cannot start {launch.argv[0]}: {err.strerror}")
        write_json_atomic(folder.sidecar(run.run_id), record)
        return record
    try:
        out, err = proc.communicate(timeout=run.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_tree(proc)
        out, err = proc.communicate()
    except BaseException:  # Ctrl-C: leave nothing behind, record nothing
        _kill_tree(proc)
        doc_path.unlink(missing_ok=True)
        raise
    wall = time.monotonic() - t0
    rc = proc.returncode
    record.update(rc=None if timed_out else rc, wall_s=round(wall, 3),
                  stdout=_tail(out or "", STDOUT_KEEP), stderr=_tail(err or "", STDERR_KEEP))
    doc_ok = doc_path.is_file()
    record["document"] = doc_path.name if doc_ok else None
    if doc_ok:
        try:  # LabError: no JSON object, or not a document the program writes
            doc = read_json(doc_path)
            record["document_schema"] = doc.get("schema")
            check_document(doc, str(doc_path), sidecar=record)  # its wall_s, options
        except LabError as e:
            record.update(status="failed", reason=str(e))
            doc_ok = False
    if timed_out:
        record.update(status="timeout", reason=f"timed out after {run.timeout_s:g} s")
    elif "status" in record:
        pass
    elif rc != 0:
        meaning = {2: "bad input", 3: "did not converge", 4: "runtime failure"}.get(rc, "")
        record.update(status="failed", reason=f"exit code {rc}" + (f" ({meaning})" if meaning
                                                                   else "") + f": {why(err)}")
    elif not doc_ok:
        record.update(status="failed", reason="exit code 0 but no document was written")
    else:
        record.update(status="ok", reason="")
    write_json_atomic(folder.sidecar(run.run_id), record)
    return record


def _fmt_s(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Walls:
    """Wall times seen so far, to estimate what is left: a configuration that
    ran in an earlier repeat is expected to take as long again, any other the
    mean of the runs seen (repeats are interleaved, so from the second repeat
    on the estimate is the first repeat's time)."""

    def __init__(self):
        self.by_config: dict[tuple, list[float]] = {}
        self.known: list[float] = []

    @staticmethod
    def _key(r: RunSpec) -> tuple:
        return (r.experiment, r.regime, r.ranks, json.dumps(r.config, sort_keys=True))

    def add(self, r: RunSpec, wall_s: float) -> None:
        self.by_config.setdefault(self._key(r), []).append(wall_s)
        self.known.append(wall_s)

    def estimate(self, runs: list[RunSpec]) -> float:
        mean = sum(self.known) / len(self.known) if self.known else 0.0
        total = 0.0
        for r in runs:
            seen = self.by_config.get(self._key(r))
            total += sum(seen) / len(seen) if seen else mean
        return total


def check_only(suite: Suite, only: list[str]) -> None:
    """LabError unless every name of --only (split at commas) is an experiment of `suite`."""
    if not all(only):
        raise LabError(f"--only {','.join(only)!r}: expected a comma-separated list of "
                       f"experiment names of {suite.path}, with no empty name")
    unknown = set(only) - {e.name for e in suite.experiments}
    if unknown:
        raise LabError(f"--only: no experiment named {', '.join(sorted(unknown))} in "
                       f"{suite.path}")


def run_suite(suite: Suite, results: Path, caps: Capabilities, *, retry_failed: bool = False,
              dry_run: bool = False, only: list[str] | None = None, console=None) -> dict:
    """Run every unfinished run of `suite` into `results`, holding the folder's
    lock (LabError when another asyncsolve-lab runs into it). Returns counts."""
    from rich.console import Console

    console = console or Console(stderr=False, highlight=False)
    check_suite(suite, caps)  # before running anything
    folder = RunFolder(results)
    runs = suite.runs()
    if only is not None:
        check_only(suite, only)
        runs = [r for r in runs if r.experiment in only]
    _check_folder_suite(folder.root, suite.name)
    if dry_run:
        pending, done, _ = _pending(runs, folder, retry_failed, Walls())
        for r in pending:
            launch = build_launch(r, caps, folder.doc(r.run_id))
            env = " ".join(f"{k}={v}" for k, v in launch.env.items())
            console.print(f"{r.run_id}: {env} {' '.join(launch.argv)}", soft_wrap=True)
        return {"total": len(runs), "skipped": done, "ran": 0, "ok": 0, "failed": 0}
    folder.runs.mkdir(parents=True, exist_ok=True)
    with results_lock(folder.root):
        return _run_pending(suite, runs, folder, caps, retry_failed, console)


def _pending(runs: list[RunSpec], folder: RunFolder, retry_failed: bool,
             walls: Walls) -> tuple[list[RunSpec], int, int]:
    """The runs still to do, how many are finished, how many of those failed;
    `walls` learns the wall times of the finished ones."""
    pending, done, failed_before = [], 0, 0
    for r in runs:
        side = folder.load_sidecar(r.run_id)
        if side is not None and side.get("wall_s") is not None:
            walls.add(r, side["wall_s"])
        if side is None or (retry_failed and side.get("status") != "ok"):
            pending.append(r)
        else:
            done += 1
            failed_before += side.get("status") != "ok"
    return pending, done, failed_before


#: The lock file of a results folder, held by the asyncsolve-lab that runs into it.
LOCK_NAME = "lab.lock"


@contextmanager
def results_lock(root: Path):
    """Holds ROOT/lab.lock (flock, exclusive) while a suite runs into ROOT; the
    file names the holder (pid, host, start). A second asyncsolve-lab run on
    the same folder gets LabError at once: two would run the same runs into
    the same files. The lock is released however the block ends (an
    exception included) and the file removed with it; if the process dies,
    the kernel drops the lock with the descriptor and the file left behind
    locks nothing. On a file system without locks the suite runs unlocked."""
    path = Path(root) / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        locked = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            locked = True
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            raise LabError(f"results folder {Path(root)} is in use by another asyncsolve-lab run "
                           f"({holder}): expected one run per results folder at a time; wait "
                           "for it to end, or give another --results") from None
        except OSError as err:
            if err.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                os.close(fd)
                raise
        if not locked or _same_file(fd, path):
            break
        os.close(fd)  # its holder removed the file as we opened it: lock the new one
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since "
                  f"{datetime.now(UTC).isoformat(timespec='seconds')}\n".encode(), 0)
        yield
    finally:
        if locked:  # removed while still held, so no other run can hold this file
            path.unlink(missing_ok=True)
        os.close(fd)


def _check_folder_suite(root: Path, name: str) -> None:
    """LabError where `root` holds another suite's results (its suite.json names
    another suite): running into it would replace that suite.json, and the report
    would then show the other suite's runs as this suite's."""
    path = root / "suite.json"
    if not path.is_file():
        return
    try:
        held = json.loads(read_limited(path, 64 << 20)).get("name")
    except (OSError, ValueError, RecursionError, AttributeError) as e:
        raise LabError(f"{path}: not a suite.json the lab wrote ({e}); expected an empty "
                       f"results folder or one of suite {name!r}") from e
    if held != name:
        raise LabError(f"{root}: holds the results of suite {held!r} (its suite.json); "
                       f"expected an empty folder or one of suite {name!r}: give suite "
                       f"{name!r} a results folder of its own (--results, or results = ... in the "
                       "suite)")


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` still names the file open as `fd`."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _run_pending(suite: Suite, runs: list[RunSpec], folder: RunFolder, caps: Capabilities,
                 retry_failed: bool, console) -> dict:
    """Runs what is left of `runs` (the caller holds the folder's lock)."""
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    walls = Walls()
    pending, done, failed_before = _pending(runs, folder, retry_failed, walls)
    write_json_atomic(folder.root / "suite.json", suite.to_json())
    console.print(f"suite {suite.name}: {len(runs)} runs, {done} already finished"
                  + (f" ({failed_before} failed; --retry-failed reruns them)" if failed_before
                     else "") + f", {len(pending)} to run; results in {folder.root}")
    counts = {"total": len(runs), "skipped": done, "ran": 0, "ok": 0, "failed": 0}
    t_start = time.monotonic()
    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}")]
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(suite.name, total=len(pending),
                                 eta=_fmt_s(walls.estimate(pending)) if walls.known else "?")
        try:
            for i, r in enumerate(pending, start=1):
                progress.update(task, description=escape(f"{suite.name}: {r.label}"))
                rec = execute(r, caps, folder, suite.name)
                counts["ran"] += 1
                ok = rec["status"] == "ok"
                counts["ok" if ok else "failed"] += 1
                walls.add(r, rec["wall_s"])
                eta = walls.estimate(pending[i:])
                progress.update(task, advance=1, eta=_fmt_s(eta))
                status = ("[green]ok[/]" if ok else
                          f"[red]{rec['status']}[/]: {escape(rec['reason'])}")
                progress.console.print(f"\\[{i}/{len(pending)}] {escape(r.label)}: {status} "
                                       f"({rec['wall_s']:.1f} s; ETA {_fmt_s(eta)})",
                                       soft_wrap=True, markup=True, highlight=False)
        except KeyboardInterrupt:
            progress.stop()
            console.print(f"interrupted: {counts['ran']} runs recorded; run the same command "
                          "again to resume")
            raise
    console.print(f"suite {suite.name}: {counts['ok']} ok, {counts['failed']} failed of "
                  f"{counts['ran']} run in {_fmt_s(time.monotonic() - t_start)} "
                  f"({counts['skipped']} skipped as finished)")
    return counts
