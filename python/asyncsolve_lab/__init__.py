"""asyncsolve-lab: run experiment suites of asyncsolve and report on them.

The lab reads only JSON documents: the binary's own result documents
(asyncsolve.result/1 and the benchmarks' schemas) and its own sidecars
(asyncsolve.lab.run/1) and suite summaries (asyncsolve.lab.suite/1).
"""

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


class LabError(Exception):
    """Bad input (suite file, results folder, arguments): exit code 2."""

    exit_code = 2


class SchemaError(LabError):
    """A document whose schema this lab does not read."""


def check_schema(schema: object, where: str, allowed: dict[str, int] | None = None) -> str:
    """Return the schema name if `schema` is one this lab reads, else raise SchemaError."""
    allowed = DOCUMENT_SCHEMAS if allowed is None else allowed
    if not isinstance(schema, str) or "/" not in schema:
        raise SchemaError(f"{where}: no schema field (\"name/version\"); "
                          "not an asyncsolve document")
    name, _, version = schema.rpartition("/")
    if name not in allowed:
        known = ", ".join(f"{n}/{v}" for n, v in sorted(allowed.items()))
        raise SchemaError(f"{where}: unknown schema {schema!r} (this lab reads {known})")
    if version != str(allowed[name]):
        raise SchemaError(
            f"{where}: schema {schema} is incompatible: this lab reads {name}/{allowed[name]}; "
            "rerun the suite with a matching asyncsolve, or use an asyncsolve-lab that reads it")
    return name
