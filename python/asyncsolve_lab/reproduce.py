"""`asyncsolve-lab reproduce PAGE.md RESULTS...`: the generated parts of a
Markdown page (docs/REPRODUCTION.md) written from results folders, so that
the page's verdicts are those of the runs and cannot go stale unnoticed.

The page marks what is generated; everything else in it is left byte for
byte as it is:

    <!-- reproduce: SUITE -->            the claims of suite SUITE: one row per
    ...                                  verdict (what `report`'s Findings table
    <!-- /reproduce: SUITE -->           says) and a line on when, by which
                                         commit and where the runs were made

    <!-- reproduce-summary -->           one row per verdict of every suite
    ...                                  marked on the page, in page order
    <!-- /reproduce-summary -->

Each results folder replaces its own suite's part (its suite.json names the
suite); parts of suites no folder is given for are left as they are, and the
summary is written only when every suite marked on the page has a folder
(it would otherwise drop their rows). The verdicts and figures are
claims.evaluate_all's and report.findings', nothing is recomputed here; the
generated text depends only on the folders (no date of writing), so that
`--check` can compare it with the page.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import LabError, claims, report
from . import results as rs
from .files import write_atomic

#: A marker line: <!-- reproduce: NAME -->, <!-- /reproduce: NAME -->,
#: <!-- reproduce-summary --> or <!-- /reproduce-summary -->.
MARKER = re.compile(r"^<!-- (?P<close>/?)reproduce(?:: (?P<name>[A-Za-z0-9._+-]+)|"
                    r"(?P<summary>-summary)) -->[ \t]*$")
#: Anything that looks like a marker: a line that does not match MARKER but
#: starts like one is refused, not silently taken for text.
LOOKS_LIKE = re.compile(r"^<!--\s*/?\s*reproduce")
SUMMARY = None  # the summary part's name in Block.name

MAX_PAGE_BYTES = 16 << 20


@dataclass
class Block:
    """A generated part of the page: `page[start:end]` lies between its marker lines."""

    name: str | None  # the suite; None for the summary
    line: int  # the opening marker's line (1-based)
    start: int
    end: int

    @property
    def label(self) -> str:
        return "summary" if self.name is SUMMARY else self.name


@dataclass
class Outcome:
    page: Path
    text: str  # the page as it is
    new: str  # the page with the generated parts rewritten
    written: list[str]  # the parts generated (labels, page order)
    stale: list[tuple[str, int]]  # the parts whose text differs: (label, lines that differ)
    left: list[str]  # the parts no folder was given for, left as they are


def read_page(page: Path) -> str:
    raw = rs.read_limited(page, MAX_PAGE_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise LabError(f"{page}: not UTF-8 text (byte {err.start})") from None


def find_blocks(page: Path, text: str) -> list[Block]:
    """The page's generated parts, in page order; LabError (naming the line)
    for a marker without its closing one, nested or repeated markers, or a
    line that starts like a marker and is not one."""
    blocks: list[Block] = []
    opened: tuple[str | None, int, int] | None = None  # name, line, start
    offset = 0
    seen: set[str | None] = set()
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        bare = line.rstrip("\r\n")
        m = MARKER.match(bare)
        if m is None and LOOKS_LIKE.match(bare):
            raise LabError(f"{page}:{number}: not a marker: {bare.strip()!r} (expected "
                           "'<!-- reproduce: SUITE -->', '<!-- /reproduce: SUITE -->', "
                           "'<!-- reproduce-summary -->' or '<!-- /reproduce-summary -->')")
        if m is not None:
            name = SUMMARY if m["summary"] else m["name"]
            label = "reproduce-summary" if name is SUMMARY else f"reproduce: {name}"
            if not m["close"]:
                if opened is not None:
                    raise LabError(f"{page}:{number}: <!-- {label} --> inside the part opened "
                                   f"on line {opened[1]}, which is not closed")
                if name in seen:
                    raise LabError(f"{page}:{number}: a second <!-- {label} --> marker")
                seen.add(name)
                opened = (name, number, offset + len(line))
            else:
                if opened is None or opened[0] != name:
                    raise LabError(f"{page}:{number}: <!-- /{label} --> closes no "
                                   f"<!-- {label} --> part")
                blocks.append(Block(name=name, line=opened[1], start=opened[2], end=offset))
                opened = None
        offset += len(line)
    if opened is not None:
        label = "reproduce-summary" if opened[0] is SUMMARY else f"reproduce: {opened[0]}"
        raise LabError(f"{page}:{opened[1]}: <!-- {label} --> has no closing "
                       f"<!-- /{label} --> marker")
    if not any(b.name is not SUMMARY for b in blocks):
        raise LabError(f"{page}: no <!-- reproduce: SUITE --> ... <!-- /reproduce: SUITE --> "
                       "markers: mark where each suite's table goes")
    return blocks


def load_folders(page: Path, folders: list[Path], blocks: list[Block]) -> dict[str, rs.Results]:
    """Each folder's results, by suite name (a folder may be given as its
    suite.json); LabError for a folder that is missing, empty, not a suite's,
    a second folder of one suite, or one whose suite the page has no marker for."""
    marked = [b.name for b in blocks if b.name is not SUMMARY]
    out: dict[str, rs.Results] = {}
    where: dict[str, Path] = {}
    for given in folders:
        # RESULTS/suite.json names its folder: `results/*/suite.json` picks every
        # suite's results and none of the other folders results/ may hold
        folder = given.parent if given.name == "suite.json" and given.is_file() else given
        res = rs.load_results(folder)
        if not res.suite:
            raise LabError(f"{folder}: no suite.json: not the results folder of a suite "
                           "(asyncsolve-lab run SUITE.toml writes one)")
        name = res.name
        if name in out:
            raise LabError(f"{folder}: a second results folder of suite {name!r} (the first: "
                           f"{where[name]}); give one folder a suite")
        if name not in marked:
            raise LabError(f"{folder}: results of suite {name!r}, but {page} has no "
                           f"<!-- reproduce: {name} --> marker (it marks: "
                           f"{', '.join(marked)})")
        out[name] = res
        where[name] = folder
    return out


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(columns), "|" + "|".join("---" for _ in columns) + "|"] + \
        [_row(r) for r in rows]


def _when(stamps: list[str]) -> str:
    times = []
    for s in stamps:
        try:
            t = datetime.fromisoformat(s)
        except ValueError:
            continue
        times.append(t.astimezone(UTC) if t.tzinfo else t.replace(tzinfo=UTC))
    if not times:
        return "at times the documents do not record"
    first, last = min(times), max(times)
    if first.date() == last.date():
        span = f"{first:%H:%M}" + (f"–{last:%H:%M}" if f"{last:%H:%M}" != f"{first:%H:%M}"
                                   else "")
        return f"on {first:%Y-%m-%d}, {span} UTC"
    return f"from {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"


def _listed(values: list[str], one: str, many: str) -> str:
    values = list(dict.fromkeys(v for v in values if v))
    if not values:
        return ""
    return f"{one if len(values) == 1 else many} {', '.join(values)}"


def suite_file(res: rs.Results) -> str:
    """The suite's file as a checkout names it (suites/NAME.toml)."""
    recorded = str((res.suite or {}).get("file") or f"suites/{res.name}.toml")
    p = Path(recorded)
    return f"suites/{p.name}" if p.parent.name == "suites" else recorded


