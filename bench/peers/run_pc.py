#!/usr/bin/env python3
"""NAME
    run_pc.py - asyncsolve's preconditioned CG beside PETSc's and hypre's, setup included

PURPOSE
    Time to the answer, not time per iteration: for each problem and rank
    count, asyncsolve's preconditioned CG variants (--method M --pc P) and the
    peers' (PETSc KSPCG with GAMG, with hypre BoomerAMG through PCHYPRE and
    with Jacobi; hypre's own ParCSR PCG with BoomerAMG) are run one after the
    other (A B C ... A B C ..., repeats outermost), and per variant it reports
    the median [min..max] of

      setup   asyncsolve: the preconditioner's setup (pc_setup.setup_s; the
              stencil operator needs no assembly), with --matrix plus the
              matrix's partition, distribution and operator build
              (problem.setup_s; reading the text file is not counted);
              peers: setup_s, i.e. assembly of the matrix (with --matrix,
              MatLoad of the binary file) and the solver's setup (KSPSetUp /
              HYPRE_ParCSRPCGSetup, which build the preconditioner)
      solve   the timed solve (asyncsolve result.time_s; peers time_s), max
              over ranks
      one     setup + solve: one solve, setup included
      ten     setup + the ten solves measured in the same process after the
              one setup (--solves 10, the default: asyncsolve --repeat-solve,
              the peers' --repeat-solve; each solve from x0 = 0, the
              preconditioner not set up again): ten solves with the same
              matrix, setup paid once
      ten_computed  setup + 10 x the first solve, the figure of the first
              measurements (before the repeat options existed), kept beside
              it; later solves are usually faster than the first (memory
              and caches touched already)
      later   the median of solves 2..N of a run (a warm solve)

    and asyncsolve's best "one" and "ten" against PETSc's best and against
    the best of all peers (hypre's own PCG included). Problems:
    ones (7-point, --size global, default 128^3) and laplace27 (27-point,
    --local per rank, default 60^3; hypre's ij -laplacian -27pt), b and x0 as
    in bench/peers/README.md, tol 1e-6 on ||r||_2/||b||_2 on every side.
    --matrix adds a Matrix Market file (the anisotropic diffusion that
    --write-anisotropic writes, or the hardest pyamg example that
    --write-pyamg writes; hypre's own driver takes no file and is skipped
    there). Nothing here asserts on time.

USAGE
    bench/peers/run_pc.py [--asyncsolve build/asyncsolve] [--ranks 1,2]
        [--problems ones,laplace27] [--size 128] [--local 60,60,60] [--repeat 5]
        [--variants NAME,...] [--tol 1e-6] [--solves 10] [--build-dir build-peers]
        [--matrix FILE.mtx] [--overlap 1] [--block-size N]
        [--json results/peers/pc.json] [--timeout 900] [--smoke]
    bench/peers/run_pc.py --write-anisotropic N EPS FILE.mtx
    bench/peers/run_pc.py --write-pyamg NAME FILE.mtx     (needs pyamg and scipy)

    --variants picks from the names and groups `run_pc.py --list` prints
    (default: the group "default", the CG family's variants and their peers
    but Schwarz). `--variants nonsymmetric` picks gmres, pgmres, bicgstab and
    pipebicgstab with jacobi, ilu0 and boomeramg beside PETSc's KSPGMRES and
    KSPBCGS (right side) with Jacobi, block-Jacobi ILU(0) and hypre, for a
    nonsymmetric --matrix (with --problems ''). The group "schwarz" (with
    --matrix) is BoomerAMG with the block size beside PETSc's PCHYPRE with
    MatSetBlockSize, pcg1 --pc asm (one and two levels) beside PETSc's CG +
    PCASM basic, and PETSc's Richardson + PCASM restrict beside asyncsolve's
    --method schwarz (sync, whose count must be within 1 of it, and async;
    one solve a run whatever --solves says); --overlap D (default 1) goes to every asm variant,
    --block-size N (default: the file's "% block-size: N" comment) to the
    BoomerAMG ones. The iteration counts are checked: asm within 2 of
    PETSc's, BoomerAMG at most 1.3 x PETSc + hypre's.
        bench/peers/run_pc.py --problems "" --matrix elasticity.mtx \
            --variants schwarz --ranks 2,4 --repeat 1 --solves 1
    --smoke: --size 24, --local 12,12,12, --repeat 1.
    --solves N: solves per run after the one setup (1: the first only; "ten"
    is then computed). "ten" is measured when N is 10; with N > 10 it is
    setup + the first ten measured solves.

OUTPUT
    A table per problem and rank count on stdout, with the iteration checks
    of the pairs both run; one JSON document (schema
    "asyncsolve.bench.pc/1"): parameters, host, load average before and after,
    git commit, every run's raw numbers and the summaries.
    Exit codes: 0 every run converged, 1 a run failed, 2 bad arguments.
"""
import argparse
import datetime
import json
import os
import shlex
import socket
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import run_peers  # noqa: E402
from benchkit import (  # noqa: E402
    BadArguments,
    fmt,
    git_commit,
    git_dirty,
    run_measured,
    split_launcher,
    spread,
    write_json,
)

