"""NAME
    benchkit.py - what the benchmark scripts in bench/ share

PURPOSE
    The Python benchmark drivers (straggler.py, krylov_overlap.py,
    omp_jacobi.py, lanczos_transports.py, peers/run_peers.py) run asyncsolve
    (and its peers) many times, interleaved, on a machine whose speed drifts.
    This module holds what they do alike: the launcher line, waiting for a
    quiet machine, running one command while measuring the CPU share other
    processes took and reading the result document it wrote, a campaign of
    interleaved runs with its scratch directory and progress lines, statistics
    over repeats and ratios per repeat, the provenance of the driver's
    document, the checks of --smoke, and writing the document atomically with
    the exit code that follows. It is imported, not run; bench/benchkit.hpp is
    the C++ half, for the drivers written in C++.
"""
import argparse
import datetime
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

EXIT_OK, EXIT_BAD_ARGS, EXIT_FAILED = 0, 2, 4

# What asyncsolve's exit codes mean (docs/results.md, "Exit codes").
EXIT_MEANING = {2: "bad input", 3: "did not converge or broke down", 4: "runtime failure"}


class BadArguments(Exception):
    """An argument that cannot be used; reported as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line (BadArguments) rather than usage and exit."""

    def error(self, message):
        raise BadArguments(message)


def add_campaign_options(parser, name, timeout_s, quiet_max_wait_s, smoke_help):
    """The options of a driver that runs asyncsolve campaigns: --timeout, --quiet,
    --quiet-max-wait, --json (default results/bench/NAME.json), --runs-dir and --smoke."""
    parser.add_argument("--timeout", type=float, default=timeout_s, help="seconds per run")
    parser.add_argument("--quiet", type=float, default=0.10,
                        help="before each run wait until other processes use at most this "
                             "fraction of the machine's CPUs (sampled over 0.5 s; 0: do not "
                             "wait)")
    parser.add_argument("--quiet-max-wait", type=float, default=quiet_max_wait_s,
                        help="longest wait for quiet before one run, seconds; then run anyway "
                             "(recorded)")
    parser.add_argument("--json", help=f"result document (default results/bench/{name}.json)")
    parser.add_argument("--runs-dir", help="keep every run's asyncsolve result document here")
    parser.add_argument("--smoke", action="store_true", help=smoke_help)


def run_driver(prog, argv, parse_args, run):
    """A driver's main: parse_args(argv) -> args, where BadArguments is one line on stderr and
    exit code 2; then run(args) -> the exit code."""
    try:
        args = parse_args(argv)
    except BadArguments as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_BAD_ARGS
    return run(args)


