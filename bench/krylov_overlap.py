#!/usr/bin/env python3
"""NAME
    krylov_overlap.py - which halo strategy, test period and reduction make CG fastest here

PURPOSE
    The Krylov methods hide their halo exchange behind the interior of the
    mat-vec (paper 001 Listing 3), testing it every --test-every interior
    planes so that it progresses, and pcg-overlap hides its inner products
    behind vector updates (paper 003 Figure 7). Which combination of halo
    strategy (--halo), test period (--test-every) and reduction (--allreduce)
    gives the shortest time per iteration on this machine?

    For every combination of --methods x --halos x --test-every x --allreduce
    it runs `asyncsolve solve --method M --halo H --test-every K --allreduce A`
    on the same problem, interleaved: every repeat runs each configuration
    once, the order rotated by one from one repeat to the next. Every run must
    exit 0 with result.converged. Per configuration it reports the median,
    min and max of result.time_per_iteration_s, the iterations, the medians of
    the phases that show where the time goes (halo_start, halo_wait,
    matvec_interior, matvec_boundary, and the reductions' sdotp_, gamma_,
    iprod_ and dots_ wait; with a blocking reduction (mpi) the time is in the
    matching _start phase, which is recorded as well) and of the tests made
    on the halo exchange (stats.halo_tests.mean). Each configuration is
    compared with a baseline of the same method (default --halo waitall
    --test-every 0 --allreduce mpi, which is always run): the ratio of times
    per iteration is computed per repeat and reported as the median over
    repeats. The halo strategy and the test period must not change the
    arithmetic, so within a method and a reduction the iteration count must
    be identical in every run; the document says whether it was
    (iterations_agree). pcg-overlap with --allreduce mpi is pcg2's
    computation (the same three reductions, waited for at once). Nothing here
    asserts on time.

USAGE
    bench/krylov_overlap.py --binary build/asyncsolve [--ranks 2] [--repeats 3]
        [--methods cg,pcg-overlap] [--halos waitall,alltoallv,ialltoallv,neighbor,persistent]
        [--test-every 0,1,4,16] [--allreduce mpi,impi] [--configs PATTERNS]
        [--baseline waitall/0/mpi] [--problem ones] [--global 128,128,128 | --local X,Y,Z]
        [--tol 1e-6] [--mpiexec "mpiexec --oversubscribe"] [--quiet 0.10]
        [--quiet-max-wait 30] [--quiet-budget 300] [--timeout 300]
        [--json results/bench/krylov_overlap.json] [--runs-dir DIR] [--smoke]

    A configuration is named METHOD/HALO/TEST_EVERY/ALLREDUCE, for example
    pcg-overlap/neighbor/4/impi. --configs keeps only the configurations
    matching one of its comma-separated shell patterns (fnmatch), e.g.
    'cg/*/4/*,*/persistent/*/*'; the baseline of each method is run anyway.
    --binary may also be spelled --asyncsolve. --mpiexec is split like a shell
    line, with semicolons (a CMake list) read as spaces; -q is added for Open
    MPI. Run as root, OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set if missing;
    export OMPI_MCA_mpi_yield_when_idle=1 when oversubscribing.

    Before each run it waits (at most --quiet-max-wait s, and at most
    --quiet-budget s over the whole benchmark) until other processes use at
    most --quiet of the CPUs; it does not sample again when the run just
    before showed other processes below --quiet. It records the CPU share
    other processes took while each run was in flight (from /proc/stat less
    the launcher's reaped children: approximate, high for short runs).
    --runs-dir keeps every run's asyncsolve result document.

    Duration: the defaults make 80 configurations (2 x 5 x 4 x 2) x 3
    repeats = 240 solves of 128^3 on 2 ranks, about 1 s each on a quiet
    2-core machine with the launcher: about 4-5 minutes (longer on a busy
    machine, by up to --quiet-budget of waiting). Use --repeats 5 or more for
    figures worth recording, and --configs or shorter lists to narrow it.

    --smoke checks the script end to end in a few seconds: 1 repeat, 2 ranks,
    --global 16,16,16, halos waitall,persistent and test-every 0,4 (unless
    --halos or --test-every are given), no waiting for quiet; it checks the
    JSON document's fields and that the iterations agree.

OUTPUT
    A table on stdout (one row per configuration, sorted by method, then
    median time per iteration), and one JSON document (--json; in --smoke
    mode a temporary file unless --json is given) with schema
    "asyncsolve.bench.krylov_overlap/1": parameters, hostname, date, the git
    commit of this checkout, the command line of every configuration, every
    run's key numbers, per configuration the median/min/max time per
    iteration and the phase medians, the ratios to the baselines, whether the
    iterations agree, and the fastest configuration of each method.

    Exit codes: 0 every run converged (and, with --smoke, the document has
    its fields and the iterations agree); 2 bad arguments, including a
    configuration the asyncsolve binary rejects (it exits 2: for instance a
    --halo it does not know; nothing is written); 4 a run failed (non-zero
    exit, no result document, not converged, not the configuration asked
    for) or, with --smoke, the document lacks a field or the iterations
    disagree.
"""
import fnmatch
import os
import shlex
import shutil
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
    launcher_info,
    median,
    missing_fields,
    ratio,
    require_converged,
    run_driver,
    run_with_document,
    split_launcher,
    spread,
    utc_stamp,
)

