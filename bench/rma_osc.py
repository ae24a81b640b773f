#!/usr/bin/env python3
"""Open MPI's one-sided component under the rma transport: osc/rdma against the rest.

PURPOSE
    `asyncsolve solve --transport rma` sets OMPI_MCA_osc=^rdma before MPI_Init
    when built against Open MPI and the environment does not choose
    (docs/channels.md). This benchmark measures what that choice costs or buys:
    each configuration (variant x ranks) is solved with OMPI_MCA_osc=rdma (the
    component Open MPI takes by itself) and with the environment unset (the
    command's choice), the two interleaved run by run, and the solve's own time
    (result.time_s), its sends per iteration and whether it converged are kept.
    Every configuration slows one rank (--slow-rank, --slow-factor), as the
    soak does, and runs oversubscribed where ranks outnumber the cores.

USAGE
    bench/rma_osc.py --binary build/asyncsolve [--repeats 5] [--ranks 2,4]
        [--variants sync,async,racy] [--local 24,24,24] [--slow-rank 1]
        [--slow-factor 3] [--json results/bench/rma_osc.json]

OUTPUT
    A table of medians on stdout (time and sends per iteration under each
    component, and the ratio unset / rdma of the medians), and with --json the
    document asyncsolve.bench.rma_osc/1: the parameters, every run, and per
    configuration the medians and the ratio.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

RDMA, CHOICE = "rdma", "choice"
#: OMPI_MCA_osc for each side: osc/rdma forced, or unset (the command's choice).
CHOICES = {RDMA: "rdma", CHOICE: None}


def run_once(args, variant, ranks, osc):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")
    env.pop("OMPI_MCA_osc", None)
    if osc is not None:
        env["OMPI_MCA_osc"] = osc
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        cmd = [args.mpiexec, "--oversubscribe", "-q", "-np", str(ranks), args.binary, "solve",
               "--problem", "plume", "--local", args.local, "--transport", "rma",
               "--variant", variant, "--slow-rank", str(args.slow_rank),
               "--slow-factor", str(args.slow_factor), "--json", path]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
        if not os.path.exists(path):
            return {"exit": p.returncode, "converged": False, "time_s": None,
                    "sends_per_iteration": None, "mpi_osc": None}
        with open(path) as f:
            doc = json.load(f)
    return {"exit": p.returncode, "converged": doc["result"]["converged"],
            "time_s": doc["result"]["time_s"],
            "sends_per_iteration": doc["stats"].get("sends_per_iteration"),
            "mpi_osc": doc["environment"].get("mpi_osc")}


def fmt(x, spec):
    return format(x, spec) if x is not None else "-"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--variants", default="sync,async,racy")
    ap.add_argument("--local", default="24,24,24")
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--slow-factor", type=float, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    configs = [(v, int(r)) for v in args.variants.split(",") for r in args.ranks.split(",")]
    runs = []
    for repeat in range(args.repeats):
        for variant, ranks in configs:
            for label, osc in CHOICES.items():  # interleaved: rdma, unset, rdma, ...
                r = run_once(args, variant, ranks, osc)
                r.update(variant=variant, ranks=ranks, component=label, repeat=repeat)
                runs.append(r)
    summary = []
    print(f"{'variant':8} {'ranks':>5} {'rdma s':>9} {'choice s':>9} {'ratio':>6} "
          f"{'rdma sends':>10} {'choice sends':>12} {'not converged':>13}")
    for variant, ranks in configs:
        mine = [r for r in runs if r["variant"] == variant and r["ranks"] == ranks]
        by = {label: [r for r in mine if r["component"] == label] for label in CHOICES}
        t = {label: median([r["time_s"] for r in rs]) for label, rs in by.items()}
        s = {label: median([r["sends_per_iteration"] for r in rs]) for label, rs in by.items()}
        failed = {label: sum(not r["converged"] for r in rs) for label, rs in by.items()}
        ratio = t[CHOICE] / t[RDMA] if t[RDMA] and t[CHOICE] else None
        summary.append({"variant": variant, "ranks": ranks, "median_time_s": t,
                        "median_sends_per_iteration": s, "not_converged": failed,
                        "ratio_choice_over_rdma": ratio})
        print(f"{variant:8} {ranks:>5} {fmt(t[RDMA], '9.4f')} {fmt(t[CHOICE], '9.4f')} "
              f"{fmt(ratio, '6.2f')} {fmt(s[RDMA], '10.2f')} {fmt(s[CHOICE], '12.2f')} "
              f"{failed[RDMA]:>6}/{failed[CHOICE]}")
    if args.json:
        doc = {"schema": "asyncsolve.bench.rma_osc/1", "parameters": vars(args),
               "runs": runs, "summary": summary}
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
