"""asyncsolve-lab: run experiment suites of asyncsolve and report on them.

The lab reads only JSON documents: the binary's own result documents
(asyncsolve.result/1 and the benchmarks' schemas) and its own sidecars
(asyncsolve.lab.run/1) and suite summaries (asyncsolve.lab.suite/1).
"""

import json
import math

__version__ = "0.1.0"

#: The sidecar the lab writes beside every run's document.
RUN_SCHEMA = "asyncsolve.lab.run/1"
#: The normalised suite the lab writes into a results folder.
SUITE_SCHEMA = "asyncsolve.lab.suite/1"

#: Document schemas this lab reads: name -> the one version it understands.
DOCUMENT_SCHEMAS = {
    "asyncsolve.result": 1,
    "asyncsolve.bench.allreduce": 1,
    "asyncsolve.bench.hybrid_mvm": 1,
    "asyncsolve.bench.beff": 1,
    "asyncsolve.model.hybrid": 1,
    "asyncsolve.bench.stencil2d": 1,
}

#: The sections a document of each schema must have, each an object or an
#: array (a tuple: any one of them): what its program always writes and the
#: report reads. A document without them is no result, however valid its schema.
DOCUMENT_SECTIONS = {
    "asyncsolve.result": [("result",)],
    "asyncsolve.bench.allreduce": [("latency", "overlap", "noise")],
    "asyncsolve.bench.hybrid_mvm": [("records",)],
    "asyncsolve.bench.beff": [("measurements",)],
    "asyncsolve.model.hybrid": [("quantities", "fit")],
    "asyncsolve.bench.stencil2d": [("results",)],
}


class LabError(Exception):
    """Bad input (suite file, results folder, arguments): exit code 2."""

    exit_code = 2


class SchemaError(LabError):
    """A document whose schema this lab does not read."""


def check_schema(schema: object, where: str, allowed: dict[str, int] | None = None) -> str:
    """Return the schema name if `schema` is one this lab reads, else raise SchemaError."""
    allowed = DOCUMENT_SCHEMAS if allowed is None else allowed
    if schema is None:
        raise SchemaError(f"{where}: no schema field (\"name/version\"); "
                          "not an asyncsolve document")
    if not isinstance(schema, str) or "/" not in schema:
        raise SchemaError(f"{where}: schema {json.dumps(schema)[:80]}: expected \"name/version\" "
                          "(e.g. asyncsolve.result/1); not an asyncsolve document")
    name, _, version = schema.rpartition("/")
    if name not in allowed:
        known = ", ".join(f"{n}/{v}" for n, v in sorted(allowed.items()))
        raise SchemaError(f"{where}: unknown schema {schema!r} (this lab reads {known})")
    if version != str(allowed[name]):
        raise SchemaError(
            f"{where}: schema {schema} is incompatible: this lab reads {name}/{allowed[name]}; "
            "rerun the suite with a matching asyncsolve, or use an asyncsolve-lab that reads it")
    return name


# Stop reasons the program writes only with converged false ("tolerance" only
# with true; Lanczos's "invariant_subspace" with either).
_NOT_CONVERGED_REASONS = frozenset(
    {"max_iters", "max_time", "final_sync", "breakdown", "unconfirmed", "diverged"})
# Every result.reason the program writes (Lanczos: also invariant_subspace).
_REASONS = _NOT_CONVERGED_REASONS | {"tolerance", "invariant_subspace"}


#: The solver options a result document's method section holds as given: the
#: option, and its field in the method section.
_ECHOED_OPTIONS = {"method": "name", "variant": "variant", "transport": "transport"}


def _option_given(command: object, option: str) -> str | None:
    """The value of --OPTION in a document's command line, or None."""
    if not isinstance(command, list):
        return None
    for k, word in enumerate(command):
        if word == f"--{option}" and k + 1 < len(command) and isinstance(command[k + 1], str):
            return command[k + 1]
        if isinstance(word, str) and word.startswith(f"--{option}="):
            return word.partition("=")[2]
    return None


