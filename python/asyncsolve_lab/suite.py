"""Suite files (TOML): parsing, validation with line numbers, expansion into runs.

A suite is a [suite] table and any number of [[experiment]] tables; each
experiment is a matrix ranks x regimes x (the product of its [matrix] lists)
x repeats of one program (asyncsolve solve, bench allreduce, bench
stencil2d, model hybrid, the bench/ executables hybrid_mvm and beff, or a
program installed beside asyncsolve such as asyncsolve-stencil2d-caf). See
docs/lab.md, "The experiment lab".
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import LabError, simulation

#: What `program` may be: an asyncsolve subcommand ("solve", "bench allreduce",
#: "model hybrid", ...), an executable of the build's bench/ folder
#: ("bench/hybrid_mvm", "bench/beff"), or a program beside the asyncsolve
#: binary ("asyncsolve-stencil2d-caf"). Whether the build has it is checked
#: against the binary before anything runs (capabilities.py).
PROGRAM = re.compile(r"^(solve|(bench|model) [a-z0-9_-]+|bench/[A-Za-z0-9_-]+"
                     r"|asyncsolve-[a-z0-9-]+)$")
REGIMES = ("shm", "tcp")  # and sim:PLATFORM (simulation.py)
#: cafrun: OpenCoarrays' launcher of Coarray Fortran programs (runner.py).
LAUNCHERS = ("mpirun", "oshrun", "cafrun", "none")
PLOT_KINDS = ("histogram", "convergence", "rate", "time", "line", "bars", "phases", "allreduce",
              "noise", "model", "beff", "mvm", "stencil2d")
#: y quantities of line plots (kind "line", "rate", "time").
LINE_Y = ("time", "rate", "iterations", "time_per_iteration", "true_residual", "speedup")
#: A value in options/matrix of the form {doc:EXPERIMENT} is replaced by the
#: path of a finished document of that experiment (same regime).
DOC_REF = re.compile(r"^\{doc:([A-Za-z0-9_-]+)\}$")

Scalar = str | int | float | bool


class SuiteError(LabError):
    """A suite file that cannot be run; the message names the file and line."""


# --------------------------------------------------------------------------
# Line numbers: tomllib reports only syntax errors with a line, so keys are
# located by scanning the text, tracking table headers and arrays of tables.

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
                  r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_INLINE_KEY = re.compile(r"""[{,]\s*([A-Za-z0-9_-]+|"[^"]*")\s*=""")


def _split_key(text: str) -> list[str]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", text)
    return [p.strip("\"'") for p in parts]


#: Lines longer than this are not scanned for keys (their errors get no line).
MAX_LOCATED_LINE = 4096


class KeyLocator:
    """Maps key paths such as ("experiment", 1, "matrix", "variant") to 1-based lines."""

    def __init__(self, text: str):
        self.lines: dict[tuple, int] = {}
        counts: dict[tuple, int] = {}
        current: tuple = ()
        in_multiline = False
        for number, line in enumerate(text.splitlines(), start=1):
            if len(line) > MAX_LOCATED_LINE:
                continue  # only for line numbers: a huge line is not worth a slow match
            stripped = line.strip()
            if in_multiline:  # inside a multi-line string: skip until it closes
                if '"""' in stripped or "'''" in stripped:
                    in_multiline = False
                continue
            if not stripped or stripped.startswith("#"):
                continue
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                names = _split_key(header.group(2))
                path: tuple = ()
                for i, name in enumerate(names):
                    path = path + (name,)
                    last = i == len(names) - 1
                    if last and header.group(1) == "[[":
                        counts[path] = counts.get(path, -1) + 1
                        path = path + (counts[path],)
                    elif not last and path in counts:
                        path = path + (counts[path],)
                current = path
                self.lines.setdefault(current, number)
                continue
            key = _KEY.match(line)
            if key:
                path = current + tuple(_split_key(key.group(1)))
                for i in range(len(current) + 1, len(path) + 1):
                    self.lines.setdefault(path[:i], number)
                rest = line[key.end():]
                for inline in _INLINE_KEY.finditer(rest):
                    self.lines.setdefault(path + (inline.group(1).strip('"'),), number)
                if rest.count('"""') == 1 or rest.count("'''") == 1:
                    in_multiline = True

    def line_of(self, path: tuple) -> int | None:
        """The line of `path`, or of its longest prefix that has one."""
        for end in range(len(path), 0, -1):
            found = self.lines.get(tuple(path[:end]))
            if found is not None:
                return found
        return None