SCHEMA = "asyncsolve.bench.krylov_overlap/1"
PROG = "krylov_overlap.py"
METHODS = ("cg", "pcg1", "pcg2", "pcg-overlap", "pipecg")
HALOS = ("waitall", "alltoallv", "ialltoallv", "neighbor", "persistent")
ALLREDUCES = ("mpi", "impi", "tree")
# Phases whose medians every configuration reports (seconds, phases.<name>.max).
KEY_PHASES = ("halo_start", "halo_wait", "matvec_interior", "matvec_boundary",
              "sdotp_wait", "gamma_wait", "iprod_wait", "dots_wait")
# The reductions: blocking ones (mpi) spend their time in _start, the others in _wait.
REDUCTIONS = ("sdotp", "gamma", "iprod", "dots")

# ---------------------------------------------------------------- arguments

def parse_args(argv):
    p = Parser(prog=PROG, description="Halo strategy x test period x reduction for the "
                                      "Krylov methods: which is fastest on this machine.")
    p.add_argument("--binary", "--asyncsolve", dest="binary", default="build/asyncsolve",
                   help="the asyncsolve executable (default: %(default)s)")
    p.add_argument("--mpiexec", default="mpiexec --oversubscribe",
                   help="launcher line; ';' read as spaces (default: %(default)s)")
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3,
                   help="repeats of every configuration (default: %(default)s)")
    p.add_argument("--methods", default="cg,pcg-overlap",
                   help=f"comma-separated, from {','.join(METHODS)} (default: %(default)s)")
    p.add_argument("--halos", default=None,
                   help=f"comma-separated, from {','.join(HALOS)} (default: all)")
    p.add_argument("--test-every", default=None,
                   help="comma-separated test periods K >= 0 (default: 0,1,4,16)")
    p.add_argument("--allreduce", default="mpi,impi",
                   help=f"comma-separated, from {','.join(ALLREDUCES)} (default: %(default)s)")
    p.add_argument("--configs", default="",
                   help="keep only configurations METHOD/HALO/K/ALLREDUCE matching one of "
                        "these comma-separated shell patterns")
    p.add_argument("--baseline", default="waitall/0/mpi",
                   help="HALO/K/ALLREDUCE every configuration of a method is compared with "
                        "(default: %(default)s)")
    p.add_argument("--problem", default="ones", help="ones, plume or laplace27")
    p.add_argument("--global", dest="global_", default=None,
                   help="global interior grid NX,NY,NZ (default 128,128,128 unless --local)")
    p.add_argument("--local", default=None, help="interior points per rank NX,NY,NZ")
    p.add_argument("--tol", type=float, default=1e-6, help="relative residual tolerance")
    add_campaign_options(p, "krylov_overlap", 300.0, 30.0,
                         "tiny end-to-end check: 1 repeat, 2 ranks, --global 16,16,16, "
                         "halos waitall,persistent, test-every 0,4")
    p.add_argument("--quiet-budget", type=float, default=300.0,
                   help="longest wait for quiet over the whole benchmark, seconds")
    args = p.parse_args(argv)
    if args.smoke:
        args.repeats, args.ranks, args.quiet = 1, 2, 0.0
        if args.global_ is None and args.local is None:
            args.global_ = "16,16,16"
        if args.halos is None:
            args.halos = "waitall,persistent"
        if args.test_every is None:
            args.test_every = "0,4"
    if args.halos is None:
        args.halos = ",".join(HALOS)
    if args.test_every is None:
        args.test_every = "0,1,4,16"
    if args.global_ is None and args.local is None:
        args.global_ = "128,128,128"
    validate(args)
    return args