def _impossible_method(doc: dict, sidecar: dict | None = None) -> str | None:
    """A result document whose method section contradicts its own command line or
    the options its run's `sidecar` records (method.name, variant or transport
    other than the --method, --variant or --transport given), or whose converged
    verdict contradicts its true residual and tolerance (converged means the true
    residual met --tol), or None."""
    method = doc.get("method")
    if not isinstance(method, dict):
        return None
    lab_gave: dict = {}
    for key in ("config", "options"):  # the options the lab gave the run
        if isinstance(sidecar, dict) and isinstance(sidecar.get(key), dict):
            lab_gave |= sidecar[key]
    for option, key in _ECHOED_OPTIONS.items():
        value = method.get(key)
        given = _option_given(doc.get("command"), option)
        if isinstance(value, str) and given is not None and value != given:
            return f"method.{key} {json.dumps(value)} for a run of --{option} {given}"
        if isinstance(value, str) and option in lab_gave and value != str(lab_gave[option]):
            return (f"method.{key} {json.dumps(value)} for a run of --{option} "
                    f"{lab_gave[option]} (its .lab.json)")
    name = method.get("name")
    result = doc.get("result")
    tol = method.get("tol")
    truth = result.get("true_residual") if isinstance(result, dict) else None
    if not (isinstance(result, dict) and result.get("converged") is True):
        return None
    truth_is_number = isinstance(truth, int | float) and not isinstance(truth, bool)
    # Every method but Lanczos confirms convergence on the true residual, which
    # the document then holds.
    if name != "lanczos" and not truth_is_number:
        return (f"result.converged true with a true residual {json.dumps(truth)} (the "
                "residual that decides convergence)")
    if isinstance(tol, int | float) and truth_is_number and truth >= tol:
        return f"result.converged true with a true residual {truth} not below --tol {tol}"
    return None


def _impossible_result(result: dict, wall_s: float | None = None,
                       ranks: int | None = None) -> str | None:
    """What in a result section no run of the program can write (a time that is not
    a finite number >= 0, or longer than the run's own wall time `wall_s` where it is
    known; iterations that are not an object, or a count in it that is not a number
    >= 0; per-rank counts that are not whole numbers >= 0, or not one per rank of the
    run's `ranks`; min > mean or mean > max; a residual or error that is not a finite
    number >= 0; a converged that is not true or false, absent included; a reason
    the program does not write), or None. Other fields absent or null are left to
    the extractors."""
    def number(value):
        return isinstance(value, int | float) and not isinstance(value, bool)
    time = result.get("time_s")
    if time is not None and not number(time):
        return f"result.time_s {json.dumps(time)} (not a number)"
    if number(time) and not (math.isfinite(time) and time >= 0):
        return f"result.time_s {time}"
    # The solve runs inside the process the lab timed (wall_s, rounded to the
    # millisecond), so its time cannot be longer.
    if number(time) and wall_s is not None and time > 1.01 * wall_s + 0.01:
        return f"result.time_s {time}, longer than the whole run ({wall_s} s)"
    # Norms the program measures: never negative, and never infinite or NaN in a
    # document (JSON has neither; the program writes null).
    for key in ("true_residual", "scaled_true_residual", "residual_estimate", "error_inf"):
        value = result.get(key)
        if value is not None and not number(value):
            return f"result.{key} {json.dumps(value)[:80]} (not a number)"
        if number(value) and not (math.isfinite(value) and value >= 0):
            return f"result.{key} {value} (not a norm)"
    converged = result.get("converged")
    if converged is not None and not isinstance(converged, bool):
        return f"result.converged {json.dumps(converged)[:80]} (not true or false)"
    reason = result.get("reason")
    if isinstance(converged, bool) and (
            (reason == "tolerance" and not converged)
            or (reason in _NOT_CONVERGED_REASONS and converged)):
        return f"result.converged {json.dumps(converged)} with reason {json.dumps(reason)}"
    iterations = result.get("iterations")
    if iterations is not None and not isinstance(iterations, dict):
        return (f"result.iterations {json.dumps(iterations)} (not an object of min, mean, max "
                "and per_rank)")
    if isinstance(iterations, dict):
        for key in ("per_rank", "per_thread"):
            counts = iterations.get(key)
            if counts is None:
                continue
            if not isinstance(counts, list):
                return f"result.iterations.{key} {json.dumps(counts)} (not a list of counts)"
            for v in counts:
                if not number(v) or not (math.isfinite(v) and v >= 0 and float(v).is_integer()):
                    return f"result.iterations.{key} holds {json.dumps(v)} (not a count)"
            if (key == "per_rank" and isinstance(ranks, int) and not isinstance(ranks, bool)
                    and len(counts) != ranks):
                return (f"result.iterations.per_rank holds {len(counts)} counts for a run of "
                        f"{ranks} ranks")
        stats = {k: iterations.get(k) for k in ("min", "mean", "max")}
        for k, v in stats.items():
            if v is not None and not number(v):
                return f"result.iterations.{k} {json.dumps(v)} (not a number)"
            if number(v) and not (math.isfinite(v) and v >= 0):
                return f"result.iterations.{k} {v}"
        known = [stats[k] for k in ("min", "mean", "max") if number(stats[k])]
        if known != sorted(known):
            return (f"result.iterations min {stats['min']}, mean {stats['mean']}, "
                    f"max {stats['max']} (not in order)")
    # Every run writes its verdict and why (a report counted a run without them as ok).
    if converged is None:
        return f"result.converged {json.dumps(converged)} (not true or false)"
    if reason not in _REASONS:
        return (f"result.reason {json.dumps(reason)[:80]} (expected one of "
                f"{', '.join(sorted(_REASONS))})")
    return None


