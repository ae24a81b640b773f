"""The report: tables in the papers' layout and plots, as Markdown (with PNG
files) and as one self-contained HTML page (plots embedded as base64 PNG).
Documents are read only through results.py's extractors (rs.*)."""

from __future__ import annotations

import base64
import io
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from . import LabError, __version__, claims, plots
from . import results as rs
from .files import write_atomic
from .results import Group, Results, Spread, groups, load_results, phase_medians, varying_keys


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""

    def markdown(self) -> str:
        out = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |",
               "|" + "|".join("---" for _ in self.columns) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in self.rows]
        if self.note:
            out += ["", f"*{self.note}*"]
        return "\n".join(out)


def _fmt(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "–"
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def _spread(s: Spread, digits: int = 3) -> str:
    if s.median is None:
        return "–"
    if s.n <= 1 or s.lo == s.hi:
        return _fmt(s.median, digits)
    return f"{_fmt(s.median, digits)} ({_fmt(s.lo, 2)}–{_fmt(s.hi, 2)})"


def _it(v) -> str:
    return "–" if v is None else f"{v:,.0f}"


def _int_cell(v: int | None) -> str:
    return "–" if v is None else str(v)


def solve_table(gs: list[Group], title: str) -> Table:
    """Paper 000 Tables 1-3 layout: per configuration the iterations min/mean/max
    and the time, medians over repeats (time: min–max in brackets)."""
    keys = varying_keys(gs)
    t = Table(title=title, columns=["regime", "ranks", *keys, "runs ok", "iter. min",
                                    "iter. mean", "iter. max", "time (s)", "iter./s",
                                    "true residual"])
    for g in gs:
        it = {k: g.spread(partial(rs.iterations, which=k)).median for k in rs.ITERATION_STATS}
        t.rows.append([g.regime, str(g.ranks), *[str(g.config.get(k, "")) for k in keys],
                       f"{len(g.ok)}/{len(g.records)}", _it(it["min"]), _it(it["mean"]),
                       _it(it["max"]), _spread(g.spread(rs.time_s)),
                       _fmt(g.spread(rs.rate).median),
                       _fmt(g.spread(rs.true_residual).median)])
    t.note = ("Iterations and time: medians over repeats (time: min–max in brackets); time is "
              "the maximum over ranks; iter./s is the mean rank's rate.")
    return t


def phase_table(gs: list[Group], title: str) -> Table | None:
    """Paper 003 Table I layout: one column per configuration, one row per phase."""
    cols = [(g, phase_medians(g)) for g in gs if g.ok]
    cols = [(g, p) for g, p in cols if p]
    if not cols:
        return None
    keys = varying_keys(gs)
    names: list[str] = []
    for _, p in cols:
        names += [k for k in p if k not in names]
    t = Table(title=title, columns=["phase (s)"] + [
        ", ".join([str(g.config.get(k)) for k in keys] + [g.regime, f"{g.ranks} ranks"])
        for g, _ in cols])
    for n in names:
        t.rows.append([n] + [_fmt(p.get(n)) for _, p in cols])
    t.rows.append(["solver time"] + [_fmt(g.spread(rs.time_s).median) for g, _ in cols])
    t.note = "Each phase: maximum over ranks, median over repeats."
    return t


def allreduce_table(gs: list[Group], title: str) -> Table | None:
    rows = {}
    sizes: set[int] = set()
    for g in gs:
        for r in g.ok:
            for e in rs.allreduce_latency(r.doc):
                rows.setdefault((g.regime, g.ranks, e.algorithm), {}).setdefault(
                    e.size_bytes, []).append(e.median)
                sizes.add(e.size_bytes)
    if not rows:
        return None
    sz = sorted(sizes)
    t = Table(title=title, columns=["regime", "ranks", "algorithm"] + [f"{b} B" for b in sz])
    for (regime, ranks, algo), per in rows.items():
        t.rows.append([regime, str(ranks), algo] + [_fmt(Spread.of(per.get(b, [])).median)
                                                    for b in sz])
    t.note = "Latency in µs: median of the document's medians over repeats."
    return t


def mvm_table(gs: list[Group], title: str) -> Table | None:
    t = Table(title=title, columns=["regime", "ranks", "threads", "n_k^loc", "masteronly (s)",
                                    "funneled (s)", "multiple (s)", "ε funneled", "ε multiple"])
    for g in gs:
        r = g.first_ok()
        if not r:
            continue
        threads = rs.mvm_threads(r.doc)
        for rec in rs.mvm_records(r.doc):
            t.rows.append([g.regime, str(g.ranks), _int_cell(threads), str(rec.nk_local),
                           _fmt(rec.masteronly_s), _fmt(rec.funneled_s), _fmt(rec.multiple_s),
                           _fmt(rec.epsilon_funneled), _fmt(rec.epsilon_multiple)])
    return t if t.rows else None


def beff_table(gs: list[Group], title: str) -> Table | None:
    t = Table(title=title, columns=["regime", "ranks", "node size", "b_eff pure (MB/s)",
                                    "b_eff hybrid (MB/s)", "b_pure/b_hybrid",
                                    "3d-cyclic pure/hybrid"])
    for g in gs:
        r = g.first_ok()
        if not r:
            continue
        s = rs.beff_summary(r.doc)
        t.rows.append([g.regime, str(g.ranks), _int_cell(s.node_size), _fmt(s.pure_mbs),
                       _fmt(s.hybrid_mbs), _fmt(s.pure_over_hybrid),
                       _fmt(s.cyclic3d_pure_over_hybrid)])
    t.note = "b_eff: geometric mean of the ring and random patterns (paper 002 §6)."
    return t if t.rows else None


def model_table(gs: list[Group], title: str) -> Table | None:
    if any(rs.model_quantities(r.doc) for g in gs for r in g.ok):
        t = Table(title=title, columns=["n", "m", "f_comp,non", "f_comm", "ε", "limited by",
                                        "ε max", "f_comm,best"])
        for g in gs:
            r = g.first_ok()
            q = rs.model_quantities(r.doc) if r else None
            if q:
                t.rows.append([_int_cell(q.threads), _int_cell(q.reserved), _fmt(q.f_comp_non),
                               _fmt(q.f_comm), _fmt(q.epsilon), q.limited_by or "–",
                               _fmt(q.epsilon_max), _fmt(q.f_comm_best)])
        t.note = "ε = T_masteronly / T_funneled of eq. 3: above 1 the reserved thread pays."
        return t
    t = Table(title=title, columns=["regime", "x_comm/x_MVM,overlap", "x_MVM,non/x_MVM,overlap",
                                    "n_k^loc at ε = 1", "ε max (at n_k^loc)", "rms ε error"])
    for g in gs:
        r = g.first_ok()
        fit = rs.model_fit(r.doc) if r else None
        if not fit:
            continue
        t.rows.append([g.regime, _fmt(fit.comm_over_overlap), _fmt(fit.non_over_overlap),
                       _fmt(fit.nk_crossover),
                       f"{_fmt(fit.epsilon_at_best)} ({_fmt(fit.nk_best)})",
                       _fmt(fit.rms_epsilon_error)])
    t.note = "Paper 002 on the SR8000: x_comm/x_MVM,overlap = 4.57, x_MVM,non/x_MVM,overlap = 1/6."
    return t if t.rows else None


def stencil2d_records_table(records, title: str) -> Table | None:
    """Paper 004's Stencil2D, model by model: a row per model and variant, a
    column per rank count, radius and local size (and regime, if several):
    the time per iteration in µs, median (min–max) over the lab's repeats of
    the documents' medians."""
    from .results import STENCIL2D_MODELS, stencil2d_spreads
    spreads = stencil2d_spreads(list(records))
    if not spreads:
        return None
    regimes = {k[0] for k in spreads}
    cols = sorted({(k[0], k[3], k[4], k[5]) for k in spreads})
    names = [(f"{regime}, " if len(regimes) > 1 else "") + f"{n} ranks, r={radius}, {local}²"
             for regime, n, radius, local in cols]
    t = Table(title=title, columns=["model", "variant", *names])
    for model, variant in dict.fromkeys((k[1], k[2]) for k in spreads):
        t.rows.append([STENCIL2D_MODELS.get(model, model), variant] + [
            _spread(spreads.get((regime, model, variant, n, radius, local), Spread.of([])))
            for regime, n, radius, local in cols])
    t.note = ("Time per iteration in µs (halo exchange and filter; the slowest rank's), median "
              "over repeats, min–max in brackets. Every run validated against the serial filter.")
    return t


def stencil2d_table(gs: list[Group], title: str) -> Table | None:
    return stencil2d_records_table([r for g in gs for r in g.records], title)


def stencil2d_comparison(res: Results, plot_dir: Path | None) -> list[Section]:
    """One more section when the results hold Stencil2D documents of more than
    one programming model across experiments (paper 004's comparison: CAF
    beside MPI two-sided, MPI-3 RMA and OpenSHMEM): the table and the
    model-by-model figure over all of them."""
    from .results import stencil2d_points
    recs = [r for r in res.records if r.ok and r.schema == "asyncsolve.bench.stencil2d"]
    models = {p.model for r in recs for p in stencil2d_points(r.doc)}
    experiments = list(dict.fromkeys(r.experiment for r in recs))
    if len(models) < 2 or len(experiments) < 2:
        return []
    title = "Stencil2D model by model (paper 004)"
    table = stencil2d_records_table(recs, title)
    figures = []
    fig = plots.stencil2d_models(recs)
    if fig is not None:
        caption = fig._suptitle.get_text() if fig._suptitle else title
        png = _figure_png(fig)
        name = "stencil2d-models.png"
        if plot_dir:
            _write(plot_dir / name, png)
        figures.append((caption, name, base64.b64encode(png).decode()))
    return [Section(name="stencil2d-models", title=title,
                    notes=f"All Stencil2D runs of the experiments {', '.join(experiments)}, "
                    "side by side: does Coarray Fortran keep up with the MPI halo exchange?",
                    command="", tables=[table] if table else [], figures=figures, failures=[],
                    counts=f"{len(recs)} runs of {len(experiments)} experiments")]


TABLES = {"asyncsolve.result": solve_table, "asyncsolve.bench.allreduce": allreduce_table,
          "asyncsolve.bench.hybrid_mvm": mvm_table, "asyncsolve.bench.beff": beff_table,
          "asyncsolve.model.hybrid": model_table, "asyncsolve.bench.stencil2d": stencil2d_table}


@dataclass
class Section:
    name: str
    title: str
    notes: str
    command: str
    tables: list[Table]
    figures: list[tuple[str, str, str]]  # (caption, png file name, base64)
    failures: list[dict]
    counts: str


def _figure_png(fig) -> bytes:
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def build_sections(res: Results, plot_dir: Path | None) -> list[Section]:
    sections = []
    for exp in res.experiments():
        recs = res.of(exp.name)
        gs = groups(recs)
        schemas = [r.schema for r in recs if r.ok]
        schema = schemas[0] if schemas else None
        title = exp.title or exp.name
        tables: list[Table] = []
        if schema in TABLES:
            t = TABLES[schema](gs, title)
            if t:
                tables.append(t)
        figures = []
        specs = exp.plots or plots.DEFAULT_PLOTS.get(schema, [])
        if schema == "asyncsolve.result" and any(s["kind"] == "phases" for s in specs):
            t = phase_table(gs, f"{title}: phase breakdown")
            if t:
                tables.append(t)
        for i, spec in enumerate(specs):
            try:
                fig = plots.make(spec, recs)
            except (KeyError, TypeError, ValueError) as err:  # data a plot cannot use
                fig = None
                figures.append((f"{spec['kind']}: not drawn ({type(err).__name__}: {err})", "",
                                ""))
            if fig is None:
                continue
            caption = fig._suptitle.get_text() if fig._suptitle else \
                fig.axes[0].get_title() if fig.axes else spec["kind"]
            png = _figure_png(fig)
            name = f"{exp.name}-{i}-{spec['kind']}.png"
            if plot_dir:
                _write(plot_dir / name, png)
            figures.append((caption, name, base64.b64encode(png).decode()))
        failures = [{"run": r.run_id, "status": r.status, "reason": r.reason,
                     "stderr": r.stderr[-3000:]}
                    for r in recs if not r.ok]
        first = next((r for r in recs if r.command), None)
        command = ""
        if first:
            env = " ".join(f"{k}={v}" for k, v in first.env.items()
                           if not k.startswith("OMPI_ALLOW"))
            command = (env + " " if env else "") + " ".join(first.command)
        n_ok = sum(r.ok for r in recs)
        sections.append(Section(name=exp.name, title=title, notes=exp.notes,
                                command=command, tables=tables, figures=figures,
                                failures=failures,
                                counts=f"{len(recs)} runs, {n_ok} ok, {len(recs) - n_ok} failed"))
    return sections


@dataclass
class DocLink:
    """A link from the report to a page of the documentation."""

    text: str  #: what the link says
    page: str  #: the page's source, docs/NAME.md
    href: str  #: relative to the report's folder


#: The pages a report links to: (text, page name, section anchor).
DOC_PAGES = [("claims and verdicts", "lab", "claims-and-verdicts"),
             ("performance figures and their commands", "PERFORMANCE", ""),
             ("every paper suite's verdicts on this machine", "REPRODUCTION", "")]


def doc_links(out: Path, checkout: Path | None = None) -> list[DocLink]:
    """Links from a report written into OUT to the documentation of the checkout the
    lab runs from (CHECKOUT: the folder above python/): each page of the built site
    (build/docs/html/NAME.html, made by `make docs`) where it exists, else its
    Markdown source (docs/NAME.md), as a path relative to OUT, so that the report
    opened from OUT in a browser reaches it. Empty where the lab is not run from a
    checkout (no docs/ beside python/)."""
    root = checkout or Path(__file__).resolve().parents[2]
    links = []
    for text, name, anchor in DOC_PAGES:
        source = root / "docs" / f"{name}.md"
        if not source.is_file():
            continue
        built = root / "build" / "docs" / "html" / f"{name}.html"
        target = built if built.is_file() else source
        href = Path(os.path.relpath(target, Path(out).resolve())).as_posix()
        links.append(DocLink(text=text, page=f"docs/{name}.md",
                             href=href + (f"#{anchor}" if anchor else "")))
    return links


def doc_links_markdown(links: list[DocLink]) -> str:
    return "Documentation: " + "; ".join(f"[{d.text}]({d.href}) ({d.page})" for d in links) + "."


@dataclass
class Finding:
    """A row of the Findings table: a claim's verdict in one regime."""

    claim: str
    paper: str  #: "000 §6.1"
    paper_figure: str
    check: str  #: the check in words
    where: str  #: regime and ranks
    figure: str  #: this machine's figure: median (spread) of each side, the ratio
    verdict: str
    reason: str
    experiment: str  #: the section's anchor
    plot: str  #: the plot's file name ("" when the experiment drew none)


FINDINGS_COLUMNS = ["claim", "paper", "paper's figure", "check", "this machine", "verdict",
                    "plot"]


def findings(verdicts: list[claims.Verdict], sections: list[Section]) -> list[Finding]:
    """The Findings table's rows, in the suite's claim order."""
    figures = {s.name: [name for _, name, _ in s.figures if name] for s in sections}
    out = []
    for v in verdicts:
        c = v.claim
        names = figures.get(c.experiment, [])
        plot = names[0] if names else ""
        if c.plot is not None:
            plot = next((n for n in names if n.startswith(f"{c.experiment}-{c.plot - 1}-")),
                        plot)
        ranks = c.compare.ranks
        out.append(Finding(claim=c.text, paper=f"{c.paper} {c.section}".strip(),
                           paper_figure=c.paper_figure or "–", check=c.check_text(),
                           where=f"{v.regime}, {ranks} rank{'s' if ranks != 1 else ''}",
                           figure=v.figure_text(), verdict=v.verdict, reason=v.reason,
                           experiment=c.experiment, plot=plot))
    return out


def findings_markdown(rows: list[Finding]) -> str:
    out = ["## Findings", "",
           ("Each claim of the papers that the suite checks, and its verdict on these results "
            "(this machine's figure: the statistic over the successful repeats, min–max in "
            "brackets, n = repeats with a value)."), "",
           "| " + " | ".join(FINDINGS_COLUMNS) + " |",
           "|" + "|".join("---" for _ in FINDINGS_COLUMNS) + "|"]
    for f in rows:
        verdict = f"**{f.verdict}**" + (f": {f.reason}" if f.reason else "")
        plot = f"[plot](plots/{f.plot})" if f.plot else f"[section](#{f.experiment})"
        cells = [f.claim, f.paper, f.paper_figure, f.check, f"{f.where}: {f.figure}", verdict,
                 plot]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


def _markdown(res: Results, sections: list[Section], meta: dict) -> str:
    out = [f"# asyncsolve-lab report: {meta['suite']}", ""]
    if meta["description"]:
        out += [meta["description"], ""]
    out += [(f"{meta['runs']} runs ({meta['ok']} ok, {meta['failed']} failed) from "
             f"`{res.root}`; {meta['environment']}. Generated {meta['generated']} by "
             f"asyncsolve-lab {__version__}."), ""]
    if meta["docs"]:
        out += [doc_links_markdown(meta["docs"]), ""]
    if meta["findings"]:
        out += [findings_markdown(meta["findings"]), ""]
    for s in sections:
        out += [f"## {s.title}", "", f"Experiment `{s.name}`: {s.counts}.", ""]
        if s.notes:
            out += [s.notes, ""]
        if s.command:
            out += ["First run's command:", "", "```", s.command, "```", ""]
        for t in s.tables:
            out += [t.markdown(), ""]
        for caption, name, _ in s.figures:
            out += [f"![{caption}](plots/{name})" if name else f"*{caption}*", ""]
        if s.failures:
            out += ["Failed runs:", ""]
            out += [f"- `{f['run']}`: {f['status']}: {f['reason']}" for f in s.failures]
            out += [""]
    return "\n".join(out)


def _environment(res: Results) -> str:
    for r in res.records:
        env = rs.environment(r.doc)
        if env:
            return (f"{env.mpi_library or '?'}, host {env.hostname or '?'} with "
                    f"{env.cores if env.cores is not None else '?'} cores")
    return "environment unknown"


def write_report(results: str | Path, out: str | Path | None = None) -> tuple[Path, Path, Results,
                                                                              list[Section]]:
    """Write OUT/report.md (+ OUT/plots/*.png) and OUT/report.html; OUT defaults to
    RESULTS/report. Returns the two paths, the results and the sections."""
    res = load_results(results)
    out = Path(out) if out else res.root / "report"
    plot_dir = out / "plots"
    try:
        plot_dir.mkdir(parents=True, exist_ok=True)
        for old in plot_dir.glob("*.png"):
            old.unlink()
    except OSError as err:
        raise LabError(f"--out {out}: cannot make the report folder there: "
                       f"{err.strerror or err}") from None
    sections = build_sections(res, plot_dir)
    sections += stencil2d_comparison(res, plot_dir)
    n_ok = sum(r.ok for r in res.records)
    meta = {"suite": res.name, "description": res.description,
            "findings": findings(claims.evaluate_all(res), sections),
            "runs": len(res.records), "ok": n_ok, "failed": len(res.records) - n_ok,
            "environment": _environment(res), "docs": doc_links(out),
            "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    md_path = out / "report.md"
    _write(md_path, _markdown(res, sections, meta))
    env = Environment(loader=PackageLoader("asyncsolve_lab", "templates"),
                      autoescape=select_autoescape(["html"]))
    page = env.get_template("report.html").render(meta=meta, sections=sections, root=res.root,
                                                  version=__version__)
    html_path = out / "report.html"
    _write(html_path, page)
    return md_path, html_path, res, sections


def _write(path: Path, data: bytes | str) -> None:
    try:
        write_atomic(path, data)
    except OSError as err:
        raise LabError(f"{path}: cannot write: {err.strerror or err}") from None


def print_verdicts(verdicts: list[claims.Verdict], console) -> None:
    """The verdicts as plain sentences (the end of `make demo`)."""
    if not verdicts:
        return
    console.print("Findings (the papers' claims on this machine):", style="bold")
    for v in verdicts:
        console.print(f"- {v.sentence()}", soft_wrap=True, markup=False, highlight=False)


def summary_tables(sections: list[Section]) -> list[Table]:
    """The first table of every section (what `make demo` prints)."""
    return [s.tables[0] for s in sections if s.tables]


def print_tables(tables: list[Table], console) -> None:
    """The tables on the terminal, compact: medians only, no residual column."""
    import re

    from rich.table import Table as RichTable
    for t in tables:
        keep = [i for i, c in enumerate(t.columns) if c != "true residual"]
        rt = RichTable(title=t.title, title_justify="left", title_style="bold",
                       show_lines=False, pad_edge=False)
        for i in keep:
            c = t.columns[i]
            rt.add_column(c, justify="left" if i == 0 else "right", no_wrap=True)
        for row in t.rows:
            rt.add_row(*[re.sub(r" \(.*\)$", "", row[i]) for i in keep])
        console.print(rt)