def name_list(option, text, allowed):
    values = [v.strip() for v in text.split(",") if v.strip()]
    if (not values or len(set(values)) != len(values)
            or any(v not in allowed for v in values)):
        raise BadArguments(f"{option} {text!r}: expected distinct names from {','.join(allowed)}")
    return values


def triple(option, text):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or min(values) < 1:
        raise BadArguments(f"{option} {text!r}: expected three positive integers NX,NY,NZ")
    return values


def validate(args):
    args.method_list = name_list("--methods", args.methods, METHODS)
    args.halo_list = name_list("--halos", args.halos, HALOS)
    args.allreduce_list = name_list("--allreduce", args.allreduce, ALLREDUCES)
    try:
        args.test_every_list = [int(x) for x in args.test_every.split(",") if x.strip()]
    except ValueError:
        args.test_every_list = []
    if (not args.test_every_list or min(args.test_every_list) < 0
            or len(set(args.test_every_list)) != len(args.test_every_list)):
        raise BadArguments(f"--test-every {args.test_every!r}: expected distinct integers >= 0")
    parts = args.baseline.split("/")
    try:
        ok = (len(parts) == 3 and parts[0] in HALOS and int(parts[1]) >= 0
              and parts[2] in ALLREDUCES)
    except ValueError:
        ok = False
    if not ok:
        raise BadArguments(f"--baseline {args.baseline!r}: expected HALO/K/ALLREDUCE, e.g. "
                           "waitall/0/mpi")
    args.baseline_parts = (parts[0], int(parts[1]), parts[2])
    args.config_patterns = [c.strip() for c in args.configs.split(",") if c.strip()]
    if args.global_ is not None and args.local is not None:
        raise BadArguments("--global and --local: expected one of them, not both")
    if args.global_ is not None:
        args.grid_option, args.grid = "--global", triple("--global", args.global_)
    else:
        args.grid_option, args.grid = "--local", triple("--local", args.local)
    if args.ranks < 1:
        raise BadArguments(f"--ranks {args.ranks}: expected at least 1")
    if args.repeats < 1:
        raise BadArguments(f"--repeats {args.repeats}: expected at least 1")
    if not 0.0 < args.tol < 1.0:
        raise BadArguments(f"--tol {args.tol}: expected 0 < tol < 1")
    if not args.timeout > 0:
        raise BadArguments(f"--timeout {args.timeout}: expected seconds > 0")
    if not 0.0 <= args.quiet <= 1.0 or args.quiet_max_wait < 0 or args.quiet_budget < 0:
        raise BadArguments(f"--quiet {args.quiet}, --quiet-max-wait {args.quiet_max_wait}, "
                           f"--quiet-budget {args.quiet_budget}: expected a fraction 0..1 and "
                           "seconds >= 0")
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        raise BadArguments(f"--binary {args.binary}: expected an asyncsolve executable "
                           "(build it: ninja -C build asyncsolve_exe)")
    args.launcher = split_launcher(args.mpiexec)
    if not args.launcher or shutil.which(args.launcher[0]) is None:
        raise BadArguments(f"--mpiexec {args.mpiexec!r}: expected a launcher on PATH")


