"""Claims of the papers and their verdicts on this machine's results.

A suite's [[claim]] table states one finding of a paper and the check of it,
as data: which experiment, which two configurations (selectors over the
experiment's matrix values, ranks and regime), which metric and statistic
over the successful repeats, the comparison and its threshold, and how many
successful repeats the verdict needs. For example

    [[claim]]
    paper = "000"
    section = "§6.1"
    claim = "With one rank slowed 2x, racy Jacobi reaches the tolerance faster than sync."
    paper-figure = "racy ≤ 0.6x sync's time (32 to 256 cores)"
    experiment = "straggler"
    metric = "time"
    compare = { variant = "racy", slow-factor = 2 }
    against = { variant = "sync", slow-factor = 2 }
    comparison = "ratio <"
    threshold = 1.0
    ranks = "largest"
    min-repeats = 3

Everything is checked when the suite is read (suite.py calls parse_claims),
with the file and line of the offending key: a selector that names no
configuration the suite runs (or more than one), an unknown metric (a
phase the solvers do not time included) or comparison, a metric the
experiment's program does not write, a threshold that is not a positive
number.

Verdicts (evaluate): "reproduced", "not reproduced", "not testable here" (the
claim's own `not-testable` reason, e.g. that it needs more than one node), and
"not enough runs" when either side has fewer successful repeats with a value
than `min-repeats`: then no comparison is made.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from . import results as rs

CLAIM_KEYS = {"paper", "section", "claim", "paper-figure", "experiment", "metric", "statistic",
              "compare", "against", "comparison", "threshold", "ranks", "regime", "min-repeats",
              "not-testable", "plot"}
#: ratio: compare's statistic over against's; value: compare's statistic alone.
#: "ratio within" t: |ratio - 1| <= t (the two are about the same).
COMPARISONS = ("ratio <", "ratio <=", "ratio >", "ratio >=", "ratio within",
               "value <", "value <=", "value >", "value >=")
STATISTICS = ("median", "min", "max")
#: Selector keys besides the experiment's matrix keys and the metric's record fields.
PLACE_KEYS = ("experiment", "ranks", "regime")

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable here"
NOT_ENOUGH = "not enough runs"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, NOT_TESTABLE, NOT_ENOUGH)


@dataclass
class Side:
    """One configuration a claim compares, resolved: the experiment, its rank
    count and regime (None: every regime the claim is checked in), the matrix
    values and the record fields that pick a document's record."""

    experiment: str
    ranks: int
    regime: str | None
    config: dict
    record: dict

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in {**self.config, **self.record}.items()]
        if self.regime is not None:
            parts.append(f"regime={self.regime}")
        return ", ".join(parts) or self.experiment

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Claim:
    paper: str
    section: str
    text: str
    paper_figure: str
    experiment: str
    metric: str
    statistic: str
    comparison: str
    threshold: float
    min_repeats: int
    compare: Side
    against: Side | None
    regimes: list[str]  # the regimes a verdict is given for (one row each)
    not_testable: str = ""
    plot: int | None = None  # 1-based index into the experiment's plots
    line: int | None = None
    index: int = 0

    @property
    def kind(self) -> str:
        return self.comparison.split()[0]

    @property
    def op(self) -> str:
        return self.comparison.split()[1]

    def check_text(self) -> str:
        """The check in words, e.g. "racy/sync time < 1"."""
        what = self.compare.describe()
        if self.against is not None:
            what = f"{what} / {self.against.describe()}"
        if self.op == "within":
            return f"{what}: {self.metric} ratio within 1 ± {self.threshold:g}"
        return f"{what}: {self.metric} {self.kind} {self.op} {self.threshold:g}"

    def check_words(self) -> str:
        """The comparison alone, e.g. "ratio < 1"."""
        return _check_words(self)

    def to_json(self) -> dict:
        return {"paper": self.paper, "section": self.section, "claim": self.text,
                "paper-figure": self.paper_figure, "experiment": self.experiment,
                "metric": self.metric, "statistic": self.statistic,
                "comparison": self.comparison, "threshold": self.threshold,
                "min-repeats": self.min_repeats, "compare": self.compare.to_json(),
                "against": self.against.to_json() if self.against else None,
                "regimes": self.regimes, "not-testable": self.not_testable, "plot": self.plot,
                "line": self.line}

    @staticmethod
    def from_json(data: dict, index: int = 0) -> Claim:
        def side(d):
            return Side(**d) if isinstance(d, dict) else None
        return Claim(paper=str(data["paper"]), section=str(data.get("section", "")),
                     text=str(data["claim"]), paper_figure=str(data.get("paper-figure", "")),
                     experiment=data["experiment"], metric=data["metric"],
                     statistic=data.get("statistic", "median"), comparison=data["comparison"],
                     threshold=float(data["threshold"]),
                     min_repeats=int(data.get("min-repeats", 1)),
                     compare=side(data["compare"]), against=side(data.get("against")),
                     regimes=list(data.get("regimes") or []),
                     not_testable=str(data.get("not-testable") or ""), plot=data.get("plot"),
                     line=data.get("line"), index=index)


