"""What this build can do: the programs and options a suite needs, checked
against the binary's own --help before anything runs."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .suite import DOC_REF, Suite, SuiteError

_OPTION = re.compile(r"^\s{1,4}(?:-[A-Za-z],)?--([a-z0-9][a-z0-9-]*)\b(.*)$")
#: Options whose value names a choice listed in the option's help text
#: (a value "knomial:4" is checked by its name, "knomial").
CHOICE_OPTIONS = {"problem", "method", "variant", "transport", "hybrid", "halo", "pc",
                  "allreduce", "progress", "noise-allreduce"}
#: Comma-separated lists of choices.
LIST_OPTIONS = {"modes", "patterns"}
#: Options naming a file the program reads, which must exist before the run.
INPUT_FILE_OPTIONS = {"matrix", "rhs", "x0", "coordinates", "fit"}
#: The value syntax the programs' INT and FLOAT options take (CLI11 as
#: asyncsolve configures it: decimal digits, no '+', no hexadecimal, finite).
_NUMBER = {"INT": re.compile(r"-?[0-9]+"),
           "FLOAT": re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")}
#: An option's range as its help prints it, "[1e-300 to 1]" or "[0 to 8; applies to ...]".
_RANGE = re.compile(r"\[(?:integer )?(-?[0-9.]+(?:e[+-]?[0-9]+)?) to "
                    r"(-?[0-9.]+(?:e[+-]?[0-9]+)?)[;\]]")


@dataclass
class Program:
    argv: list[str]  # the executable and subcommand words
    options: dict[str, str] = field(default_factory=dict)  # option -> its help text
    flags: set[str] = field(default_factory=set)  # the options that take no value


#: Programs beside the asyncsolve binary, and what building them takes.
SIBLING_NEEDS = {"asyncsolve-stencil2d-caf": "it needs gfortran and OpenCoarrays: make deps "
                 "installs gfortran and libcoarrays-openmpi-dev, then reconfigure the build"}


def is_sibling(program: str) -> bool:
    """A program beside the asyncsolve binary (asyncsolve-NAME), run on its own."""
    return program.startswith("asyncsolve-")


def find_binary(binary: str | None, simulated: bool = False) -> Path:
    """The asyncsolve executable: --binary, $ASYNCSOLVE_BINARY, build/asyncsolve, PATH, or
    the build of the lab's source tree; for a suite of sim regimes --binary,
    $ASYNCSOLVE_SIM_BINARY, build-sim/asyncsolve or the source tree's build-sim."""
    import os

    from .simulation import SOURCE_TREE
    if simulated:
        candidates = [binary] if binary else [os.environ.get("ASYNCSOLVE_SIM_BINARY"),
                                              "build-sim/asyncsolve",
                                              SOURCE_TREE / "build-sim" / "asyncsolve"]
    else:
        candidates = [binary] if binary else [os.environ.get("ASYNCSOLVE_BINARY"),
                                              "build/asyncsolve", shutil.which("asyncsolve"),
                                              SOURCE_TREE / "build" / "asyncsolve"]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c).resolve()
    if binary:
        raise SuiteError(f"--binary {binary}: no such executable")
    if simulated:
        raise SuiteError("cannot find the simulation build of asyncsolve: build it (make sim), "
                         "or give --binary or ASYNCSOLVE_SIM_BINARY")
    raise SuiteError("cannot find asyncsolve: build it (make build), or give --binary "
                     "or ASYNCSOLVE_BINARY")


def parse_help(text: str) -> dict[str, str]:
    """Option names (without dashes) and their help text from CLI11's --help output."""
    options: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        m = _OPTION.match(line)
        if m:
            last = m.group(1)
            options[last] = m.group(2).strip()
        elif last and line.startswith(" " * 10) and line.strip():
            options[last] += " " + line.strip()
        elif not line.strip():
            last = None
    options.pop("help", None)
    return options


def parse_flags(text: str) -> set[str]:
    """The options of CLI11's --help output that take no value: their help line has no
    value form (TEXT, INT, FLOAT, ...) one space after the name, only the description
    further on."""
    flags = set()
    for line in text.splitlines():
        m = _OPTION.match(line)
        if m and (not m.group(2).strip() or m.group(2).startswith("  ")):
            flags.add(m.group(1))
    flags.discard("help")
    return flags