# --------------------------------------------------------------------------
# The suite model.


@dataclass
class Plot:
    kind: str
    x: str | None = None
    y: str | None = None
    title: str | None = None
    series: str | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class Experiment:
    name: str
    index: int
    program: str
    ranks: list[int]
    regimes: list[str]
    repeats: int
    timeout_s: float
    launcher: str
    title: str = ""
    notes: str = ""
    env: dict[str, str] = field(default_factory=dict)
    options: dict[str, Scalar] = field(default_factory=dict)
    matrix: dict[str, list[Scalar]] = field(default_factory=dict)
    exclude: list[dict[str, Scalar]] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)

    def to_json(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "plots"}
        out["plots"] = [p.to_json() for p in self.plots]
        return out


@dataclass
class RunSpec:
    """One run: an experiment's configuration and repeat."""

    run_id: str
    experiment: str
    program: str
    ranks: int
    regime: str
    repeat: int
    config: dict[str, Scalar]  # the matrix values of this run (what varies)
    options: dict[str, Scalar]  # every option given to the program
    launcher: str
    timeout_s: float
    env: dict[str, str]
    order: int = 0  # the configuration's place in the suite (repeats share it)
    platform: simulation.Platform | None = None  # regime sim:PLATFORM

    @property
    def label(self) -> str:
        parts = [self.experiment, self.regime, f"np={self.ranks}"]
        parts += [f"{k}={v}" for k, v in self.config.items()]
        return " ".join(parts) + f" #{self.repeat + 1}"


@dataclass
class Suite:
    path: Path
    text: str
    name: str
    description: str
    timeout_s: float
    repeats: int
    regimes: list[str]
    results: str | None
    experiments: list[Experiment]
    locator: KeyLocator
    platforms: dict[str, simulation.Platform] = field(default_factory=dict)  # sim regimes
    claims: list = field(default_factory=list)  # claims.Claim, in suite order

    @property
    def simulated(self) -> bool:
        """True when the suite runs in simulation (its regimes are sim:PLATFORM)."""
        return bool(self.platforms)

    def where(self, path: tuple) -> str:
        line = self.locator.line_of(path)
        return f"{self.path}:{line}" if line else str(self.path)

    def error(self, path: tuple, message: str) -> SuiteError:
        return SuiteError(f"{self.where(path)}: {message}")

    def to_json(self) -> dict:
        from . import SUITE_SCHEMA
        return {"schema": SUITE_SCHEMA, "name": self.name, "description": self.description,
                "file": str(self.path), "timeout_s": self.timeout_s, "repeats": self.repeats,
                "regimes": self.regimes,
                "experiments": [e.to_json() for e in self.experiments],
                "claims": [c.to_json() for c in self.claims]}

    def runs(self) -> list[RunSpec]:
        """Every run, repeats interleaved: all configurations once, then again (A B A B)."""
        return expand(self.experiments, self.platforms)


def expand(experiments: list[Experiment],
           platforms: dict[str, simulation.Platform] | None = None) -> list[RunSpec]:
    """The runs of `experiments`, repeats interleaved (Suite.runs); `platforms` gives
    the simulated regimes their platform."""
    configs = _configurations(experiments)
    runs = []
    top = max((e.repeats for e in experiments), default=0)
    for repeat in range(top):
        for order, (exp, c) in enumerate(configs):
            if repeat < exp.repeats:
                runs.append(_make_run(exp, c, repeat))
                runs[-1].order = order
                runs[-1].platform = (platforms or {}).get(c["regime"])
    return runs


