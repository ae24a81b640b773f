#!/usr/bin/env python3
"""NAME
    run_peers.py - asyncsolve's CG/PCG beside PETSc and hypre, same problems, same run

PURPOSE
    Sets asyncsolve's time per iteration beside two widely used libraries' on
    this machine, for the same matrix, right-hand side, initial guess (0) and
    stopping test (||b - Ax||_2 <= tol ||b||_2 on the recursive residual):

      configuration    asyncsolve            peer
      ones-cg          --method cg           PETSc KSPCG, PC none
      ones-pcg1        --method pcg1         PETSc KSPCG, PC Jacobi
      ones-pipecg      --method pipecg       PETSc KSPPIPECG, PC none
      laplace27-pcg1   --method pcg1         hypre ParCSR PCG, DiagScale
      ones-amg         --method pcg1 --pc boomeramg   hypre ParCSR PCG, BoomerAMG
      laplace27-amg    --method pcg1 --pc boomeramg   hypre ParCSR PCG, BoomerAMG
                       (both with asyncsolve's BoomerAMG defaults: the iteration
                       counts must agree within +-1)
      mtx-cg           --matrix F --method cg    PETSc KSPCG on F, PC none   (with --matrix)
      mtx-pcg1         --matrix F --method pcg1  PETSc KSPCG on F, PC Jacobi (with --matrix)
      mtx-spmv         bench/spmv --matrix F     PETSc MatMult on F          (with --matrix)
      mtx-gmres[-P]    --matrix F --method gmres --pc P (none, jacobi or ilu0: the default)
                       PETSc KSPGMRES, PC P (ilu: block Jacobi ILU(0)), right side,
                       restart 30, CGS refined if needed on both sides
      mtx-fgmres[-P], mtx-pgmres[-P], mtx-bicgstab[-P], mtx-pipebicgstab[-P]
                       likewise beside KSPFGMRES, KSPPGMRES, KSPBCGS, KSPPIPEBCGS
                       (the nonsymmetric ones run only when --configs names them)

    ones: 7-point operator on --size (global grid, default 128^3); laplace27:
    hypre's ij -laplacian -27pt on --local per rank (default 60^3, paper
    003's -n 60 60 60). See bench/peers/README.md for the matrices and the
    stopping tests. With --matrix F.mtx the mtx-* configurations run on the
    matrix of a Matrix Market file: bench/mtx2petsc (built beside
    asyncsolve) writes it in PETSc's binary format through asyncsolve's own
    reader, so that PETSc's MatLoad (bench/peers/petsc_mtx) and asyncsolve
    hold the very same matrix, both distributed in contiguous row blocks
    (asyncsolve's --partition block); b = A * 1, x0 = 0. mtx-spmv sets
    bench/spmv's time per mat-vec (asyncsolve's CSR operator, halo exchange
    in flight) beside MatMult's, --spmv-iterations calls per run.

    It installs petsc-dev and libhypre-dev with apt-get when missing (as
    root; otherwise it says what to install), configures and builds the peer
    drivers into build-peers/, then runs every configuration --repeat times,
    asyncsolve and its peer one after the other (A B A B ...), the repeats
    outermost so that slow drift of the machine touches every configuration
    alike. Per configuration it reports the median time per iteration of
    each side (each run's time is its solve time, maximum over ranks), the
    ratio asyncsolve/peer of the medians (and the median of the per-repeat
    ratios), and whether the iteration counts agree within +-1. Nothing here
    asserts on time.

USAGE
    bench/peers/run_peers.py [--asyncsolve build/asyncsolve] [--ranks 2]
        [--size 128] [--local 60,60,60] [--repeat 5] [--tol 1e-6]
        [--max-iters 10000] [--configs ones-cg,ones-pcg1,ones-pipecg,laplace27-pcg1]
        [--petsc-norm unpreconditioned|natural] [--mpiexec "mpiexec --oversubscribe"]
        [--build-dir build-peers] [--timeout 600] [--json results/peers/peers.json]
        [--runs-dir DIR] [--peers-only] [--smoke]
        [--matrix FILE.mtx [--spmv-iterations 100]]

    Paths are relative to the repository root. --size is N or NX,NY,NZ.
    --peers-only runs the peers alone (no asyncsolve binary needed).
    --smoke: --size 16, --local 10,10,10, and --repeat 1 unless given (seconds).
    --mpiexec is split like a shell line; -q is added for Open MPI. As root,
    OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) are set if missing, and
    OMPI_MCA_mpi_yield_when_idle=1 (ranks may outnumber cores).

OUTPUT
    A table on stdout and one JSON document (schema
    "asyncsolve.bench.peers/1", written to a temporary file then renamed):
    parameters, hostname, date, git commit, the library versions, per
    configuration both command lines, the summaries (median/min/max time per
    iteration and time, iteration counts), the ratios and the iteration
    agreement, and every run's raw numbers.

    Exit codes: 0 every run ran and converged; 1 a run failed (non-zero exit,
    no result, not converged) or the set-up (packages, build) failed;
    2 bad arguments.
"""
import argparse
import datetime
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchkit import (
    BadArguments,
    allow_root,
    fmt,
    git_commit,
    git_dirty,
    launcher_line,
    run_measured,
    split_launcher,
    spread,
    write_json,
)