SCHEMA = "asyncsolve.bench.pc/1"

# name -> (side, arguments). asyncsolve: --method and --pc (and --pc-option);
# peers: driver and its --ksp/--pc.
VARIANTS = {
    "as-pcg1-jacobi": ("asyncsolve", ["--method", "pcg1", "--pc", "jacobi"]),
    "as-pcg-overlap-jacobi": ("asyncsolve", ["--method", "pcg-overlap", "--pc", "jacobi"]),
    "as-pipecg-jacobi": ("asyncsolve", ["--method", "pipecg", "--pc", "jacobi"]),
    "as-pcg1-cheb3": ("asyncsolve", ["--method", "pcg1", "--pc", "chebyshev:3"]),
    "as-pcg1-cheb6": ("asyncsolve", ["--method", "pcg1", "--pc", "chebyshev:6"]),
    "as-pipecg-cheb3": ("asyncsolve", ["--method", "pipecg", "--pc", "chebyshev:3"]),
    "as-pcg1-amg": ("asyncsolve", ["--method", "pcg1", "--pc", "boomeramg"]),
    "as-pcg1-amg-agg1": ("asyncsolve", ["--method", "pcg1", "--pc", "boomeramg",
                                        "--pc-option", "agg_levels=1"]),
    "as-pcg-overlap-amg": ("asyncsolve", ["--method", "pcg-overlap", "--pc", "boomeramg"]),
    "as-pipecg-amg": ("asyncsolve", ["--method", "pipecg", "--pc", "boomeramg"]),
    "petsc-gamg": ("petsc", ["--ksp", "cg", "--pc", "gamg"]),
    "petsc-hypre": ("petsc", ["--ksp", "cg", "--pc", "hypre"]),
    "petsc-jacobi": ("petsc", ["--ksp", "cg", "--pc", "jacobi"]),
    "hypre-amg": ("hypre", ["--pc", "boomeramg"]),
    # Additive Schwarz, one subdomain per rank grown by --overlap, exact local
    # solves; PETSc's on --matrix only (petsc_mtx; petsc_cg has no PCASM).
    "as-pcg1-asm": ("asyncsolve", ["--method", "pcg1", "--pc", "asm"]),
    "as-pcg1-asm-coarse": ("asyncsolve", ["--method", "pcg1", "--pc", "asm", "--coarse",
                                          "nicolaides"]),
    "petsc-asm": ("petsc", ["--ksp", "cg", "--pc", "asm", "--asm-type", "basic"]),
    "petsc-ras": ("petsc", ["--ksp", "richardson", "--pc", "asm", "--asm-type", "restrict"]),
    # The Schwarz iteration (restricted additive Schwarz as a stationary
    # method; --matrix only, one solve a run): sync is PETSc's Richardson +
    # PCASM restrict.
    "as-schwarz-sync": ("asyncsolve", ["--method", "schwarz", "--variant", "sync"]),
    "as-schwarz-async": ("asyncsolve", ["--method", "schwarz", "--variant", "async"]),
}
# The nonsymmetric methods (--matrix only; --variants nonsymmetric picks them
# all, the default leaves them out): asyncsolve's gmres, pgmres, bicgstab and
# pipebicgstab with jacobi, ilu0 and boomeramg, PETSc's KSPGMRES and KSPBCGS
# (right side) with Jacobi, block-Jacobi ILU(0) and hypre (PETSc's defaults).
NONSYMMETRIC = {}
for _method in ("gmres", "pgmres", "bicgstab", "pipebicgstab"):
    for _pc, _name in (("jacobi", "jacobi"), ("ilu0", "ilu0"), ("boomeramg", "amg")):
        NONSYMMETRIC[f"as-{_method}-{_name}"] = ("asyncsolve", ["--method", _method, "--pc", _pc])
