#!/usr/bin/env python3
"""NAME
    omp_jacobi.py - synchronous, asynchronous and racy Jacobi over OpenMP threads

PURPOSE
    Paper 000 §3.3 and Table 3 at this machine's scale: on one node, is
    asynchronous (lock per boundary, running residual sum) or racy (relaxed
    atomic boundary reads) Jacobi faster than synchronous Jacobi (two parallel
    loops and a reduction)? The paper found async and racy 33% (conclusion)
    to 63% (§5) faster on 32 threads of a Cray XE6 node.

    asyncsolve solve --transport omp runs one process with --threads T, each
    thread owning a slab of z-planes; with --local the grid grows in z with the
    threads (the paper's weak scaling). For every thread count in --threads
    and every variant in --variants, the same problem is solved --repeats
    times, interleaved: each repeat runs every configuration once, the order
    rotated by one per repeat, so that drift of the machine affects all alike.
    Every run must exit 0 with result.converged (the OpenMP variants confirm
    their stop with the true residual, so it is below --tol). Ratios such as
    async/sync are computed per repeat from the runs of that repeat, and
    reported as the median over repeats. Nothing here asserts on time.

USAGE
    bench/omp_jacobi.py --binary build/asyncsolve [--threads 1,2] [--repeats 5]
        [--variants sync,sync-copy,async,racy] [--problem plume] [--local 50,50,50]
        [--tol 1e-6] [--max-iters 100000] [--check-every 100]
        [--wait-policy passive|active|default] [--quiet 0.10]
        [--quiet-max-wait 300] [--timeout 600]
        [--json results/bench/omp_jacobi.json] [--runs-dir DIR] [--smoke]

    sync swaps u and u_new; sync-copy (sync --copy) is the paper's Figure 2:
    a second parallel loop copies u = u_new, as async and racy must (their
    neighbours read u while they write u_new), then a second barrier. The
    paper's async and racy were faster than a sync with that copy.
    --check-every is sync's residual period (the paper computes the residual
    every 100 iterations); async and racy keep a running residual sum and test
    it every iteration. --wait-policy sets OMP_WAIT_POLICY for every run
    (default: passive when a thread count exceeds the cores, so that waiting
    threads yield; otherwise OMP_WAIT_POLICY as inherited); it is recorded. Before
    each run the script waits (at most --quiet-max-wait s) until other
    processes use at most --quiet of the CPUs, and records the CPU share other
    processes took while each run was in flight. --runs-dir keeps every run's
    asyncsolve result document. --smoke runs one repeat of a tiny problem with
    1 and 2 threads to check the script end to end, and checks the document's
    fields; it does not wait for quiet.

OUTPUT
    A table in the layout of paper 000 Table 3 (iterations min/mean/max over
    threads, time) on stdout, and one JSON document (--json; with --smoke a
    temporary file unless --json is given), schema "asyncsolve.bench.omp_jacobi/1":
    parameters, the command of every configuration, every run's key numbers
    (time to solution, iterations min/mean/max and per thread, true residual,
    residual estimate, unconfirmed stops, sweep bandwidth), per configuration
    the median/min/max over repeats, and the ratios per thread count.

    Exit codes: 0 every run converged (with --smoke: and the document has its
    fields); 2 bad arguments; 4 a run failed or the document lacks a field.
"""
import os
import shlex
import sys

from benchkit import (
    EXIT_BAD_ARGS,
    BadArguments,
    Campaign,
    Parser,
    add_campaign_options,
    asyncsolve_info,
    conclude,
    elapsed_s,
    fmt,
    git_commit,
    host,
    missing_fields,
    print_ratios,
    ratio,
    require_converged,
    run_driver,
    run_with_document,
    spread,
    utc_stamp,
)

SCHEMA = "asyncsolve.bench.omp_jacobi/1"
PROG = "omp_jacobi.py"
VARIANTS = ("sync", "sync-copy", "async", "racy")
WAIT_POLICIES = ("passive", "active", "default")


# ---------------------------------------------------------------- arguments