SCHEMA = "asyncsolve.bench.peers/1"
EXIT_OK, EXIT_FAILED, EXIT_BAD_ARGS = 0, 1, 2
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS_SOURCE = os.path.join("bench", "peers")
DEB_PACKAGES = ("petsc-dev", "libhypre-dev", "pkg-config", "cmake")
DRIVERS = {"petsc": "petsc_cg", "hypre": "hypre_pcg", "petsc_mtx": "petsc_mtx"}

# name -> (problem, asyncsolve method, peer, peer ksp, peer pc)
CONFIGURATIONS = {
    "ones-cg": ("ones", "cg", "petsc", "cg", "none"),
    "ones-pcg1": ("ones", "pcg1", "petsc", "cg", "jacobi"),
    "ones-pipecg": ("ones", "pipecg", "petsc", "pipecg", "none"),
    "laplace27-pcg1": ("laplace27", "pcg1", "hypre", "pcg", "diagscale"),
    "ones-amg": ("ones", "pcg1", "hypre", "pcg", "boomeramg"),
    "laplace27-amg": ("laplace27", "pcg1", "hypre", "pcg", "boomeramg"),
    "mtx-cg": ("matrix", "cg", "petsc_mtx", "cg", "none"),
    "mtx-pcg1": ("matrix", "pcg1", "petsc_mtx", "cg", "jacobi"),
    "mtx-spmv": ("matrix", "spmv", "petsc_mtx", "spmv", "none"),
}
# The nonsymmetric methods on a --matrix file, beside PETSc's KSP of the same
# name with the same preconditioner on the right: mtx-METHOD (ilu0 / block
# Jacobi ILU(0), both sides' default) and mtx-METHOD-none, mtx-METHOD-jacobi.
NONSYMMETRIC_KSP = {"gmres": "gmres", "fgmres": "fgmres", "pgmres": "pgmres",
                    "bicgstab": "bcgs", "pipebicgstab": "pipebcgs"}
for _method, _ksp in NONSYMMETRIC_KSP.items():
    CONFIGURATIONS[f"mtx-{_method}"] = ("matrix", _method, "petsc_mtx", _ksp, "ilu")
    for _pc in ("none", "jacobi"):
        CONFIGURATIONS[f"mtx-{_method}-{_pc}"] = ("matrix", _method, "petsc_mtx", _ksp, _pc)
# asyncsolve's --pc of a PETSc PC name
ASYNCSOLVE_PC_OF_PEER = {"ilu": "ilu0", "none": "none", "jacobi": "jacobi"}
# asyncsolve's --pc where it is not the method's default (the peer's pc names the same)
ASYNCSOLVE_PC = {"ones-amg": "boomeramg", "laplace27-amg": "boomeramg"}
GRID_CONFIGURATIONS = [c for c, v in CONFIGURATIONS.items() if v[0] != "matrix"]
MATRIX_CONFIGURATIONS = [c for c, v in CONFIGURATIONS.items()
                         if v[0] == "matrix" and v[1] not in NONSYMMETRIC_KSP]


class SetupFailed(Exception):
    """Packages or the build could not be had; one line, exit 1."""


# ---------------------------------------------------------------- arguments