for _ksp in ("gmres", "bcgs"):
    for _pc in ("jacobi", "ilu", "hypre"):
        NONSYMMETRIC[f"petsc-{_ksp}-{_pc}"] = ("petsc", ["--ksp", _ksp, "--pc", _pc])
SYMMETRIC = list(VARIANTS)
VARIANTS.update(NONSYMMETRIC)
PEER_SIDES = ("petsc", "hypre")
# --variants takes these group names too.
GROUPS = {
    "default": [v for v in SYMMETRIC if not any(k in v for k in ("asm", "ras", "schwarz"))],
    "nonsymmetric": list(NONSYMMETRIC),
    "schwarz": ["as-pcg1-amg", "petsc-hypre", "as-pcg1-asm", "as-pcg1-asm-coarse", "petsc-asm",
                "petsc-ras", "as-schwarz-sync", "as-schwarz-async"],
    "all": list(VARIANTS),
}
# The iteration counts compared (asyncsolve variant, peer variant, criterion):
# the same preconditioner must take PETSc's count within 2 (the sync Schwarz
# iteration Richardson + PCASM restrict's within 1); BoomerAMG with the
# block size at most 1.3 times hypre's through PETSc.
CHECKS = (
    ("as-pcg1-asm", "petsc-asm", "within", 2),
    ("as-schwarz-sync", "petsc-ras", "within", 1),
    ("as-pcg1-amg", "petsc-hypre", "ratio", 1.3),
)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="run_pc.py", description=__doc__.split("\n\n")[1])
    p.add_argument("--asyncsolve", default="build/asyncsolve")
    p.add_argument("--ranks", default="1,2", help="comma-separated rank counts")
    p.add_argument("--problems", default="ones,laplace27",
                   help="ones and/or laplace27, or empty for --matrix alone")
    p.add_argument("--matrix", help="also a Matrix Market file (problem 'matrix'; asyncsolve "
                   "--partition block, PETSc petsc_mtx; b = A*1; hypre-amg is skipped)")
    p.add_argument("--size", default="128", help="ones: global grid N or NX,NY,NZ")
    p.add_argument("--local", default="60,60,60", help="laplace27: points per rank")
    p.add_argument("--repeat", type=int)
    p.add_argument("--variants", default="default",
                   help="variant names (see --list) or groups: default (the CG family, no "
                   "Schwarz), nonsymmetric (every nonsymmetric one), schwarz (BoomerAMG with the "
                   "block size and additive Schwarz beside PETSc's hypre, PCASM basic and "
                   "Richardson + PCASM restrict; --matrix), all")
    p.add_argument("--overlap", type=int, default=1,
                   help="the asm variants' overlap, both sides (0 to 8)")
    p.add_argument("--block-size", type=int,
                   help="unknowns per node for the BoomerAMG and asm variants (PETSc: "
                   "MatSetBlockSize before MatLoad, so PCHYPRE passes num_functions); default: "
                   "the --matrix file's '%% block-size: N' comment, else 1")
    p.add_argument("--coordinates",
                   help="the --matrix nodes' coordinates (Matrix Market array, one row per "
                   "node): the rigid-body modes for PETSc's GAMG (MatSetNearNullSpace) and "
                   "asyncsolve's --coarse nicolaides")
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--solves", type=int, default=10,
                   help="solves per run after the one setup (asyncsolve and peers "
                   "--repeat-solve); ten is measured from them when N >= 10")
    p.add_argument("--max-iters", type=int, default=10000)
    p.add_argument("--mpiexec", default="mpiexec --oversubscribe")
    p.add_argument("--build-dir", default="build-peers")
    p.add_argument("--json", default=os.path.join("results", "peers", "pc.json"))
    p.add_argument("--timeout", type=float, default=900.0)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--list", action="store_true", help="print the variants and exit")
    p.add_argument("--write-anisotropic", nargs=3, metavar=("N", "EPS", "FILE"),
                   help="write the anisotropic 3-D diffusion matrix (N^3, coefficient EPS in z) "
                   "and exit")
    p.add_argument("--write-pyamg", nargs=2, metavar=("NAME", "FILE"),
                   help="write pyamg.gallery.load_example(NAME)'s matrix (real symmetric) as "
                   "Matrix Market and exit (needs pyamg and scipy)")
    p.add_argument("--summarise", metavar="FILE",
                   help="print the tables of an earlier run's document and exit")
    args = p.parse_args(argv)
    if args.list or args.summarise or args.write_anisotropic or args.write_pyamg:
        return args
    if args.smoke:
        args.size, args.local = "24", "12,12,12"
    if args.repeat is None:
        args.repeat = 1 if args.smoke else 5
    try:
        args.rank_list = [int(r) for r in args.ranks.split(",")]
    except ValueError:
        raise BadArguments(f"--ranks {args.ranks!r}: expected integers") from None
    args.problem_list = [x for x in args.problems.split(",") if x]
    args.variant_list = []
    for name in args.variants.split(","):
        for v in GROUPS.get(name, [name]):
            if v not in args.variant_list:
                args.variant_list.append(v)
    if not 0 <= args.overlap <= 8:
        raise BadArguments(f"--overlap {args.overlap}: expected 0 to 8")
    if args.block_size is not None and not 1 <= args.block_size <= 16:
        raise BadArguments(f"--block-size {args.block_size}: expected 1 to 16")
    if min(args.rank_list) < 1 or args.repeat < 1 or not 1 <= args.solves <= 1000000:
        raise BadArguments("--ranks, --repeat and --solves: expected positive numbers "
                           "(--solves at most 1000000)")
    if any(x not in ("ones", "laplace27") for x in args.problem_list):
        raise BadArguments(f"--problems {args.problems!r}: expected ones and/or laplace27")
    args.matrix_path = None
    if args.matrix:
        args.matrix_path = run_peers.in_repo(args.matrix)
        if not os.path.isfile(args.matrix_path):
            raise BadArguments(f"--matrix {args.matrix}: no such file")
        args.problem_list.append("matrix")
    args.block = args.block_size or (block_size_comment(args.matrix_path)
                                     if args.matrix_path else 1)
    if not args.problem_list:
        raise BadArguments("no problem: expected --problems or --matrix")
    bad = [v for v in args.variant_list if v not in VARIANTS]
    if bad:
        raise BadArguments(f"--variants: unknown {','.join(bad)} (see --list)")
    args.global_triple = run_peers.parse_triple(args.size, "--size")
    args.local_triple = run_peers.parse_triple(args.local, "--local")
    args.asyncsolve_path = run_peers.in_repo(args.asyncsolve)
    args.build_path = run_peers.in_repo(args.build_dir)
    args.json_path = run_peers.in_repo(args.json)
    args.launcher = split_launcher(args.mpiexec)
    return args


