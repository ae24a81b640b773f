#!/usr/bin/env python3
"""The bad-input suite: what a hostile new user types into
`asyncsolve` and `asyncsolve-lab`, each case with the exit code it must give
and a fragment of the one line it must print on stderr.

Every case must end within its timeout (no hang), print no traceback and
no MPI_ABORT banner, give exactly its expected exit code, and, for bad
input (exit 2), print exactly one line on stderr holding the fragment and
nothing on stdout. Files named as outputs must be left as they were.

Hand-written cases cover each class of the issue; more are generated from
the option tables (`asyncsolve --options-table`): every number option just
beyond each end of its range, not a number, in hexadecimal and empty; and
each end of a solve option's range, which its checks must accept.
Cases run in parallel (--jobs), as singletons (no launcher) unless a case
needs more ranks; mpiexec's own notices (between lines of dashes) are not
counted as the program's lines.

    tests/cli/bad_input.py --binary build/asyncsolve --mpiexec "mpiexec --oversubscribe"
"""

import argparse
import os
import random
import re
import shlex
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bad_input_more import more_cases, prepare_more

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Case:
    args: list[str]
    rc: int
    fragment: str = ""
    tool: str = "asyncsolve"  # or "lab", or "mpmd" (args: the two halves, split at ":")
    ranks: int = 1
    timeout: float = 60.0
    untouched: list[str] = field(default_factory=list)  # paths that must not change
    absent: str = ""  # text the output must not hold (a misleading hint)
    also: str = ""  # a second text the output must hold (exit codes other than 2)
    limit_as: int = 0  # bytes of address space the program may use (prlimit; 0: no limit)
    env: dict[str, str] = field(default_factory=dict)  # added to the environment


def s(text: str) -> list[str]:
    return shlex.split(text)


SMALL = "--local 6,6,6 --max-iters 50"