def parse_triple(text, option):
    parts = text.split(",")
    if len(parts) == 1:
        parts = parts * 3
    try:
        values = [int(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 3 or min(values) < 1:
        raise BadArguments(f"{option} {text!r}: expected N or NX,NY,NZ, positive integers")
    return values


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="run_peers.py",
        description="asyncsolve's CG/PCG beside PETSc and hypre on the same problems.")
    p.add_argument("--asyncsolve", default="build/asyncsolve",
                   help="asyncsolve executable (default: %(default)s, from the repository root)")
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks (default: %(default)s)")
    p.add_argument("--size", default="128",
                   help="ones: global grid, N or NX,NY,NZ (default: %(default)s)")
    p.add_argument("--local", default="60,60,60",
                   help="laplace27: points per rank NX,NY,NZ (default: %(default)s)")
    p.add_argument("--repeat", type=int, help="runs of each side (default: 5; 1 with --smoke)")
    p.add_argument("--tol", type=float, default=1e-6, help="relative tolerance (default: 1e-6)")
    p.add_argument("--max-iters", type=int, default=10000, help="iteration limit")
    p.add_argument("--configs",
                   help="comma-separated subset of " + ",".join(CONFIGURATIONS) + " (default: "
                   + ",".join(GRID_CONFIGURATIONS) + ", and the mtx-* ones with --matrix)")
    p.add_argument("--matrix", help="Matrix Market file of the mtx-* configurations")
    p.add_argument("--spmv-iterations", type=int, default=100,
                   help="mtx-spmv: mat-vecs per run (default: %(default)s)")
    p.add_argument("--petsc-norm", default="unpreconditioned",
                   choices=("unpreconditioned", "natural"),
                   help="PETSc's norm type (natural: same test here, one reduction fewer in CG)")
    p.add_argument("--mpiexec", default="mpiexec --oversubscribe", help="launcher line")
    p.add_argument("--build-dir", default="build-peers", help="where the drivers are built")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    p.add_argument("--json", default=os.path.join("results", "peers", "peers.json"),
                   help="result document (default: %(default)s)")
    p.add_argument("--runs-dir", help="keep every asyncsolve result document here")
    p.add_argument("--peers-only", action="store_true", help="run the peers only")
    p.add_argument("--smoke", action="store_true",
                   help="tiny sizes (16^3, 10^3 per rank), one repeat")
    args = p.parse_args(argv)
    if args.smoke:
        args.size, args.local = "16", "10,10,10"
    if args.repeat is None:
        args.repeat = 1 if args.smoke else 5
    validate(args)
    return args


def in_repo(path):
    return path if os.path.isabs(path) else os.path.join(REPO_ROOT, path)


def validate(args):
    args.global_triple = parse_triple(args.size, "--size")
    args.local_triple = parse_triple(args.local, "--local")
    if args.ranks < 1:
        raise BadArguments(f"--ranks {args.ranks}: expected at least 1")
    if args.repeat < 1:
        raise BadArguments(f"--repeat {args.repeat}: expected at least 1")
    if not 0.0 < args.tol < 1.0:
        raise BadArguments(f"--tol {args.tol}: expected 0 < tol < 1")
    if args.max_iters < 1 or args.timeout <= 0:
        raise BadArguments("--max-iters and --timeout: expected positive numbers")
    if args.configs is None:
        args.configs = ",".join(GRID_CONFIGURATIONS + (MATRIX_CONFIGURATIONS if args.matrix
                                                       else []))
    args.config_list = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [c for c in args.config_list if c not in CONFIGURATIONS]
    if bad or not args.config_list or len(set(args.config_list)) != len(args.config_list):
        raise BadArguments(f"--configs {args.configs!r}: expected distinct names from "
                           + ",".join(CONFIGURATIONS))
    if any(CONFIGURATIONS[c][0] == "matrix" for c in args.config_list):
        if not args.matrix:
            raise BadArguments("the mtx-* configurations need --matrix FILE.mtx")
        args.matrix_path = in_repo(args.matrix)
        if not os.path.isfile(args.matrix_path):
            raise BadArguments(f"--matrix {args.matrix}: no such file")
    else:
        args.matrix_path = None
    if args.spmv_iterations < 1:
        raise BadArguments(f"--spmv-iterations {args.spmv_iterations}: expected at least 1")
    args.asyncsolve_path = in_repo(args.asyncsolve)
    if not args.peers_only and not (os.path.isfile(args.asyncsolve_path)
                                    and os.access(args.asyncsolve_path, os.X_OK)):
        raise BadArguments(f"--asyncsolve {args.asyncsolve}: no such executable (build "
                           "asyncsolve first, or pass --peers-only)")
    args.launcher = split_launcher(args.mpiexec)
    if not args.launcher or shutil.which(args.launcher[0]) is None:
        raise BadArguments(f"--mpiexec {args.mpiexec!r}: expected a launcher on PATH")
    args.build_path = in_repo(args.build_dir)
    args.json_path = in_repo(args.json)


# ---------------------------------------------------------------- set-up

def missing_packages():
    """Debian packages of DEB_PACKAGES not installed (None: not a dpkg system)."""
    if shutil.which("dpkg-query") is None:
        return None
    missing = []
    for name in DEB_PACKAGES:
        p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True,
                           text=True)
        if "install ok installed" not in p.stdout:
            missing.append(name)
    return missing


