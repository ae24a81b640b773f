#!/usr/bin/env python3
"""NAME
    straggler.py - synchronous vs asynchronous Jacobi with one slow rank

PURPOSE
    The straggler experiment of paper 000 §6.1 at this machine's scale: one
    rank runs its sweeps --slow-factor times slower (asyncsolve's fault
    injection, --slow-rank/--slow-factor). Does asynchronous (or racy) Jacobi
    reach the tolerance sooner than synchronous Jacobi, which makes every rank
    wait for the slow one?

    For each variant in --variants (sync, async, racy) it solves the same
    problem with the straggler and without it (the baseline), interleaved:
    every repeat runs each configuration once, the order rotated from one
    repeat to the next. Every run must exit 0 with result.converged; the true
    residual ||b - Au||/||b|| of each run's final iterate is reported next to
    the tolerance (the asynchronous variants stop on an estimate, so it can
    end slightly above). Ratios such as async/sync are computed per repeat,
    from the runs of that repeat, and reported as the median over repeats.
    Nothing here asserts on time.

USAGE
    bench/straggler.py --binary build/asyncsolve [--ranks 2] [--repeats 7]
        [--problem plume] [--offset V] [--local 50,50,50] [--tol 1e-6]
        [--check-every 100] [--async-check-every 1] [--max-in-flight 1]
        [--allreduce auto] [--final-sync 0] [--slow-rank 1] [--slow-factor 2]
        [--variants sync,async,racy] [--mpiexec "mpiexec --oversubscribe"]
        [--quiet 0.10] [--quiet-max-wait 300] [--timeout 600]
        [--json results/bench/straggler.json] [--runs-dir DIR] [--smoke]

    --check-every is the residual period of sync (paper 000 §3.1.1: every 100
    iterations, blocking MPI_Allreduce). --async-check-every is that of async
    and racy; the default 1 is the paper's style: a non-blocking reduction is
    restarted as soon as the previous one completes. --mpiexec is split like a
    shell line, with semicolons (a CMake list) read as spaces; -q is added for
    Open MPI. Run as root, OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set if
    missing; export OMPI_MCA_mpi_yield_when_idle=1 when oversubscribing.
    Before each run it waits (at most --quiet-max-wait s) until other
    processes use at most --quiet of the CPUs, and it records the CPU share
    other processes took while each run was in flight (from /proc/stat less
    the launcher's reaped children: approximate, and high for runs not much
    longer than the launcher's start-up). --runs-dir keeps every run's
    asyncsolve result document.
    --smoke runs one repeat of a tiny problem (2 ranks, 10^3 per rank) to
    check the script end to end, and checks the JSON document's fields; it does
    not wait for quiet.

OUTPUT
    A table on stdout, and one JSON document (--json; in --smoke mode a
    temporary file unless --json is given) with schema
    "asyncsolve.bench.straggler/1": parameters, the command line of every
    configuration, every run's key numbers (time to solution = result.time_s,
    the maximum over ranks; iterations min/mean/max/per rank; true residual;
    residual estimate; phases; sends), per configuration the median/min/max
    time and iterations, and the ratios (per repeat, median/min/max).

    Exit codes: 0 every run converged (and, with --smoke, the document has
    its fields); 2 bad arguments; 4 a run failed (non-zero exit, no result
    document, not converged) or the document lacks a field.
"""
import argparse
import os
import shlex
import shutil
import sys

from benchkit import (
    BadArguments,
    Campaign,
    add_campaign_options,
    asyncsolve_info,
    conclude,
    elapsed_s,
    fmt,
    host,
    launcher_info,
    missing_fields,
    print_ratios,
    ratio,
    require_converged,
    run_driver,
    run_with_document,
    split_launcher,
    spread,
    utc_stamp,
)

SCHEMA = "asyncsolve.bench.straggler/1"
VARIANTS = ("sync", "async", "racy")