def parse_args(argv):
    p = Parser(prog=PROG, description="Sync vs async vs racy Jacobi over OpenMP threads "
                                      "(paper 000 §3.3, Table 3).")
    p.add_argument("--binary", default="build/asyncsolve", help="the asyncsolve executable")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--repeats", type=int, default=5, help="repeats of every configuration")
    p.add_argument("--variants", default="sync,sync-copy,async,racy",
                   help="comma-separated subset of sync,sync-copy,async,racy (sync-copy: sync "
                        "--copy, the paper's two loops)")
    p.add_argument("--problem", default="plume", help="plume or ones")
    p.add_argument("--local", default="50,50,50",
                   help="interior points per thread NX,NY,NZ (the grid grows in z)")
    p.add_argument("--tol", type=float, default=1e-6, help="relative residual tolerance")
    p.add_argument("--max-iters", type=int, default=100000)
    p.add_argument("--check-every", type=int, default=100, help="sync's residual period")
    p.add_argument("--wait-policy", default=None, choices=WAIT_POLICIES,
                   help="OMP_WAIT_POLICY for every run (default: passive if a thread count "
                        "exceeds the cores, else as inherited)")
    add_campaign_options(p, "omp_jacobi", 600.0, 300.0,
                         "tiny end-to-end check: 1 repeat, threads 1,2, 12,12,6, tol 1e-4")
    args = p.parse_args(argv)
    if args.smoke:
        args.repeats, args.threads, args.local = 1, "1,2", "12,12,6"
        args.tol, args.quiet = 1e-4, 0.0
    validate(args)
    return args


def validate(args):
    args.variant_list = [v.strip() for v in args.variants.split(",") if v.strip()]
    if (not args.variant_list or any(v not in VARIANTS for v in args.variant_list)
            or len(set(args.variant_list)) != len(args.variant_list)):
        raise BadArguments(f"--variants {args.variants!r}: expected distinct names from "
                           f"{','.join(VARIANTS)}")
    try:
        args.thread_list = [int(x) for x in args.threads.split(",")]
    except ValueError:
        args.thread_list = []
    if (not args.thread_list or min(args.thread_list) < 1
            or len(set(args.thread_list)) != len(args.thread_list)):
        raise BadArguments(f"--threads {args.threads!r}: expected distinct positive integers")
    try:
        local = [int(x) for x in args.local.split(",")]
    except ValueError:
        local = []
    if len(local) != 3 or min(local) < 1:
        raise BadArguments(f"--local {args.local!r}: expected three positive integers NX,NY,NZ")
    args.local_triple = local
    if args.repeats < 1:
        raise BadArguments(f"--repeats {args.repeats}: expected at least 1")
    if not 0.0 < args.tol < 1.0:
        raise BadArguments(f"--tol {args.tol}: expected 0 < tol < 1")
    for name in ("check_every", "max_iters", "timeout"):
        if getattr(args, name) <= 0:
            raise BadArguments(f"--{name.replace('_', '-')} {getattr(args, name)}: "
                               "expected a positive number")
    if not 0.0 <= args.quiet <= 1.0 or args.quiet_max_wait < 0:
        raise BadArguments(f"--quiet {args.quiet}, --quiet-max-wait {args.quiet_max_wait}: "
                           "expected a fraction 0..1 and seconds >= 0")
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        raise BadArguments(f"--binary {args.binary}: expected an asyncsolve executable "
                           "(build it: ninja -C build asyncsolve_exe)")
    if args.wait_policy is None:
        over = max(args.thread_list) > (os.cpu_count() or 1)
        args.wait_policy = "passive" if over else "default"


# ---------------------------------------------------------------- running

def configurations(args):
    """Every (threads, variant) pair, with the asyncsolve arguments (no --json)."""
    configs = []
    for threads in args.thread_list:
        for variant in args.variant_list:
            solve = ["solve", "--transport", "omp", "--threads", str(threads),
                     "--variant", variant.split("-")[0], "--problem", args.problem,
                     "--local", ",".join(map(str, args.local_triple)), "--tol", repr(args.tol),
                     "--max-iters", str(args.max_iters)]
            if variant.startswith("sync"):
                solve += ["--check-every", str(args.check_every)]
            if variant == "sync-copy":
                solve += ["--copy"]
            configs.append({"name": f"{variant}/T{threads}", "variant": variant,
                            "threads": threads, "solve_args": solve})
    return configs