def ensure_packages():
    missing = missing_packages()
    if missing is None:
        print("run_peers.py: not a Debian system: make sure PETSc (pkg-config PETSc), hypre "
              "(HYPRE.h, libHYPRE), pkg-config and cmake are installed", file=sys.stderr)
        return
    if not missing:
        return
    if os.geteuid() != 0:
        raise SetupFailed("missing Debian packages " + " ".join(missing) + "; as root run: "
                          "apt-get install -y " + " ".join(missing))
    print("run_peers.py: installing " + " ".join(missing) + " (apt-get)", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-5:])
            raise SetupFailed(f"{shlex.join(cmd)} failed (exit {p.returncode}):\n{tail}")


def build_drivers(args, peers):
    """Configures and builds bench/peers into --build-dir; returns {peer: driver path}."""
    configure = ["cmake", "-S", os.path.join(REPO_ROOT, PEERS_SOURCE), "-B", args.build_path,
                 "-DCMAKE_BUILD_TYPE=Release"]
    if (not os.path.exists(os.path.join(args.build_path, "CMakeCache.txt"))
            and shutil.which("ninja")):
        configure += ["-G", "Ninja"]
    for cmd in (configure, ["cmake", "--build", args.build_path, "-j", "2"]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-15:])
            raise SetupFailed(f"{shlex.join(cmd)} failed (exit {p.returncode}):\n{tail}")
    drivers = {}
    for peer in peers:
        path = os.path.join(args.build_path, DRIVERS[peer])
        if not os.access(path, os.X_OK):
            raise SetupFailed(f"{path} was not built (is the {peer} library installed? see the "
                              "CMake warnings in the configure output)")
        drivers[peer] = path
    return drivers


def mpi_environment():
    """The runs' environment: as root Open MPI's permission to run, and yield when idle
    (ranks may outnumber cores)."""
    allow_root()
    env = dict(os.environ)
    env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
    return env


# ---------------------------------------------------------------- commands

def convert_matrix(args):
    """The --matrix file in PETSc's binary format, written by bench/mtx2petsc (built
    beside asyncsolve) through asyncsolve's reader; returns its path."""
    tool = os.path.join(os.path.dirname(args.asyncsolve_path), "bench", "mtx2petsc")
    if not os.access(tool, os.X_OK):
        raise SetupFailed(f"{tool} not found: build asyncsolve with its benchmarks "
                          "(cmake --build build --target mtx2petsc spmv)")
    os.makedirs(args.build_path, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.matrix_path))[0]
    out = os.path.join(args.build_path, stem + ".petsc")
    p = subprocess.run([tool, args.matrix_path, out], capture_output=True, text=True)
    if p.returncode != 0:
        raise SetupFailed(f"mtx2petsc {args.matrix}: {p.stderr.strip()}")
    return out