def hand_cases(tmp: str, has_hypre: bool) -> list[Case]:
    t = tmp
    c: list[Case] = []

    def bad(text, fragment, **kw):
        c.append(Case(s(text.format(t=t)), 2, fragment, **kw))

    # Numbers: strict parser, quoted text, real limits.
    for v in ["0x10", "1e3", "+16", "16abc", "abc", "''", "-1", "1e10", "99999999999999999999"]:
        bad(f"solve --max-iters {v}", "--max-iters")
    for v in ["1e-400", "1e-6x", "abc", "nan", "inf", "-inf", "0", "-1e-6", "2", "''", "0x1p-3"]:
        bad(f"solve --tol {v}", "--tol")
    bad("solve --tol 1e-400", "1e-400")
    bad("solve --slow-factor 1e300 --slow-rank 0", "--slow-factor 1e300")
    bad("solve --slow-factor 0.5 --slow-rank 0", "--slow-factor")
    bad("solve --offset 1e308", "--offset 1e308")
    bad("solve --offset nan", "--offset")
    bad("solve --noise-us 1e300 --noise-hz 1", "--noise-us")
    bad("solve --noise-hz 1e300 --noise-us 1", "--noise-hz")
    # An option that does nothing without its partner: the document recorded an injection
    # that never happened.
    bad("solve --noise-us 50", "--noise-us 50 without --noise-hz F")
    bad("solve --noise-hz 100", "--noise-hz 100 without --noise-us D")
    bad("solve --noise-seed 7", "--noise-seed 7 without --noise-us D and --noise-hz F")
    bad("solve --slow-factor 9", "--slow-factor 9 without --slow-rank R")
    bad("solve --monitor-every 9", "--monitor-every 9 without --monitor")
    # Lanczos ran with it, the option doing nothing.
    bad("solve --problem tfim --method lanczos --sites 6 --monitor-every 1",
        "--monitor-every 1 without --monitor")
    bad("solve --shift 1e308 --method cg", "--shift")
    bad("solve --method lanczos --problem tfim --coupling 1e308", "--coupling 1e308")
    bad("solve --method lanczos --problem tfim --field -1e308", "--field")
    bad("solve --method lanczos --problem tfim --sites 35", "--sites")
    bad("solve --method lanczos --problem tfim --sites 1", "--sites")
    bad("solve --method lanczos --problem tfim --lattice square:6x6", "--lattice")
    bad("solve --method lanczos --problem tfim --lattice square:1x2", "--lattice")
    bad("solve --method lanczos --problem tfim --lattice hex", "--lattice")
    bad("solve --monitor --monitor-every 1e300", "--monitor-every")
    bad("solve --check-every 0", "--check-every")
    bad("solve --halo-every 0", "--halo-every")
    bad("solve --variant async --max-in-flight 0", "--max-in-flight")
    bad("solve --variant async --max-in-flight 100000", "--max-in-flight")
    bad("solve --tol 0.1 --tol 0.2", "more than once")
    # Sizes and lists.
    bad("solve --local", "--local")
    bad("solve --local 99999999999999999999,10,10", "out of range")
    bad("solve --local 0,10,10", "--local")
    bad("solve --local 10,10", "--local")
    bad("solve --local 10,10,10,10", "--local")
    bad("solve --local 10,,10", "--local")
    bad("solve --local -1,10,10", "--local")
    bad("solve --local 1e3,10,10", "--local")
    bad("solve --local 0x10,10,10", "--local")
    bad("solve --local 10,10,10 --global 20,20,20", "--global")
    bad("solve --global 100000,100000,100000", "--global")
    bad("solve --dims 0,1,1", "--dims")
    bad("solve --dims ''", "--dims ''")
    bad("solve --global ''", "--global ''")
    bad("solve --local ''", "--local ''")
    bad("bench allreduce --algorithms ''", "--algorithms")
    bad("solve --dims 2,2,2", "--dims")
    bad("bench stencil2d --local 1", "--local")
    bad("bench stencil2d --local 70000", "--local")
    bad("bench stencil2d --radius 100", "--radius 100")
    bad("bench stencil2d --local 65536", "expected a smaller --local")
    bad("solve --local 100000,100000,1000", "--local")
    bad("bench stencil2d --radius 0", "--radius")
    bad("bench stencil2d --transport carrier-pigeon", "--transport")
    bad("bench stencil2d --variant nope", "--variant")
    bad("bench stencil2d --global 64", "--global")
    bad("bench allreduce -m 7:64", "-m '7:64'")
    bad("bench allreduce -m 8:1e9", "powers of two")
    bad("bench allreduce -m 64:8", "MIN <= MAX")
    bad("bench allreduce --message-size :", "-m")
    bad("bench allreduce -i 0", "-i 0: expected an integer from 1")
    bad("bench allreduce --iterations 1e9", "-i 1e9")
    bad("bench allreduce --repeats 100000", "--repeats")
    bad("bench allreduce --algorithms nope", "--algorithms")
    bad("bench allreduce --algorithms knomial:1", "knomial")
    bad("bench allreduce --algorithms knomial:99999999", "knomial")
    bad("bench allreduce --algorithms mpi,mpi", "twice")
    bad("bench allreduce --algorithms ,", "--algorithms")
    bad("bench allreduce --modes nope", "--modes")
    bad("bench allreduce --noise 1e300:1", "--noise")
    bad("bench allreduce --noise-global 0,1,1", "--noise-global")
    bad("bench allreduce --progress poll:0", "--progress")
    # Choices.
    bad("solve --problem nope", "tfim")
    bad("solve --method nope", "--method")
    bad("solve --variant nope", "--variant")
    bad("solve --transport nope", "--transport")
    bad("solve --halo nope", "--halo")
    bad("solve --allreduce nope", "--allreduce")
    bad("solve --allreduce knomial:99999999", "K at most")
    bad("solve --allreduce twolevel:nope", "--allreduce")
    bad("solve --variant async --progress thread:99999999", "thread")
    bad("solve --variant async --progress poll:0", "--progress")
    bad("solve --hybrid nope", "--hybrid")
    bad("solve --problem tfim", "tfim")
    bad("solve --method lanczos", "lanczos")
    bad("solve --variant async --allreduce mpi", "--allreduce")
    bad("solve --transport omp", "", ranks=2)
    # Options that do nothing where they are given.
    bad("solve --method cg --final-sync 3", "--final-sync")
    bad("solve --method cg --check-every 7", "--check-every")
    bad("solve --variant sync --max-in-flight 7", "--max-in-flight")
    bad("solve --method cg --copy", "--copy")
    bad("solve --method cg --halo-every 3", "--halo-every")
    bad("solve --method cg --variant async", "--variant")
    bad("solve --problem ones --offset 1", "--offset")
    bad("solve --pc jacobi", "--pc")
    # Preconditioners (issue 16).
    bad("solve --method pcg1 --pc foo", "--pc 'foo'")
    bad("solve --method pcg1 --pc chebyshev:0", "--pc chebyshev:0")
    bad("solve --method pcg1 --pc chebyshev:-2", "--pc chebyshev:-2")
    bad("solve --method pcg1 --pc chebyshev:x", "--pc chebyshev:x")
    bad("solve --method pcg1 --pc chebyshev:101", "--pc chebyshev:101")
    bad("solve --method cg --pc chebyshev", "--pc 'chebyshev'")
    # A build without hypre refuses --pc boomeramg before its options.
    def amg(fragment):
        return fragment if has_hypre else "this build has no hypre"

    bad("solve --method pcg1 --pc boomeramg --pc-option foo=1", amg("no option 'foo'"))
    bad("solve --method pcg1 --pc boomeramg --pc-option coarsen", amg("expected name=value"))
    bad("solve --method pcg1 --pc boomeramg --pc-option =hmis", amg("expected name=value"))
    bad("solve --method pcg1 --pc boomeramg --pc-option coarsen=xyz",
        amg("--pc-option coarsen=xyz"))
    bad("solve --method pcg1 --pc boomeramg --pc-option cycles=0", amg("--pc-option cycles=0"))
    bad("solve --method pcg1 --pc boomeramg --pc-option strong_threshold=nan",
        amg("strong_threshold=nan"))
    bad("solve --method pcg1 --pc chebyshev --pc-option lanczos_steps=1", "lanczos_steps=1")
    bad("solve --method pcg1 --pc chebyshev --pc-option coarsen=hmis", "no option 'coarsen'")
    bad("solve --method pcg1 --pc jacobi --pc-option a=1", "--pc-option")
    # An option with no unchanged value is not offered "(or )"; a missing
    # --matrix is named as missing, not as "--matrix " with an empty value.
    bad("solve --local 8,8,8 --pc-option lanczos_steps=5", "expected no --pc-option",
        absent="(or )")
    bad("solve --local 8,8,8 --block-size 3", "--block-size 3 with no --matrix:",
        absent="--matrix :")
    bad(f"solve --method pcg1 --pc chebyshev --shift -3 {SMALL}", "positive definite")
    # --pc-option: NAME=VALUE items as typed, each option once; --pc degrees as digits.
    cheb = ["solve", "--method", "pcg1", "--pc", "chebyshev", "--pc-option"]
    c.extend(Case([*cheb, v], 2, "--pc-option") for v in [
        "lanczos_steps=5,,", ",lanczos_steps=5", "lanczos_steps=5,", ",", "", "lanczos_steps= 5",
        " lanczos_steps=5", "lanczos_steps =5", "lanczos_steps=5 ",
        "lanczos_steps=5\tlambda_max_factor=2", "lanczos_steps=5,lanczos_steps=6",
        "lanczos_steps=010", "lanczos_steps=+5", "lanczos_steps=5\n", "lanczos_steps=é"])
    c.append(Case([*cheb, "lanczos_steps=5", "--pc-option", "lanczos_steps=6"], 2,
                  "lanczos_steps is given twice"))
    c.append(Case([*cheb, "lanczos_steps=5", "--pc-option", ""], 2, "--pc-option"))
    c.extend(Case(["solve", "--method", "pcg1", "--pc", v], 2, "--pc") for v in [
        "chebyshev:03", "chebyshev:+3", "chebyshev: 3", "chebyshev:3.0", "chebyshev:00",
        "chebyshev:", "chebyshev:3,", " chebyshev"])
    bad("solve --shift 1", "--shift")
    bad("solve --test-every 8", "--test-every")
    bad("solve --threads 2", "--threads")
    bad("solve --coupling 2", "--coupling")
    bad("solve --sites 10", "--sites")
    bad("solve --variant racy --copy", "--copy")
    bad("solve --progress poll:4", "--progress")
    bad("solve --transport omp --slow-rank 0", "--slow-rank")
    bad("solve --transport omp --noise-hz 3", "--noise-hz")
    bad("solve --method lanczos --problem tfim --local 8,8,8", "--local")
    bad("solve --method lanczos --problem tfim --rma-sync notify", "--rma-sync")
    bad("model hybrid --fit x.json --f-comm 0.1", "--f-comm")
    bad("model hybrid --threads 4 --f-comm 0.3 --f-comp-non 0.1 --non-ratio 1/6", "--non-ratio")
    # Unknown words and malformed command lines.
    bad("", "no command")
    bad("frobnicate", "unknown command")
    bad("bench", "bench")
    bad("bench nope", "nope")
    bad("model", "model")
    bad("model nope", "nope")
    bad("solve --bogus 1", "--bogus")
    bad("solve extra", "extra")
    bad("solve -x", "-x")
    bad("solve --local=", "--local")
    bad("solve ---local 10,10,10", "local")
    c.append(Case(["solve", "--tol", "1\n2"], 2, "--tol"))
    c.append(Case(["solve", "--problem", "\x1b[2J"], 2, "--problem"))
    c.append(Case(["solve", "--method", "é"], 2, "--method"))
    c.append(Case(["solve", "--local", "x" * 100000], 2, "--local"))
    # model hybrid.
    bad("model hybrid", "--threads")
    bad("model hybrid --threads 1 --f-comm 0.3 --f-comp-non 0.1", "--threads")
    bad("model hybrid --threads 99999 --f-comm 0.3 --f-comp-non 0.1", "--threads")
    bad("model hybrid --threads 4 --f-comm 1.5 --f-comp-non 0.1", "--f-comm")
    bad("model hybrid --threads 4 --f-comm 0.3 --f-comp-non -0.1", "--f-comp-non")
    bad("model hybrid --threads 4 --f-comm 0.3 --f-comp-non 0.1 --f-comp-overlap 0.4", "sum")
    bad("model hybrid --threads 4 --reserved 4 --f-comm 0.3 --f-comp-non 0.1", "--reserved")
    # Input files: --fit.
    bad("model hybrid --fit /dev/zero", "is a device", timeout=20)
    bad("model hybrid --fit /dev/null", "--fit")
    bad("model hybrid --fit {t}", "is a directory")
    bad("model hybrid --fit {t}/missing.json", "--fit")
    bad("model hybrid --fit {t}/big.json", "bytes")
    bad("model hybrid --fit {t}/binary.json", "--fit")
    bad("model hybrid --fit {t}/empty.json", "--fit")
    bad("model hybrid --fit {t}/notjson.json", "--fit")
    bad("model hybrid --fit ''", "--fit")
    # Output files: --json refuses what is not ours to replace.
    for option_cmd in ["solve " + SMALL, "bench stencil2d --local 16 -i 2 -x 0 --repeats 1",
                       "model hybrid --threads 4 --f-comm 0.3 --f-comp-non 0.1"]:
        bad(option_cmd + " --json ''", "--json")
        bad(option_cmd + " --json /dev/null", "is a device", untouched=["/dev/null"])
        bad(option_cmd + " --json {t}/link.json", "--json", untouched=[f"{t}/link.json"])
        bad(option_cmd + " --json {t}/readonly.json", "--json",
            untouched=[f"{t}/readonly.json"])
        bad(option_cmd + " --json {t}", "--json")
        bad(option_cmd + " --json {t}/no/such/dir/x.json", "--json")
    bad("solve " + SMALL + " --json /dev/full", "--json", untouched=["/dev/full"])
    bad("solve " + SMALL + " --json {t}/" + "n" * 300, "--json")
    # Matrix Market inputs: not a regular file (a FIFO would block its reader),
    # outputs naming inputs or each other (compared by identity), overflow.
    for ranks in (1, 3):
        bad("solve --matrix {t}/fifo.mtx", "fifo.mtx: is a FIFO", ranks=ranks, timeout=30)
        bad("solve --matrix {t}/good.mtx --rhs {t}/fifo.mtx", "--rhs", ranks=ranks, timeout=30)
        bad("solve --matrix {t}/good.mtx --x0 {t}/link-fifo.mtx", "is a FIFO", ranks=ranks,
            timeout=30)
    bad("solve --matrix /dev/zero", "is a device", timeout=30)
    bad("solve --matrix /dev/stdin", "/dev/stdin", timeout=30)
    bad("solve --matrix {t}/good.mtx --rhs /dev/null", "is a device")
    for matrix in ["{t}/good.mtx", "{t}/good-link.mtx"]:
        for out in ["--write-solution {t}/good.mtx", "--json {t}/good.mtx",
                    "--json {t}/./good.mtx", "--rhs {t}/b.mtx --write-solution {t}/b.mtx",
                    "--json {t}/s.json --write-solution {t}/s.json"]:
            bad(f"solve --matrix {matrix} {out}", "is the same file as",
                untouched=[f"{t}/good.mtx", f"{t}/b.mtx", f"{t}/s.json"])
    bad("model hybrid --fit {t}/notjson.json --json {t}/notjson.json", "is the same file as --fit",
        untouched=[f"{t}/notjson.json"])
    bad("solve --matrix {t}/dup.mtx", "dup.mtx:5: the duplicate entries at (1, 1)", ranks=2)
    bad("solve --matrix {t}/rowsum.mtx", "rowsum.mtx: row 2 sums to more than", ranks=2)
    bad("solve --matrix {t}/good.mtx --matrix-memory 0", "--matrix-memory 0")
    # What is proven about rho(|D^-1 (A - D)|), not an estimate below an upper
    # bound >= 1: a chain with rho ~ 0.9 hides a 2 x 2 block with rho = 1.1.
    # The refusal never suggests a rescaling (it cannot change rho).
    for variant in ("async", "racy"):
        for ranks in (1, 3):
            bad(f"solve --matrix {{t}}/chain.mtx --variant {variant}",
                "rho(|D^-1 (A - D)|) is about", ranks=ranks)
        c.append(Case(s(f"solve --matrix {t}/chain.mtx --variant {variant} --scale unit-diagonal"),
                      2, "what can work: --method pcg1", absent="--scale"))
    # The positive diagonal: checked for the preconditioners that divide by
    # it, naming the one chosen and the row as the file numbers it.
    for pc, name in (("chebyshev", "Chebyshev preconditioner (--pc chebyshev) of pcg2"),
                     ("jacobi", "Jacobi preconditioner of pcg2")):
        bad(f"solve --matrix {{t}}/emptyrow.mtx --method pcg2 --pc {pc} --partition block:nnz",
            f"{name} divides by the diagonal, and file row 3 has a_ii = 0", ranks=3)
    bad("solve --matrix {t}/emptyrow.mtx --method jacobi", "a_ii = 0 on file row 3", ranks=2)
    # Chebyshev on an indefinite matrix: refused at setup, naming what can work.
    bad("solve --matrix {t}/indefinite.mtx --method pcg1 --pc chebyshev",
        "not positive definite, which Chebyshev and the CG methods need; what can work")
    # Out of memory on rank 0 while it reads: a runtime failure, with a hint
    # for --matrix (a header of 10^9 rows passes --matrix-memory 1000).
    c.append(Case(s(f"solve --matrix {t}/hugerows.mtx --matrix-memory 1000 --method cg"), 4,
                  "--matrix-memory", limit_as=3 << 30, absent="--local"))
    # Runs that must end (not hang, not lie).
    c.append(Case(s("solve --local 6,6,6 --offset 1e12 --max-iters 200"), 0, "", timeout=60))
    c.append(Case(s("solve --method cg --local 6,6,6 --tol 1e-300 --max-iters 200"), 3, ""))
    c.append(Case(s("solve --local 6,6,6 --max-iters 0"), 3, ""))
    c.append(Case(s("solve --local 6,6,6 --slow-rank 0 --slow-factor 100 --max-iters 3 "
                    "--check-every 1"), 3, ""))
    c.append(Case(s("solve --method lanczos --problem tfim --sites 8 --coupling 1e6"), 0, ""))
    c.append(Case(s("solve --local 6,6,6 --json " + "m" * 250), 0, "",
                  untouched=[]))  # a legal long name: written next to itself
    c.append(Case(s("solve --local 6,6,6 --method cg --shift -100 --max-iters 200"), 3, ""))
    # Too few Lanczos steps (no safety factor, an even residual polynomial):
    # the largest Ritz value is not trusted, the Gershgorin bound keeps the
    # preconditioner positive definite, and the solve converges.
    c.append(Case(s("solve --problem ones --local 12,12,12 --method pcg-overlap --pc chebyshev:7 "
                    "--pc-option lanczos_steps=2,lambda_max_factor=1 --max-iters 200"), 0, ""))
    c.append(Case(s(f"solve --matrix {t}/poisson16.mtx --method pcg1 --pc chebyshev "
                    "--pc-option lanczos_steps=2"), 0, ""))
    # b = A * 1 = 0 (a Neumann Laplacian, a 1 x 1 zero) and a zero --rhs: x = 0
    # solves it, and a warning says why (no error against 1 for a singular A).
    c.append(Case(s(f"solve --matrix {t}/neumann.mtx --method cg"), 0, "A is singular"))
    c.append(Case(s(f"solve --matrix {t}/zero1.mtx --method cg"), 0, "A is singular"))
    c.append(Case(s(f"solve --matrix {t}/good.mtx --rhs {t}/zero-rhs.mtx --method cg"), 0,
                  "is zero: x = 0 is the solution"))
    # A diverging Jacobi stops early and says what fits (never "asynchronous"
    # for the synchronous variant); forced asynchronous Jacobi likewise.
    c.append(Case(s(f"solve --matrix {t}/diverge.mtx --max-iters 100000 --check-every 1"), 3,
                  "Jacobi diverges on this matrix", absent="asynchronous"))
    # On 1 and 3 ranks: only rank 0 exits with 3, so that the launcher cannot
    # end it at another rank's exit before its summary is forwarded.
    c.extend(Case(s(f"solve --matrix {t}/diverge.mtx --variant async --force --max-iters 100000"),
                  3, "Jacobi diverges on this matrix", ranks=ranks) for ranks in (1, 3))
    # The block partition of a matrix numbered without locality: the summary
    # suggests a graph partitioner.
    c.append(Case(s(f"solve --matrix {t}/shuffled.mtx --method cg"), 0, "try --partition metis",
                  ranks=4))
    # Ranks that do not agree: refused before anything collective.
    c.append(Case(s("solve --local 10,10,10 : solve --local 0,10,10"), 2, "", tool="mpmd"))
    # The line names the first value that differs, and both ranks' values.
    c.append(Case(s("solve --local 6,6,6 --tol 1e-4 : solve --local 6,6,6 --tol 1e-5"), 2,
                  "differently): rank 1's tol is 1e-05 where rank 0's is 0.0001; expected",
                  tool="mpmd"))
    c.append(Case(s("solve --local 6,6,6 : bench stencil2d"), 2,
                  "rank 1 runs another command than rank 0", tool="mpmd"))
    c.append(Case(s(f"solve --local 6,6,6 : solve --local 6,6,6 --json {t}/x.json"),
                  2, f"rank 1's json_path is {t}/x.json where rank 0's is (empty)", tool="mpmd"))
    # Bad input on several ranks: one line, from rank 0.
    c.append(Case(s("solve --tol abc"), 2, "--tol abc", ranks=3))
    c.append(Case(s("solve --dims 2,2,2"), 2, "--dims", ranks=3))
    c.append(Case(s("model hybrid --fit /dev/zero"), 2, "is a device", ranks=2))
    # The lab.
    lab = [
        ("run", "required"),
        ("frobnicate", "invalid choice"),
        ("run {t}/binary.toml", "not UTF-8"),
        ("run /dev/zero", "not a regular file"),
        ("run /", "is a directory"),
        ("run {t}/missing.toml", "No such file"),
        ("run {t}/empty.toml", "suite"),
        ("run {t}/notoml.toml", "not valid TOML"),
        ("run {t}/nested.toml", "nested"),
        ("run {t}/ranks1000.toml", "--max-ranks"),
        ("run {t}/ranks0.toml", "ranks"),
        ("run {t}/repeats.toml", "repeats"),
        ("run {t}/timeout.toml", "timeout"),
        ("run {t}/noname.toml", "name"),
        ("run {t}/badprogram.toml", "program"),
        ("run {t}/small.toml --results {t}/afile", "is not a folder"),
        ("run {t}/small.toml --results /dev/null/x", "is not a folder"),
        ("run {t}/small.toml --max-ranks 0", "not positive"),
        ("run {t}/small.toml --max-ranks abc", "--max-ranks"),
        ("report {t}/missing", "no such results folder"),
        ("report {t}/afile", "results folder"),
        ("report {t}/nonutf8", "not UTF-8"),
        ("report {t}/res --out {t}/afile", "--out"),
        ("run --bogus", "required"),
        ("reproduce", "required"),
        ("reproduce {t}/missing.md {t}/res", "No such file"),
        ("reproduce /dev/zero {t}/res", "not a regular file"),
        ("reproduce {t}/binary.toml {t}/res", "not UTF-8"),
        ("reproduce {t}/afile {t}/res", "no <!-- reproduce: SUITE -->"),
    ]
    for text, fragment in lab:
        c.append(Case(s(text.format(t=t)), 2, fragment, tool="lab", timeout=60))
    return c


