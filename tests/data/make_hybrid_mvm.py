#!/usr/bin/env python3
"""Writes the sample sweeps of `asyncsolve model hybrid --fit` (schema
asyncsolve.bench.hybrid_mvm/1) from known MVM costs, paper 002 eqs. 11-14.

  hybrid_mvm_exact.json  times that follow the model exactly: the fit must
                         recover the parameters below
  hybrid_mvm_noisy.json  the same times with a few per cent of noise (fixed
                         seed), rounded to 4 significant digits like a
                         benchmark's output, and with multiple_s

Parameters (seconds per point of an ni x nj plane): x_MVM,overlap = 3e-9,
x_MVM,non = x_MVM,overlap / 6 (the paper's ratio), x_comm = 4.57 x_MVM,overlap
(the paper's fitted ratio, crossover at nk_local = 32 for n = 8, m = 1).

Usage: python3 make_hybrid_mvm.py   (writes beside itself)
"""
import json
import os
import random

N, M = 8, 1
NI = NJ = 512
RANKS = 4
X_OVERLAP = 3e-9
X_NON = X_OVERLAP / 6
X_COMM = 4.57 * X_OVERLAP
SWEEP = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def exact(k):
    p = NI * NJ
    comm = p * X_COMM
    compute = p * (X_NON + X_OVERLAP) * k
    funneled = p * (X_NON * k + max(X_COMM / M, N / (N - M) * X_OVERLAP * k))
    return comm, compute, funneled


def doc(records):
    return {"schema": "asyncsolve.bench.hybrid_mvm/1", "threads": N, "reserved": M,
            "ni": NI, "nj": NJ, "ranks": RANKS, "records": records}


def sig4(x):
    return float(f"{x:.4g}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    records = []
    for k in SWEEP:
        comm, compute, funneled = exact(k)
        records.append({"nk_local": k, "masteronly_s": comm + compute, "funneled_s": funneled,
                        "multiple_s": None, "masteronly_comm_s": comm,
                        "masteronly_compute_s": compute})
    with open(os.path.join(here, "hybrid_mvm_exact.json"), "w") as f:
        json.dump(doc(records), f, indent=2)
        f.write("\n")

    rng = random.Random(2002)

    def noise():
        return 1.0 + rng.uniform(-0.04, 0.04)

    records = []
    for k in SWEEP:
        comm, compute, funneled = exact(k)
        comm *= noise()
        compute *= noise()
        records.append({"nk_local": k,
                        "masteronly_s": sig4((comm + compute) * (1.0 + rng.uniform(0, 0.01))),
                        "funneled_s": sig4(funneled * noise()),
                        "multiple_s": sig4(funneled * noise() * 1.03),
                        "masteronly_comm_s": sig4(comm),
                        "masteronly_compute_s": sig4(compute)})
    with open(os.path.join(here, "hybrid_mvm_noisy.json"), "w") as f:
        json.dump(doc(records), f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