def write_anisotropic(path, n, eps):
    """The 7-point matrix of -div(K grad u), K = diag(1, 1, eps), on an n^3 grid with
    Dirichlet points eliminated (no h^2 scaling): 4 + 2 eps on the diagonal, -1 to the x and
    y neighbours, -eps to the z neighbours; rows x fastest. Matrix Market, symmetric (lower
    triangle), written with the standard library only."""
    rows = n ** 3
    lines = []
    for k in range(n):
        for j in range(n):
            for i in range(n):
                r = i + n * (j + n * k) + 1
                if k > 0:
                    lines.append(f"{r} {r - n * n} {-eps!r}")
                if j > 0:
                    lines.append(f"{r} {r - n} -1")
                if i > 0:
                    lines.append(f"{r} {r - 1} -1")
                lines.append(f"{r} {r} {4 + 2 * eps!r}")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write(f"% anisotropic 3-D diffusion, {n}^3, K = diag(1, 1, {eps!r}) (run_pc.py)\n")
        f.write(f"{rows} {rows} {len(lines)}\n")
        f.write("\n".join(lines))
        f.write("\n")
    os.replace(tmp, path)


def write_pyamg(path, name):
    """pyamg.gallery.load_example(name)'s matrix as Matrix Market (symmetric storage when it
    is symmetric to the last bit), through scipy.io.mmwrite, as PERFORMANCE.md's section
    "How fast is a mat-vec on your own matrix?" writes them."""
    import pyamg
    import scipy.io
    import scipy.sparse as sp
    a = sp.csr_matrix(pyamg.gallery.load_example(name)["A"])
    a.sum_duplicates()
    tmp = path + ".tmp.mtx"
    scipy.io.mmwrite(tmp, a, symmetry="symmetric" if abs(a - a.T).max() == 0 else "general")
    os.replace(tmp, path)