TABLE_ROW = re.compile(r"^\| ([a-z ]+) \| `(-\w, )?(--[a-z0-9-]+) ([^`]*)` \| (integer )?"
                       r"(-?[0-9.e+-]+) to (-?[0-9.e+-]+) \| [^|]* \| (.*) \|$")


#: Case.rc of a value the option table allows: the check must not refuse it by
#: the option's name (it may be refused for something else, e.g. a file too large
#: for a small --matrix-memory).
ACCEPTED = -1
#: Options whose limit depends on the run (ranks, memory, the matrix: a block
#: size must divide its rows), not on the table alone.
RUN_DEPENDENT = {"--slow-rank", "--sites", "--block-size"}


# What an option needs beside it to do anything (alone it is refused): at each end
# of its range (--noise-us 1e6 needs --noise-hz below 1, --noise-hz 1e6 --noise-us
# below 1e-6: the interruptions must leave time).
PARTNERS = {"--slow-factor": ["--slow-rank", "0"], "--noise-us": ["--noise-hz", "0.5"],
            "--noise-hz": ["--noise-us", "1e-7"],
            "--noise-seed": ["--noise-us", "1", "--noise-hz", "1"],
            "--monitor-every": ["--monitor"]}


def table_cases(binary: str, tmp: str) -> list[Case]:
    """Numbers from the option table: beyond each end, garbage, hex, empty;
    and, for solve, each end itself, which the checks must accept (the table
    and the checks agree)."""
    text = subprocess.run([binary, "--options-table"], capture_output=True, text=True,
                          timeout=60).stdout
    cases = []
    for line in text.splitlines():
        m = TABLE_ROW.match(line)
        if not m:
            continue
        command, short, name, _, integer, lo, hi, where = m.groups()
        shown = short[:2] if short else name  # messages name an option by its first name
        context = []
        if where != "everywhere":
            for cond in where.split(" or ")[0].split(", "):
                dim, _, vals = cond.partition(" ")
                if dim == "--fit":
                    continue
                context += [dim, vals.replace("\\|", "|").split("|")[0]]
        base = command.split() + context
        if command == "model hybrid" and name not in ("--f-comm", "--f-comp-non"):
            base += ["--f-comm", "0.3", "--f-comp-non", "0.1"]
        if command == "model hybrid" and name != "--threads":
            base += ["--threads", "4"]
        lo_v, hi_v = float(lo), float(hi)
        if integer:
            above, below = str(int(hi_v) + 1), str(int(lo_v) - 1)
        else:
            above = repr(hi_v * 10 + 1)
            below = repr(lo_v / 10) if lo_v > 0 else repr(lo_v * 10 - 1)
        hexa = "0x10x" if integer is None and lo_v <= 16 <= hi_v else "0x10"
        cases.extend(Case([*base, name, v], 2, shown)
                     for v in [above, below, "x" + lo, hexa, "", "1e400", " 1"])
        if command == "solve" and name not in RUN_DEPENDENT:
            run = [f"{tmp}/good.mtx" if x == "FILE" else x for x in base]
            run += PARTNERS.get(name, [])  # an option that does nothing alone is refused
            if "--problem" not in run and "--matrix" not in run:
                run += ["--local", "4,4,4"]
            if name != "--max-iters":
                run += ["--max-iters", "3"]
            ends = [str(int(lo_v)), str(int(hi_v))] if integer else [lo, hi]
            cases.extend(Case([*run, name, v], ACCEPTED, shown) for v in ends)
    return cases


