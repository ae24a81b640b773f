#!/usr/bin/env python3
"""Smoke test of bench/spmv, bench/mtx2petsc and (where built) bench/sell_model:
the shape of their output, never their speed.
Usage: test_bench_spmv.py --spmv BIN --mtx2petsc BIN --mpiexec LINE [--sell-model BIN]"""
import argparse
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile


def check_sell_model(binary, d):
    """bench/sell_model validates its kernels, writes its document and
    refuses a grid that is not a multiple of 8."""
    doc = os.path.join(d, "sell_model.json")
    subprocess.run([binary, "--n", "16", "--repeats", "2", "--iterations", "2",
                    "--triad-n", "4096", "--json", doc], check=True, capture_output=True)
    with open(doc) as f:
        j = json.load(f)
    assert j["schema"] == "asyncsolve.bench.sell_model/1", j["schema"]
    assert j["validation"]["passed"] is True and j["validation"]["largest_error"] < 1e-13
    assert set(j["kernels"]) == {"triad", "stream", "masked", "unmasked"}, j["kernels"].keys()
    for k in j["kernels"].values():
        assert len(k["seconds"]["repeats"]) == 2 and k["gbs"] > 0
    assert len(j["masked_over_unmasked"]["repeats"]) == 2
    bad = subprocess.run([binary, "--n", "12"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2, bad.returncode
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "--n 12" in lines[0], bad.stderr


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--spmv", required=True)
    p.add_argument("--mtx2petsc", required=True)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--sell-model", help="bench/sell_model (built with AVX-512 only)")
    a = p.parse_args()
    mpiexec = shlex.split(a.mpiexec.replace(";", " "))
    with tempfile.TemporaryDirectory() as d:
        mtx = os.path.join(d, "lap.mtx")
        subprocess.run([a.spmv, "--write-laplacian", "6", "--out", mtx], check=True)
        doc = os.path.join(d, "spmv.json")
        for source in (["--matrix", mtx, "--partition", "metis"], ["--laplacian", "6"]):
            subprocess.run([*mpiexec, "-n", "2", a.spmv, *source, "--iterations", "3",
                            "--repeats", "2", "--triad-n", "1000", "--halo", "neighbor",
                            "--json", doc], check=True)
            with open(doc) as f:
                j = json.load(f)
            assert j["schema"] == "asyncsolve.bench.spmv/1", j["schema"]
            assert j["parameters"]["rows"] == 216 and j["parameters"]["nnz"] == 216 * 7 - 6 * 36
            assert j["result"]["converged"] is True
            assert j["result"]["iterations"]["max"] == 3
            assert j["result"]["time_per_iteration_s"] > 0
            assert len(j["ratio_to_triad"]["repeats"]) == 2
        # SELL-8's uniform steps: the 7-point matrix's steps all hold one
        # value (-1 or the diagonal), one value stored per step; --values
        # plain stores 8. Both pass the validation against the reference.
        counts = {}
        for values in ("compressed", "plain"):
            subprocess.run([*mpiexec, "-n", "2", a.spmv, "--laplacian", "6", "--layout", "sell8",
                            "--values", values, "--iterations", "2", "--repeats", "1",
                            "--triad-n", "1000", "--json", doc], check=True, capture_output=True)
            with open(doc) as f:
                par = json.load(f)["parameters"]
            assert par["values"] == values, par
            counts[values] = (par["uniform_steps"], par["interior_values"], par["interior_stored"])
        uniform, stored_values, entries = counts["compressed"]
        assert uniform > 0 and stored_values == entries // 8, counts
        assert counts["plain"] == (0, entries, entries), counts
        # Row blocks on request: validated against the reference like the
        # others, every rank's interior rows in them, 8 values a block column.
        subprocess.run([*mpiexec, "-n", "2", a.spmv, "--laplacian", "6", "--layout", "blocks",
                        "--iterations", "2", "--repeats", "1", "--triad-n", "1000",
                        "--json", doc], check=True, capture_output=True)
        with open(doc) as f:
            par = json.load(f)["parameters"]
        assert par["layout"] == "blocks", par
        assert par["interior_stored"] % 8 == 0 and par["interior_stored"] >= entries, par
        bad = subprocess.run([*mpiexec, "-n", "2", a.spmv, "--laplacian", "6", "--layout", "ell"],
                             capture_output=True, text=True, check=False)
        assert bad.returncode == 2, bad.returncode
        assert "--layout ell" in bad.stderr and "blocks" in bad.stderr, bad.stderr
        bad = subprocess.run([*mpiexec, "-n", "2", a.spmv, "--laplacian", "6", "--values", "some"],
                             capture_output=True, text=True, check=False)
        assert bad.returncode == 2, bad.returncode
        assert "--values some" in bad.stderr, bad.stderr
        petsc = os.path.join(d, "lap.petsc")
        subprocess.run([a.mtx2petsc, mtx, petsc], check=True, capture_output=True)
        with open(petsc, "rb") as f:
            head = struct.unpack(">4i", f.read(16))
        assert head == (1211216, 216, 216, 216 * 7 - 6 * 36), head
        assert os.path.getsize(petsc) == 16 + 4 * 216 + 12 * head[3]
        bad = subprocess.run([a.mtx2petsc, os.path.join(d, "missing.mtx"), petsc],
                             capture_output=True, text=True, check=False)
        assert bad.returncode == 2 and "cannot open" in bad.stderr, bad.stderr
        if a.sell_model:
            check_sell_model(a.sell_model, d)
    print("bench_spmv: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