def block_size_comment(path):
    """N of a Matrix Market file's '% block-size: N' comment line (before the size
    line; asyncsolve reads the same convention), or 1."""
    with open(path) as f:
        f.readline()  # the banner
        for line in f:
            if not line.startswith("%"):
                break
            key, _, value = line[1:].strip().partition(":")
            if key.strip() == "block-size" and value.strip().isdigit():
                return int(value)
    return 1


def variant_arguments(args, variant, problem):
    """The variant's arguments with the run's overlap and block size, or None where
    its side cannot run the problem (PETSc's PCASM: --matrix only)."""
    side, extra = VARIANTS[variant]
    pc = extra[extra.index("--pc") + 1] if "--pc" in extra else None
    extra = list(extra)
    schwarz = "schwarz" in extra
    if schwarz and problem != "matrix":
        return None
    if pc == "asm" or schwarz:
        if side != "asyncsolve" and problem != "matrix":
            return None
        extra += ["--overlap", str(args.overlap)]
    if problem == "matrix" and args.block > 1:
        # asyncsolve reads the file's comment itself; PETSc is told (not for PCASM:
        # MatSetBlockSize would split the rows by whole nodes, another partition).
        # One-level Schwarz has no use for it (asyncsolve refuses it there).
        two_level = "nicolaides" in extra
        if side == "asyncsolve" and args.block_size and (pc == "boomeramg"
                                                         or (pc == "asm" and two_level)):
            extra += ["--block-size", str(args.block)]
        if side == "petsc" and pc in ("hypre", "gamg"):
            extra += ["--block-size", str(args.block)]
    rigid_body = (side == "petsc" and pc == "gamg") or (side == "asyncsolve"
                                                        and "nicolaides" in extra)
    if problem == "matrix" and args.coordinates and rigid_body:
        extra += ["--coordinates", os.path.abspath(args.coordinates)]
    return extra


def command(args, drivers, variant, problem, ranks):
    side = VARIANTS[variant][0]
    extra = variant_arguments(args, variant, problem)
    if extra is None:
        return None
    # The Schwarz iteration solves once per run (no --repeat-solve).
    if args.solves > 1 and "schwarz" not in extra:
        extra = extra + ["--repeat-solve", str(args.solves)]
    mpi = args.launcher + ["-q", "-n", str(ranks)]
    if problem == "matrix":
        if side == "asyncsolve":
            return mpi + [args.asyncsolve_path, "solve", "--matrix", args.matrix_path,
                          "--partition", "block"] + extra + [
                "--tol", repr(args.tol), "--max-iters", str(args.max_iters)]
        if side != "petsc":
            return None
        return mpi + [drivers["petsc_mtx"], "--matrix", args.petsc_file] + extra + [
            "--rtol", repr(args.tol), "--max-it", str(args.max_iters)]
    if problem == "ones":
        grid = ["--global", ",".join(map(str, args.global_triple))]
    else:
        grid = ["--local", ",".join(map(str, args.local_triple))]
    if side == "asyncsolve":
        return mpi + [args.asyncsolve_path, "solve", "--problem", problem] + grid + extra + [
            "--tol", repr(args.tol), "--max-iters", str(args.max_iters)]
    return mpi + [drivers[side], "--problem", problem] + grid + extra + [
        "--rtol", repr(args.tol), "--max-it", str(args.max_iters)]