def matrix_market(path: Path, n: int, entries: list[tuple[int, int, float]],
                  symmetric: bool = False) -> None:
    """A coordinate real file of `entries` (0-based; symmetric: the lower
    triangle)."""
    head = "symmetric" if symmetric else "general"
    lines = [f"%%MatrixMarket matrix coordinate real {head}", f"{n} {n} {len(entries)}"]
    lines += [f"{i + 1} {j + 1} {v!r}" for i, j, v in entries]
    path.write_text("\n".join(lines) + "\n")


def chain(first: int, n: int, a: float, b: float) -> list[tuple[int, int, float]]:
    """The lower triangle of a tridiagonal block: a on the diagonal, b below."""
    out = [(first, first, a)]
    for i in range(first + 1, first + n):
        out += [(i, i - 1, b), (i, i, a)]
    return out


def write_matrices(t: Path) -> None:
    """The systems of the solver findings: rho hidden by a chain, an empty
    row, an indefinite matrix, a header too large for memory, Poisson for
    Chebyshev, b = A * 1 = 0, a diverging Jacobi, a numbering without
    locality."""
    matrix_market(t / "chain.mtx", 2002, chain(0, 2000, 1.0, -0.45) + chain(2000, 2, 1.0, -1.1),
                  symmetric=True)
    empty = [e for e in chain(0, 6, 4.0, -1.0) if 2 not in e[:2]]  # file row 3 empty
    matrix_market(t / "emptyrow.mtx", 6, empty, symmetric=True)
    matrix_market(t / "indefinite.mtx", 40, chain(0, 40, 1.0, -1.0), symmetric=True)
    (t / "hugerows.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                    "1000000000 1000000000 1\n1 1 1\n")
    grid = []
    for j, i in ((j, i) for j in range(16) for i in range(16)):
        row = 16 * j + i
        grid.append((row, row, 4.0))
        if i > 0:
            grid.append((row, row - 1, -1.0))
        if j > 0:
            grid.append((row, row - 16, -1.0))
    matrix_market(t / "poisson16.mtx", 256, grid, symmetric=True)
    neumann = chain(0, 50, 2.0, -1.0)
    neumann[0] = (0, 0, 1.0)
    neumann[-1] = (49, 49, 1.0)
    matrix_market(t / "neumann.mtx", 50, neumann, symmetric=True)
    matrix_market(t / "zero1.mtx", 1, [(0, 0, 0.0)])
    (t / "zero-rhs.mtx").write_text("%%MatrixMarket matrix array real general\n3 1\n0\n0\n0\n")
    matrix_market(t / "diverge.mtx", 8, [e for k in range(4) for e in chain(2 * k, 2, 1.0, 2.0)],
                  symmetric=True)
    # A 2-D Laplacian of 40 x 40 points numbered in a shuffled order.
    n = 40
    order = list(range(n * n))
    random.Random(7).shuffle(order)
    shuffled = []
    for j, i in ((j, i) for j in range(n) for i in range(n)):
        row = order[n * j + i]
        shuffled.append((row, row, 4.0))
        if i > 0:
            shuffled.append((max(row, order[n * j + i - 1]), min(row, order[n * j + i - 1]), -1.0))
        if j > 0:
            up = order[n * (j - 1) + i]
            shuffled.append((max(row, up), min(row, up), -1.0))
    matrix_market(t / "shuffled.mtx", n * n, shuffled, symmetric=True)


def prepare(tmp: str) -> None:
    t = Path(tmp)
    (t / "big.json").write_bytes(b" " * (5 << 20))
    (t / "binary.json").write_bytes(bytes(range(256)))
    (t / "empty.json").write_bytes(b"")
    (t / "notjson.json").write_text("{ nope")
    (t / "target.json").write_text("keep")
    os.symlink(t / "target.json", t / "link.json")
    (t / "readonly.json").write_text("keep")
    os.chmod(t / "readonly.json", 0o444)
    (t / "afile").write_text("x")
    (t / "good.mtx").write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n"
                                "1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n")
    os.symlink(t / "good.mtx", t / "good-link.mtx")
    (t / "b.mtx").write_text("%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n")
    os.mkfifo(t / "fifo.mtx")
    os.symlink(t / "fifo.mtx", t / "link-fifo.mtx")
    (t / "dup.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 3\n"
                               "1 1 1.5e308\n2 2 1\n1 1 1.5e308\n")
    (t / "rowsum.mtx").write_text("%%MatrixMarket matrix coordinate real general\n2 2 3\n"
                                  "1 1 1\n2 1 1.5e308\n2 2 1.5e308\n")
    write_matrices(t)
    prepare_more(t)
    (t / "binary.toml").write_bytes(bytes(range(256)) * 4)
    (t / "empty.toml").write_text("")
    (t / "notoml.toml").write_text("[suite\nname=")
    (t / "nested.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    suite = ('[suite]\nname = "s"\n{head}[[experiment]]\nname = "e"\nprogram = "{prog}"\n'
             'ranks = [{ranks}]\n[experiment.options]\nlocal = "6,6,6"\n')
    (t / "small.toml").write_text(suite.format(head="", prog="solve", ranks=1))
    (t / "ranks1000.toml").write_text(suite.format(head="", prog="solve", ranks=1000))
    (t / "ranks0.toml").write_text(suite.format(head="", prog="solve", ranks=0))
    (t / "repeats.toml").write_text(suite.format(head="repeats = 100000000\n", prog="solve",
                                                 ranks=1))
    (t / "timeout.toml").write_text(suite.format(head="timeout_s = 1e308\n", prog="solve",
                                                 ranks=1))
    (t / "noname.toml").write_text("[suite]\n")
    (t / "badprogram.toml").write_text(suite.format(head="", prog="rm -rf", ranks=1))
    runs = t / "nonutf8" / "runs"
    runs.mkdir(parents=True)
    (runs / "x.lab.json").write_text(
        '{"schema": "asyncsolve.lab.run/1", "run_id": "x", "experiment": "e", '
        '"program": "solve", "status": "ok", "document": "x.json", "ranks": 1, '
        '"regime": "shm", "repeat": 0, "config": {}, "options": {}, "rc": 0}')
    (runs / "x.json").write_bytes(b"\xff\xfe{\x00")
    runs = t / "res" / "runs"
    runs.mkdir(parents=True)
    (runs / "x.lab.json").write_text((t / "nonutf8" / "runs" / "x.lab.json").read_text())
    # A document of one rank with every field the report reads (docs/results.md).
    (runs / "x.json").write_text(
        '{"schema": "asyncsolve.result/1", "command": ["asyncsolve", "solve"], '
        '"environment": {"ranks": 1}, "method": {"name": "jacobi"}, '
        '"result": {"converged": false, "reason": "max_iters", "time_s": 0.01, '
        '"iterations": {"min": 5, "mean": 5, "max": 5, "per_rank": [5]}}, '
        '"phases": {"sweep": {"max": 0.01, "mean": 0.01, "min": 0.01}}, '
        '"history": [{"rank": 0, "iteration": 5, "time_s": 0.01, "residual": 0.5}]}')


