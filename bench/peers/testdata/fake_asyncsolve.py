#!/usr/bin/env python3
"""A stand-in for `asyncsolve solve` to test run_peers.py before asyncsolve has CG.

Accepts the command line run_peers.py gives asyncsolve, and on rank 0 (Open
MPI's OMPI_COMM_WORLD_RANK, or alone) writes asyncsolve_result_sample.json
beside this file to --json, with the problem, method and command filled in.
The numbers are the sample's, not a solve: they test the plumbing only.
With --repeat-solve N, result.repeat_solves lists N solves, each the sample's.
FAKE_ASYNCSOLVE_EXIT=N makes it exit N without writing (a failed run).
"""
import json
import os
import sys


def main(argv):
    if os.environ.get("FAKE_ASYNCSOLVE_EXIT"):
        return int(os.environ["FAKE_ASYNCSOLVE_EXIT"])
    if not argv or argv[0] != "solve":
        print("fake_asyncsolve: expected the solve subcommand", file=sys.stderr)
        return 2
    options = dict(zip(argv[1::2], argv[2::2], strict=False))
    if "--json" not in options:
        print("fake_asyncsolve: expected --json FILE", file=sys.stderr)
        return 2
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") != "0":
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "asyncsolve_result_sample.json")) as f:
        doc = json.load(f)
    doc["command"] = ["asyncsolve"] + argv
    doc["problem"]["name"] = options.get("--problem", "ones")
    doc["method"]["name"] = options.get("--method", "cg")
    solves = int(options.get("--repeat-solve", "1"))
    r = doc["result"]
    r["repeat_solves"] = {"requested": solves, "count": solves, "time_s": [r["time_s"]] * solves,
                          "total_time_s": r["time_s"] * solves,
                          "iterations": [r["iterations"]["max"]] * solves,
                          "converged": [r["converged"]] * solves,
                          "true_residual": [r["true_residual"]] * solves,
                          "change_inf": [0.0] * solves}
    tmp = options["--json"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, options["--json"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