# ---------------------------------------------------------------- arguments

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="straggler.py",
        description="Synchronous vs asynchronous Jacobi with one slow rank (paper 000 §6.1).")
    p.add_argument("--binary", default="build/asyncsolve", help="the asyncsolve executable")
    p.add_argument("--mpiexec", default="mpiexec --oversubscribe",
                   help="launcher line; ';' read as spaces (default: %(default)s)")
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=7, help="repeats of every configuration")
    p.add_argument("--variants", default="sync,async,racy",
                   help="comma-separated subset of sync,async,racy; sync is needed for ratios")
    p.add_argument("--problem", default="plume", help="plume or ones")
    p.add_argument("--offset", type=float, default=0.0, help="asyncsolve --offset")
    p.add_argument("--local", default="50,50,50", help="interior points per rank NX,NY,NZ")
    p.add_argument("--tol", type=float, default=1e-6, help="relative residual tolerance")
    p.add_argument("--max-iters", type=int, default=100000)
    p.add_argument("--check-every", type=int, default=100, help="sync's residual period")
    p.add_argument("--async-check-every", type=int, default=1,
                   help="async/racy residual period (1: restart the reduction at once)")
    p.add_argument("--max-in-flight", type=int, default=1,
                   help="async/racy R (asyncsolve's default)")
    p.add_argument("--allreduce", default="auto", help="async/racy reduction: auto, tree or impi")
    p.add_argument("--final-sync", type=int, default=0, help="async/racy --final-sync K")
    p.add_argument("--slow-rank", type=int, default=1, help="the straggler")
    p.add_argument("--slow-factor", type=float, default=2.0, help="its slow-down, > 1")
    add_campaign_options(p, "straggler", 600.0, 300.0,
                         "tiny end-to-end check: 1 repeat, 2 ranks, 10,10,10, tol 1e-4")
    args = p.parse_args(argv)
    if args.smoke:
        args.repeats, args.ranks, args.local, args.tol = 1, 2, "10,10,10", 1e-4
        args.slow_rank, args.quiet = 1, 0.0
    validate(args)
    return args


def validate(args):
    args.variant_list = [v.strip() for v in args.variants.split(",") if v.strip()]
    bad = [v for v in args.variant_list if v not in VARIANTS]
    if bad or not args.variant_list or len(set(args.variant_list)) != len(args.variant_list):
        raise BadArguments(f"--variants {args.variants!r}: expected distinct names from "
                           f"{','.join(VARIANTS)}")
    if args.ranks < 2:
        raise BadArguments(f"--ranks {args.ranks}: expected at least 2 (one slow, one not)")
    if args.repeats < 1:
        raise BadArguments(f"--repeats {args.repeats}: expected at least 1")
    if not 0 <= args.slow_rank < args.ranks:
        raise BadArguments(f"--slow-rank {args.slow_rank}: expected 0..{args.ranks - 1}")
    if not args.slow_factor > 1.0:
        raise BadArguments(f"--slow-factor {args.slow_factor}: expected a number > 1")
    try:
        local = [int(x) for x in args.local.split(",")]
    except ValueError:
        local = []
    if len(local) != 3 or min(local) < 1:
        raise BadArguments(f"--local {args.local!r}: expected three positive integers NX,NY,NZ")
    args.local_triple = local
    if not 0.0 < args.tol < 1.0:
        raise BadArguments(f"--tol {args.tol}: expected 0 < tol < 1")
    for name in ("check_every", "async_check_every", "max_in_flight", "max_iters", "timeout"):
        if getattr(args, name) < 1:
            raise BadArguments(f"--{name.replace('_', '-')} {getattr(args, name)}: "
                               "expected a positive number")
    if not 0.0 <= args.quiet <= 1.0 or args.quiet_max_wait < 0:
        raise BadArguments(f"--quiet {args.quiet}, --quiet-max-wait {args.quiet_max_wait}: "
                           "expected a fraction 0..1 and seconds >= 0")
    if args.final_sync < 0:
        raise BadArguments(f"--final-sync {args.final_sync}: expected >= 0")
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        raise BadArguments(f"--binary {args.binary}: expected an asyncsolve executable "
                           "(build it: ninja -C build asyncsolve_exe)")
    args.launcher = split_launcher(args.mpiexec)
    if not args.launcher or shutil.which(args.launcher[0]) is None:
        raise BadArguments(f"--mpiexec {args.mpiexec!r}: expected a launcher on PATH")


# ---------------------------------------------------------------- running

def configurations(args):
    """Every (variant, straggler) pair, with the asyncsolve arguments (no --json)."""
    configs = []
    for variant in args.variant_list:
        solve = ["solve", "--problem", args.problem, "--offset", repr(args.offset),
                 "--local", ",".join(map(str, args.local_triple)), "--tol", repr(args.tol),
                 "--max-iters", str(args.max_iters), "--variant", variant]
        if variant == "sync":
            solve += ["--check-every", str(args.check_every)]
        else:
            solve += ["--check-every", str(args.async_check_every),
                      "--max-in-flight", str(args.max_in_flight),
                      "--allreduce", args.allreduce]
            if args.final_sync > 0:
                solve += ["--final-sync", str(args.final_sync)]
        for straggler in (False, True):
            extra = (["--slow-rank", str(args.slow_rank), "--slow-factor", repr(args.slow_factor)]
                     if straggler else [])
            name = f"{variant}+straggler" if straggler else variant
            configs.append({"name": name, "variant": variant, "straggler": straggler,
                            "solve_args": solve + extra})
    return configs