def snapshot(path: str):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    data = b""
    if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b"?"
    return (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, st.st_mtime_ns, data)


def strip_launcher(err: str) -> str:
    """stderr without mpiexec's own notices (blocks between lines of dashes, and
    its event library's warnings)."""
    out, inside = [], False
    for line in err.splitlines():
        if re.fullmatch(r"-{20,}", line.strip()):
            inside = not inside
            continue
        # Open MPI's event library, while a job ends after an error: "[warn]
        # Epoll MOD(1) on fd 25 failed. ...: Bad file descriptor".
        if not inside and not re.match(r"\[warn\] Epoll \w+\(\d+\) on fd \d+ failed\.", line):
            out.append(line)
    return "\n".join(out)


def run_case(case: Case, binary: str, mpiexec: list[str], tmp: str, sessions: str) -> str | None:
    """None when the case behaved; else what went wrong. Each case has its own Open MPI
    session directory under `sessions`: cases run several at once, and Open MPI 4.1's jobs
    sharing one top directory race on it (open-mpi/ompi#8510: "A call to mkdir was unable
    to create the desired directory")."""
    session = tempfile.mkdtemp(dir=sessions)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "ASYNCSOLVE_BINARY": binary,
           "OMPI_MCA_orte_tmpdir_base": session, **case.env}
    if case.tool == "lab":
        cmd = [sys.executable, "-m", "asyncsolve_lab", *case.args]
    elif case.tool == "mpmd":
        cut = case.args.index(":")
        cmd = [*mpiexec, "-n", "1", binary, *case.args[:cut], ":", "-n", "1", binary,
               *case.args[cut + 1:]]
    elif case.ranks > 1:
        cmd = [*mpiexec, "-n", str(case.ranks), binary, *case.args]
    else:
        cmd = [binary, *case.args]  # a singleton: no launcher, no launcher's banner
    if case.limit_as:
        cmd = ["prlimit", f"--as={case.limit_as}", *cmd]
    before = {p: snapshot(p) for p in case.untouched}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env,
                           timeout=case.timeout, cwd=tmp)
    except subprocess.TimeoutExpired:
        return f"hang: no exit within {case.timeout} s"
    problems = []
    if case.rc != ACCEPTED and p.returncode != case.rc:
        problems.append(f"exit {p.returncode}, expected {case.rc}")
    if "Traceback" in p.stderr:
        problems.append("a traceback")
    if "MPI_ABORT" in p.stderr:
        problems.append("an MPI_ABORT banner")
    lines = [x for x in strip_launcher(p.stderr).splitlines() if x.strip()]
    if case.rc == ACCEPTED:  # any exit code but a refusal of this option's value
        if p.returncode == 2 and lines and lines[0].startswith(f"asyncsolve: error: "
                                                               f"{case.fragment} "):
            problems.append("the option table allows this value, the check refuses it")
    elif case.rc == 2:
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, expected 1")
        elif case.fragment not in lines[0]:
            problems.append(f"stderr lacks {case.fragment!r}")
        if case.tool != "lab" and p.stdout.strip():
            problems.append("output on stdout")
    else:
        problems.extend(f"output lacks {text!r}" for text in (case.fragment, case.also)
                        if text and text not in p.stderr + p.stdout)
    if case.absent and case.absent in p.stderr + p.stdout:
        problems.append(f"output holds {case.absent!r}")
    for path, snap in before.items():
        if snapshot(path) != snap:
            problems.append(f"{path} was changed")
    if not problems:
        return None
    shown = f"\n    stderr: {p.stderr.strip()[:2000]!r}"
    if case.rc not in (ACCEPTED, 2):  # a solve's verdict is on stdout
        shown += f"\n    stdout (its end): {p.stdout.strip()[-2000:]!r}"
    return "; ".join(problems) + shown


