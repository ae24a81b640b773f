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
    until other processes use at most --quiet of the CPUs, and records the
    CPU share other processes took while each run was in flight (bench/
    benchkit.py's QuietGate and run_measured). --smoke: 8 sites, 2 ranks, 1
    repeat, 5 iterations, no waiting; checks the document's shape.

OUTPUT
    A table on stdout and, with --json, a document with schema
    "asyncsolve.bench.lanczos_transports/1": parameters, git commit, every
    run (command, time per iteration, phases, energy, the CPU share of other
    processes before and during it), and per configuration the
    median/min/max of the time per iteration and of every phase.
    Exit codes: 0 success; 2 bad arguments; 4 a run failed or energies differ.
"""
import os
import subprocess
import sys
import tempfile

from benchkit import (
    EXIT_BAD_ARGS,
    EXIT_FAILED,
    EXIT_OK,
    BadArguments,
    Parser,
    QuietGate,
    allow_root,
    git_commit,
    interleaved,
    launcher_line,
    ompi_environment,
    run_with_document,
    split_launcher,
    spread,
    write_json,
)

SCHEMA = "asyncsolve.bench.lanczos_transports/1"
PROG = "lanczos_transports.py"
PHASES = ["local", "remote", "reduce", "tridiagonal", "vector"]
TRANSPORTS = ("rma", "rma:notify", "shmem")


def parse(argv):
    ap = Parser(prog=PROG, description="TFIM Lanczos over every transport of the remote mat-vec")
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
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", default="")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args(argv)
    if a.smoke:
        a.sites, a.ranks, a.iters, a.repeats, a.quiet = 8, "2", 5, 1, 0.0
    try:
        a.rank_list = [int(r) for r in a.ranks.split(",")]
    except ValueError:
        raise BadArguments(
            f"--ranks '{a.ranks}': expected a comma-separated list of integers") from None
    a.transport_list = [t for t in a.transports.split(",") if t]
    for t in a.transport_list:
        ok = t in TRANSPORTS
        if t.startswith("mpi:"):
            ok = t[4:].isdigit() and int(t[4:]) >= 2
        if not ok:
            raise BadArguments(f"--transports: '{t}' is not mpi:K (K >= 2), rma, rma:notify or "
                               "shmem")
    if a.sites < 2 or a.iters < 1 or a.repeats < 1:
        raise BadArguments("--sites >= 2, --iters >= 1 and --repeats >= 1 expected")
    return a


def command(a, mpiexec, oshrun, ranks, transport, path):
    """(argv, env) of one run."""
    args = ["solve", "--method", "lanczos", "--problem", "tfim", "--sites", str(a.sites),
            "--tol", "1e-300", "--max-iters", str(a.iters), "--json", path]
    env = dict(os.environ)
    launcher = mpiexec
    if transport.startswith("mpi:"):
        args += ["--transport", "mpi", "--buffers", transport[4:], "--chunk", str(a.chunk)]
    elif transport == "rma:notify":
        args += ["--transport", "rma", "--rma-sync", "notify"]
    else:
        args += ["--transport", transport]
        if transport == "shmem":
            launcher = oshrun
            env["OMPI_MCA_osc"] = "ucx"
    return launcher + ["-n", str(ranks), a.binary] + args, env


def main(argv):
    try:
        a = parse(argv)
    except BadArguments as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_BAD_ARGS
    allow_root()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    mpiexec, launcher_version = launcher_line(split_launcher(a.mpiexec))
    oshrun, _ = launcher_line([a.oshrun, "--oversubscribe"])
    transports = list(a.transport_list)
    if "shmem" in transports:
        text = subprocess.run([a.binary, "info"], capture_output=True, text=True).stdout
        if "shmem transport built" not in text:
            print(f"{PROG}: this build has no OpenSHMEM, shmem skipped")
            transports.remove("shmem")
    gate = QuietGate(a.quiet, a.quiet_max_wait)
    configs = [(p, t) for p in a.rank_list for t in transports]
    runs = []
    failed = False
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        for rep, (p, t) in interleaved(configs, a.repeats):
            cmd, env = command(a, mpiexec, oshrun, p, t, path)
            record = {}
            # --tol 1e-300: every run stops after --iters with exit code 3.
            doc = run_with_document(record, cmd, path, a.timeout, gate, env, accept=(0, 3))
            if (record["error"] is None and doc is not None
                    and doc["result"]["reason"] != "max_iters"):
                record["error"] = f"stopped by {doc['result']['reason']}, expected max_iters"
            if record["error"] is not None or doc is None:
                print(f"{PROG}: run failed: {record['error']}: {record['command']}",
                      file=sys.stderr)
                failed = True
                continue
            os.remove(path)
            it = doc["result"]["iterations"]["max"]
            record.update({
                "ranks": p, "transport": t, "repeat": rep, "iterations": it,
                "energy": doc["result"]["energy"],
                "time_per_iteration_s": doc["result"]["time_s"] / it,
                "phases_per_iteration_s": {k: doc["phases"][k]["max"] / it for k in PHASES},
            })
            runs.append(record)
    summary = []
    for p, t in configs:
        mine = [r for r in runs if r["ranks"] == p and r["transport"] == t]
        if not mine:
            continue
        summary.append({
            "ranks": p, "transport": t, "runs": len(mine),
            "time_per_iteration_s": spread([r["time_per_iteration_s"] for r in mine]),
            "phases_per_iteration_s": {k: spread([r["phases_per_iteration_s"][k] for r in mine])
                                       for k in PHASES},
            "foreign_cpu_fraction": spread([r.get("foreign_cpu_fraction") for r in mine]),
        })
    for p in a.rank_list:
        energies = {r["energy"] for r in runs if r["ranks"] == p}
        if len(energies) > 1:
            print(f"{PROG}: energies differ on {p} ranks: {sorted(energies)}", file=sys.stderr)
            failed = True

    print(f"TFIM Lanczos, {a.sites} sites, {a.iters} iterations, median (min-max) of "
          f"{a.repeats} interleaved repeats; ms per iteration, phases max over ranks; "
          "others: CPU share of other processes during the runs (median)")
    print(f"{'ranks':>5} {'transport':>10} {'total':>20} " +
          " ".join(f"{k:>11}" for k in PHASES) + f" {'others':>6}")
    for s in summary:
        tot = s["time_per_iteration_s"]
        line = (f"{s['ranks']:>5} {s['transport']:>10} "
                f"{tot['median'] * 1e3:8.2f} ({tot['min'] * 1e3:5.2f}-{tot['max'] * 1e3:5.2f}) ")
        line += " ".join(f"{s['phases_per_iteration_s'][k]['median'] * 1e3:11.2f}"
                         for k in PHASES)
        other = s["foreign_cpu_fraction"]
        line += f" {other['median']:6.2f}" if other else f" {'-':>6}"
        print(line)
    doc = {"schema": SCHEMA, "git": git_commit(), "launcher": launcher_version,
           "environment": ompi_environment(),
           "parameters": {"sites": a.sites, "ranks": a.rank_list, "iters": a.iters,
                          "repeats": a.repeats, "transports": transports, "chunk": a.chunk,
                          "quiet": a.quiet, "quiet_max_wait": a.quiet_max_wait,
                          "binary": a.binary},
           "runs": runs, "summary": summary}
    if a.json:
        write_json(a.json, doc)
    if a.smoke and (not runs
                    or any(set(s["phases_per_iteration_s"]) != set(PHASES) for s in summary)
                    or any(r["iterations"] != a.iters for r in runs)):
        print(f"{PROG}: smoke: the document lacks runs or fields", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