def _configurations(experiments: list[Experiment]) -> list[tuple[Experiment, dict]]:
    """Every configuration the experiments run ({"regime", "ranks", **matrix
    values}), exclusions applied, in suite order."""
    configs: list[tuple[Experiment, dict]] = []
    for exp in experiments:
        keys = list(exp.matrix)
        for regime in exp.regimes:
            for ranks in exp.ranks:
                for values in itertools.product(*(exp.matrix[k] for k in keys)):
                    config = dict(zip(keys, values, strict=True))
                    where = {"ranks": ranks, "regime": regime, **config}
                    if any(all(_is_value(v, where.get(k)) for k, v in ex.items())
                           for ex in exp.exclude):
                        continue
                    configs.append((exp, {"regime": regime, "ranks": ranks, **config}))
    return configs


def _is_value(wanted: object, value: object) -> bool:
    """Whether an exclusion's `wanted` names `value` of a configuration."""
    return wanted == value


def _slug(value: object) -> str:
    return re.sub(r"[^A-Za-z0-9.=_+-]+", "_", str(value))


def _make_run(exp: Experiment, c: dict, repeat: int) -> RunSpec:
    config = {k: v for k, v in c.items() if k not in ("regime", "ranks")}
    options = {**exp.options, **config}
    ident = json.dumps({"program": exp.program, "options": options, "launcher": exp.launcher,
                        "env": exp.env, "ranks": c["ranks"], "regime": c["regime"]},
                       sort_keys=True)
    digest = hashlib.sha1(ident.encode()).hexdigest()[:8]
    kv = "-".join(f"{_slug(k)}={_slug(v)}" for k, v in config.items())[:80]
    run_id = f"{exp.name}-{_slug(c['regime'])}-np{c['ranks']}" + (f"-{kv}" if kv else "") + \
        f"-r{repeat}-{digest}"
    return RunSpec(run_id=run_id, experiment=exp.name, program=exp.program, ranks=c["ranks"],
                   regime=c["regime"], repeat=repeat, config=config, options=options,
                   launcher=exp.launcher, timeout_s=exp.timeout_s, env=dict(exp.env))


# --------------------------------------------------------------------------
# Validation.

def _type_name(value: object) -> str:
    if isinstance(value, list) and not value:
        return "an empty array"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def _toml(value: object) -> str:
    """`value` as the suite file writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


class _Checker:
    def __init__(self, path: Path, locator: KeyLocator):
        self.path, self.locator = path, locator

    def fail(self, keypath: tuple, message: str) -> SuiteError:
        line = self.locator.line_of(keypath)
        return SuiteError(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")

    def keys(self, table: dict, known: dict, keypath: tuple, what: str, required=()):
        for key in table:
            if key not in known:
                raise self.fail(keypath + (key,), f"unknown key '{key}' in {what} "
                                f"(known: {', '.join(sorted(known))})")
        for key in required:
            if key not in table:
                raise self.fail(keypath, f"{what} lacks the required key '{key}'")

    def scalar(self, value, keypath, name, kinds=(str, int, float, bool)):
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            want = " or ".join(_type_name(k()) for k in kinds)
            raise self.fail(keypath, f"'{name}' must be {want}, not {_type_name(value)}")
        return value

    def positive(self, value, keypath, name, kind=int, most=None):
        self.scalar(value, keypath, name, (kind,))
        if not value > 0:  # NaN too
            raise self.fail(keypath, f"'{name}' must be positive, not {value}")
        if most is not None and not value <= most:  # inf too
            raise self.fail(keypath, f"'{name}' is {value}; expected at most {most:g}")
        return value

    def choice(self, value, keypath, name, choices):
        self.scalar(value, keypath, name, (str,))
        if value not in choices:
            raise self.fail(keypath, f"'{name}' is {value!r}; expected one of "
                            f"{', '.join(choices)}")
        return value

    def str_list(self, value, keypath, name, choices=None):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value:
            raise self.fail(keypath, f"'{name}' must be a non-empty array of strings, not "
                            f"{_type_name(value)}")
        for v in value:
            if choices:
                self.choice(v, keypath, name, choices)
            else:
                self.scalar(v, keypath, name, (str,))
        return list(value)

    def once(self, values: list, keypath, name) -> None:
        """Refuses a value listed twice in a list that defines runs (ranks,
        regimes, a matrix key): both would be the same run, into one file."""
        seen = set()
        for v in values:
            key = (isinstance(v, bool), str(v))  # as the program is given it
            if key in seen:
                raise self.fail(keypath, f"'{name}' lists {_toml(v)} twice; expected each value "
                                "once (the same value twice is the same run; for more runs of "
                                "it, raise repeats)")
            seen.add(key)

    def no_nul(self, value, keypath, what) -> None:
        """A string handed to a process (argument, environment) cannot hold NUL."""
        if isinstance(value, str) and "\0" in value:
            raise self.fail(keypath, f"{what} {value!r} holds a NUL character; expected "
                            "text without it (no path, command line or environment can hold one)")


SUITE_KEYS = {"name", "description", "timeout_s", "repeats", "regimes", "results"}
EXPERIMENT_KEYS = {"name", "title", "notes", "program", "ranks", "regimes", "repeats",
                   "timeout_s", "launcher", "env", "options", "matrix", "exclude", "plots"}
PLOT_KEYS = {"kind", "x", "y", "title", "series"}


#: The largest suite file read (suites are a few KiB).
MAX_SUITE_BYTES = 1 << 20
#: The most repeats of an experiment, and the most runs a suite expands to.
MAX_REPEATS = 1000
MAX_RUNS = 100000
#: The longest timeout of a run: a week.
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file; raises SuiteError naming the file and line.
    Only a regular UTF-8 file of at most MAX_SUITE_BYTES is read."""
    from .results import read_limited
    path = Path(path)
    try:
        raw = read_limited(path, MAX_SUITE_BYTES)
    except LabError as err:
        raise SuiteError(f"cannot read the suite: {err}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SuiteError(f"{path}: not UTF-8 text (byte {err.start}): expected a TOML suite "
                         "file") from None
    return parse_suite(text, path)