# --------------------------------------------------------------------------
# Parsing (suite.py passes its checker, which names the file and line).

def parse_claims(ck, raw, experiments: list, configs: dict[str, list[dict]]) -> list[Claim]:
    """The suite's [[claim]] tables, validated. `configs` holds, per experiment,
    every configuration the suite runs ({"regime", "ranks", **matrix values},
    exclusions applied)."""
    if not isinstance(raw, list):
        raise ck.fail(("claim",), "'claim' must be an array of tables ([[claim]])")
    by_name = {e.name: e for e in experiments}
    return [_parse_claim(ck, c, i, by_name, configs) for i, c in enumerate(raw)]


def _parse_claim(ck, raw, i: int, by_name: dict, configs: dict) -> Claim:
    kp = ("claim", i)
    if not isinstance(raw, dict):
        raise ck.fail(kp, "each claim must be a table ([[claim]])")
    ck.keys(raw, dict.fromkeys(CLAIM_KEYS), kp, f"[[claim]] #{i + 1}",
            required=("paper", "claim", "experiment", "metric", "compare", "comparison",
                      "threshold"))
    paper = ck.scalar(raw["paper"], kp + ("paper",), "paper", (str,))
    text = ck.scalar(raw["claim"], kp + ("claim",), "claim", (str,))
    section = ck.scalar(raw.get("section", ""), kp + ("section",), "section", (str,))
    figure = ck.scalar(raw.get("paper-figure", ""), kp + ("paper-figure",), "paper-figure",
                       (str,))
    name = ck.scalar(raw["experiment"], kp + ("experiment",), "experiment", (str,))
    if name not in by_name:
        raise ck.fail(kp + ("experiment",), f"claim #{i + 1}: no experiment named {name!r} in "
                      f"this suite (experiments: {', '.join(by_name)})")
    exp = by_name[name]
    metric_name = ck.scalar(raw["metric"], kp + ("metric",), "metric", (str,))
    metric = rs.metric(metric_name)
    if metric is None:
        raise ck.fail(kp + ("metric",), f"unknown metric {metric_name!r}; expected one of "
                      f"{', '.join(rs.METRICS)} or phase:NAME with NAME one of "
                      f"{', '.join(rs.PHASE_NAMES)}")
    statistic = ck.choice(raw.get("statistic", "median"), kp + ("statistic",), "statistic",
                          STATISTICS)
    comparison = ck.scalar(raw["comparison"], kp + ("comparison",), "comparison", (str,))
    comparison = " ".join(comparison.split())
    if comparison not in COMPARISONS:
        raise ck.fail(kp + ("comparison",), f"unknown comparison {raw['comparison']!r}; "
                      f"expected one of {', '.join(repr(c) for c in COMPARISONS)}")
    threshold = raw["threshold"]
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
            or not math.isfinite(threshold):
        shown = str(threshold).lower() if isinstance(threshold, bool) else repr(threshold)
        raise ck.fail(kp + ("threshold",), f"threshold {shown}: expected a finite number "
                      "(e.g. 1.0 for 'ratio < 1')")
    if comparison.startswith("ratio") and not threshold > 0:
        raise ck.fail(kp + ("threshold",), f"threshold {threshold}: a ratio's threshold must be "
                      "positive")
    min_repeats = ck.positive(raw.get("min-repeats", exp.repeats), kp + ("min-repeats",),
                              "min-repeats")
    ranks_rule = raw.get("ranks", "largest")
    regime_rule = raw.get("regime")
    compare = _side(ck, raw["compare"], kp + ("compare",), exp, by_name, configs, metric,
                    ranks_rule, regime_rule, kp)
    against = None
    if comparison.startswith("ratio"):
        if "against" not in raw:
            raise ck.fail(kp, f"claim #{i + 1}: comparison {comparison!r} needs 'against' (the "
                          "configuration the ratio divides by)")
        against = _side(ck, raw["against"], kp + ("against",), exp, by_name, configs, metric,
                        ranks_rule, regime_rule, kp)
        if against == compare:
            raise ck.fail(kp + ("against",), f"claim #{i + 1}: 'compare' and 'against' select "
                          f"the same configuration ({compare.describe()}): its ratio is 1 by "
                          "construction; expected two different configurations")
    elif "against" in raw:
        raise ck.fail(kp + ("against",), f"claim #{i + 1}: comparison {comparison!r} compares "
                      "one configuration with the threshold; 'against' is for 'ratio ...'")
    for side, key in ((compare, "compare"), (against, "against")):
        if side is not None:
            need = by_name[side.experiment].repeats
            if min_repeats > need:
                raise ck.fail(kp + ("min-repeats",), f"min-repeats = {min_repeats} but "
                              f"experiment '{side.experiment}' ({key}) runs {need} repeats")
    regimes = _regimes_of(compare, against, by_name)
    not_testable = ck.scalar(raw.get("not-testable", ""), kp + ("not-testable",),
                             "not-testable", (str,))
    if "not-testable" in raw and not not_testable.strip():
        raise ck.fail(kp + ("not-testable",), "not-testable is empty: expected the reason the "
                      "claim cannot be tested here (or no not-testable key)")
    plot = raw.get("plot")
    if plot is not None:
        ck.positive(plot, kp + ("plot",), "plot")
        if plot > len(exp.plots):
            raise ck.fail(kp + ("plot",), f"plot = {plot}: experiment {name!r} has "
                          f"{len(exp.plots)} plots")
    if not text.strip():
        raise ck.fail(kp + ("claim",), "the claim's sentence is empty")
    return Claim(paper=paper, section=section, text=text, paper_figure=figure, experiment=name,
                 metric=metric_name, statistic=statistic, comparison=comparison,
                 threshold=float(threshold), min_repeats=min_repeats, compare=compare,
                 against=against, regimes=regimes, not_testable=not_testable, plot=plot,
                 line=ck.locator.line_of(kp), index=i)