# ---------------------------------------------------------------- configurations

def config_name(method, halo, test_every, allreduce):
    return f"{method}/{halo}/{test_every}/{allreduce}"


def configurations(args):
    """The configurations to run, each with its asyncsolve arguments (no --json).

    Ordered by method, then halo, test period and reduction; the baseline of every
    method is included even where the lists or --configs leave it out.
    """
    configs = []
    for method in args.method_list:
        base = config_name(method, *args.baseline_parts)
        for halo in args.halo_list:
            for k in args.test_every_list:
                for reduction in args.allreduce_list:
                    name = config_name(method, halo, k, reduction)
                    if (args.config_patterns and name != base and not any(
                            fnmatch.fnmatchcase(name, pat) for pat in args.config_patterns)):
                        continue
                    configs.append(make_config(args, method, halo, k, reduction))
        if base not in (c["name"] for c in configs):
            configs.append(make_config(args, method, *args.baseline_parts))
    return configs


def make_config(args, method, halo, test_every, allreduce):
    solve = ["solve", "--problem", args.problem, args.grid_option, ",".join(map(str, args.grid)),
             "--method", method, "--halo", halo, "--test-every", str(test_every),
             "--allreduce", allreduce, "--tol", repr(args.tol)]
    return {"name": config_name(method, halo, test_every, allreduce), "method": method,
            "halo": halo, "test_every": test_every, "allreduce": allreduce,
            "baseline": config_name(method, *args.baseline_parts), "solve_args": solve}


# ---------------------------------------------------------------- running

def run_once(args, launcher, gate, config, repeat, runs_dir):
    """Runs one configuration once; returns the run's record (failed: `error` set)."""
    path = os.path.join(runs_dir, config["name"].replace("/", "_") + f".r{repeat}.json")
    cmd = launcher + ["-n", str(args.ranks), args.binary] + config["solve_args"] + ["--json", path]
    record = {"configuration": config["name"], "method": config["method"],
              "halo": config["halo"], "test_every": config["test_every"],
              "allreduce": config["allreduce"], "repeat": repeat}
    if run_with_document(record, cmd, path, args.timeout, gate,
                         key_numbers=key_numbers) is not None:
        asked = {"method": config["method"], "halo": config["halo"],
                 "test_every": config["test_every"], "allreduce": config["allreduce"]}
        ran = {k: record["ran"].get(k) for k in asked}
        if record["error"] is None and ran != asked:
            record["error"] = f"asyncsolve ran {ran}, not the configuration asked for"
        require_converged(record)
    return record


def key_numbers(doc):
    r, stats, phases = doc["result"], doc.get("stats", {}), doc.get("phases", {})
    m = doc.get("method", {})
    return {
        "version": doc.get("version"), "git": doc.get("git"),
        "ran": {"method": m.get("name"), "halo": m.get("halo"),
                "test_every": m.get("test_every"), "allreduce": m.get("allreduce"),
                "pc": m.get("pc")},
        "converged": r["converged"], "reason": r.get("reason"),
        "time_s": r["time_s"], "time_per_iteration_s": r["time_per_iteration_s"],
        "iterations": r["iterations"]["max"],
        "iterations_min": r["iterations"]["min"],
        "true_residual": r.get("true_residual"),
        "phases_max_s": {k: v["max"] for k, v in phases.items()},
        "halo_tests_mean": (stats.get("halo_tests") or {}).get("mean"),
        "halo_exchanges": stats.get("halo_exchanges"),
        "dims": doc.get("problem", {}).get("dims"),
    }


# ---------------------------------------------------------------- summaries

def reduction_s(phases):
    """Seconds in the reductions (start + wait of each), or None if none was recorded."""
    parts = [phases.get(f"{r}_{s}") for r in REDUCTIONS for s in ("start", "wait")]
    parts = [x for x in parts if x is not None]
    return sum(parts) if parts else None


