#!/usr/bin/env python3
"""NAME
    soak_table.py - the per-pair table of a bench/soak.sh run

USAGE
    bench/soak_table.py OUTDIR/runs.csv [--tol TOL]

    Prints, per problem (the plume stencil or a --matrix system), transport
    and variant, the runs, the failed ones (a non-zero exit, a timeout, or a
    true residual >= 10 tol), the median and largest time of the passing
    runs, the median of the idle waits (the rank that waited most) and the
    largest true residual / tol, as a Markdown table, then the mix (ranks,
    noise, slow factors, matrices and partitioners). runs.csv files of
    soak.sh before its --matrix runs (no problem column) are stencil runs.
    Exit code 2 for a missing or malformed file.
"""

import argparse
import csv
import statistics
import sys
from collections import Counter


def main() -> int:
    parser = argparse.ArgumentParser(description="per-pair table of a soak.sh run")
    parser.add_argument("runs_csv")
    parser.add_argument("--tol", type=float, default=1e-4, help="the soak's TOL")
    args = parser.parse_args()
    try:
        with open(args.runs_csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"soak_table.py: {args.runs_csv}: {e.strerror}", file=sys.stderr)
        return 2
    if not rows or "transport" not in rows[0]:
        print(f"soak_table.py: {args.runs_csv}: expected soak.sh's runs.csv", file=sys.stderr)
        return 2
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for r in rows:
        problem = r.get("problem") or "plume"
        kind = "matrix" if problem.startswith("matrix:") else problem
        groups.setdefault((kind, r["transport"], r["variant"]), []).append(r)

    def passed(r: dict[str, str]) -> bool:
        return r["exit"] == "0" and r["true_residual"] != "" and (
            float(r["true_residual"]) < 10 * args.tol
        )

    print("| problem, transport, variant | runs | failed | median time (s) | slowest (s) "
          "| median idle waits (max over ranks) | largest true residual / tol |")
    print("|---|---|---|---|---|---|---|")
    for (kind, transport, variant), rs in sorted(groups.items()):
        ok = [r for r in rs if passed(r)]
        times = [float(r["time_s"]) for r in ok] or [float("nan")]
        idle = [float(r["idle_waits"]) for r in ok if r["idle_waits"]] or [float("nan")]
        worst = max((float(r["true_residual"]) / args.tol for r in ok), default=float("nan"))
        print(f"| {kind} {transport} {variant} | {len(rs)} | {len(rs) - len(ok)} "
              f"| {statistics.median(times):.2f} | {max(times):.2f} "
              f"| {statistics.median(idle):.0f} | {worst:.2f} |")
    ranks = Counter(r["ranks"] for r in rows)
    factors = Counter(r["slow_factor"] for r in rows)
    noise = sum(1 for r in rows if r["noise"] == "1")
    print(f"\nranks {dict(sorted(ranks.items()))}; noise on {noise}; "
          f"slow factors {dict(sorted(factors.items()))}")
    matrices = Counter(r["problem"][len("matrix:"):] for r in rows
                       if (r.get("problem") or "").startswith("matrix:"))
    if matrices:
        partitions = Counter(r["partition"] for r in rows if r.get("partition"))
        print(f"matrices {dict(sorted(matrices.items()))}; "
              f"partitions {dict(sorted(partitions.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