def provenance_line(res: rs.Results) -> str:
    """How many runs, when (the first and last run's start), by which
    commit(s), on which machine, and the command that reruns the suite."""
    records = sorted(res.records, key=lambda r: r.started or "")
    docs = [rs.provenance(r.doc) for r in records if r.doc]
    n_ok = sum(r.ok for r in records)
    failed = len(records) - n_ok
    runs = f"{len(records)} runs ({n_ok} ok" + (f", {failed} failed or missing" if failed
                                                 else "") + ")"
    commits = _listed([d.git for d in docs], "commit", "commits") or \
        "commit not recorded in the documents"
    hosts = _listed([d.hostname for d in docs], "host", "hosts") or "a host not recorded"
    libs = ", ".join(dict.fromkeys(re.sub(r"\.? Copyright.*$", "", d.mpi_library)
                                   for d in docs if d.mpi_library))
    cpus = _listed([d.cpu_model for d in docs], "CPU", "CPUs") or \
        "the documents record no CPU model"
    cores = ", ".join(dict.fromkeys(str(r.cores) for r in records if r.cores is not None))
    cores = f"{cores} cores" if cores else ""
    if records and all(r.regime.startswith("sim:") for r in records):
        # the documents' host is the simulated platform's; the cores the lab's machine's
        machine = (f"simulated ({'; '.join(x for x in [libs, f'the documents name {hosts}'] if x)})"
                   + (f" on a machine of {cores}" if cores else "") + f"; {cpus}")
    else:
        machine = f"on {hosts} ({'; '.join(x for x in [libs, cores, cpus] if x)})"
    when = _when([r.started for r in records if r.started])
    return (f"*Generated by `asyncsolve-lab reproduce` from the results of suite "
            f"`{res.name}`: {runs} made {when}, by asyncsolve at {commits}, {machine}. "
            f"Rerun: `asyncsolve-lab run {suite_file(res)}` (writes `results/{res.name}`), "
            "then `asyncsolve-lab reproduce` over it.*")


