"""NAME
    benchkit.py - what the benchmark scripts in bench/ share

PURPOSE
    The Python benchmark drivers (straggler.py, krylov_overlap.py,
    omp_jacobi.py) run asyncsolve many times, interleaved, on a machine whose
    speed drifts. This module holds what they do alike: the launcher line,
    waiting for a quiet machine, running one command while measuring the CPU
    share other processes took, reading the result document, statistics over
    repeats, and writing a JSON document atomically. It is imported, not run.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

EXIT_OK, EXIT_BAD_ARGS, EXIT_FAILED = 0, 2, 4

# What asyncsolve's exit codes mean (README, "Exit codes").
EXIT_MEANING = {2: "bad input", 3: "did not converge or broke down", 4: "runtime failure"}


class BadArguments(Exception):
    """An argument that cannot be used; reported as one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line (BadArguments) rather than usage and exit."""

    def error(self, message):
        raise BadArguments(message)


def allow_root():
    """Lets Open MPI run as root (the README's setting), unless the caller chose otherwise."""
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

def run_measured(cmd, timeout_s, gate=None, env=None):
    """Runs cmd once (after gate.wait()); returns its record.

    Record: command, exit_code, error (None, or why the run failed: timeout,
    a non-zero exit with the last stderr line), stderr_last_line, wall_s,
    busy_before and waited_for_quiet_s (from the gate), foreign_cpu_fraction
    (the CPU time other processes took while it ran, in units of the machine:
    0.5 = one of two CPUs busy with something else; approximate, and high for
    runs not much longer than the launcher's start-up) and steal_fraction.
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
    if p.returncode != 0:
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


def interleaved(configs, repeats):
    """(repeat, config) pairs: every configuration once per repeat, rotated by one per repeat,
    so that drift of the machine affects every configuration alike."""
    for rep in range(repeats):
        shift = rep % len(configs)
        for config in configs[shift:] + configs[:shift]:
            yield rep, config


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


def conclude(prog, json_path, doc, failures, missing, smoke, temporary, smoke_message):
    """Writes the driver's document and says how it ended; returns the exit code.

    missing: what the document lacks (checked with --smoke), recorded in it as
    a failure. Exit 4 if a run failed, the document lacks a field or cannot
    be written; else 0 (with --smoke, smoke_message is printed).
    """
    if missing:
        doc["passed"] = False
        doc["failures"] = failures + ["document lacks: " + ", ".join(missing)]
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
    if missing:
        print(f"{prog}: the document lacks: " + ", ".join(missing), file=sys.stderr)
        return EXIT_FAILED
    if smoke:
        print(smoke_message)
    return EXIT_OK
