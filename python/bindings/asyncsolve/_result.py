"""What a solve returns."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np

from . import _core


def _number(value: Any) -> float:
    """A number of the document: JSON has no NaN or infinity, so the document
    holds null where a breakdown made one; that is NaN here."""
    return float("nan") if value is None else float(value)


class Result:
    """The outcome of a solve, the same on every rank except ``x`` and ``rows``.

    ``x`` holds this rank's entries of the solution (their indices in the
    matrix's numbering are ``rows``), or the whole solution on every rank
    when the solve was asked to gather it (then ``rows`` is 0..n-1).
    ``document`` is the result document of ``asyncsolve solve`` for this
    solve (schema ``asyncsolve.result/1``); ``to_dict()`` is its ``result``
    part.
    """

    def __init__(self, document: str, x: np.ndarray, rows: np.ndarray) -> None:
        self.document: dict[str, Any] = json.loads(document)
        self.x = x
        self.rows = rows

    def to_dict(self) -> dict[str, Any]:
        """The ``result`` object of the command's JSON document (a copy)."""
        return copy.deepcopy(self.document["result"])

    @property
    def converged(self) -> bool:
        """True when the true residual met the tolerance (every repeat's, with repeat_solve)."""
        result = self.document["result"]
        repeats = result.get("repeat_solves", {}).get("converged", [])
        return bool(result["converged"]) and all(repeats)

    @property
    def reason(self) -> str:
        """Why the solve stopped: tolerance, max_iters, max_time, breakdown, ..."""
        return str(self.document["result"]["reason"])

    @property
    def detail(self) -> str:
        """What broke down, and at which iteration ("" otherwise)."""
        return str(self.document["result"]["detail"])

    @property
    def iterations(self) -> int:
        """Iterations of the busiest rank."""
        return int(self.document["result"]["iterations"]["max"])

    @property
    def time_s(self) -> float:
        """Seconds of the solve (maximum over ranks; setup excluded)."""
        return float(self.document["result"]["time_s"])

    @property
    def true_residual(self) -> float:
        """||b - A x|| / ||b||, measured after the solve (NaN where it is not a number)."""
        return _number(self.document["result"]["true_residual"])

    @property
    def residual_estimate(self) -> float:
        """The relative residual the stopping test used (NaN where it is not a number)."""
        return _number(self.document["result"]["residual_estimate"])

    @property
    def history(self) -> list[dict[str, Any]]:
        """Every residual check: rank, iteration, time_s, residual."""
        return list(self.document["history"])

    @property
    def residuals(self) -> np.ndarray:
        """The residual history of rank 0, one value per check."""
        return np.array([h["residual"] for h in self.document["history"] if h["rank"] == 0])

    @property
    def phases(self) -> dict[str, float]:
        """Seconds per phase (maximum over ranks)."""
        return {name: float(v["max"]) for name, v in self.document["phases"].items()}

    def __repr__(self) -> str:
        return (
            f"Result(converged={self.converged}, reason={self.reason!r}, "
            f"iterations={self.iterations}, true_residual={self.true_residual:.3e}, "
            f"time_s={self.time_s:.4f})"
        )


class NotConverged(_core.Error):
    """The solve did not converge or broke down (the command's exit code 3).

    Raised on every rank alike; ``result`` is the solve's Result.
    """

    def __init__(self, result: Result) -> None:
        detail = f": {result.detail}" if result.detail else ""
        super().__init__(
            f"not converged ({result.reason}) after {result.iterations} iterations, true "
            f"residual {result.true_residual:.3e}{detail}"
        )
        self.result = result