def summarise(args, configs, campaign):
    runs = campaign.runs
    out = []
    for c in configs:
        mine, ok = campaign.mine(c["name"])
        phase_names = sorted({k for r in ok for k in r["phases_max_s"]} | set(KEY_PHASES))
        phases = {k: median([r["phases_max_s"].get(k) for r in ok]) for k in phase_names}
        out.append({
            "name": c["name"], "method": c["method"], "halo": c["halo"],
            "test_every": c["test_every"], "allreduce": c["allreduce"],
            "baseline": c["baseline"], "is_baseline": c["name"] == c["baseline"],
            "runs": len(mine), "failed": len(mine) - len(ok),
            "all_converged": bool(mine) and len(ok) == len(mine),
            "time_per_iteration_s": spread([r["time_per_iteration_s"] for r in ok]),
            "time_s": spread([r["time_s"] for r in ok]),
            "iterations": spread([r["iterations"] for r in ok]),
            "iterations_seen": sorted({r["iterations"] for r in ok}),
            "phases_max_s_median": phases,
            "reductions_s_median": median([reduction_s(r["phases_max_s"]) for r in ok]),
            "halo_tests_mean_median": median([r["halo_tests_mean"] for r in ok]),
            "halo_exchanges_median": median([r["halo_exchanges"] for r in ok]),
            "foreign_cpu_fraction_max": max((r.get("foreign_cpu_fraction") or 0.0 for r in mine),
                                            default=None),
            "ratio_to_baseline": ratio(runs, args.repeats, c["name"], c["baseline"],
                                       "time_per_iteration_s"),
        })
    return out


def iteration_agreement(runs):
    """Whether every successful run of a method and reduction took the same iterations."""
    groups = {}
    for r in runs:
        if r["error"] is None:
            key = f"{r['method']}/{r['allreduce']}"
            groups.setdefault(key, {}).setdefault(str(r["iterations"]), []).append(
                f"{r['configuration']} r{r['repeat']}")
    by_method = {}
    for r in runs:
        if r["error"] is None:
            by_method.setdefault(r["method"], set()).add(r["iterations"])
    return {
        "iterations_agree": all(len(v) == 1 for v in groups.values()),
        "iterations_by_method_and_allreduce": {
            k: {"values": sorted(int(i) for i in v), "agree": len(v) == 1,
                "runs": v if len(v) > 1 else None}
            for k, v in sorted(groups.items())},
        # Reductions may add in a different order: agreement across them is not required.
        "iterations_agree_across_allreduce": {m: len(v) == 1 for m, v in sorted(by_method.items())},
    }


def fastest(args, summary):
    best = {}
    for method in args.method_list:
        mine = [c for c in summary if c["method"] == method and c["time_per_iteration_s"]]
        if not mine:
            best[method] = None
            continue
        c = min(mine, key=lambda c: c["time_per_iteration_s"]["median"])
        best[method] = {"configuration": c["name"], "halo": c["halo"],
                        "test_every": c["test_every"], "allreduce": c["allreduce"],
                        "time_per_iteration_s": c["time_per_iteration_s"]["median"],
                        "ratio_to_baseline": c["ratio_to_baseline"]["median"]}
    return best


# ---------------------------------------------------------------- output

def sorted_summary(args, summary):
    order = {m: i for i, m in enumerate(args.method_list)}
    inf = float("inf")
    return sorted(summary, key=lambda c: (order[c["method"]],
                                          (c["time_per_iteration_s"] or {}).get("median", inf)))