def parse_suite(text: str, path: Path = Path("<suite>")) -> Suite:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        loc = f"{path}:{m.group(1)}:{m.group(2)}" if m else str(path)
        raise SuiteError(f"{loc}: not valid TOML: {msg}") from None
    except RecursionError:
        raise SuiteError(f"{path}: not a suite: arrays or tables nested too deeply") from None
    locator = KeyLocator(text)
    ck = _Checker(path, locator)
    ck.keys(data, {"suite": 1, "experiment": 1, "claim": 1}, (), "the suite file",
            required=("suite",))
    head = data["suite"]
    if not isinstance(head, dict):
        raise ck.fail(("suite",), "'suite' must be a table ([suite])")
    ck.keys(head, dict.fromkeys(SUITE_KEYS), ("suite",), "[suite]", required=("name",))
    name = ck.scalar(head["name"], ("suite", "name"), "name", (str,))
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ck.fail(("suite", "name"), f"suite name {name!r} may hold only letters, digits, "
                      "'_', '.' and '-' (it names the results folder)")
    timeout = float(ck.positive(head.get("timeout_s", 600), ("suite", "timeout_s"),
                                "timeout_s", float, MAX_TIMEOUT_S))
    repeats = ck.positive(head.get("repeats", 1), ("suite", "repeats"), "repeats", int,
                          MAX_REPEATS)
    platforms: dict[str, simulation.Platform] = {}
    regimes = _regimes(ck, head.get("regimes", ["shm"]), ("suite", "regimes"), platforms)
    results = head.get("results")
    if results is not None:
        ck.scalar(results, ("suite", "results"), "results", (str,))
        ck.no_nul(results, ("suite", "results"), "results folder")
    raw_exps = data.get("experiment", [])
    if isinstance(raw_exps, dict):
        raise ck.fail(("experiment",), "'experiment' is one table ([experiment]); expected an "
                      "array of tables: write [[experiment]]")
    if not isinstance(raw_exps, list) or not raw_exps:
        raise ck.fail(("experiment",), "a suite needs at least one [[experiment]] table"
                      + ("" if isinstance(raw_exps, list) else
                         f"; 'experiment' is {_type_name(raw_exps)}"))
    experiments = []
    seen: dict[str, int] = {}
    total_runs = 0
    for i, raw in enumerate(raw_exps):
        exp = _parse_experiment(ck, raw, i, timeout, repeats, regimes, platforms)
        total_runs += _run_count(exp)
        if total_runs > MAX_RUNS:
            raise ck.fail(("experiment", i), f"the suite expands to more than {MAX_RUNS} runs "
                          f"(experiment {exp.name!r}: ranks x regimes x matrix x repeats); "
                          "expected a smaller matrix")
        if exp.name in seen:
            raise ck.fail(("experiment", i, "name"), f"experiment name {exp.name!r} is used twice "
                          f"(first in experiment #{seen[exp.name] + 1})")
        seen[exp.name] = i
        experiments.append(exp)
    # {doc:NAME} references must name an earlier experiment.
    for exp in experiments:
        for key, values in [(k, [v]) for k, v in exp.options.items()] + list(exp.matrix.items()):
            for v in values:
                m = DOC_REF.match(v) if isinstance(v, str) else None
                if m and (m.group(1) not in seen or seen[m.group(1)] >= exp.index):
                    table = "options" if key in exp.options else "matrix"
                    raise ck.fail(("experiment", exp.index, table, key),
                                  f"{v} must name an earlier experiment of this suite")
    _check_simulated(ck, experiments, platforms)
    claims = []
    if "claim" in data:
        from .claims import parse_claims
        configs: dict[str, list[dict]] = {e.name: [] for e in experiments}
        for exp, c in _configurations(experiments):
            configs[exp.name].append(c)
        claims = parse_claims(ck, data["claim"], experiments, configs)
    return Suite(path=path, text=text, name=name, description=head.get("description", ""),
                 timeout_s=timeout, repeats=repeats, regimes=regimes, results=results,
                 experiments=experiments, locator=locator, platforms=platforms, claims=claims)