def _runs(v: claims.Verdict) -> str:
    sides = [v.compare] + ([v.against] if v.against is not None else [])
    return " / ".join(f"{len(m.values)} of {m.runs}" for m in sides)


def _verdict_cell(v: claims.Verdict) -> str:
    if v.reason:
        return f"**{v.verdict}**: {v.reason}"
    return f"**{v.verdict}** ({v.claim.check_words()})"


def suite_verdicts(res: rs.Results) -> list[tuple[claims.Verdict, report.Finding]]:
    """The suite's verdicts and their Findings rows, as `report` computes them."""
    verdicts = claims.evaluate_all(res)
    return list(zip(verdicts, report.findings(verdicts, []), strict=True))


SUITE_COLUMNS = ["claim", "paper", "paper's finding", "where", "verdict", "measured",
                 "runs with a value / runs"]


def suite_part(res: rs.Results) -> str:
    """The text between a suite's markers."""
    out = [provenance_line(res), ""]
    rows = [[f.claim, f.paper, f.paper_figure, f.where, _verdict_cell(v), f.figure, _runs(v)]
            for v, f in suite_verdicts(res)]
    if rows:
        out += _table(SUITE_COLUMNS, rows)
    else:
        out.append("*The suite states no claims (no `[[claim]]` tables).*")
    return "\n".join(out)


SUMMARY_COLUMNS = ["suite", "paper", "claim", "where", "verdict", "figure"]


def _figure(v: claims.Verdict) -> str:
    if v.figure is None:
        return "–"
    return f"{'ratio' if v.against is not None else v.claim.metric} {v.figure:.3g}"


def summary_part(ordered: list[rs.Results]) -> str:
    rows = [[f"`{res.name}`", f.paper, f.claim, f.where, f"**{v.verdict}**", _figure(v)]
            for res in ordered for v, f in suite_verdicts(res)]
    lead = ("*Generated by `asyncsolve-lab reproduce`: every claim of the suites below, one "
            "row per verdict (figure: the ratio or value the check compared; the sections "
            "give both sides and the runs).*")
    return "\n".join([lead, ""] + _table(SUMMARY_COLUMNS, rows))


def _between(body: str) -> str:
    """The text between two marker lines: a blank line either side of the body,
    so that Markdown sees the body as its own block."""
    return f"\n{body}\n\n"


def reproduce(page: str | Path, folders: list[str | Path]) -> Outcome:
    """The page with its generated parts rewritten from the folders (nothing is written)."""
    page = Path(page)
    text = read_page(page)
    blocks = find_blocks(page, text)
    found = load_folders(page, [Path(f) for f in folders], blocks)
    suites = [b.name for b in blocks if b.name is not SUMMARY]
    complete = all(n in found for n in suites)
    parts: dict[int, str] = {}
    for i, b in enumerate(blocks):
        if b.name is SUMMARY:
            if complete:
                parts[i] = _between(summary_part([found[n] for n in suites]))
        elif b.name in found:
            parts[i] = _between(suite_part(found[b.name]))
    pieces, at = [], 0
    written, stale, left = [], [], []
    for i, b in enumerate(blocks):
        if i not in parts:
            left.append(b.label)
            continue
        old = text[b.start:b.end]
        pieces += [text[at:b.start], parts[i]]
        at = b.end
        written.append(b.label)
        if old != parts[i]:
            diff = difflib.ndiff(old.splitlines(), parts[i].splitlines())
            stale.append((b.label, sum(1 for d in diff if d[:1] in "+-")))
    pieces.append(text[at:])
    return Outcome(page=page, text=text, new="".join(pieces), written=written, stale=stale,
                   left=left)


def write_page(outcome: Outcome) -> bool:
    """Write the page (atomically, keeping its permissions) if it changed."""
    if outcome.new == outcome.text:
        return False
    mode = outcome.page.stat().st_mode & 0o7777
    try:
        write_atomic(outcome.page, outcome.new, mode=mode)
    except OSError as err:
        raise LabError(f"{outcome.page}: cannot write: {err.strerror or err}") from None
    return True


def describe_stale(outcome: Outcome) -> str:
    return ", ".join(f"{label} ({n} line{'s' if n != 1 else ''} differ{'s' if n == 1 else ''})"
                     for label, n in outcome.stale)