def allow_root():
    """Lets Open MPI run as root (as docs/running.md says), unless the caller chose otherwise."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


def split_launcher(text):
    """A launcher line as a list; ';' (a CMake list) is read as a space."""
    return shlex.split(text.replace(";", " "))


def launcher_line(launcher):
    """(launcher with -q for Open MPI, the launcher's version line).

    With -q Open MPI drops its own banner on errors, so the last stderr line
    is asyncsolve's.
    """
    launcher = list(launcher)
    try:
        version = subprocess.run(launcher[:1] + ["--version"], capture_output=True, text=True,
                                 timeout=60)
        text = version.stdout + version.stderr
    except (OSError, subprocess.TimeoutExpired):
        text = ""
    if ("Open MPI" in text or "OpenRTE" in text) and "-q" not in launcher:
        launcher.append("-q")
    return launcher, text.strip().splitlines()[0] if text.strip() else ""


def ompi_environment():
    """The OMPI_MCA_* variables in force, for the record."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("OMPI_MCA_")}


# ---------------------------------------------------------------- a quiet machine

def cpu_busy_s():
    """(busy, steal) CPU seconds of the whole machine so far, from /proc/stat (None if absent)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    steal = fields[7] if len(fields) > 7 else 0
    return (user + nice + system + irq + softirq) / tick, steal / tick


def children_cpu_s():
    """CPU seconds of every reaped descendant (mpiexec reaps the ranks)."""
    r = os.times()
    return r.children_user + r.children_system


class QuietGate:
    """Waits for a quiet machine before a run, within a per-run and a total limit.

    quiet: the largest share of the machine's CPUs other processes may use
    (1.0: every CPU busy; 0 disables waiting). max_wait_s: the longest wait
    before one run; budget_s: the longest waiting in all.
    """

    def __init__(self, quiet, max_wait_s, budget_s=float("inf")):
        self.quiet, self.max_wait_s, self.budget_s = quiet, max_wait_s, budget_s
        self.spent_s = 0.0
        self.previous_foreign = None  # other processes' share during the run just before

    def wait(self):
        """(other processes' share of the CPUs when it stopped waiting, seconds waited).

        The share is a 0.5 s sample, or the share measured during the previous
        run when that was already quiet (then no sample is taken).
        """
        if self.quiet <= 0.0 or cpu_busy_s() is None:
            return None, 0.0
        if self.previous_foreign is not None and self.previous_foreign <= self.quiet:
            return self.previous_foreign, 0.0
        cores = os.cpu_count() or 1
        limit = min(self.max_wait_s, max(0.0, self.budget_s - self.spent_s))
        t0 = time.monotonic()
        while True:
            a, start = cpu_busy_s()[0], time.monotonic()
            time.sleep(0.5)
            busy = (cpu_busy_s()[0] - a) / ((time.monotonic() - start) * cores)
            waited = time.monotonic() - t0
            if busy <= self.quiet or waited >= limit:
                self.spent_s += waited
                return busy, waited
            time.sleep(1.0)


# ---------------------------------------------------------------- running

def run_measured(cmd, timeout_s, gate=None, env=None, accept=(0,), stdout=False):
    """Runs cmd once (after gate.wait()); returns its record.

    Record: command, exit_code, error (None, or why the run failed: timeout,
    an exit code not in accept, with the last stderr line), stderr_last_line, wall_s,
    busy_before and waited_for_quiet_s (from the gate), foreign_cpu_fraction
    (the CPU time other processes took while it ran, in units of the machine:
    0.5 = one of two CPUs busy with something else; approximate, and high for
    runs not much longer than the launcher's start-up) and steal_fraction;
    with stdout=True also the run's standard output (for the caller to read
    and remove).
    """
    record = {"command": shlex.join(cmd), "exit_code": None, "error": None,
              "stderr_last_line": None}
    record["busy_before"], record["waited_for_quiet_s"] = gate.wait() if gate else (None, 0.0)
    cpu0, own0 = cpu_busy_s(), children_cpu_s()
    started = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        record["error"] = f"timed out after {timeout_s:g} s"
        if gate:
            gate.previous_foreign = None
        return record
    record["wall_s"] = time.monotonic() - started
    cpu1 = cpu_busy_s()
    if gate:
        gate.previous_foreign = None
    if cpu0 is not None and cpu1 is not None:
        cores = os.cpu_count() or 1
        foreign = (cpu1[0] - cpu0[0]) - (children_cpu_s() - own0)
        record["foreign_cpu_fraction"] = max(0.0, foreign) / (record["wall_s"] * cores)
        record["steal_fraction"] = (cpu1[1] - cpu0[1]) / (record["wall_s"] * cores)
        if gate:
            gate.previous_foreign = record["foreign_cpu_fraction"]
    record["exit_code"] = p.returncode
    lines = p.stderr.strip().splitlines()
    record["stderr_last_line"] = lines[-1] if lines else None
    if stdout:
        record["stdout"] = p.stdout
    if p.returncode not in accept:
        tail = record["stderr_last_line"] or EXIT_MEANING.get(p.returncode, "")
        record["error"] = f"exit code {p.returncode}" + (f": {tail}" if tail else "")
    return record


def load_document(path, record):
    """The JSON document at path, or None with record['error'] set (unless already set)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        record["error"] = record["error"] or f"no result document ({e})"
        return None


def run_with_document(record, cmd, path, timeout_s, gate=None, env=None, key_numbers=None,
                      accept=(0,)):
    """Runs cmd (which writes its result document to path) once into record (run_measured);
    reads the document and merges key_numbers(doc) into the record.

    Returns the document, or None when the run failed or left no usable document (then
    record['error'] says why: a field key_numbers missed counts as "result document lacks").
    """
    record.update(run_measured(cmd, timeout_s, gate, env, accept))
    if record["exit_code"] is None:
        return None
    doc = load_document(path, record)
    if doc is None or key_numbers is None:
        return doc
    try:
        record.update(key_numbers(doc))
    except (KeyError, TypeError, ValueError) as e:
        record["error"] = record["error"] or f"result document lacks {e}"
        return None
    return doc


def require_converged(record):
    """Marks a run that went well but did not converge as failed (record['reason'] says why)."""
    if record["error"] is None and not record["converged"]:
        record["error"] = f"not converged ({record['reason']})"


def interleaved(configs, repeats):
    """(repeat, config) pairs: every configuration once per repeat, rotated by one per repeat,
    so that drift of the machine affects every configuration alike."""
    for rep in range(repeats):
        shift = rep % len(configs)
        for config in configs[shift:] + configs[:shift]:
            yield rep, config


class Campaign:
    """One run of a driver over its configurations, as a context manager.

    Inside, a scratch directory (removed at the end) holds what is not kept:
    runs_dir is --runs-dir (created) or the scratch; json_path is --json, else a
    temporary file with --smoke (temporary is then True), else
    results/bench/NAME.json. started is the UTC start; runs the records so far;
    gate the QuietGate of --quiet, --quiet-max-wait (and --quiet-budget, if the
    driver has it). With mpi=True, Open MPI may run as root (allow_root) and
    launcher, launcher_version are --mpiexec's (launcher_line).
    """

    def __init__(self, name, args, mpi=False):
        self.name, self.args = name, args
        if mpi:
            allow_root()
            self.launcher, self.launcher_version = launcher_line(args.launcher)
        self.gate = QuietGate(args.quiet, args.quiet_max_wait,
                              getattr(args, "quiet_budget", float("inf")))
        self.runs = []
        self.started = utc_now()

    def __enter__(self):
        self._scratch = tempfile.TemporaryDirectory(prefix=self.name + ".")
        scratch = self._scratch.__enter__()
        self.runs_dir = self.args.runs_dir or scratch
        os.makedirs(self.runs_dir, exist_ok=True)
        self.temporary = self.args.smoke and not self.args.json
        self.json_path = self.args.json or (
            os.path.join(scratch, self.name + ".json") if self.args.smoke
            else os.path.join("results", "bench", self.name + ".json"))
        return self

    def __exit__(self, *exc):
        return self._scratch.__exit__(*exc)

    def run(self, configs, repeats, run_one, describe, name_width, stop_on_rejection=False):
        """Runs every configuration `repeats` times, interleaved (run_one(config, repeat) ->
        record), and prints a line per run: "[ n/total] repeat R NAME", describe(record),
        the CPU share other processes took, and ok or FAILED with the error.

        With stop_on_rejection, a run that asyncsolve refused (exit code 2: an option this
        binary does not take) stops the campaign: the return value then says which, for a
        one-line error and exit code 2. None otherwise.
        """
        total = repeats * len(configs)
        for rep, config in interleaved(configs, repeats):
            record = run_one(config, rep)
            self.runs.append(record)
            if stop_on_rejection and record["exit_code"] == 2:
                return (f"asyncsolve rejected {config['name']}: "
                        f"{record['stderr_last_line'] or 'exit code 2'}")
            status = "ok" if record["error"] is None else f"FAILED: {record['error']}"
            print(f"[{len(self.runs):>3}/{total}] repeat {rep} {config['name']:<{name_width}} "
                  f"{describe(record)}  other load "
                  f"{fmt(record.get('foreign_cpu_fraction'), '.2f')}  {status}", flush=True)
        return None

    def failures(self):
        """One line per failed run: configuration, repeat and error."""
        return [f"{r['configuration']} repeat {r['repeat']}: {r['error']}"
                for r in self.runs if r["error"] is not None]

    def mine(self, name):
        """(every run of configuration name, the ones that went well)."""
        mine = [r for r in self.runs if r["configuration"] == name]
        return mine, [r for r in mine if r["error"] is None]


# ---------------------------------------------------------------- statistics

def spread(values):
    """{median, min, max, n} of the values that are not None, or None if there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def ratio(runs, repeats, num, den, key="time_s"):
    """run[key] of configuration num over that of den, per repeat (when both runs of the repeat
    succeeded), with median/min/max over the repeats."""
    per_repeat = []
    for rep in range(repeats):
        t = {r["configuration"]: r[key] for r in runs
             if r["repeat"] == rep and r["error"] is None}
        per_repeat.append(t[num] / t[den] if num in t and den in t and t[den] > 0 else None)
    s = spread(per_repeat)
    return {"numerator": num, "denominator": den, "per_repeat": per_repeat,
            **(s or {"median": None, "min": None, "max": None, "n": 0})}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(x, spec):
    """x formatted with spec, or '-' for None."""
    return "-" if x is None else format(x, spec)


# ---------------------------------------------------------------- output

def git_commit():
    """This checkout's commit (git rev-parse HEAD), or None."""
    try:
        p = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                            "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def git_dirty():
    """Whether tracked files of this checkout differ from its commit, or None."""
    try:
        p = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "status",
                            "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bool(p.stdout.strip()) if p.returncode == 0 else None


def utc_now():
    return datetime.datetime.now(datetime.UTC)


def utc_stamp(when):
    """A UTC time as the documents write it, e.g. 2026-11-22T04:33:32Z."""
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def elapsed_s(started):
    """Seconds since `started` (utc_now())."""
    return (utc_now() - started).total_seconds()


def host():
    """{hostname, cores} of this machine."""
    return {"hostname": socket.gethostname(), "cores": os.cpu_count()}


def asyncsolve_info(binary, runs):
    """The asyncsolve the runs used: its path, and the version and git commit its first result
    document gave."""
    first = next((r for r in runs if r.get("version")), {})
    return {"binary": os.path.abspath(binary), "version": first.get("version"),
            "git": first.get("git")}


def launcher_info(launcher, version):
    """The launcher as the documents record it: command, version line, OMPI_MCA_* in force."""
    return {"command": launcher, "version": version, "environment": ompi_environment()}


def missing_fields(doc, required, schema=None, configurations=None, figure=None):
    """What a driver's document lacks (names), for --smoke.

    required: lists of keys for "document", "run" (every run), "configuration" (every
    configuration) and, optionally, "ratio" (every ratio). Also checks the schema's value
    (when given), the number of configurations (when given), that configuration[figure]
    has numbers for median, min and max (when given), and that every ratio has a median.
    """
    missing = [f"document.{k}" for k in required["document"] if k not in doc]
    if schema is not None and doc.get("schema") != schema:
        missing.append("schema value")
    for i, r in enumerate(doc.get("runs", [])):
        missing += [f"runs[{i}].{k}" for k in required["run"] if k not in r]
    if configurations is not None and len(doc.get("configurations", [])) != configurations:
        missing.append(f"configurations (expected {configurations})")
    for c in doc.get("configurations", []):
        where = f"configurations[{c.get('name')}]"
        missing += [f"{where}.{k}" for k in required["configuration"] if k not in c]
        for k in (("median", "min", "max") if figure else ()):
            if not isinstance((c.get(figure) or {}).get(k), (int, float)):
                missing.append(f"{where}.{figure}.{k}")
    for name, r in doc.get("ratios", {}).items():
        missing += [f"ratios[{name}].{k}" for k in required.get("ratio", ()) if k not in r]
        if r.get("median") is None:
            missing.append(f"ratios[{name}].median value")
    return missing


def print_ratios(ratios, width):
    """The table of ratios: name, median, min and max."""
    print(f"{'ratio of times (per repeat)':<{width}} {'median':>7} {'min':>7} {'max':>7}")
    for name, r in ratios.items():
        print(f"{name:<{width}} {fmt(r['median'], '.3f'):>7} {fmt(r['min'], '.3f'):>7} "
              f"{fmt(r['max'], '.3f'):>7}")


def write_json(path, doc):
    """Writes doc to path through a temporary file and a rename: never a partial file."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def conclude(prog, json_path, doc, failures, missing, smoke, temporary, smoke_message,
             problems=(), warning=None):
    """Writes the driver's document and says how it ended; returns the exit code.

    missing: what the document lacks (checked with --smoke); problems: other
    findings that fail the run (e.g. results that should agree and do not);
    both are recorded in the document as failures. warning: printed, and
    nothing more, when no run failed. Exit 4 if a run failed, the document
    lacks a field, a problem was found or the document cannot be written;
    else 0 (with --smoke, smoke_message is printed).
    """
    if missing or problems:
        doc["passed"] = False
        doc["failures"] = (failures + (["document lacks: " + ", ".join(missing)] if missing
                                       else []) + list(problems))
    try:
        write_json(json_path, doc)
    except OSError as e:
        print(f"{prog}: error: cannot write {json_path}: {e}", file=sys.stderr)
        return EXIT_FAILED
    print(f"\njson: {json_path}" + (" (temporary)" if temporary else ""))
    if failures:
        print(f"{prog}: {len(failures)} run(s) failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return EXIT_FAILED
    if warning:
        print(f"{prog}: {warning}", file=sys.stderr)
    if missing:
        print(f"{prog}: the document lacks: " + ", ".join(missing), file=sys.stderr)
        return EXIT_FAILED
    if problems:
        return EXIT_FAILED
    if smoke:
        print(smoke_message)
    return EXIT_OK