def matrix_configuration(args, name, mpi, drivers, petsc_file):
    """The commands of one mtx-* configuration."""
    _, method, peer, ksp, pc = CONFIGURATIONS[name]
    if method == "spmv":
        spmv = os.path.join(os.path.dirname(args.asyncsolve_path), "bench", "spmv")
        asyncsolve = (mpi + [spmv, "--matrix", args.matrix_path, "--iterations",
                             str(args.spmv_iterations), "--repeats", "1"])
    else:
        asyncsolve = (mpi + [args.asyncsolve_path, "solve", "--matrix", args.matrix_path,
                             "--partition", "block", "--method", method, "--tol",
                             repr(args.tol), "--max-iters", str(args.max_iters)])
        if method in NONSYMMETRIC_KSP:
            asyncsolve += ["--pc", ASYNCSOLVE_PC_OF_PEER[pc]]
    peer_cmd = (mpi + [drivers.get(peer, DRIVERS[peer]), "--matrix", petsc_file, "--ksp", ksp,
                       "--pc", pc, "--rtol", repr(args.tol), "--max-it", str(args.max_iters),
                       "--iterations", str(args.spmv_iterations)])
    return {"name": name, "problem": "matrix", "grid": args.matrix,
            "asyncsolve": {"method": method, "command": asyncsolve},
            "peer": {"name": peer, "ksp": ksp, "pc": pc, "command": peer_cmd}}


def configurations(args, launcher, drivers, petsc_file=None):
    configs = []
    for name in args.config_list:
        problem, method, peer, ksp, pc = CONFIGURATIONS[name]
        if problem == "matrix":
            configs.append(matrix_configuration(args, name, launcher + ["-n", str(args.ranks)],
                                                drivers, petsc_file))
            continue
        if problem == "ones":
            grid = ["--global", ",".join(map(str, args.global_triple))]
        else:
            grid = ["--local", ",".join(map(str, args.local_triple))]
        mpi = launcher + ["-n", str(args.ranks)]
        asyncsolve = (mpi + [args.asyncsolve_path, "solve", "--problem", problem] + grid
                      + ["--method", method, "--tol", repr(args.tol),
                         "--max-iters", str(args.max_iters)])
        if name in ASYNCSOLVE_PC:
            asyncsolve += ["--pc", ASYNCSOLVE_PC[name]]
        peer_cmd = (mpi + [drivers.get(peer, DRIVERS[peer]), "--problem", problem] + grid
                    + ["--ksp", ksp, "--pc", pc, "--rtol", repr(args.tol),
                       "--max-it", str(args.max_iters)])
        if peer == "petsc":
            peer_cmd += ["--norm", args.petsc_norm]
        configs.append({"name": name, "problem": problem, "grid": grid[1],
                        "asyncsolve": {"method": method, "command": asyncsolve},
                        "peer": {"name": peer, "ksp": ksp, "pc": pc, "command": peer_cmd}})
    return configs


# ---------------------------------------------------------------- parsing

def asyncsolve_numbers(doc):
    """The numbers compared, from an asyncsolve result document (KeyError/TypeError/
    ValueError when a field is missing or of the wrong type)."""
    r = doc["result"]
    iterations = r["iterations"]["max"]
    if isinstance(iterations, bool) or not isinstance(iterations, int):
        raise ValueError(f"result.iterations.max is {iterations!r}, expected an integer")
    time_s = float(r["time_s"])
    tpi = r.get("time_per_iteration_s")
    tpi = float(tpi) if tpi is not None else (time_s / iterations if iterations else None)
    converged = r["converged"]
    if not isinstance(converged, bool):
        raise ValueError(f"result.converged is {converged!r}, expected true or false")
    residual = r.get("true_residual")
    return {"iterations": iterations, "time_s": time_s, "time_per_iteration_s": tpi,
            "converged": converged,
            "residual": float(residual) if residual is not None else None,
            "version": doc.get("version"), "git": doc.get("git")}


def peer_numbers(stdout):
    """The numbers compared, from a peer driver's JSON line (the last line of stdout
    that parses as a JSON object)."""
    doc = None
    for raw in reversed(stdout.strip().splitlines()):
        line = raw.strip()
        if line.startswith("{"):
            try:
                doc = json.loads(line)
                break
            except ValueError:
                continue
    if doc is None:
        raise ValueError("no JSON object on stdout")
    iterations = doc["iterations"]
    if isinstance(iterations, bool) or not isinstance(iterations, int):
        raise ValueError(f"iterations is {iterations!r}, expected an integer")
    return {"iterations": iterations, "time_s": float(doc["time_s"]),
            "time_per_iteration_s": doc["time_per_iteration_s"],
            "converged": bool(doc["converged"]), "residual": doc["residual"],
            "version": doc.get("version"), "reason": doc.get("reason"),
            "norm": doc.get("norm"), "setup_s": doc.get("setup_s"),
            "error_inf": doc.get("error_inf"), "global": doc.get("global"),
            "dims": doc.get("dims"), "nonzeros": doc.get("nonzeros"),
            "repeat_solves": doc.get("repeat_solves")}