def _count(value: object, least: int = 0) -> bool:
    """A JSON integer (not a bool) of at least `least`."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _seconds(value: object) -> bool:
    """A finite JSON number >= 0 (not a bool)."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def _is(*types: type):
    return lambda value: isinstance(value, types)


def _bad_field(holder: dict, key: str, name: str, ok, what: str,
               required: bool = True) -> str | None:
    """`name`, its value and what a run writes there, where `holder` lacks `key`
    (and every document has it) or holds a value that fails `ok`; else None."""
    if key not in holder:
        return f"{name} absent (not {what})" if required else None
    return None if ok(holder[key]) else f"{name} {json.dumps(holder[key])[:80]} (not {what})"


#: What the lab reads of a result document, each as (field, whether every document
#: has it, the test of its value, what the program writes): the header and the
#: environment (the report's environment line, reproduce's provenance, the per-rank
#: checks), the method (its checks), the result's time and iterations (the tables,
#: the histograms), the phases (the phase tables and claims) and the history (the
#: convergence plots). The result's other values are checked by _impossible_result.
_RESULT_FIELDS = (
    ("git", False, _is(str), "a string"),
    ("started", False, _is(str), "a string"),
    ("command", False, lambda v: isinstance(v, list) and all(isinstance(w, str) for w in v),
     "a list of strings"),
    ("environment", True, _is(dict), "an object of the run's ranks, host, MPI library and cores"),
    ("method", True, _is(dict), "an object of the solver's options"),
    ("phases", True, _is(dict), "an object of each phase's max, mean and min seconds"),
    ("history", True, _is(list), "a list of residual checks"),
)
_ENVIRONMENT_FIELDS = (
    ("ranks", True, lambda v: _count(v, 1), "a number of ranks, at least 1"),
    ("cores", False, lambda v: _count(v, 1), "a number of cores, at least 1"),
    ("mpi_library", False, _is(str), "a string"),
    ("hostname", False, _is(str), "a string"),
    ("cpu_model", False, _is(str, type(None)), "a string or null"),
)
_METHOD_FIELDS = (
    ("name", True, _is(str), "a string"),
    ("variant", False, _is(str), "a string"),
    ("transport", False, _is(str), "a string"),
    ("tol", False, lambda v: _seconds(v) and v > 0, "a tolerance, a finite number > 0"),
)
_NUMBER = (lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number")
_RESULT_SECTION_FIELDS = (
    ("time_s", True, *_NUMBER),
    ("iterations", True, _is(dict), "an object of min, mean, max and per_rank"),
)
_ITERATION_FIELDS = (
    ("min", True, *_NUMBER), ("mean", True, *_NUMBER), ("max", True, *_NUMBER),
    ("per_rank", True, _is(list), "a list of counts"),
)


def _history_fields(ranks: int) -> tuple:
    """The fields of one residual check of the history of a run of `ranks` ranks."""
    residual = (lambda v: v is None or _seconds(v), "a residual: a finite number >= 0 or null")
    return (("rank", True, lambda v: _count(v) and v < ranks, f"a rank of the run's {ranks}"),
            ("iteration", True, _count, "an iteration count: a whole number >= 0"),
            ("time_s", True, _seconds, "seconds: a finite number >= 0"),
            ("residual", True, *residual), ("local_residual", False, *residual),
            ("thread", False, _count, "a thread: a whole number >= 0"))


def _impossible_fields(doc: dict, sidecar: dict | None) -> str | None:
    """The first field of a result document (besides what _impossible_result and
    _impossible_method check) that no run of the program writes: absent where every
    run writes it, or not of its shape (_RESULT_FIELDS); or a rank count other than
    its `sidecar`'s, by which the report groups it; else None. Every field the report
    reads is checked here, so none drops out of a table or plot unsaid."""
    # In this order, each holder is an object once the checks before it passed.
    for path, fields in (((), _RESULT_FIELDS), (("environment",), _ENVIRONMENT_FIELDS),
                         (("method",), _METHOD_FIELDS), (("result",), _RESULT_SECTION_FIELDS),
                         (("result", "iterations"), _ITERATION_FIELDS)):
        holder = doc
        for step in path:
            holder = holder[step]
        for key, required, ok, what in fields:
            name = ".".join((*path, key))
            if bad := _bad_field(holder, key, name, ok, what, required):
                return bad
    ranks = doc["environment"]["ranks"]
    run_ranks = sidecar.get("ranks") if isinstance(sidecar, dict) else None
    if _count(run_ranks, 1) and ranks != run_ranks:
        return (f"environment.ranks {ranks} for a run of {run_ranks} rank"
                f"{'' if run_ranks == 1 else 's'} (its .lab.json)")
    for key, stats in doc["phases"].items():
        phase = json.dumps(key)[1:-1][:80]  # on one line, however it is spelled
        if not isinstance(stats, dict):
            return (f"phases.{phase} {json.dumps(stats)[:80]} (not an object of its max, mean "
                    "and min seconds)")
        for stat in ("max", "mean", "min"):
            if bad := _bad_field(stats, stat, f"phases.{phase}.{stat}", _seconds,
                                 "seconds: a finite number >= 0"):
                return bad
    fields = _history_fields(ranks)
    for k, check in enumerate(doc["history"]):
        if not isinstance(check, dict):
            return (f"history[{k}] {json.dumps(check)[:80]} (not an object of rank, iteration, "
                    "time_s and residual)")
        for key, required, ok, what in fields:
            if bad := _bad_field(check, key, f"history[{k}].{key}", ok, what, required):
                return bad
    return None


def check_document(doc: dict, where: str, wall_s: float | None = None,
                   sidecar: dict | None = None) -> str:
    """Return the schema name of `doc` if this lab reads it and it has the
    sections of its schema (DOCUMENT_SECTIONS), with values a run of the program
    can write (in a run that took `wall_s` seconds, else its `sidecar`'s wall_s,
    where known) and, where the run's `sidecar` is given, the configuration that
    sidecar records; else raise SchemaError."""
    name = check_schema(doc.get("schema"), where)
    for section in DOCUMENT_SECTIONS.get(name, []):
        if not any(isinstance(doc.get(s), dict | list) for s in section):
            raise SchemaError(f"{where}: a {name} document without its "
                              f"{' or '.join(repr(s) for s in section)} section: not a result of "
                              "the program (cut short or edited?); rerun the run (delete the "
                              "document, then asyncsolve-lab run), or remove its .lab.json")
    environment = doc.get("environment")
    ranks = environment.get("ranks") if isinstance(environment, dict) else None
    bad = None
    if name == "asyncsolve.result":
        result = doc["result"]
        run_wall = sidecar.get("wall_s") if isinstance(sidecar, dict) else None
        if wall_s is None and _seconds(run_wall):
            wall_s = run_wall
        bad = (f"result {json.dumps(result)[:80]} (not an object)"
               if not isinstance(result, dict)
               else _impossible_result(result, wall_s, ranks)
               or _impossible_method(doc, sidecar) or _impossible_fields(doc, sidecar))
    if bad is not None:
        raise SchemaError(f"{where}: {bad}: not a value the program writes (edited?); rerun "
                          "the run (delete the document, then asyncsolve-lab run), or remove "
                          "its .lab.json")
    return name