def print_table(args, doc):
    p = doc["parameters"]
    grid = "x".join(map(str, p["grid"]))
    print(f"krylov_overlap: {p['ranks']} ranks, {p['problem']} {p['grid_option']} {grid}, "
          f"tol {p['tol']:g}, {p['repeats']} repeats; baseline per method: "
          f"{'/'.join(map(str, args.baseline_parts))}")
    print("time per iteration (max over ranks): median [min .. max] in ms; ratio: to the "
          "baseline, median over repeats; phases: medians in us per iteration")
    w = max([len("configuration")] + [len(c["name"]) + 1 for c in doc["configurations"]])
    head = (f"{'configuration':<{w}} {'ok':>5} {'ms/it':>7} {'[min .. max]':>17} {'ratio':>6} "
            f"{'iters':>6} {'h_start':>7} {'h_wait':>7} {'mv_int':>7} {'mv_bnd':>7} "
            f"{'reduce':>7} {'tests':>6} {'other':>5}")
    print(head)
    print("-" * len(head))
    method = None
    for c in sorted_summary(args, doc["configurations"]):
        if method is not None and c["method"] != method:
            print()
        method = c["method"]
        t = c["time_per_iteration_s"] or {}
        its = (c["iterations"] or {}).get("median")
        ph = c["phases_max_s_median"]

        def per_it_us(seconds, its=its):
            return None if seconds is None or not its else seconds / its * 1e6

        exchanges = c["halo_exchanges_median"]
        tests = (c["halo_tests_mean_median"] / exchanges
                 if exchanges and c["halo_tests_mean_median"] is not None else None)
        ms = {k: (t.get(k) * 1e3 if t.get(k) is not None else None) for k in
              ("median", "min", "max")}
        mark = "*" if c["is_baseline"] else " "
        print(f"{c['name'] + mark:<{w}} {c['runs'] - c['failed']:>2}/{c['runs']:<2} "
              f"{fmt(ms['median'], '.3f'):>7} "
              f"{'[' + fmt(ms['min'], '.3f') + ' .. ' + fmt(ms['max'], '.3f') + ']':>17} "
              f"{fmt(c['ratio_to_baseline']['median'], '.3f'):>6} {fmt(its, '.0f'):>6} "
              f"{fmt(per_it_us(ph.get('halo_start')), '.0f'):>7} "
              f"{fmt(per_it_us(ph.get('halo_wait')), '.0f'):>7} "
              f"{fmt(per_it_us(ph.get('matvec_interior')), '.0f'):>7} "
              f"{fmt(per_it_us(ph.get('matvec_boundary')), '.0f'):>7} "
              f"{fmt(per_it_us(c['reductions_s_median']), '.0f'):>7} "
              f"{fmt(tests, '.1f'):>6} {fmt(c['foreign_cpu_fraction_max'], '.2f'):>5}")
    print("(* baseline; reduce: start + wait of every reduction; tests: halo tests per exchange; "
          "other: largest CPU share other processes took in a run)")
    agree = doc["iterations"]
    print()
    print("iterations agree within each method and reduction: "
          + ("yes" if agree["iterations_agree"] else "NO"))
    for k, v in agree["iterations_by_method_and_allreduce"].items():
        print(f"  {k:<20} {','.join(map(str, v['values']))}")
    print("fastest:")
    for m, b in doc["fastest"].items():
        if b:
            print(f"  {m:<12} {b['configuration']:<{w}} {b['time_per_iteration_s'] * 1e3:.3f} "
                  f"ms/it, {fmt(b['ratio_to_baseline'], '.3f')} of the baseline")


REQUIRED = {
    "document": ["schema", "date", "hostname", "git_commit", "parameters", "launcher",
                 "commands", "runs", "configurations", "ratios", "baselines", "iterations",
                 "fastest", "passed", "failures", "asyncsolve"],
    "run": ["configuration", "method", "halo", "test_every", "allreduce", "repeat", "command",
            "exit_code", "error", "time_s", "time_per_iteration_s", "converged", "iterations",
            "phases_max_s", "halo_tests_mean"],
    "configuration": ["name", "method", "halo", "test_every", "allreduce", "baseline", "runs",
                      "failed", "all_converged", "time_per_iteration_s", "iterations",
                      "phases_max_s_median", "halo_tests_mean_median", "ratio_to_baseline"],
    "ratio": ["numerator", "denominator", "per_repeat", "median", "min", "max"],
}