def asyncsolve_record(doc):
    r = doc["result"]
    pc = doc.get("pc_setup") or {}
    phases = doc.get("phases") or {}

    def phase(name):
        p = phases.get(name)
        return p["max"] if p else None

    repeats = r.get("repeat_solves") or {}
    # With --matrix the matrix's setup counts as PETSc's MatLoad does
    # (reading the binary file, distributing, assembling): partitioning,
    # distributing and building the operator; reading the text file not.
    matrix = (doc.get("problem") or {}).get("setup_s") or {}
    matrix_s = sum(float(matrix.get(k, 0.0)) for k in ("partition", "distribute", "operator"))
    return {"iterations": r["iterations"]["max"], "solve_s": float(r["time_s"]),
            "solves_s": [float(t) for t in repeats.get("time_s", [])],
            "solves_iterations": list(repeats.get("iterations", [])),
            "setup_s": float(pc.get("setup_s", 0.0)) + matrix_s, "matrix_setup_s": matrix_s,
            "converged": r["converged"] and all(repeats.get("converged", [True])),
            "residual": r.get("true_residual"), "precond_s": phase("precond"),
            "precond_hidden_s": phase("precond_hidden"),
            "reduce_wait_s": phase("reduce_wait"), "matvec_hidden_s": phase("matvec_hidden"),
            "hidden_fraction": hidden_fraction(phase("matvec_hidden"), phase("reduce_wait")),
            "pc_numbers": {
                k: pc[k] for k in ("lambda_min", "lambda_max", "applies", "matvecs")
                if k in pc}}


def hidden_fraction(hidden, waited):
    """The part of the reductions' time hidden behind the mat-vec: the mat-vec time with
    a reduction in flight (phase matvec_hidden) over that plus the time still waited for
    reductions (reduce_wait); None where the method hides nothing (no such phase)."""
    if not hidden or waited is None:
        return None
    return hidden / (hidden + waited)


def run_one(args, env, drivers, variant, problem, ranks, repeat, tmp):
    side = VARIANTS[variant][0]
    cmd = command(args, drivers, variant, problem, ranks)
    if cmd is None:
        return None
    path = os.path.join(tmp, f"{variant}.{problem}.{ranks}.{repeat}.json")
    if side == "asyncsolve":
        cmd += ["--json", path]
    rec = {"variant": variant, "side": side, "problem": problem, "ranks": ranks,
           "repeat": repeat, "load_before": os.getloadavg()[0]}
    m = run_measured(cmd, args.timeout, env=env, stdout=True)
    rec.update({k: m.get(k) for k in ("command", "exit_code", "error", "wall_s")})
    if m["exit_code"] is None or rec["error"]:
        return rec
    try:
        if side == "asyncsolve":
            with open(path) as f:
                rec.update(asyncsolve_record(json.load(f)))
        else:
            n = run_peers.peer_numbers(m["stdout"])
            repeats = n.get("repeat_solves") or {}
            rec.update({"iterations": n["iterations"], "solve_s": n["time_s"],
                        "solves_s": [float(t) for t in repeats.get("time_s", [])],
                        "solves_iterations": list(repeats.get("iterations", [])),
                        "setup_s": float(n["setup_s"]), "converged": n["converged"],
                        "residual": n["residual"]})
    except (OSError, ValueError, KeyError, TypeError) as e:
        rec["error"] = f"unusable result: {type(e).__name__} {e}"
        return rec
    if not rec["converged"]:
        rec["error"] = "not converged"
    elif args.solves > 1 and len(rec["solves_s"]) != args.solves:
        rec["error"] = (f"{len(rec['solves_s'])} solves reported, expected {args.solves} "
                        "(repeat_solves missing?)")
    elif len(set(rec["solves_iterations"])) > 1:
        rec["error"] = f"the repeated solves took {rec['solves_iterations']} iterations"
    finish_record(rec)
    return rec


def finish_record(rec):
    """one, ten (measured when ten solves were), ten_computed and later from a record's
    setup_s, solve_s and solves_s."""
    solves = rec.get("solves_s") or []
    rec["one_s"] = rec["setup_s"] + rec["solve_s"]
    rec["ten_computed_s"] = rec["setup_s"] + 10 * rec["solve_s"]
    rec["ten_measured"] = len(solves) >= 10
    rec["ten_s"] = rec["setup_s"] + sum(solves[:10]) if rec["ten_measured"] else \
        rec["ten_computed_s"]
    rec["later_s"] = statistics.median(solves[1:]) if len(solves) > 1 else None


