#!/usr/bin/env python3
"""End-to-end tests of asyncsolve-stencil2d-caf (paper 004's Stencil2D in
Coarray Fortran) under mpiexec: bad input exits 2 with one line from image 1
on every image count; every variant validates against the serial filter for
radius 1 to 3 on 1 to 4 images and the document has the shape of
asyncsolve.bench.stencil2d/1 with "model": "caf"; a corrupted halo corner
(the hidden --test-corrupt-corner hook) makes every variant fail validation
with exit 4, naming it, and leaves no document. Never asserts on time.

Usage: test_stencil2d_caf.py --binary PATH --mpiexec "mpiexec --oversubscribe"
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unittest

BINARY = ""
MPIEXEC = []
VARIANTS = ["trivial", "put", "get", "get0", "get1"]
PREFIX = "asyncsolve-stencil2d-caf: error: "


def run(args, images=1, timeout=180):
    cmd = MPIEXEC + ["-n", str(images), BINARY] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class BadInput(unittest.TestCase):
    """Every image stops with 2; image 1 prints one line naming the value."""

    def check(self, args, must_contain, images=3):
        code, out, err = run(args, images=images)
        self.assertEqual(code, 2, f"{args}: stdout={out!r} stderr={err!r}")
        lines = [line for line in err.splitlines() if line.strip()]
        self.assertEqual(len(lines), 1, f"{args}: expected one line, got {lines!r}")
        self.assertTrue(lines[0].startswith(PREFIX), lines[0])
        self.assertIn(must_contain, lines[0])
        self.assertIn("expected", lines[0])
        self.assertEqual(out, "", "nothing on stdout for bad input")

    def test_sizes_and_radius(self):
        self.check(["--local", "4", "--radius", "4"], "--radius 4 with --local 4")
        self.check(["--local", "64,8", "--radius", "8"], "--radius 8 with --local 8", images=2)
        self.check(["--local", "1"], "--local '1'")
        self.check(["--local", "0"], "--local '0'", images=1)
        self.check(["--local", "64,,8"], "empty item")
        self.check(["--local", "abc"], "'abc'", images=4)
        self.check(["--radius", "0"], "--radius 0")
        self.check(["-i", "0"], "-i 0")
        self.check(["-x", "-1"], "-x -1")
        self.check(["--repeats", "0"], "--repeats 0")

    def test_variants_and_options(self):
        self.check(["--variant", "bogus"], "--variant 'bogus'")
        self.check(["--variant", "halo"], "--variant 'halo'", images=2)
        self.check(["--variant", "put,put"], "listed twice")
        self.check(["--bogus"], "--bogus")

    def test_image_count_the_grid_cannot_use(self):
        self.check(["--grid", "2x2"], "--grid 2x2 with 3 images", images=3)
        self.check(["--grid", "2x1"], "--grid 2x1 with 1 image", images=1)
        self.check(["--grid", "2"], "--grid '2'", images=2)
        self.check(["--grid", "0x2"], "--grid '0x2'", images=2)

    def test_unwritable_json(self):
        self.check(["--json", "/nonexistent-dir/x.json", "--local", "8", "-i", "1"],
                   "/nonexistent-dir", images=2)


class Runs(unittest.TestCase):
    def bench(self, args, images):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s2d.json")
            code, out, err = run(args + ["--json", path], images=images)
            self.assertEqual(code, 0, f"{images} images {args}: stdout={out} stderr={err}")
            self.assertEqual(os.listdir(d), ["s2d.json"], "no temporary left behind")
            with open(path) as f:
                return json.load(f), out

    def check_document(self, doc, images, variants, sizes, repeats, radius):
        self.assertEqual(doc["schema"], "asyncsolve.bench.stencil2d/1")
        self.assertEqual(doc["model"], "caf")
        for key in ["version", "git", "started", "command", "environment", "parameters", "grid",
                    "results"]:
            self.assertIn(key, doc)
        self.assertEqual(doc["command"][0], "asyncsolve-stencil2d-caf")
        self.assertEqual(doc["environment"]["ranks"], images)
        self.assertEqual(doc["environment"]["images"], images)
        self.assertIn("OpenCoarrays", doc["environment"]["coarray_runtime"])
        px, py = doc["grid"]["dims"]
        self.assertEqual(px * py, images)
        runs = [f"caf/{v}" for v in variants]
        self.assertEqual(doc["parameters"]["runs"], runs)
        self.assertEqual(doc["parameters"]["transports"], ["caf"])
        self.assertEqual(doc["parameters"]["local_sizes"], sizes)
        self.assertEqual(doc["parameters"]["radius"], radius)
        self.assertEqual([(r["local"], r["name"]) for r in doc["results"]],
                         [(n, name) for n in sizes for name in runs])
        for r in doc["results"]:
            self.assertTrue(r["validated"])
            self.assertEqual(r["model"], "caf")
            self.assertEqual(r["transport"], "caf")
            self.assertEqual(r["ranks"], images)
            self.assertEqual(r["radius"], radius)
            self.assertEqual(r["global"], [px * r["local"], py * r["local"]])
            n, rr = r["local"], r["radius"]
            self.assertEqual(r["halo_bytes_per_rank"], 8 * (4 * n * rr + 4 * rr * rr))
            fine = r["variant"] in ("get0", "get1")
            self.assertEqual(r["calls_per_iteration"], 2 * n + 6 * rr if fine else 8)
            self.assertGreaterEqual(r["syncs_per_iteration"], 0)
            for key in ["iteration_us", "exchange_us", "filter_us", "bandwidth_mbs"]:
                s = r[key]
                self.assertEqual(len(s["repeats"]), repeats, key)
                self.assertLessEqual(s["min"], s["median"])
                self.assertLessEqual(s["median"], s["max"])
                self.assertGreaterEqual(s["min"], 0.0)

    def test_every_variant_validates_for_radius_1_to_3_on_1_to_4_images(self):
        # local 5 with radius 3 is narrower than two halos (put filters its
        # strips after both syncs of an axis); 8 is wider.
        for images in (1, 2, 3, 4):
            for radius in (1, 2, 3):
                args = ["--local", "5,8", "--radius", str(radius), "-i", "3", "-x", "1",
                        "--repeats", "2"]
                doc, out = self.bench(args, images)
                self.check_document(doc, images, VARIANTS, [5, 8], 2, radius)
                self.assertIn("every repeat validated", out)
                for v in VARIANTS:
                    self.assertIn(f"caf/{v}", out)

    def test_grid_given_and_variant_subset(self):
        doc, _ = self.bench(["--local", "6", "--radius", "2", "-i", "2", "-x", "0",
                             "--repeats", "1", "--variant", "get1,put", "--grid", "1x2"], 2)
        self.check_document(doc, 2, ["get1", "put"], [6], 1, 2)
        self.assertEqual(doc["grid"]["dims"], [1, 2])
        doc, _ = self.bench(["--local", "4", "--radius", "1", "-i", "2", "-x", "1",
                             "--repeats", "1", "--grid", "4x1"], 4)
        self.assertEqual(doc["grid"]["dims"], [4, 1])
        self.check_document(doc, 4, VARIANTS, [4], 1, 1)


    def test_tcp_btl_and_one_image_run_on_pt2pt(self):
        # Debian's configured one-sided components cannot start OpenCoarrays
        # without the shared-memory BTL or on one process: the program picks
        # pt2pt itself (unless OMPI_MCA_osc is set) and records it.
        env = dict(os.environ, OMPI_MCA_btl="self,tcp", OMPI_MCA_btl_tcp_if_include="lo")
        env.pop("OMPI_MCA_osc", None)
        for images, environment in ((2, env), (1, None)):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "s2d.json")
                cmd = MPIEXEC + ["-n", str(images), BINARY, "--local", "6", "-i", "2", "-x", "0",
                                 "--repeats", "1", "--variant", "get", "--json", path]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                                   env=environment)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(path) as f:
                    self.assertEqual(json.load(f)["environment"]["mpi_osc"], "pt2pt")


class ValidationCatchesAWrongCorner(unittest.TestCase):
    def test_every_variant(self):
        for v in VARIANTS:
            for images in (1, 3):
                with tempfile.TemporaryDirectory() as d:
                    path = os.path.join(d, "s2d.json")
                    code, out, err = run(["--variant", v, "--local", "8", "--radius", "2",
                                          "-i", "2", "-x", "0", "--repeats", "1",
                                          "--test-corrupt-corner", "--json", path],
                                         images=images)
                    self.assertEqual(code, 4, f"{v}: stdout={out!r} stderr={err!r}")
                    lines = [line for line in err.splitlines() if line.strip()]
                    self.assertEqual(len(lines), 1, lines)
                    self.assertIn(f"caf/{v} failed validation", lines[0])
                    self.assertIn("first wrong point", lines[0])
                    self.assertEqual(os.listdir(d), [], "no document for a failed validation")

    def test_help_and_hidden_hook(self):
        code, out, _ = run(["--help"])
        self.assertEqual(code, 0)
        for option in ["--local", "--radius", "--iterations", "--warmup", "--repeats",
                       "--variant", "--grid", "--json"]:
            self.assertIn(option, out)
        self.assertNotIn("--test-corrupt-corner", out)


def main():
    global BINARY, MPIEXEC
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mpiexec", required=True)
    args, rest = parser.parse_known_args()
    BINARY = args.binary
    MPIEXEC = shlex.split(args.mpiexec.replace(";", " "))
    version = subprocess.run(MPIEXEC[:1] + ["--version"], capture_output=True, text=True)
    if any(s in version.stdout + version.stderr for s in ("Open MPI", "OpenRTE")):
        MPIEXEC.append("-q")  # no help banners around the one line of bad input
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