def has_hypre(binary: str, mpiexec: list[str]) -> bool:
    """Whether the binary was built with hypre (without, --pc boomeramg is refused)."""
    p = subprocess.run([*mpiexec, "-n", "1", binary, "solve", "--problem", "ones", "--global",
                        "4,4,4", "--method", "pcg1", "--pc", "boomeramg"], capture_output=True,
                       text=True, timeout=120, check=False)
    return "this build has no hypre" not in p.stderr


def is_open_mpi(binary: str) -> bool:
    """Whether the binary runs on Open MPI (its MCA settings mean nothing to another MPI)."""
    p = subprocess.run([binary, "info"], capture_output=True, text=True, timeout=120,
                       check=False)
    return "Open MPI" in p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--mpiexec", default="mpiexec --oversubscribe")
    ap.add_argument("--jobs", type=int, default=max(2, min(8, os.cpu_count() or 2)))
    ap.add_argument("--filter", default="", help="run only cases whose command holds this")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    mpiexec = shlex.split(args.mpiexec.replace(";", " "))  # a CMake list from ctest
    with (tempfile.TemporaryDirectory(prefix="bad-input-") as tmp,
          tempfile.TemporaryDirectory(prefix="bad-input-sessions-") as sessions):
        prepare(tmp)
        hypre = has_hypre(binary, mpiexec)
        hand_written = hand_cases(tmp, hypre) + more_cases(tmp, Case, hypre,
                                                           is_open_mpi(binary))
        hand_written = [c for c in hand_written if args.filter in " ".join(c.args)]
        cases = hand_written + [c for c in table_cases(binary, tmp)
                                if args.filter in " ".join(c.args)]
        if args.list:
            for c in cases:
                print(c.rc, c.tool, shlex.join(c.args))
            return 0
        start = time.monotonic()
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda c: run_case(c, binary, mpiexec, tmp, sessions), cases))
        failed = 0
        for case, problem in zip(cases, results, strict=True):
            if problem:
                failed += 1
                print(f"FAIL [{case.tool}] {shlex.join(case.args)[:200]}: {problem}")
        hand = len(hand_written)
        print(f"bad_input: {len(cases) - failed}/{len(cases)} cases behaved "
              f"({hand} written by hand, {len(cases) - hand} from the option tables) "
              f"in {time.monotonic() - start:.0f} s")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