def summarise(runs, problem, ranks, variants):
    rows = {}
    for v in variants:
        ok = [r for r in runs if r["variant"] == v and r["problem"] == problem
              and r["ranks"] == ranks and r["error"] is None]
        rows[v] = {"runs": len(ok), "iterations": sorted({r["iterations"] for r in ok}),
                   **{k: spread([r.get(k) for r in ok])
                      for k in ("setup_s", "solve_s", "later_s", "one_s", "ten_s",
                                "ten_computed_s", "precond_s", "precond_hidden_s",
                                "reduce_wait_s", "matvec_hidden_s", "hidden_fraction")},
                   "ten_measured": all(r.get("ten_measured", False) for r in ok) and bool(ok)}
    best = {}
    groups = {"asyncsolve": ("asyncsolve",), "petsc": ("petsc",), "peers": PEER_SIDES}
    for key in ("one_s", "ten_s", "ten_computed_s"):
        for group, sides in groups.items():
            cands = [(rows[v][key]["median"], v) for v in variants
                     if rows[v][key] and VARIANTS[v][0] in sides]
            best[f"{group}_{key}"] = min(cands) if cands else None
        a = best[f"asyncsolve_{key}"]
        for group in ("petsc", "peers"):
            p = best[f"{group}_{key}"]
            best[f"ratio_{group}_{key}"] = a[0] / p[0] if a and p else None
    return {"problem": problem, "ranks": ranks, "variants": rows, "best": best,
            "checks": iteration_checks(rows)}


def iteration_checks(rows):
    """CHECKS on a summary's rows (variants run on both sides only); the most
    iterations of any repeat on each side."""
    out = []
    for mine, peer, kind, bound in CHECKS:
        a = rows.get(mine, {}).get("iterations")
        b = rows.get(peer, {}).get("iterations")
        if not a or not b:
            continue
        ours, theirs = max(a), max(b)
        met = abs(ours - theirs) <= bound if kind == "within" else ours <= bound * theirs
        out.append({"asyncsolve": mine, "peer": peer, "iterations": [ours, theirs],
                    "criterion": f"{kind} {bound}", "ratio": ours / theirs if theirs else None,
                    "met": met})
    return out