def smoke_missing(doc, configs):
    """What the document lacks (names), for --smoke."""
    missing = missing_fields(doc, REQUIRED, SCHEMA, len(configs), "time_per_iteration_s")
    for c in doc.get("configurations", []):
        missing += [f"configurations[{c.get('name')}].phases_max_s_median.{k}"
                    for k in KEY_PHASES if k not in c.get("phases_max_s_median", {})]
    for m, b in doc.get("fastest", {}).items():
        if not b:
            missing.append(f"fastest[{m}]")
    return missing


# ---------------------------------------------------------------- main

def main(argv):
    return run_driver(PROG, argv, parse_args, run)


def run(args):
    configs = configurations(args)
    with Campaign("krylov_overlap", args, mpi=True) as campaign:
        launcher, gate = campaign.launcher, campaign.gate
        def describe(record):
            t = record.get("time_per_iteration_s")
            return (f"{fmt(t * 1e3 if t is not None else None, '.3f')} ms/it  iterations "
                    f"{fmt(record.get('iterations'), 'd')}")

        rejected = campaign.run(configs, args.repeats,
                                lambda config, rep: run_once(args, launcher, gate, config, rep,
                                                             campaign.runs_dir),
                                describe, max(len(c["name"]) for c in configs),
                                stop_on_rejection=True)
        if rejected:
            # An option this binary does not take: bad input, not a failed run; nothing is
            # written.
            print(f"{PROG}: error: {rejected}", file=sys.stderr)
            return EXIT_BAD_ARGS
        runs = campaign.runs
        failures = campaign.failures()
        summary = summarise(args, configs, campaign)
        agreement = iteration_agreement(runs)
        doc = {
            "schema": SCHEMA,
            "date": utc_stamp(campaign.started),
            "elapsed_s": elapsed_s(campaign.started),
            **host(),
            "git_commit": git_commit(),
            "asyncsolve": asyncsolve_info(args.binary, runs),
            "launcher": launcher_info(launcher, campaign.launcher_version),
            "parameters": {
                "ranks": args.ranks, "repeats": args.repeats, "methods": args.method_list,
                "halos": args.halo_list, "test_every": args.test_every_list,
                "allreduce": args.allreduce_list, "configs": args.config_patterns,
                "baseline": "/".join(map(str, args.baseline_parts)),
                "problem": args.problem, "grid_option": args.grid_option, "grid": args.grid,
                "tol": args.tol, "timeout_s": args.timeout, "quiet": args.quiet,
                "quiet_max_wait_s": args.quiet_max_wait, "quiet_budget_s": args.quiet_budget,
                "quiet_waited_s": gate.spent_s, "smoke": args.smoke,
                "order": "each repeat runs every configuration once, rotated by one per repeat",
                "time": "result.time_per_iteration_s of asyncsolve: time to solution (maximum "
                        "over ranks) / iterations",
                "phases": "medians over repeats of phases.<name>.max, seconds for the solve",
            },
            "commands": {c["name"]: shlex.join(launcher + ["-n", str(args.ranks), args.binary]
                                               + c["solve_args"] + ["--json", "FILE"])
                         for c in configs},
            "runs": runs,
            "configurations": summary,
            "baselines": {m: config_name(m, *args.baseline_parts) for m in args.method_list},
            "ratios": {c["name"]: c["ratio_to_baseline"] for c in summary},
            "iterations": agreement,
            "fastest": fastest(args, summary),
            "passed": not failures,
            "failures": failures,
        }
        print()
        print_table(args, doc)
        missing = smoke_missing(doc, configs) if args.smoke else []
        disagree = args.smoke and not agreement["iterations_agree"]
        return conclude(
            PROG, campaign.json_path, doc, failures, missing, args.smoke, campaign.temporary,
            "smoke: every run converged; the iterations agree; the document has its fields",
            problems=["iterations disagree within a method and reduction"] if disagree else [],
            warning=None if agreement["iterations_agree"] else
            "warning: the iterations differ within a method and reduction (the halo strategy "
            "or test period changed the arithmetic)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