def option_argv(options: dict) -> list[str]:
    """A run's options as the program is given them: `true` a flag, `false` left out,
    any other value after its option."""
    argv: list[str] = []
    for key, value in options.items():
        if value is True:
            argv.append(f"--{key}")
        elif value is not False:
            argv += [f"--{key}", str(value)]
    return argv


class Capabilities:
    """Probes programs lazily (each --help once). `launcher`: what runs the
    binary for --help (smpirun for the simulation build)."""

    def __init__(self, binary: Path, launcher: list[str] | None = None):
        self.binary = binary
        self.bench_dir = binary.parent / "bench"
        self.launcher = launcher or []
        self._cache: dict[str, Program] = {}

    def argv(self, program: str) -> list[str]:
        if program.startswith("bench/"):
            return [str(self.bench_dir / program.split("/", 1)[1])]
        if is_sibling(program):
            return [str(self.binary.parent / program)]
        return [str(self.binary), *program.split()]

    def program(self, program: str) -> Program:
        if program in self._cache:
            return self._cache[program]
        if is_sibling(program):
            return self._sibling(program)
        argv = self.argv(program)
        if program.startswith("bench/") and not Path(argv[0]).is_file():
            raise SuiteError(f"{argv[0]} does not exist: this build has no {program} "
                             "(build the benchmarks: ASYNCSOLVE_BUILD_BENCH=ON, make build)")
        try:
            # under smpirun, SimGrid answers --help itself: ask CLI11's -h
            flag = "-h" if self.launcher else "--help"
            proc = subprocess.run([*self.launcher, *argv, flag], capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise SuiteError(f"cannot run {' '.join(argv)} --help: {err}") from None
        usage = re.search(r"^Usage: \S*?(\S+) (.*?)(?: \[|$)", proc.stdout, re.MULTILINE)
        if not program.startswith("bench/") and (usage is None or usage.group(2) != program):
            # CLI11 prints the parent's help for an unknown subcommand
            raise SuiteError(f"this build of asyncsolve has no '{program}' (feature not built "
                             f"yet?): `{' '.join(argv)} --help` does not describe it")
        if proc.returncode != 0:
            raise SuiteError(f"this build of asyncsolve has no '{program}' (feature not built "
                             f"yet?): {' '.join(argv)} --help exited {proc.returncode}: "
                             f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
        found = Program(argv=argv, options=parse_help(proc.stdout),
                        flags=parse_flags(proc.stdout))
        self._cache[program] = found
        return found

    def _sibling(self, program: str) -> Program:
        """A program beside the asyncsolve binary (asyncsolve-NAME): it must
        exist and answer --help, whose options are its capabilities."""
        argv = self.argv(program)
        if not Path(argv[0]).is_file():
            raise SuiteError(f"{argv[0]} does not exist: this build has no {program} "
                             f"({SIBLING_NEEDS.get(program, 'not built')})")
        try:
            proc = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise SuiteError(f"cannot run {' '.join(argv)} --help: {err}") from None
        if proc.returncode != 0:
            raise SuiteError(f"{' '.join(argv)} --help exited {proc.returncode}: "
                             f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
        found = Program(argv=argv, options=parse_help(proc.stdout),
                        flags=parse_flags(proc.stdout))
        self._cache[program] = found
        return found


    def check_command_lines(self, lines: list[list[str]]) -> list[str] | None:
        """The program's own verdict on each command line (its words after the
        binary's name): "ok" or "error: ..." (asyncsolve --check-command-lines,
        which parses without running). None for the simulation build, whose
        binary runs under smpirun only."""
        if self.launcher:
            return None
        text = "".join(json.dumps(words) + "\n" for words in lines)
        try:
            proc = subprocess.run([str(self.binary), "--check-command-lines"], input=text,
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise SuiteError(f"cannot run {self.binary} --check-command-lines: {err}") from None
        verdicts = proc.stdout.splitlines()
        if proc.returncode != 0 or len(verdicts) != len(lines):
            raise SuiteError(f"{self.binary} --check-command-lines exited {proc.returncode} with "
                             f"{len(verdicts)} verdicts for {len(lines)} command lines: "
                             f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")
        return verdicts


def check_suite(suite: Suite, caps: Capabilities) -> None:
    """Raise SuiteError (with the suite's line) for the first option or value
    the build lacks; runs nothing but --help."""
    for exp in suite.experiments:
        kp = ("experiment", exp.index)
        try:
            prog = caps.program(exp.program)
        except SuiteError as err:
            raise suite.error(kp + ("program",), f"experiment '{exp.name}': {err}") from None
        for table, items in (("options", {k: [v] for k, v in exp.options.items()}),
                             ("matrix", exp.matrix)):
            for key, values in items.items():
                where = kp + (table, key)
                if key not in prog.options:
                    raise suite.error(where, f"experiment '{exp.name}': option --{key} does not "
                                      f"exist in '{exp.program}' of this build (feature not built "
                                      f"yet?); it has: {', '.join(sorted(prog.options))}")
                for v in values:
                    if key in prog.flags and not isinstance(v, bool):
                        raise suite.error(where, f"experiment '{exp.name}': --{key} "
                                          f"{json.dumps(v)}: --{key} is a flag: expected true "
                                          "(given) or false (left out)")
                    if isinstance(v, str) and DOC_REF.match(v):
                        continue
                    if key in CHOICE_OPTIONS or key in LIST_OPTIONS:
                        _check_choice(suite, where, exp.name, exp.program, key, v,
                                      prog.options[key])
                    problem = value_problem(key, v, prog.options[key])
                    if problem:
                        shown = str(v).lower() if isinstance(v, bool) else v  # as TOML has it
                        raise suite.error(where, f"experiment '{exp.name}': --{key} {shown}: "
                                          f"{problem}")
    _check_with_the_program(suite, caps)


def _check_with_the_program(suite: Suite, caps: Capabilities) -> None:
    """Every run's command line of the asyncsolve binary, as the runner will give it,
    parsed by the program itself: a choice it does not have, a combination it refuses
    (`variant = "async"` with `method = "cg"`), a value outside its syntax. Runs whose
    options take a {doc:...} value are left to the run."""
    owners: dict[str, object] = {}
    for run in suite.runs():
        if run.program.startswith("bench/") or is_sibling(run.program):
            continue
        if any(isinstance(v, str) and DOC_REF.match(v) for v in run.options.values()):
            continue
        owners.setdefault(json.dumps(run.program.split() + option_argv(run.options)), run)
    if not owners:
        return
    verdicts = caps.check_command_lines([json.loads(line) for line in owners])
    for run, verdict in zip(owners.values(), verdicts or [], strict=False):
        if verdict == "ok":
            continue
        exp = next(e for e in suite.experiments if e.name == run.experiment)
        named = [k for k in re.findall(r"--([a-z0-9][a-z0-9-]*)", verdict) if k in run.options]
        where: tuple = ("experiment", exp.index)
        if named:
            where += ("matrix" if named[0] in exp.matrix else "options", named[0])
        raise suite.error(where, f"experiment '{exp.name}': {verdict.removeprefix('error: ')} "
                          f"(the program refuses the run {run.label})")


def value_problem(key: str, value: object, help_text: str) -> str | None:
    """Why the program would refuse `value` for --key, as far as its help
    says (None when it would not): a number of the wrong syntax or outside
    the range the help prints, an input file that does not exist. `false`
    leaves an option out; `true` gives it as a flag."""
    kind = help_text.split("=", 1)[0].split(" ", 1)[0]
    if kind in _NUMBER:
        span = _RANGE.search(help_text)
        expected = ("an integer" if kind == "INT" else "a number") + \
            (f" from {span[1]} to {span[2]}" if span else "")
        if isinstance(value, bool):
            return f"expected {expected}, not a flag" if value else None
        text = str(value)
        if not _NUMBER[kind].fullmatch(text) or not math.isfinite(float(text)) or \
                (span and not float(span[1]) <= float(text) <= float(span[2])):
            return f"expected {expected} (the program's --help)"
    elif key in INPUT_FILE_OPTIONS and isinstance(value, str):
        if not Path(value).exists():
            return "no such file"
        if not Path(value).is_file():
            return "not a regular file"
    return None


def _check_choice(suite, where, exp_name, program, key, value, help_text):
    if not isinstance(value, str):
        return
    items = value.split(",") if key in LIST_OPTIONS else [value]
    words = set(re.findall(r"[A-Za-z0-9_-]+", help_text))
    for item in items:
        name = item.split(":", 1)[0]
        if name and name not in words:
            raise suite.error(where, f"experiment '{exp_name}': --{key} {value}: '{name}' is not "
                              f"among the choices of '{program}' in this build (feature not "
                              f"built yet?): {help_text}")