def print_summary(s):
    print(f"\n{s['problem']}, {s['ranks']} rank(s): seconds, median [min..max]")
    head = (f"{'variant':<22} {'its':>5} {'setup':>20} {'solve':>20} {'later solves':>20}"
            f" {'one (setup+solve)':>20} {'ten (setup+10 solves)':>22} {'ten computed':>20}")
    print(head)
    print("-" * len(head))

    def cell(x):
        return "-" if not x else f"{x['median']:.3f} [{x['min']:.2f}..{x['max']:.2f}]"

    for v, row in s["variants"].items():
        its = ",".join(map(str, row["iterations"])) or "-"
        ten = cell(row["ten_s"]) + ("*" if row["runs"] and not row.get("ten_measured") else "")
        print(f"{v:<22} {its:>5} {cell(row['setup_s']):>20} {cell(row['solve_s']):>20} "
              f"{cell(row.get('later_s')):>20} {cell(row['one_s']):>20} {ten:>22} "
              f"{cell(row.get('ten_computed_s')):>20}")
    for v, row in s["variants"].items():
        if row.get("hidden_fraction"):
            print(f"{v}: mat-vec with a reduction in flight {cell(row['matvec_hidden_s'])} s, "
                  f"reductions still waited {cell(row['reduce_wait_s'])} s: hidden fraction "
                  f"{cell(row['hidden_fraction'])}")
    if not all(row.get("ten_measured") for row in s["variants"].values() if row["runs"]):
        print("* ten computed (setup + 10 x the first solve): fewer than ten solves measured")
    for c in s.get("checks", []):
        print(f"iterations: {c['asyncsolve']} {c['iterations'][0]} vs {c['peer']} "
              f"{c['iterations'][1]} (ratio {fmt(c['ratio'], '.2f')}; {c['criterion']}): "
              f"{'met' if c['met'] else 'NOT met'}")
    b = s["best"]
    for key, what in (("one_s", "one solve"), ("ten_s", "ten solves"),
                      ("ten_computed_s", "ten solves computed")):
        if b.get(f"asyncsolve_{key}") is None:
            continue
        a = b[f"asyncsolve_{key}"]
        for group in ("petsc", "peers"):
            p = b[f"{group}_{key}"]
            if a and p:
                print(f"best {what}: asyncsolve {a[1]} {a[0]:.3f} s, {group} {p[1]} "
                      f"{p[0]:.3f} s, ratio {fmt(b[f'ratio_{group}_{key}'], '.2f')}")


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except BadArguments as e:
        print(f"run_pc.py: {e}", file=sys.stderr)
        return 2
    if args.list:
        for name, (side, extra) in VARIANTS.items():
            print(f"{name:<22} {side:<10} {shlex.join(extra)}")
        for name, members in GROUPS.items():
            print(f"group {name}: {','.join(members)}")
        return 0
    if args.write_anisotropic:
        n, eps, path = args.write_anisotropic
        write_anisotropic(run_peers.in_repo(path), int(n), float(eps))
        return 0
    if args.write_pyamg:
        name, path = args.write_pyamg
        write_pyamg(run_peers.in_repo(path), name)
        return 0
    if args.summarise:
        with open(args.summarise) as f:
            doc = json.load(f)
        p = doc["parameters"]
        for problem in p["problems"]:
            for ranks in p["ranks"]:
                print_summary(summarise(doc["runs"], problem, ranks, list(p["variants"])))
        return 0
    peers = sorted({VARIANTS[v][0] for v in args.variant_list} & set(PEER_SIDES))
    if args.matrix_path and "petsc" in peers:
        peers.append("petsc_mtx")
    try:
        drivers = run_peers.build_drivers(args, peers) if peers else {}
        args.petsc_file = run_peers.convert_matrix(args) if args.matrix_path else None
    except run_peers.SetupFailed as e:
        print(f"run_pc.py: {e}", file=sys.stderr)
        return 1
    env = run_peers.mpi_environment()
    started = datetime.datetime.now(datetime.UTC).astimezone()
    load_start = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="run_pc.") as tmp:
        for rep in range(args.repeat):
            for problem in args.problem_list:
                for ranks in args.rank_list:
                    for v in args.variant_list:
                        rec = run_one(args, env, drivers, v, problem, ranks, rep, tmp)
                        if rec is None:
                            continue
                        runs.append(rec)
                        status = rec["error"] or (
                            f"{rec['iterations']} its, setup {rec['setup_s']:.3f} s, "
                            f"solve {rec['solve_s']:.3f} s")
                        print(f"[{rep + 1}/{args.repeat}] {problem} np{ranks} {v:<22} {status}"
                              f" (load {rec['load_before']:.1f})", flush=True)
    summaries = [summarise(runs, p, n, args.variant_list)
                 for p in args.problem_list for n in args.rank_list]
    for s in summaries:
        print_summary(s)
    doc = {"schema": SCHEMA, "started": started.isoformat(timespec="seconds"),
           "finished": datetime.datetime.now(datetime.UTC).astimezone().isoformat(
               timespec="seconds"),
           "hostname": socket.gethostname(), "cores": os.cpu_count(),
           "loadavg_start": load_start, "loadavg_end": os.getloadavg(),
           "git": {"commit": git_commit(), "dirty": git_dirty()},
           "parameters": {"ranks": args.rank_list, "problems": args.problem_list,
                          "size": args.global_triple, "local": args.local_triple,
                          "matrix": args.matrix, "overlap": args.overlap,
                          "block_size": args.block,
                          "repeat": args.repeat, "tol": args.tol, "solves": args.solves,
                          "variants": {v: VARIANTS[v] for v in args.variant_list},
                          "order": "repeat, problem, ranks, variant (interleaved)"},
           "summaries": summaries, "runs": runs}
    write_json(args.json_path, doc)
    print(f"wrote {os.path.relpath(args.json_path)}")
    return 0 if all(r["error"] is None for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
