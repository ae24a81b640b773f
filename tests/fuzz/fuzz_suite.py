"""Mutation fuzzer of the lab's suite parser.

Starts from the suites under suites/ and the tests' tiny suite, mutates them
(bytes flipped, inserted, deleted; lines duplicated, swapped, cut; TOML
tokens and hostile values spliced in: huge numbers, NaN, deep nesting, long
strings, control characters) and feeds each mutant to `parse_suite` (and, as
bytes, to `load_suite`). A mutant must either parse into a suite whose runs
are bounded, or raise SuiteError (LabError) with a one-line message: any
other exception is a crash, a parse longer than --hang-s is a hang. Crashing
inputs are written to --crashes.

    python tests/fuzz/fuzz_suite.py --seconds 600 --seed 1
"""

import argparse
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from asyncsolve_lab import LabError  # noqa: E402
from asyncsolve_lab.suite import load_suite, parse_suite  # noqa: E402

TINY = """
[suite]
name = "tiny"
repeats = 2
regimes = ["shm", "tcp"]
timeout_s = 60

[[experiment]]
name = "jacobi"
program = "solve"
ranks = [1, 2]
[experiment.options]
local = "6,6,6"
method = "jacobi"
variant = ["sync", "async"]
"""

TOKENS = [
    "[", "]", "[[", "]]", "{", "}", "=", ",", ".", "\"", "'", "'''", '"""', "\n", "#", "\\",
    "[suite]", "[[experiment]]", "[experiment.options]", "[[experiment.plot]]",
    "name", "program", "ranks", "repeats", "timeout_s", "regimes", "options", "claims",
    "solve", "bench", "allreduce", "stencil2d", "model", "hybrid", "shm", "tcp", "sim",
    "0", "-1", "1", "2", "1e308", "-1e308", "inf", "nan", "-inf", "0x10", "0o7", "0b1",
    "9999999999999999999999", "1000", "1_000_000", "true", "false", "1979-05-27T07:32:00Z",
    "\x00", "\x1b[2J", "\udcff", "\u202e", "é", "[" * 50, "]" * 50, "a" * 5000,
    "ranks = [1000]", "ranks = []", "repeats = 1000000", "timeout_s = 1e308",
    "local = \"99999999999999999999,1,1\"", "variant = []", "x = [[[[[[[[[[1]]]]]]]]]]",
]


def seeds() -> list[str]:
    return [TINY] + [p.read_text(encoding="utf-8")
                     for p in sorted((ROOT / "suites").glob("*.toml"))]


def mutate(text: str, rng: random.Random, pool: list[str]) -> str:
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(9)
        n = len(text)
        i = rng.randint(0, n)
        if op == 0 and n:  # flip a character
            j = min(i, n - 1)
            text = text[:j] + chr(rng.randrange(0, 0x80 if rng.random() < 0.9 else 0x3000)) + \
                text[j + 1:]
        elif op == 1:  # insert a token
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif op == 2 and n:  # delete a span
            text = text[:i] + text[i + rng.randint(1, 40):]
        elif op == 3:  # duplicate a line
            lines = text.splitlines(keepends=True)
            if lines:
                k = rng.randrange(len(lines))
                lines.insert(k, lines[k])
                text = "".join(lines)
        elif op == 4:  # swap two lines
            lines = text.splitlines(keepends=True)
            if len(lines) > 1:
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                text = "".join(lines)
        elif op == 5:  # replace a value after '='
            eq = text.find("=", i)
            if eq >= 0:
                end = text.find("\n", eq)
                end = len(text) if end < 0 else end
                text = text[:eq + 1] + " " + rng.choice(TOKENS) + text[end:]
        elif op == 6:  # splice in part of another input
            other = rng.choice(pool)
            a = rng.randint(0, len(other))
            text = text[:i] + other[a:a + rng.randint(1, 200)] + text[i:]
        elif op == 7:  # repeat a span (long lists, deep nesting)
            span = text[i:i + rng.randint(1, 20)]
            text = text[:i] + span * rng.randint(2, 200) + text[i:]
        else:  # cut the tail
            text = text[:i]
    return text[:200_000]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def check(text: str, tmp: Path) -> str | None:
    """None when the parser behaved; else what went wrong."""
    try:
        suite = parse_suite(text, Path("fuzz.toml"))
        runs = sum(1 for _ in suite.runs()) if hasattr(suite, "runs") else 0
        if runs > 100_000:
            return f"accepted a suite of {runs} runs"
    except LabError as err:
        msg = str(err)
        if "\n" in msg or "\r" in msg:
            return f"multi-line message: {msg[:200]!r}"
    except Hang:
        raise
    except Exception:
        return traceback.format_exc()
    # The same text as bytes through the file reader (encoding errors too).
    data = text.encode("utf-8", errors="surrogateescape")
    path = tmp / "fuzz.toml"
    path.write_bytes(data)
    try:
        load_suite(path)
    except LabError as err:
        if "\n" in str(err):
            return f"multi-line message (file): {str(err)[:200]!r}"
    except Hang:
        raise
    except Exception:
        return traceback.format_exc()
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang-s", type=int, default=5)
    ap.add_argument("--crashes", default="fuzz-suite-crashes")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pool = seeds()
    signal.signal(signal.SIGALRM, _alarm)
    start = time.monotonic()
    execs = accepted = 0
    findings = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        while time.monotonic() - start < args.seconds:
            text = mutate(rng.choice(pool), rng, pool)
            signal.alarm(args.hang_s)
            try:
                problem = check(text, tmp)
            except Hang:
                problem = f"hang: parse took more than {args.hang_s} s"
            finally:
                signal.alarm(0)
            execs += 1
            if problem is None:
                # Keep interesting survivors as further seeds (bounded pool).
                if rng.random() < 0.02 and len(pool) < 500:
                    pool.append(text)
                    accepted += 1
                continue
            findings += 1
            os.makedirs(args.crashes, exist_ok=True)
            name = Path(args.crashes) / f"crash-{args.seed}-{execs}.toml"
            name.write_text(text, encoding="utf-8", errors="surrogateescape")
            print(f"FINDING {name}:\n{problem}", file=sys.stderr)
            if findings >= 20:
                break
    elapsed = time.monotonic() - start
    print(f"fuzz_suite: {execs} inputs in {elapsed:.0f} s ({execs / max(elapsed, 1e-9):.0f}/s), "
          f"seed {args.seed}, pool {len(pool)}, findings {findings}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