def _side(ck, raw, kp: tuple, exp, by_name: dict, configs: dict, metric: rs.Metric,
          ranks_rule, regime_rule, claim_kp: tuple) -> Side:
    """A selector, resolved against the configurations the suite runs: it must
    name exactly one of them (per regime)."""
    if not isinstance(raw, dict):
        raise ck.fail(kp, f"'{kp[-1]}' must be a table of matrix values, e.g. "
                      "{ variant = \"racy\" }")
    name = raw.get("experiment", exp.name)
    if name not in by_name:
        raise ck.fail(kp + ("experiment",), f"no experiment named {name!r} in this suite")
    e = by_name[name]
    writes = rs.PROGRAM_SCHEMAS.get(e.program)
    if writes is not None and writes != metric.schema:
        raise ck.fail(claim_kp + ("metric",), f"metric {metric.name!r} is read from "
                      f"{metric.schema} documents, but experiment {name!r} runs "
                      f"'{e.program}', which writes {writes}; expected a metric of its "
                      "documents")
    for k, v in raw.items():
        if k not in e.matrix and k not in PLACE_KEYS and k not in metric.fields:
            known = [*e.matrix, *PLACE_KEYS, *metric.fields]
            raise ck.fail(kp + (k,), f"'{k}' is not a matrix key of experiment {name!r}, nor a "
                          f"record field of metric {metric.name!r} (expected one of "
                          f"{', '.join(known)})")
        ck.scalar(v, kp + (k,), f"{kp[-1]}.{k}")
        if k in e.matrix and not any(rs._same(v, m) for m in e.matrix[k]):
            raise ck.fail(kp + (k,), f"{k} = {v!r}: experiment {name!r} does not run it "
                          f"(its {k} values: {', '.join(str(m) for m in e.matrix[k])})")
    ranks = raw.get("ranks", ranks_rule)
    where = kp + ("ranks",) if "ranks" in raw else claim_kp + ("ranks",)
    if ranks == "largest":
        ranks = max(e.ranks)
    elif ranks == "smallest":
        ranks = min(e.ranks)
    elif isinstance(ranks, bool) or not isinstance(ranks, int):
        raise ck.fail(where, f"ranks = {ranks!r}: expected \"largest\", \"smallest\" or a rank "
                      "count of the experiment")
    if ranks not in e.ranks:
        raise ck.fail(where, f"ranks = {ranks}: experiment {name!r} runs "
                      f"{', '.join(map(str, e.ranks))} ranks")
    regime = raw.get("regime", regime_rule)
    if regime is not None:
        where = kp + ("regime",) if "regime" in raw else claim_kp + ("regime",)
        ck.scalar(regime, where, "regime", (str,))
        if regime not in e.regimes:
            raise ck.fail(where, f"regime {regime!r}: experiment {name!r} runs "
                          f"{', '.join(e.regimes)}")
    config = {k: v for k, v in raw.items() if k in e.matrix}
    record = {k: v for k, v in raw.items() if k in metric.fields}
    for reg in [regime] if regime is not None else e.regimes:
        hits = [c for c in configs[name] if c["regime"] == reg and c["ranks"] == ranks
                and all(rs._same(c.get(k), v) for k, v in config.items())]
        shown = ", ".join(f"{k}={v}" for k, v in config.items()) or "(no matrix values)"
        if not hits:
            raise ck.fail(kp, f"{shown} at {ranks} ranks in regime {reg}: the suite does not run "
                          f"this configuration of experiment {name!r}")
        if len(hits) > 1:
            free = [k for k in e.matrix if k not in config]
            raise ck.fail(kp, f"{shown} at {ranks} ranks names {len(hits)} configurations of "
                          f"experiment {name!r}; name one value of {', '.join(free)}")
    return Side(experiment=name, ranks=ranks, regime=regime, config=config, record=record)