def _regimes(ck: _Checker, value, keypath: tuple,
             platforms: dict[str, simulation.Platform]) -> list[str]:
    """shm, tcp or sim:PLATFORM (the platform file must exist and be readable)."""
    regimes = ck.str_list(value, keypath, "regimes")
    ck.once(regimes, keypath, "regimes")
    for r in regimes:
        if simulation.is_sim(r):
            if r not in platforms:
                try:
                    platforms[r] = simulation.find_platform(r, simulation.search_dirs(ck.path))
                except ValueError as err:
                    raise ck.fail(keypath, str(err)) from None
        elif r not in REGIMES:
            raise ck.fail(keypath, f"'regimes' is {r!r}; expected one of "
                          f"{', '.join(REGIMES)} or sim:PLATFORM")
    return regimes


def _check_simulated(ck: _Checker, experiments: list[Experiment],
                     platforms: dict[str, simulation.Platform]) -> None:
    """Sim regimes: not mixed with shm/tcp (one binary runs a suite), no more
    ranks than the platform has hosts, nothing the simulation build lacks."""
    used = [(e, r) for e in experiments for r in e.regimes]
    sim = [(e, r) for e, r in used if simulation.is_sim(r)]
    if not sim:
        return
    real = [(e, r) for e, r in used if not simulation.is_sim(r)]
    if real:
        e, r = real[0]
        raise ck.fail(("experiment", e.index, "regimes"), f"experiment '{e.name}' runs in "
                      f"regime {r} but the suite also runs {sim[0][1]}: the simulation build "
                      "runs sim regimes only; put them in a suite of their own")
    for e, r in sim:
        kp = ("experiment", e.index)
        hosts = len(platforms[r].hosts)
        if max(e.ranks) > hosts:
            raise ck.fail(kp + ("ranks",), f"experiment '{e.name}': {max(e.ranks)} ranks on "
                          f"{r}, whose platform {platforms[r].path} has {hosts} hosts")
        if e.launcher in ("oshrun", "cafrun"):
            raise ck.fail(kp + ("launcher",), f"experiment '{e.name}': launcher {e.launcher} "
                          f"in regime {r}: the simulation runs MPI only (smpirun)")
        for table, items in (("options", {k: [v] for k, v in e.options.items()}),
                             ("matrix", e.matrix)):
            for key, values in items.items():
                for v in values:
                    why = simulation.refusal(key, v)
                    if why:
                        raise ck.fail(kp + (table, key), f"experiment '{e.name}' in regime "
                                      f"{r}: {why}")