def run_once(args, launcher, gate, config, repeat, runs_dir):
    """Runs one configuration once; returns the run's record (failed: `error` set)."""
    path = os.path.join(runs_dir, f"{config['name']}.r{repeat}.json")
    cmd = launcher + ["-n", str(args.ranks), args.binary] + config["solve_args"] + ["--json", path]
    record = {"configuration": config["name"], "variant": config["variant"],
              "straggler": config["straggler"], "repeat": repeat}
    if run_with_document(record, cmd, path, args.timeout, gate,
                         key_numbers=lambda doc: key_numbers(doc, args)) is not None:
        require_converged(record)
    return record


def key_numbers(doc, args):
    r, stats = doc["result"], doc.get("stats", {})
    per_rank = r["iterations"]["per_rank"]
    fast = [n for i, n in enumerate(per_rank) if i != args.slow_rank]
    return {
        "version": doc.get("version"), "git": doc.get("git"),
        "time_s": r["time_s"], "time_s_ranks": r.get("time_s_ranks"),
        "converged": r["converged"], "reason": r.get("reason"),
        "iterations": {k: r["iterations"][k] for k in ("min", "mean", "max", "per_rank")},
        "iterations_slow_rank": per_rank[args.slow_rank],
        "iterations_other_ranks_max": max(fast),
        "final_sync_iterations": r.get("final_sync_iterations", 0),
        "true_residual": r["true_residual"], "residual_estimate": r["residual_estimate"],
        "true_residual_over_tol": r["true_residual"] / args.tol,
        "injected_s_max": (r.get("injected_s") or {}).get("max"),
        "skipped_sends": stats.get("skipped_sends"),
        "sends_per_iteration": stats.get("sends_per_iteration"),
        "phases_max_s": {k: v["max"] for k, v in doc.get("phases", {}).items()},
        "phases_mean_s": {k: v["mean"] for k, v in doc.get("phases", {}).items()},
    }


# ---------------------------------------------------------------- summaries

def summarise(configs, campaign):
    out = []
    for c in configs:
        mine, ok = campaign.mine(c["name"])
        out.append({
            "name": c["name"], "variant": c["variant"], "straggler": c["straggler"],
            "runs": len(mine), "failed": len(mine) - len(ok),
            "all_converged": bool(mine) and len(ok) == len(mine),
            "time_s": spread([r["time_s"] for r in ok]),
            "iterations": {k: spread([r["iterations"][k] for r in ok])
                           for k in ("min", "mean", "max")},
            "iterations_slow_rank": spread([r["iterations_slow_rank"] for r in ok]),
            "iterations_other_ranks_max": spread([r["iterations_other_ranks_max"] for r in ok]),
            "true_residual": spread([r["true_residual"] for r in ok]),
            "true_residual_over_tol_max": max((r["true_residual_over_tol"] for r in ok),
                                              default=None),
            "foreign_cpu_fraction_max": max((r.get("foreign_cpu_fraction") or 0.0 for r in mine),
                                            default=None),
            "phases_max_s": {k: spread([r["phases_max_s"].get(k) for r in ok])
                             for k in (ok[0]["phases_max_s"] if ok else {})},
            "sends_per_iteration": spread([r["sends_per_iteration"] for r in ok]),
            "skipped_sends": spread([r["skipped_sends"] for r in ok]),
        })
    return out


def all_ratios(args, runs):
    ratios = {}
    for v in args.variant_list:
        if v != "sync" and "sync" in args.variant_list:
            ratios[f"{v}/sync with straggler"] = ratio(runs, args.repeats, f"{v}+straggler",
                                                       "sync+straggler")
            ratios[f"{v}/sync without"] = ratio(runs, args.repeats, v, "sync")
    for v in args.variant_list:
        ratios[f"{v} straggler/without"] = ratio(runs, args.repeats, f"{v}+straggler", v)
    return ratios


# ---------------------------------------------------------------- output