def _regimes_of(compare: Side, against: Side | None, by_name: dict) -> list[str]:
    """The regimes a claim gets a verdict in: one when a side names it, else every
    regime both experiments run."""
    if compare.regime is not None or (against is not None and against.regime is not None):
        return [compare.regime or against.regime]
    out = list(by_name[compare.experiment].regimes)
    if against is not None:
        out = [r for r in out if r in by_name[against.experiment].regimes]
    return out


# --------------------------------------------------------------------------
# Evaluation.

@dataclass
class Measured:
    """One side's values over its successful repeats."""

    values: list[float] = field(default_factory=list)
    runs: int = 0  # runs of the configuration, successful or not
    ok: int = 0  # successful runs

    def stat(self, statistic: str) -> float | None:
        if not self.values:
            return None
        return {"median": statistics.median, "min": min, "max": max}[statistic](self.values)


@dataclass
class Verdict:
    claim: Claim
    regime: str
    verdict: str
    compare: Measured
    against: Measured | None
    figure: float | None  # the ratio (or value) the check compared
    reason: str = ""  # why not testable / not enough runs

    def figure_text(self) -> str:
        """This machine's figure: the statistic of each side with its spread, and the ratio."""
        c = self.claim

        def side(m: Measured) -> str:
            s = m.stat(c.statistic)
            if s is None:
                return f"no value ({m.ok} of {m.runs} runs ok)"
            spread = ""
            if len(m.values) > 1 and min(m.values) != max(m.values):
                spread = f" ({_num(min(m.values))}–{_num(max(m.values))})"
            return f"{_num(s)}{spread}, n={len(m.values)}"
        if self.against is None:
            return f"{c.metric} {c.statistic} {side(self.compare)}"
        text = f"{side(self.compare)} / {side(self.against)}"
        if self.figure is not None:
            text = f"ratio {self.figure:.3g}: " + text
        return text

    def sentence(self) -> str:
        """The verdict as a plain sentence (what `make demo` ends with)."""
        c = self.claim
        where = f"paper {c.paper}" + (f" {c.section}" if c.section else "")
        place = f"{self.regime}, {c.compare.ranks} rank{'s' if c.compare.ranks != 1 else ''}"
        if self.verdict == NOT_TESTABLE:
            tail = f"not testable here: {self.reason}"
        elif self.verdict == NOT_ENOUGH:
            tail = f"not enough runs: {self.reason}"
        else:
            what = "ratio" if self.against is not None else c.metric
            tail = (f"{self.verdict}: {what} {self.figure:.3g} ({c.statistic} over the repeats; "
                    f"the check: {_check_words(c)})")
        return f"{where}, \"{c.text}\" ({place}): {tail}."