def run_environment(args):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)  # --threads decides
    if args.wait_policy != "default":
        env["OMP_WAIT_POLICY"] = args.wait_policy.upper()
    return env


def run_once(args, env, gate, config, repeat, runs_dir):
    """Runs one configuration once; returns the run's record (failed: `error` set)."""
    path = os.path.join(runs_dir, config["name"].replace("/", "_") + f".r{repeat}.json")
    cmd = [args.binary] + config["solve_args"] + ["--json", path]
    record = {"configuration": config["name"], "variant": config["variant"],
              "threads": config["threads"], "repeat": repeat}
    if run_with_document(record, cmd, path, args.timeout, gate, env,
                         key_numbers=key_numbers) is not None:
        if record["error"] is None and (record["ran_threads"] != config["threads"]
                                        or record["ran_variant"] != config["variant"]):
            record["error"] = (f"asyncsolve ran {record['ran_variant']} with "
                               f"{record['ran_threads']} threads, not the configuration asked for")
        require_converged(record)
    return record


def key_numbers(doc):
    r, m = doc["result"], doc["method"]
    it = r["iterations"]
    return {
        "version": doc.get("version"), "git": doc.get("git"),
        "ran_variant": m["variant"] + ("-copy" if m.get("copy") else ""),
        "ran_threads": m["threads"],
        "global": doc.get("problem", {}).get("global"),
        "converged": r["converged"], "reason": r.get("reason"),
        "time_s": r["time_s"], "time_per_iteration_s": r.get("time_per_iteration_s"),
        "iterations": {"min": it["min"], "mean": it["mean"], "max": it["max"],
                       "per_thread": it.get("per_thread", it.get("per_rank"))},
        "true_residual": r["true_residual"], "residual_estimate": r["residual_estimate"],
        "unconfirmed_stops": r.get("unconfirmed_stops", 0),
        "sweep_bandwidth_gbs": r.get("sweep_bandwidth_gbs"),
    }


# ---------------------------------------------------------------- summaries

def summarise(configs, campaign):
    out = []
    for c in configs:
        every, ok = campaign.mine(c["name"])
        out.append({
            "name": c["name"], "variant": c["variant"], "threads": c["threads"],
            "runs": len(every), "failed": len(every) - len(ok),
            "global": ok[0]["global"] if ok else None,
            "time_s": spread([r["time_s"] for r in ok]),
            "time_per_iteration_s": spread([r["time_per_iteration_s"] for r in ok]),
            "iterations": {k: spread([r["iterations"][k] for r in ok])
                           for k in ("min", "mean", "max")},
            "true_residual": spread([r["true_residual"] for r in ok]),
            "unconfirmed_stops": spread([r["unconfirmed_stops"] for r in ok]),
            "sweep_bandwidth_gbs": spread([r["sweep_bandwidth_gbs"] for r in ok]),
        })
    return out


def all_ratios(args):
    """async and racy against sync and sync-copy at every thread count, and T/T1 of each
    variant (weak scaling)."""
    ratios = {}
    for base in ("sync", "sync-copy"):
        if base in args.variant_list:
            for t in args.thread_list:
                for v in args.variant_list:
                    if v in ("async", "racy"):
                        ratios[f"{v}/{base} T{t}"] = (f"{v}/T{t}", f"{base}/T{t}")
    base = min(args.thread_list)
    for t in args.thread_list:
        if t != base:
            for v in args.variant_list:
                ratios[f"{v} T{t}/T{base}"] = (f"{v}/T{t}", f"{v}/T{base}")
    return ratios


# ---------------------------------------------------------------- output