def print_table(doc):
    p = doc["parameters"]
    print(f"straggler: {p['ranks']} ranks, {p['problem']} --local {p['local']}, tol {p['tol']:g}, "
          f"rank {p['slow_rank']} x{p['slow_factor']:g}, {p['repeats']} repeats "
          f"(time: max over ranks; median [min..max])")
    head = (f"{'configuration':<17} {'ok':>5} {'time s':>8} {'[min .. max]':>17} "
            f"{'iters min/mean/max (median)':>28} {'slow/other':>12} {'true res':>9} "
            f"{'max/tol':>7} {'other':>5}")
    print(head)
    print("-" * len(head))
    for c in doc["configurations"]:
        t, it = c["time_s"] or {}, c["iterations"]
        iters = "/".join(fmt((it[k] or {}).get("median"), ".0f") for k in ("min", "mean", "max"))
        slow = (c["iterations_slow_rank"] or {}).get("median") if c["straggler"] else None
        other = (c["iterations_other_ranks_max"] or {}).get("median") if c["straggler"] else None
        so = f"{fmt(slow, '.0f')}/{fmt(other, '.0f')}" if c["straggler"] else ""
        print(f"{c['name']:<17} {c['runs'] - c['failed']:>2}/{c['runs']:<2} "
              f"{fmt(t.get('median'), '.3f'):>8} "
              f"{'[' + fmt(t.get('min'), '.3f') + ' .. ' + fmt(t.get('max'), '.3f') + ']':>17} "
              f"{iters:>28} {so:>12} {fmt((c['true_residual'] or {}).get('median'), '.3e'):>9} "
              f"{fmt(c['true_residual_over_tol_max'], '.3f'):>7} "
              f"{fmt(c['foreign_cpu_fraction_max'], '.2f'):>5}")
    print("(slow/other: median iterations of the slow rank / the fastest other rank; max/tol: "
          "largest true residual / tol; other: largest CPU share other processes took in a run)")
    print()
    print_ratios(doc["ratios"], 32)


REQUIRED = {
    "document": ["schema", "created", "host", "parameters", "launcher", "commands", "runs",
                 "configurations", "ratios", "passed", "failures", "asyncsolve"],
    "run": ["configuration", "variant", "straggler", "repeat", "command", "exit_code", "error",
            "time_s", "converged", "iterations", "true_residual", "residual_estimate",
            "iterations_slow_rank", "iterations_other_ranks_max", "phases_max_s",
            "sends_per_iteration", "skipped_sends"],
    "configuration": ["name", "variant", "straggler", "runs", "failed", "all_converged",
                      "time_s", "iterations", "true_residual", "true_residual_over_tol_max"],
    "ratio": ["numerator", "denominator", "per_repeat", "median", "min", "max"],
}


def smoke_missing(doc, args):
    """What the document lacks (names), for --smoke."""
    missing = missing_fields(doc, REQUIRED, SCHEMA, 2 * len(args.variant_list), "time_s")
    if "sync" in args.variant_list:
        for v in args.variant_list:
            if v != "sync" and f"{v}/sync with straggler" not in doc.get("ratios", {}):
                missing.append(f"ratios[{v}/sync with straggler]")
    return missing


# ---------------------------------------------------------------- main

def main(argv):
    return run_driver("straggler.py", argv, parse_args, run)


def run(args):
    configs = configurations(args)
    with Campaign("straggler", args, mpi=True) as campaign:
        launcher, gate = campaign.launcher, campaign.gate
        def describe(record):
            return (f"time {fmt(record.get('time_s'), '.3f')} s  true residual "
                    f"{fmt(record.get('true_residual'), '.3e')}")

        campaign.run(configs, args.repeats,
                     lambda config, rep: run_once(args, launcher, gate, config, rep,
                                                  campaign.runs_dir), describe, 16)
        runs = campaign.runs
        failures = campaign.failures()
        doc = {
            "schema": SCHEMA,
            "created": utc_stamp(campaign.started),
            "elapsed_s": elapsed_s(campaign.started),
            "host": host(),
            "asyncsolve": asyncsolve_info(args.binary, runs),
            "launcher": launcher_info(launcher, campaign.launcher_version),
            "parameters": {
                "ranks": args.ranks, "repeats": args.repeats, "variants": args.variant_list,
                "problem": args.problem, "offset": args.offset, "local": args.local_triple,
                "tol": args.tol, "max_iters": args.max_iters,
                "check_every_sync": args.check_every,
                "check_every_async": args.async_check_every,
                "max_in_flight": args.max_in_flight, "allreduce_async": args.allreduce,
                "final_sync": args.final_sync, "slow_rank": args.slow_rank,
                "quiet": args.quiet, "quiet_max_wait_s": args.quiet_max_wait,
                "slow_factor": args.slow_factor, "smoke": args.smoke,
                "order": "each repeat runs every configuration once, rotated by one per repeat",
                "time": "result.time_s of asyncsolve: time to solution, maximum over ranks",
            },
            "commands": {c["name"]: shlex.join(launcher + ["-n", str(args.ranks), args.binary]
                                               + c["solve_args"] + ["--json", "FILE"])
                         for c in configs},
            "runs": runs,
            "configurations": summarise(configs, campaign),
            "ratios": all_ratios(args, runs),
            "passed": not failures,
            "failures": failures,
        }
        print()
        print_table(doc)
        missing = smoke_missing(doc, args) if args.smoke else []
        return conclude("straggler.py", campaign.json_path, doc, failures, missing, args.smoke,
                        campaign.temporary,
                        "smoke: every run converged; the document has its fields")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