# ---------------------------------------------------------------- running

def run_once(args, env, config, side, repeat, runs_dir):
    """Runs one side of one configuration once; returns its record (failed: `error` set)."""
    cmd = list(config[side]["command"])
    path = None
    if side == "asyncsolve":
        path = os.path.join(runs_dir, f"{config['name']}.r{repeat}.json")
        cmd += ["--json", path]
    record = {"configuration": config["name"], "side": side, "repeat": repeat}
    measured = run_measured(cmd, args.timeout, env=env, stdout=True)
    record.update({k: measured[k] for k in ("command", "exit_code", "error", "wall_s")
                   if k in measured})
    if measured["exit_code"] is None:
        return record
    error = record["error"]
    record["error"] = None
    try:
        if side == "asyncsolve":
            with open(path) as f:
                record.update(asyncsolve_numbers(json.load(f)))
        else:
            record.update(peer_numbers(measured["stdout"]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        what = "result document" if side == "asyncsolve" else "peer output"
        record["error"] = f"unusable {what}: {type(e).__name__} {e}"
    if error is not None:
        record["error"] = error
    elif record["error"] is None and not record.get("converged"):
        record["error"] = "not converged"
    return record


# ---------------------------------------------------------------- summaries

def side_summary(runs, name, side):
    mine = [r for r in runs if r["configuration"] == name and r["side"] == side]
    ok = [r for r in mine if r["error"] is None]
    return {"runs": len(mine), "failed": len(mine) - len(ok),
            "time_per_iteration_s": spread([r["time_per_iteration_s"] for r in ok]),
            "time_s": spread([r["time_s"] for r in ok]),
            "iterations": sorted({r["iterations"] for r in ok}),
            "residual_max": max((r["residual"] for r in ok if r["residual"] is not None),
                                default=None)}


def compare(runs, name, repeats):
    """asyncsolve/peer time per iteration and iteration agreement of one configuration."""
    a, b = side_summary(runs, name, "asyncsolve"), side_summary(runs, name, "peer")
    out = {"asyncsolve": a, "peer": b, "ratio_of_medians": None,
           "ratio_per_repeat": None, "iterations_agree": None, "iterations_difference": None}
    if a["time_per_iteration_s"] and b["time_per_iteration_s"]:
        out["ratio_of_medians"] = (a["time_per_iteration_s"]["median"]
                                   / b["time_per_iteration_s"]["median"])
    per_repeat = []
    for rep in range(repeats):
        t = {r["side"]: r["time_per_iteration_s"] for r in runs
             if r["configuration"] == name and r["repeat"] == rep and r["error"] is None}
        ok = t.get("asyncsolve") and t.get("peer")
        per_repeat.append(t["asyncsolve"] / t["peer"] if ok else None)
    if any(v is not None for v in per_repeat):
        out["ratio_per_repeat"] = {"values": per_repeat, **spread(per_repeat)}
    if a["iterations"] and b["iterations"]:
        diff = max(abs(x - y) for x in a["iterations"] for y in b["iterations"])
        out["iterations_difference"] = diff
        out["iterations_agree"] = diff <= 1
    return out


# ---------------------------------------------------------------- output

def print_table(doc):
    p = doc["parameters"]
    size, local = (",".join(map(str, p[k])) for k in ("size", "local"))
    print(f"peers: {p['ranks']} ranks, ones --global {size}, laplace27 --local "
          f"{local}, tol {p['tol']:g}, {p['repeat']} repeats; time per iteration in ms, "
          f"median [min..max] of the solve time (max over ranks) / iterations")
    head = (f"{'configuration':<15} {'peer':<22} {'iters A/P':>11} {'asyncsolve':>22} "
            f"{'peer':>22} {'A/P':>6} {'agree':>5}")
    print(head)
    print("-" * len(head))
    for c in doc["configurations"]:
        s = c["comparison"]

        def cell(side, s=s):
            t = s[side]["time_per_iteration_s"]
            if not t:
                return "-"
            return (f"{t['median'] * 1e3:.3f} [{t['min'] * 1e3:.3f}..{t['max'] * 1e3:.3f}]")

        its = "/".join(",".join(map(str, s[k]["iterations"])) or "-"
                       for k in ("asyncsolve", "peer"))
        peer = f"{c['peer']['name']} {c['peer']['ksp']}/{c['peer']['pc']}"
        agree = {True: "yes", False: "NO", None: "-"}[s["iterations_agree"]]
        print(f"{c['name']:<15} {peer:<22} {its:>11} {cell('asyncsolve'):>22} "
              f"{cell('peer'):>22} {fmt(s['ratio_of_medians'], '.2f'):>6} {agree:>5}")
    failed = [r for r in doc["runs"] if r["error"]]
    for r in failed:
        print(f"FAILED {r['configuration']} {r['side']} repeat {r['repeat']}: {r['error']}")
        print(f"       {r['command']}")
    print("(A/P: median asyncsolve time per iteration / median peer's; agree: iteration counts "
          "within +-1)")


# ---------------------------------------------------------------- main

def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except BadArguments as e:
        print(f"run_peers.py: {e}", file=sys.stderr)
        return EXIT_BAD_ARGS
    started = datetime.datetime.now(datetime.UTC).astimezone()
    peers = sorted({CONFIGURATIONS[c][2] for c in args.config_list})
    try:
        ensure_packages()
        drivers = build_drivers(args, peers)
        petsc_file = convert_matrix(args) if args.matrix_path else None
    except SetupFailed as e:
        print(f"run_peers.py: {e}", file=sys.stderr)
        return EXIT_FAILED
    launcher, launcher_version = launcher_line(args.launcher)
    env = mpi_environment()
    configs = configurations(args, launcher, drivers, petsc_file)
    sides = ("peer",) if args.peers_only else ("asyncsolve", "peer")

    runs = []
    with tempfile.TemporaryDirectory(prefix="run_peers.") as tmp:
        runs_dir = args.runs_dir or tmp
        os.makedirs(runs_dir, exist_ok=True)
        for rep in range(args.repeat):
            for config in configs:
                for side in sides:
                    record = run_once(args, env, config, side, rep, runs_dir)
                    runs.append(record)
                    tpi = record.get("time_per_iteration_s")
                    status = record["error"] or (
                        f"{record['iterations']} iterations, "
                        f"{fmt(tpi * 1e3 if tpi is not None else None, '.3f')} ms/iteration")
                    print(f"[{rep + 1}/{args.repeat}] {config['name']:<15} {side:<10} {status}",
                          flush=True)

    versions = {}
    for r in runs:
        if r["side"] == "peer" and r.get("version"):
            versions.setdefault(CONFIGURATIONS[r["configuration"]][2], r["version"])
        if r["side"] == "asyncsolve" and r.get("version"):
            versions.setdefault("asyncsolve", r["version"])
    for c in configs:
        c["comparison"] = compare(runs, c["name"], args.repeat)
        for side in ("asyncsolve", "peer"):
            c[side]["command"] = shlex.join(c[side]["command"])
    ok = all(r["error"] is None for r in runs)
    doc = {
        "schema": SCHEMA,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.datetime.now(datetime.UTC).astimezone().isoformat(
            timespec="seconds"),
        "hostname": socket.gethostname(), "cores": os.cpu_count(),
        "git": {"commit": git_commit(), "dirty": git_dirty()},
        "command": [sys.argv[0]] + (sys.argv[1:] if argv is None else argv),
        "launcher": launcher_version, "versions": versions,
        "parameters": {"ranks": args.ranks, "size": args.global_triple,
                       "local": args.local_triple, "repeat": args.repeat, "tol": args.tol,
                       "max_iters": args.max_iters, "configs": args.config_list,
                       "petsc_norm": args.petsc_norm, "peers_only": args.peers_only,
                       "smoke": args.smoke, "asyncsolve": args.asyncsolve_path,
                       "matrix": args.matrix, "spmv_iterations": args.spmv_iterations,
                       "mpiexec": launcher, "order": "repeat-major, asyncsolve then peer"},
        "configurations": configs,
        "runs": runs,
        "ok": ok,
    }
    write_json(args.json_path, doc)
    print_table(doc)
    shown = os.path.relpath(args.json_path)
    print(f"wrote {args.json_path if shown.startswith('..') else shown}")
    return EXIT_OK if ok else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