def _num(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.3g}"
    return f"{v:.4g}"


def _check_words(c: Claim) -> str:
    if c.op == "within":
        return f"ratio within 1 ± {c.threshold:g}"
    return f"{c.kind} {c.op} {c.threshold:g}"


def _passes(c: Claim, x: float) -> bool:
    t = c.threshold
    return {"<": x < t, "<=": x <= t, ">": x > t, ">=": x >= t,
            "within": abs(x - 1.0) <= t}[c.op]


def _measure(res: rs.Results, side: Side, regime: str, metric: rs.Metric) -> Measured:
    m = Measured()
    for r in res.of(side.experiment):
        if r.regime != (side.regime or regime) or r.ranks != side.ranks:
            continue
        if not all(rs._same(r.config.get(k), v) for k, v in side.config.items()):
            continue
        m.runs += 1
        if not r.ok:
            continue
        m.ok += 1
        v = metric.value(r.doc, side.record)
        if v is not None:
            m.values.append(float(v))
    return m


def evaluate(claim: Claim, res: rs.Results) -> list[Verdict]:
    """A verdict for each regime the claim is checked in."""
    metric = rs.metric(claim.metric)
    out = []
    for regime in claim.regimes:
        try:
            comp = _measure(res, claim.compare, regime, metric)
            agst = _measure(res, claim.against, regime, metric) if claim.against else None
        except rs.AmbiguousRecord as err:
            out.append(Verdict(claim, regime, NOT_TESTABLE, Measured(), None, None,
                               f"the claim's selector is ambiguous: {err}"))
            continue
        cs = comp.stat(claim.statistic)
        ags = agst.stat(claim.statistic) if agst is not None else None
        figure = None
        if cs is not None and (agst is None or (ags is not None and ags != 0)):
            figure = cs / ags if agst is not None else cs
        v = Verdict(claim, regime, "", comp, agst, figure)
        short = [(name, m) for name, m in (("compare", comp), ("against", agst))
                 if m is not None and len(m.values) < claim.min_repeats]
        if claim.not_testable:
            v.verdict, v.reason = NOT_TESTABLE, claim.not_testable
        elif short:
            v.verdict = NOT_ENOUGH
            v.reason = "; ".join(
                f"{getattr(claim, name).describe()} has {len(m.values)} successful "
                f"run{'s' if len(m.values) != 1 else ''} with a value ({m.ok} ok of {m.runs}), "
                f"the claim needs {claim.min_repeats}" for name, m in short)
        elif figure is None:
            v.verdict, v.reason = NOT_ENOUGH, "the configuration it divides by measured 0"
        else:
            v.verdict = REPRODUCED if _passes(claim, figure) else NOT_REPRODUCED
        out.append(v)
    return out


def evaluate_all(res: rs.Results) -> list[Verdict]:
    """Every claim of the results folder's suite (suite.json), in suite order."""
    raw = (res.suite or {}).get("claims") or []
    out = []
    for i, data in enumerate(raw):
        out += evaluate(Claim.from_json(data, i), res)
    return out