def _run_count(exp: Experiment) -> int:
    """How many runs `exp` expands to at most (before exclusions)."""
    n = len(exp.ranks) * len(exp.regimes) * exp.repeats
    for values in exp.matrix.values():
        n *= len(values)
        if n > MAX_RUNS:
            return n
    return n


#: An option's name as a suite writes it: the command line's, without the dashes.
OPTION_NAME = r"[A-Za-z0-9][A-Za-z0-9-]*"


def _option_name_problem(name: str) -> str:
    """What is wrong with an option name that does not match OPTION_NAME."""
    fixed = name.lstrip("-").replace("_", "-")
    hint = ("options are spelled as on the command line, with '-' between words, without the "
            "leading dashes")
    if fixed != name and re.fullmatch(OPTION_NAME, fixed):
        return f"option name {name!r}: expected {fixed!r} ({hint})"
    return f"option name {name!r}: expected letters, digits and '-', e.g. max-in-flight ({hint})"


def _parse_experiment(ck: _Checker, raw, i: int, timeout: float, repeats: int,
                      regimes: list[str], platforms: dict[str, simulation.Platform]) -> Experiment:
    kp = ("experiment", i)
    if not isinstance(raw, dict):
        raise ck.fail(kp, "each experiment must be a table ([[experiment]])")
    ck.keys(raw, dict.fromkeys(EXPERIMENT_KEYS), kp, f"[[experiment]] #{i + 1}",
            required=("name", "program"))
    name = ck.scalar(raw["name"], kp + ("name",), "name", (str,))
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ck.fail(kp + ("name",), f"experiment name {name!r} may hold only letters, digits, "
                      "'_' and '-'")
    program = ck.scalar(raw["program"], kp + ("program",), "program", (str,))
    if not PROGRAM.match(program):
        raise ck.fail(kp + ("program",), f"program {program!r}: expected 'solve', 'bench NAME', "
                      "'model NAME' (asyncsolve subcommands), 'bench/NAME' (a bench executable) "
                      "or 'asyncsolve-NAME' (a program beside asyncsolve)")
    launcher = ck.choice(raw.get("launcher", "none" if program == "model hybrid" else "mpirun"),
                         kp + ("launcher",), "launcher", LAUNCHERS)
    ranks_raw = raw.get("ranks", [1])
    ranks_list = ranks_raw if isinstance(ranks_raw, list) else [ranks_raw]
    if not ranks_list:
        raise ck.fail(kp + ("ranks",), "'ranks' must not be empty")
    ranks = [ck.positive(r, kp + ("ranks",), "ranks") for r in ranks_list]
    ck.once(ranks, kp + ("ranks",), "ranks")
    if launcher == "none" and ranks != [1]:
        raise ck.fail(kp + ("ranks",), "an experiment with launcher = \"none\" runs one process: "
                      "ranks must be 1")
    exp = Experiment(
        name=name, index=i, program=program, launcher=launcher, ranks=ranks,
        regimes=_regimes(ck, raw.get("regimes", regimes), kp + ("regimes",), platforms),
        repeats=ck.positive(raw.get("repeats", repeats), kp + ("repeats",), "repeats", int,
                            MAX_REPEATS),
        timeout_s=float(ck.positive(raw.get("timeout_s", timeout), kp + ("timeout_s",),
                                    "timeout_s", float, MAX_TIMEOUT_S)),
        title=ck.scalar(raw.get("title", ""), kp + ("title",), "title", (str,)),
        notes=ck.scalar(raw.get("notes", ""), kp + ("notes",), "notes", (str,)))
    env = raw.get("env", {})
    if not isinstance(env, dict):
        raise ck.fail(kp + ("env",), "'env' must be a table of variables")
    for k, v in env.items():
        if not k or "=" in k or "\0" in k:
            raise ck.fail(kp + ("env", k), f"environment variable name {k!r}: expected a "
                          "non-empty name without '=' or NUL")
        ck.scalar(v, kp + ("env", k), f"env.{k}", (str, int, float))
        ck.no_nul(v, kp + ("env", k), f"env.{k} value")
        exp.env[k] = str(v)
    for table in ("options", "matrix"):
        got = raw.get(table, {})
        if not isinstance(got, dict):
            raise ck.fail(kp + (table,), f"'{table}' must be a table of options")
        for k, v in got.items():
            where = kp + (table, k)
            if k == "json":
                raise ck.fail(where, "option 'json' is set by the lab (one document per run)")
            if not re.fullmatch(OPTION_NAME, k):
                raise ck.fail(where, _option_name_problem(k))
            if table == "options":
                exp.options[k] = ck.scalar(v, where, f"options.{k}")
                ck.no_nul(v, where, f"options.{k}")
            else:
                if not isinstance(v, list) or not v:
                    raise ck.fail(where, f"'matrix.{k}' must be a non-empty array of values, "
                                  f"not {_type_name(v)}")
                exp.matrix[k] = [ck.scalar(x, where, f"matrix.{k}") for x in v]
                for x in v:
                    ck.no_nul(x, where, f"matrix.{k} value")
                ck.once(v, where, f"matrix.{k}")
    dup = set(exp.options) & set(exp.matrix)
    if dup:
        k = min(dup)
        raise ck.fail(kp + ("matrix", k), f"option '{k}' is both in options and in matrix")
    excl = raw.get("exclude", [])
    if not isinstance(excl, list):
        raise ck.fail(kp + ("exclude",), "'exclude' must be an array of tables")
    for j, ex in enumerate(excl):
        if not isinstance(ex, dict) or not ex:
            raise ck.fail(kp + ("exclude",), "each 'exclude' entry must be a non-empty table")
        for k, v in ex.items():
            if k not in exp.matrix and k not in ("ranks", "regime"):
                raise ck.fail(kp + ("exclude", j, k), f"exclude key '{k}' is not a matrix key, "
                              "'ranks' or 'regime'")
            ck.scalar(v, kp + ("exclude", j, k), f"exclude.{k}")
            runs = exp.ranks if k == "ranks" else exp.regimes if k == "regime" else exp.matrix[k]
            if not any(_is_value(v, r) for r in runs):
                raise ck.fail(kp + ("exclude", j, k), f"exclude {k} = {v!r}: experiment {name!r} "
                              f"does not run it (its {k} values: "
                              f"{', '.join(str(r) for r in runs)}), so the exclusion leaves "
                              "nothing out")
        exp.exclude.append(dict(ex))
    if exp.exclude and _run_count(exp) <= MAX_RUNS and not _configurations([exp]):
        raise ck.fail(kp + ("exclude",), f"'exclude' excludes every run of experiment {name!r}; "
                      "expected at least one run left (remove an exclusion, or the experiment)")
    plots = raw.get("plots", [])
    if not isinstance(plots, list):
        raise ck.fail(kp + ("plots",), "'plots' must be an array of plot kinds or tables")
    for j, entry in enumerate(plots):
        pkp = kp + ("plots", j)
        p = {"kind": entry} if isinstance(entry, str) else entry
        if not isinstance(p, dict):
            raise ck.fail(pkp, f"a plot must be a kind ({', '.join(PLOT_KINDS)}) or a table")
        ck.keys(p, dict.fromkeys(PLOT_KEYS), pkp, "a plot", required=("kind",))
        for k, v in p.items():
            ck.scalar(v, pkp + (k,), f"plots.{k}", (str,))
        ck.choice(p["kind"], pkp + ("kind",), "kind", PLOT_KINDS)
        if p["kind"] in ("line", "bars") and "x" not in p:
            raise ck.fail(pkp, f"a '{p['kind']}' plot needs x (ranks or a matrix key)")
        if "series" in p and p["series"] not in exp.matrix:
            raise ck.fail(pkp + ("series",), f"plot series {p['series']!r} is not a matrix key "
                          f"of experiment {name!r}")
        if "x" in p and p["x"] not in ("ranks", *exp.matrix):
            raise ck.fail(pkp + ("x",), f"plot x {p['x']!r} is neither 'ranks' nor a matrix key "
                          f"of experiment {name!r}")
        if "y" in p:
            ck.choice(p["y"], pkp + ("y",), "y", LINE_Y)
            if p["y"] == "speedup" and (p["kind"] == "bars" or p.get("x", "ranks") != "ranks"):
                raise ck.fail(pkp + ("y",), "y = \"speedup\" needs a line plot against ranks")
        exp.plots.append(Plot(**p))
    return exp