def print_table(doc):
    p = doc["parameters"]
    print(f"omp_jacobi: {p['problem']} --local {p['local']} per thread, tol {p['tol']:g}, "
          f"OMP_WAIT_POLICY {p['wait_policy']}, {p['repeats']} repeats "
          f"(medians [min..max]; iterations over threads, as paper 000 Table 3)")
    head = (f"{'threads':>7} {'variant':<9} {'ok':>5} {'iters min':>9} {'mean':>8} {'max':>8} "
            f"{'time s':>8} {'[min .. max]':>17} {'us/it':>7} {'true res':>9}")
    print(head)
    print("-" * len(head))
    for c in doc["configurations"]:
        t, it = c["time_s"] or {}, c["iterations"]
        tpi = (c["time_per_iteration_s"] or {}).get("median")
        print(f"{c['threads']:>7} {c['variant']:<9} {c['runs'] - c['failed']:>2}/{c['runs']:<2} "
              + " ".join(f"{fmt((it[k] or {}).get('median'), '.0f'):>{w}}"
                         for k, w in (("min", 9), ("mean", 8), ("max", 8)))
              + f" {fmt(t.get('median'), '.3f'):>8} "
              f"{'[' + fmt(t.get('min'), '.3f') + ' .. ' + fmt(t.get('max'), '.3f') + ']':>17} "
              f"{fmt(tpi * 1e6 if tpi is not None else None, '.1f'):>7} "
              f"{fmt((c['true_residual'] or {}).get('median'), '.2e'):>9}")
    print()
    print_ratios(doc["ratios"], 30)


REQUIRED = {
    "document": ["schema", "created", "host", "parameters", "commands", "runs",
                 "configurations", "ratios", "passed", "failures", "asyncsolve"],
    "run": ["configuration", "variant", "threads", "repeat", "command", "exit_code", "error",
            "time_s", "converged", "iterations", "true_residual", "residual_estimate",
            "unconfirmed_stops"],
    "configuration": ["name", "variant", "threads", "runs", "failed", "time_s", "iterations",
                      "true_residual"],
}


def smoke_missing(doc, args):
    """What the document lacks (names), for --smoke."""
    missing = missing_fields(doc, REQUIRED, SCHEMA,
                             len(args.variant_list) * len(args.thread_list))
    for i, r in enumerate(doc.get("runs", [])):
        per_thread = (r.get("iterations") or {}).get("per_thread") or []
        if len(per_thread) != r.get("threads"):
            missing.append(f"runs[{i}].iterations.per_thread (one count per thread)")
    return missing


# ---------------------------------------------------------------- main

def main(argv):
    return run_driver(PROG, argv, parse_args, run)


def run(args):
    configs = configurations(args)
    env = run_environment(args)
    with Campaign("omp_jacobi", args) as campaign:
        gate = campaign.gate
        def describe(record):
            return (f"time {fmt(record.get('time_s'), '.3f')} s  true residual "
                    f"{fmt(record.get('true_residual'), '.2e')}")

        rejected = campaign.run(configs, args.repeats,
                                lambda config, rep: run_once(args, env, gate, config, rep,
                                                             campaign.runs_dir),
                                describe, 9, stop_on_rejection=True)
        if rejected:
            print(f"{PROG}: error: {rejected}", file=sys.stderr)
            return EXIT_BAD_ARGS
        runs = campaign.runs
        failures = campaign.failures()
        doc = {
            "schema": SCHEMA,
            "created": utc_stamp(campaign.started),
            "elapsed_s": elapsed_s(campaign.started),
            "host": host(),
            "git_commit": git_commit(),
            "asyncsolve": asyncsolve_info(args.binary, runs),
            "parameters": {
                "threads": args.thread_list, "repeats": args.repeats,
                "variants": args.variant_list, "problem": args.problem,
                "local": args.local_triple, "tol": args.tol, "max_iters": args.max_iters,
                "check_every_sync": args.check_every,
                "wait_policy": env.get("OMP_WAIT_POLICY", "runtime default"),
                "quiet": args.quiet, "quiet_max_wait_s": args.quiet_max_wait,
                "smoke": args.smoke,
                "order": "each repeat runs every configuration once, rotated by one per repeat",
                "time": "result.time_s of asyncsolve: time to solution",
            },
            "commands": {c["name"]: shlex.join([args.binary] + c["solve_args"]
                                               + ["--json", "FILE"]) for c in configs},
            "runs": runs,
            "configurations": summarise(configs, campaign),
            "ratios": {name: ratio(runs, args.repeats, num, den)
                       for name, (num, den) in all_ratios(args).items()},
            "passed": not failures,
            "failures": failures,
        }
        print()
        print_table(doc)
        missing = smoke_missing(doc, args) if args.smoke else []
        return conclude(PROG, campaign.json_path, doc, failures, missing, args.smoke,
                        campaign.temporary,
                        "smoke: every run converged; the document has its fields")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
