#!/usr/bin/env python3
"""NAME
    lanczos_transports.py - the TFIM Lanczos benchmark over every transport

PURPOSE
    Paper 004's SPIN comparison at this machine's scale: the same Lanczos
    solve (asyncsolve solve --method lanczos --problem tfim) with the remote
    part of the mat-vec over MPI two-sided with K round-robin buffers, MPI-3
    put + fence, and OpenSHMEM put + flag, on each rank count. Every
    configuration runs a fixed number of iterations (--iters; --tol 1e-300 so
    that the change never stops it early, hence exit code 3 with reason
    max_iters, which is what is expected), and runs are interleaved: each
    repeat runs every configuration once, the order rotated from one repeat to
    the next. Every run's energy must equal the others' of the same rank
    count (the transports add the same numbers in the same order). Reported:
    per configuration the median (min, max) over repeats of the time per
    iteration and of each phase per iteration (max over ranks). Nothing here
    asserts on time.

USAGE
    bench/lanczos_transports.py --binary build/asyncsolve [--sites 22]
        [--ranks 2,4] [--iters 30] [--repeats 5]
        [--transports mpi:2,mpi:3,rma,rma:notify,shmem] [--chunk 32768]
        [--mpiexec "mpiexec --oversubscribe"] [--oshrun oshrun]
        [--quiet 0.25] [--quiet-max-wait 120] [--json FILE] [--smoke]

    A transport is mpi:K (K buffers), rma (fence), rma:notify or shmem; shmem runs through
    --oshrun with OMPI_MCA_osc=ucx and is skipped if the binary has no
    OpenSHMEM. Before each run the script waits (at most --quiet-max-wait s)
    until other processes use at most --quiet of the CPUs (from /proc/stat),
    and records the busy share of the CPUs during each run (this includes the
    run itself). --smoke: 8 sites, 2 ranks, 1 repeat, 5 iterations; checks the
    document's shape.

OUTPUT
    A table on stdout and, with --json, a document with schema
    "asyncsolve.bench.lanczos_transports/1": parameters, every run (command,
    time per iteration, phases, energy, busy share), and per configuration
    the median/min/max of the time per iteration and of every phase.
    Exit codes: 0 success; 2 bad arguments; 4 a run failed or energies differ.
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

PHASES = ["local", "remote", "reduce", "tridiagonal", "vector"]


def cpu_times():
    with open("/proc/stat") as f:
        fields = [float(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)
    return sum(fields), idle


def busy_share(interval=0.5):
    t0, i0 = cpu_times()
    time.sleep(interval)
    t1, i1 = cpu_times()
    return 1.0 - (i1 - i0) / max(t1 - t0, 1e-9)


def wait_quiet(limit, max_wait):
    start = time.time()
    share = busy_share()
    while share > limit and time.time() - start < max_wait:
        share = busy_share(1.0)
    return share


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1].strip())
    ap.add_argument("--binary", required=True)
    ap.add_argument("--sites", type=int, default=22)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--transports", default="mpi:2,mpi:3,rma,rma:notify,shmem")
    ap.add_argument("--chunk", type=int, default=32768)
    ap.add_argument("--mpiexec", default="mpiexec --oversubscribe")
    ap.add_argument("--oshrun", default="oshrun")
    ap.add_argument("--quiet", type=float, default=0.25)
    ap.add_argument("--quiet-max-wait", type=float, default=120.0)
    ap.add_argument("--json", default="")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if a.smoke:
        a.sites, a.ranks, a.iters, a.repeats, a.quiet_max_wait = 8, "2", 5, 1, 0.0
    try:
        ranks = [int(r) for r in a.ranks.split(",")]
        transports = [t for t in a.transports.split(",") if t]
        for t in transports:
            if not (t in ("rma", "rma:notify", "shmem") or
                    (t.startswith("mpi:") and int(t[4:]) >= 2)):
                raise ValueError(t)
    except ValueError as e:
        print(f"lanczos_transports.py: bad --ranks or --transports ({e}); expected e.g. "
              "--ranks 2,4 --transports mpi:2,mpi:3,rma,rma:notify,shmem", file=sys.stderr)
        return 2
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        os.environ.setdefault(k, "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    mpiexec = shlex.split(a.mpiexec.replace(";", " ")) + ["-q"]
    oshrun = [a.oshrun, "--oversubscribe", "-q"]
    info = subprocess.run([a.binary, "info"], capture_output=True, text=True).stdout
    if "shmem transport built" not in info and "shmem" in transports:
        print("lanczos_transports.py: no OpenSHMEM in this build, shmem skipped")
        transports.remove("shmem")

    configs = [(p, t) for p in ranks for t in transports]
    runs = []
    failed = False
    with tempfile.TemporaryDirectory() as d:
        for rep in range(a.repeats):
            shift = rep % len(configs)
            for p, t in configs[shift:] + configs[:shift]:
                path = os.path.join(d, "r.json")
                args = ["solve", "--method", "lanczos", "--problem", "tfim", "--sites",
                        str(a.sites), "--tol", "1e-300", "--max-iters", str(a.iters),
                        "--json", path]
                env = dict(os.environ)
                if t.startswith("mpi:"):
                    args += ["--transport", "mpi", "--buffers", t[4:], "--chunk", str(a.chunk)]
                    launcher = mpiexec
                elif t == "rma:notify":
                    args += ["--transport", "rma", "--rma-sync", "notify"]
                    launcher = mpiexec
                else:
                    args += ["--transport", t]
                    launcher = oshrun if t == "shmem" else mpiexec
                    if t == "shmem":
                        env["OMPI_MCA_osc"] = "ucx"
                cmd = launcher + ["-n", str(p), a.binary] + args
                before = wait_quiet(a.quiet, a.quiet_max_wait)
                t0, i0 = cpu_times()
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
                t1, i1 = cpu_times()
                if proc.returncode not in (0, 3) or not os.path.exists(path):
                    print(f"run failed ({proc.returncode}): {shlex.join(cmd)}\n{proc.stderr}",
                          file=sys.stderr)
                    failed = True
                    continue
                with open(path) as f:
                    doc = json.load(f)
                os.remove(path)
                r = doc["result"]
                it = r["iterations"]["max"]
                runs.append({
                    "ranks": p, "transport": t, "repeat": rep, "command": cmd,
                    "iterations": it, "energy": r["energy"],
                    "time_per_iteration_s": r["time_s"] / it,
                    "phases_per_iteration_s": {k: doc["phases"][k]["max"] / it for k in PHASES},
                    "busy_before": before,
                    "busy_during": 1.0 - (i1 - i0) / max(t1 - t0, 1e-9),
                })
    summary = []
    for p, t in configs:
        mine = [r for r in runs if r["ranks"] == p and r["transport"] == t]
        if not mine:
            continue
        def stats(values):
            return {"median": statistics.median(values), "min": min(values), "max": max(values)}
        summary.append({
            "ranks": p, "transport": t, "runs": len(mine),
            "time_per_iteration_s": stats([r["time_per_iteration_s"] for r in mine]),
            "phases_per_iteration_s": {k: stats([r["phases_per_iteration_s"][k] for r in mine])
                                       for k in PHASES},
            "busy_during": stats([r["busy_during"] for r in mine]),
        })
    for p in ranks:
        energies = {r["energy"] for r in runs if r["ranks"] == p}
        if len(energies) > 1:
            print(f"energies differ on {p} ranks: {sorted(energies)}", file=sys.stderr)
            failed = True

    print(f"TFIM Lanczos, {a.sites} sites, {a.iters} iterations, median (min-max) of "
          f"{a.repeats} interleaved repeats; ms per iteration, phases max over ranks")
    print(f"{'ranks':>5} {'transport':>10} {'total':>20} " +
          " ".join(f"{k:>11}" for k in PHASES) + f" {'busy':>5}")
    for s in summary:
        tot = s["time_per_iteration_s"]
        line = (f"{s['ranks']:>5} {s['transport']:>10} "
                f"{tot['median'] * 1e3:8.2f} ({tot['min'] * 1e3:5.2f}-{tot['max'] * 1e3:5.2f}) ")
        line += " ".join(f"{s['phases_per_iteration_s'][k]['median'] * 1e3:11.2f}" for k in PHASES)
        line += f" {s['busy_during']['median']:5.2f}"
        print(line)
    doc = {"schema": "asyncsolve.bench.lanczos_transports/1",
           "parameters": {"sites": a.sites, "ranks": ranks, "iters": a.iters,
                          "repeats": a.repeats, "transports": transports, "chunk": a.chunk,
                          "quiet": a.quiet, "binary": a.binary},
           "runs": runs, "summary": summary}
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump(doc, f, indent=2)
        os.replace(a.json + ".tmp", a.json)
    if a.smoke:
        if not runs or any(set(s["phases_per_iteration_s"]) != set(PHASES) for s in summary) \
                or any(r["iterations"] != a.iters for r in runs):
            print("smoke: the document lacks runs or fields", file=sys.stderr)
            return 4
    return 4 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
