"""Figures (matplotlib, Agg) from aggregated results; every figure has a title,
axis labels with units and a legend. Documents are read only through
results.py's extractors (rs.*)."""

from __future__ import annotations

import math
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from . import results as rs
from .results import Y_QUANTITIES, Group, Spread, groups, phase_medians, varying_keys

REGIME_STYLE = {"shm": dict(linestyle="-", marker="o"), "tcp": dict(linestyle="--", marker="s")}
REGIME_NAME = {"shm": "shm (shared memory)", "tcp": "tcp (loopback)"}
MAX_PANELS = 6

plt.rcParams.update({"figure.dpi": 100, "axes.grid": True, "grid.alpha": 0.3,
                     "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 8,
                     "font.size": 9})


def _style(regime: str) -> dict:
    return REGIME_STYLE.get(regime, dict(linestyle=":", marker="^"))


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _log2_axis(ax, values, axis="x") -> None:
    vals = [v for v in values if isinstance(v, (int, float)) and v > 0]
    if vals and max(vals) / min(vals) >= 16:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)


def _series_label(g: Group, keys: list[str], regimes: set[str]) -> str:
    label = g.label(keys) if keys else ""
    if len(regimes) > 1:
        label = f"{label}, {g.regime}" if label else g.regime
    return label or "all runs"


def _panel_groups(gs: list[Group], prefer_async=True) -> list[Group]:
    """Groups shown one per panel: those of the largest rank count (async and
    racy first when asked), at most MAX_PANELS."""
    top = max(g.ranks for g in gs)
    chosen = [g for g in gs if g.ranks == top and g.ok]
    if prefer_async:
        chosen.sort(key=lambda g: g.config.get("variant", "sync") == "sync")
    return chosen[:MAX_PANELS]


def _xlabel(x: str) -> str:
    return {"ranks": "MPI ranks", "max-in-flight": "R = --max-in-flight (messages)",
            "halo-every": "N = --halo-every (iterations between halo swaps)",
            "local": "--local (points per rank)", "noise-hz": "noise frequency (Hz)",
            "noise-us": "noise duration (µs)", "slow-factor": "slow-down factor of one rank",
            "slow-rank": "--slow-rank (-1: no straggler)",
            "check-every": "residual check period (iterations)",
            "test-every": "halo test period (planes)",
            "threads": "OpenMP threads (--threads)"}.get(x, f"--{x}")


def _series_keys(gs: list[Group], x: str) -> list[str]:
    keys = [k for k in varying_keys(gs) if k != x]
    if x != "ranks" and len({g.ranks for g in gs}) > 1:
        keys = ["ranks"] + keys
    return keys


def _series_name(g: Group, keys: list[str]) -> str:
    return ", ".join(f"{k}={g.ranks if k == 'ranks' else g.config.get(k)}" for k in keys) \
        or "all runs"


def _regime_panels(gs: list[Group], width: float = 6.2, height: float = 4.2):
    regimes = list(dict.fromkeys(g.regime for g in gs))
    fig, axes = plt.subplots(1, len(regimes), figsize=(width * len(regimes), height),
                             squeeze=False, sharey=True)
    return fig, dict(zip(regimes, axes.flat, strict=True))


def line(gs: list[Group], x: str, y: str, title: str | None = None) -> Figure | None:
    """y (median over repeats, bars min–max) against x: a panel per regime, a
    line (colour) per combination of the other varying keys."""
    speedup = y == "speedup"
    fn, ylabel = Y_QUANTITIES["time" if speedup else y]
    keys = _series_keys(gs, x)
    points: dict[tuple, list[tuple]] = defaultdict(list)
    for g in gs:
        s = g.spread(fn)
        if s.median is not None:
            xv = g.ranks if x == "ranks" else g.config.get(x)
            points[(g.regime, _series_name(g, keys))].append((xv, s))
    if not points:
        return None
    if speedup:  # T(first x) / T(x) per series, the range inverted with it
        ylabel = f"speedup over the smallest {x} (median time ratio)"
        for key, pts in points.items():
            pts.sort(key=lambda p: p[0])
            base = pts[0][1].median
            points[key] = [(xv, Spread(base / sp.median, base / sp.hi, base / sp.lo, sp.n))
                           for xv, sp in pts]
    names = list(dict.fromkeys(name for _, name in points))
    colours = {n: plt.get_cmap("tab10")(i % 10) for i, n in enumerate(names)}
    xs_all = [xv for pts in points.values() for xv, _ in pts]
    numeric = _numeric(xs_all)
    cats = list(dict.fromkeys(str(v) for v in xs_all))
    fig, panels = _regime_panels([g for g in gs if g.ok])
    for (regime, name), pts in points.items():
        ax = panels[regime]
        pts.sort(key=lambda p: p[0] if numeric else cats.index(str(p[0])))
        xs = [p[0] if numeric else cats.index(str(p[0])) for p in pts]
        med = [p[1].median for p in pts]
        err = [[m - p[1].lo for m, p in zip(med, pts, strict=True)],
               [p[1].hi - m for m, p in zip(med, pts, strict=True)]]
        ax.errorbar(xs, med, yerr=err, capsize=3, label=name, color=colours[name],
                    **_style(regime))
    for regime, ax in panels.items():
        if numeric:
            _log2_axis(ax, xs_all)
            ticks = sorted(set(xs_all))
            if len(ticks) <= 12:
                ax.set_xticks(ticks)
                ax.set_xticklabels([f"{v:g}" for v in ticks])
        else:
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels(cats)
        if y == "true_residual":
            ax.set_yscale("log")
        ax.set_xlabel(_xlabel(x))
        ax.set_title(REGIME_NAME.get(regime, regime), fontsize=10)
        ax.legend(loc="best", fontsize=7)
    next(iter(panels.values())).set_ylabel(ylabel)
    fig.suptitle(title or f"{ylabel.split(' (')[0].capitalize()} vs {_xlabel(x).split(' (')[0]}"
                 " (median; bars: min–max over repeats)")
    fig.tight_layout()
    return fig


def bars(gs: list[Group], x: str, y: str, series: str | None = None,
         title: str | None = None) -> Figure | None:
    """Grouped bars of y (median, whiskers min–max) per value of x, a bar per
    value of the other varying keys; a panel per regime; the largest rank
    count only when x is not ranks."""
    fn, ylabel = Y_QUANTITIES[y]
    note = ""
    if x != "ranks" and len({g.ranks for g in gs}) > 1:
        top = max(g.ranks for g in gs)
        gs = [g for g in gs if g.ranks == top]
        note = f", {top} ranks"
    keys = [series] if series else [k for k in varying_keys(gs) if k != x]
    cats = list(dict.fromkeys(str(g.ranks if x == "ranks" else g.config.get(x)) for g in gs))
    names = list(dict.fromkeys(_series_name(g, keys) for g in gs))
    colours = {n: plt.get_cmap("tab10")(i % 10) for i, n in enumerate(names)}
    ok = [g for g in gs if g.ok]
    if not ok:
        return None
    fig, panels = _regime_panels(ok, width=5.5)
    width = 0.8 / max(1, len(names))
    for g in ok:
        s = g.spread(fn)
        if s.median is None:
            continue
        ax = panels[g.regime]
        i = names.index(_series_name(g, keys))
        pos = cats.index(str(g.ranks if x == "ranks" else g.config.get(x))) + (i - (len(names)
                                                                                 - 1) / 2) * width
        ax.bar(pos, s.median, width, color=colours[names[i]],
               yerr=[[s.median - s.lo], [s.hi - s.median]], capsize=3)
    for regime, ax in panels.items():
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats)
        ax.set_xlabel(_xlabel(x))
        ax.set_title(REGIME_NAME.get(regime, regime) + note, fontsize=10)
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=colours[n], label=n) for n in names], loc="best",
                  fontsize=7)
    next(iter(panels.values())).set_ylabel(ylabel)
    fig.suptitle(title or f"{ylabel.split(' (')[0].capitalize()} by {_xlabel(x).split(' (')[0]}"
                 " (median; whiskers: min–max over repeats)")
    fig.tight_layout()
    return fig


def histogram(gs: list[Group], title: str | None = None) -> Figure | None:
    """Iterations completed by each rank (paper 000 Figure 7), all repeats pooled."""
    chosen = [g for g in _panel_groups(gs)
              if any(len(rs.per_rank_iterations(r.doc)) > 1 for r in g.ok)]
    if not chosen:
        return None
    keys = varying_keys(gs)
    cols = min(3, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.0 * rows), squeeze=False)
    for ax, g in zip(axes.flat, chosen, strict=False):  # the grid's last row may have spares
        values = [v for r in g.ok for v in rs.per_rank_iterations(r.doc)]
        ax.hist(values, bins=min(12, max(3, len(values))), color="#4477aa", edgecolor="white",
                label=f"{len(values)} ranks×repeats")
        ax.set_title(f"{g.label(keys)} ({g.regime}, {g.ranks} ranks)", fontsize=9)
        ax.set_xlabel("iterations completed by a rank")
        ax.set_ylabel("ranks (count)")
        ax.legend(loc="upper right")
    for ax in list(axes.flat)[len(chosen):]:
        ax.set_visible(False)
    fig.suptitle(title or "Per-rank iteration histograms (largest rank count)")
    fig.tight_layout()
    return fig


def convergence(gs: list[Group], title: str | None = None) -> Figure | None:
    """Residual against iteration and against time, one line per rank (paper 000 Figure 9)."""
    chosen = [g for g in _panel_groups(gs) if g.first_ok() and rs.history(g.first_ok().doc)]
    chosen = chosen[:4]
    if not chosen:
        return None
    keys = varying_keys(gs)
    fig, axes = plt.subplots(len(chosen), 2, figsize=(10, 2.9 * len(chosen)), squeeze=False)
    for row, g in zip(axes, chosen, strict=True):
        rec = g.first_ok()
        points = rs.history(rec.doc)
        by_rank: dict[int, list[rs.HistoryPoint]] = defaultdict(list)
        for h in points:
            by_rank[h.rank].append(h)
        local = all(h.local_residual is not None for h in points)
        for rank, hs in sorted(by_rank.items()):
            hs.sort(key=lambda h: h.time_s)
            style = dict(marker="." if len(hs) < 60 else None, linewidth=1.2, label=f"rank {rank}")
            row[0].plot([h.iteration for h in hs], [h.residual for h in hs], **style)
            row[1].plot([h.time_s for h in hs],
                        [h.local_residual if local else h.residual for h in hs], **style)
        ylabels = ("global residual estimate", "rank's local residual" if local else
                   "global residual estimate")
        for ax, xl, yl in zip(row, ("iteration (of that rank)", "time since start (s)"),
                              ylabels, strict=True):
            ax.set_yscale("log")
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.set_title(f"{g.label(keys)} ({g.regime}, {g.ranks} ranks, repeat "
                         f"{rec.repeat + 1})", fontsize=9)
            if len(by_rank) <= 8:
                ax.legend(loc="upper right", ncol=2)
    fig.suptitle(title or "Convergence profiles, one line per rank: the global estimate vs each "
                 "rank's iterations, and each rank's local residual vs time")
    fig.tight_layout()
    return fig


def phases(gs: list[Group], title: str | None = None) -> Figure | None:
    """Stacked bars of the phases (max over ranks; median of repeats) per configuration
    (the largest rank count only, when there are more than 24 configurations)."""
    note = ""
    if len(gs) > 24 and len({g.ranks for g in gs}) > 1:
        top = max(g.ranks for g in gs)
        gs = [g for g in gs if g.ranks == top]
        note = f" ({top} ranks)"
    rows = [(g, phase_medians(g)) for g in gs if g.ok]
    rows = [(g, p) for g, p in rows if p]
    if not rows:
        return None
    keys = varying_keys(gs)
    names: list[str] = []
    for _, p in rows:
        names += [k for k in p if k not in names]
    fig, ax = plt.subplots(figsize=(10, 0.36 * len(rows) + 2.4), layout="constrained")
    labels = [", ".join([str(g.config.get(k)) for k in keys] + [g.regime, f"{g.ranks}r"])
              for g, _ in rows]
    left = [0.0] * len(rows)
    cmap = plt.get_cmap("tab20")
    for i, name in enumerate(names):
        widths = [p.get(name, 0.0) for _, p in rows]
        ax.barh(range(len(rows)), widths, left=left, label=name, color=cmap(i % 20))
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("time (s): each phase's maximum over ranks, median over repeats")
    ax.set_ylabel(", ".join(keys + ["regime", "ranks"]))
    ax.set_title((title or "Phase breakdown") + note)
    fig.legend(loc="outside lower center", ncol=min(6, len(names)), fontsize=7, frameon=False)
    return fig


def _by_regime_first(gs: list[Group]) -> list[Group]:
    return [g for g in gs if g.first_ok()]


def _log_y_labelled(ax) -> None:
    """A log y axis with 1-2-5 ticks written as plain numbers (readable over a decade)."""
    from matplotlib import ticker
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def allreduce(gs: list[Group], title: str | None = None) -> Figure | None:
    """bench allreduce: latency and overlap against message size, a line (colour)
    per algorithm, a column of panels per regime."""
    chosen = _by_regime_first(gs)
    if not chosen:
        return None
    regimes = list(dict.fromkeys(g.regime for g in chosen))
    fig, axes = plt.subplots(2, len(regimes), figsize=(6.2 * len(regimes), 7.6), squeeze=False,
                             sharey="row")
    colours: dict[str, tuple] = {}
    for g in chosen:
        col = regimes.index(g.regime)
        lat: dict[tuple, list] = defaultdict(list)
        ovl: dict[tuple, list] = defaultdict(list)
        for r in g.ok:
            for e in rs.allreduce_latency(r.doc):
                lat[(e.algorithm, e.size_bytes)].append(e.median)
            for e in rs.allreduce_overlap(r.doc):
                ovl[(e.algorithm, e.size_bytes)].append(e.median)
        for row, data in enumerate((lat, ovl)):
            ax = axes[row][col]
            for algo in dict.fromkeys(a for a, _ in data):
                colours.setdefault(algo, plt.get_cmap("tab10")(len(colours) % 10))
                pts = sorted((b, Spread.of(v).median) for (a, b), v in data.items() if a == algo)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colours[algo],
                        label=f"{algo} ({g.ranks} ranks)", **_style(g.regime))
    for col, regime in enumerate(regimes):
        a1, a2 = axes[0][col], axes[1][col]
        a1.set_xscale("log", base=2)
        _log_y_labelled(a1)
        a1.set_ylabel("latency (µs, median)")
        a1.set_title(f"Allreduce latency (start + wait), {REGIME_NAME.get(regime, regime)}",
                     fontsize=10)
        a2.set_xscale("log", base=2)
        a2.set_ylabel("overlap (% of the reduction hidden)")
        a2.set_title(f"Overlap with computation (IMB-NBC), {REGIME_NAME.get(regime, regime)}",
                     fontsize=10)
        a2.set_ylim(-5, 105)
        for ax in (a1, a2):
            ax.set_xlabel("message size (bytes)")
            if ax.lines:
                ax.legend(loc="best", fontsize=7)
    fig.suptitle(title or "Allreduce latency and overlap (paper 003 Figures 8 and 9)")
    fig.tight_layout()
    return fig


def noise(gs: list[Group], title: str | None = None) -> Figure | None:
    """bench allreduce noise mode: slowdown of pcg2 and pcg-overlap under injected noise."""
    bars: dict[tuple, list] = defaultdict(list)
    for g in gs:
        for r in g.ok:
            for e in rs.allreduce_noise(r.doc):
                setting = "quiet" if not e.noise_hz else f"{e.noise_us:g} µs @ {e.noise_hz:g} Hz"
                bars[(f"{e.method} ({e.allreduce}), {g.regime}", setting)].append(e.slowdown)
    if not bars:
        return None
    series = list(dict.fromkeys(k[0] for k in bars))
    settings = list(dict.fromkeys(k[1] for k in bars))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(series)
    for i, s in enumerate(series):
        vals = [Spread.of(bars.get((s, st), [])).median or 0 for st in settings]
        ax.bar([j + i * width for j in range(len(settings))], vals, width, label=s)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(settings))])
    ax.set_xticklabels(settings)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("injected noise (interrupt length @ frequency, per rank)")
    ax.set_ylabel("slowdown (time / quiet time)")
    ax.set_title(title or "Noise degradation (paper 003 Figure 12)")
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


def model(gs: list[Group], title: str | None = None) -> Figure | None:
    """model hybrid --fit: measured ε against eq. 14's, per n_k^loc."""
    chosen = _by_regime_first(gs)
    if not chosen:
        return None
    quantities = [q for g in chosen if (q := rs.model_quantities(g.first_ok().doc))]
    if quantities:
        return _model_quantities(quantities, title)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for g in chosen:
        fit = rs.model_fit(g.first_ok().doc)
        if not fit:
            continue
        recs = sorted(fit.records, key=lambda r: r.nk_local)
        nk = [r.nk_local for r in recs]
        st = _style(g.regime)
        ax.plot(nk, [r.epsilon_measured for r in recs], marker=st["marker"], linestyle="none",
                label=f"measured ε = T_masteronly/T_funneled ({g.regime})")
        ax.plot(nk, [r.epsilon_predicted for r in recs], linestyle=st["linestyle"],
                label=f"eq. 14 fit ({g.regime})")
        if any(r.epsilon_multiple is not None for r in recs):
            ax.plot(nk, [r.epsilon_multiple for r in recs], marker="x", linestyle=":",
                    label=f"T_masteronly/T_multiple ({g.regime})")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n_k^loc (planes per rank)")
    ax.set_ylabel("performance ratio ε")
    ax.set_title(title or "Hybrid model (paper 002 Figure 6): ε measured and fitted")
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


def _model_quantities(qs: list[rs.ModelQuantities], title: str | None) -> Figure:
    """model hybrid without --fit: ε of eq. 3 against f_comm, a line per f_comp,non."""
    series: dict[float, list] = defaultdict(list)
    for q in qs:
        if None not in (q.f_comp_non, q.f_comm, q.epsilon):
            series[q.f_comp_non].append((q.f_comm, q.epsilon))
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for non, pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                label=f"f_comp,non = {non:g}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("f_comm (share of T_masteronly spent communicating)")
    ax.set_ylabel("ε = T_masteronly / T_funneled")
    n, m = qs[0].threads, qs[0].reserved
    ax.set_title(title or f"Hybrid model, eq. 3 (paper 002 Figure 5): n = {n}, m = {m}")
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


def mvm(gs: list[Group], title: str | None = None) -> Figure | None:
    """bench/hybrid_mvm: time per MVM of each scheme against n_k^loc."""
    chosen = _by_regime_first(gs)
    if not chosen:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for g in chosen:
        recs = sorted(rs.mvm_records(g.first_ok().doc), key=lambda r: r.nk_local)
        for scheme, marker in zip(rs.MVM_SCHEMES, ("o", "s", "^"), strict=True):
            ys = [r.time_s(scheme) for r in recs]
            if any(y is not None for y in ys):
                ax.plot([r.nk_local for r in recs], ys, marker=marker,
                        linestyle=_style(g.regime)["linestyle"], label=f"{scheme} ({g.regime})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n_k^loc (planes per rank)")
    ax.set_ylabel("time per MVM (s, median)")
    ax.set_title(title or "Hybrid sparse MVM (paper 002 §7.2.2)")
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


def beff(gs: list[Group], title: str | None = None) -> Figure | None:
    """bench/beff: accumulated bandwidth against message size, pure MPI vs hybrid masteronly."""
    chosen = _by_regime_first(gs)
    if not chosen:
        return None
    fig, axes = plt.subplots(1, len(chosen), figsize=(6 * len(chosen), 4), squeeze=False)
    for ax, g in zip(axes.flat, chosen, strict=True):
        measurements = rs.beff_measurements(g.first_ok().doc)
        pats = list(dict.fromkeys(m.pattern for m in measurements))
        cmap = plt.get_cmap("tab10")
        for i, pat in enumerate(pats):
            for mode, ls in (("pure", "-"), ("hybrid", "--")):
                pts = sorted((m.size_bytes, m.bandwidth_mbs) for m in measurements
                             if m.pattern == pat and m.mode == mode)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker=".",
                        color=cmap(i), label=f"{pat}, {mode}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size L per rank (bytes)")
        ax.set_ylabel("accumulated bandwidth (MB/s)")
        ax.set_title(f"b_eff patterns: pure MPI vs hybrid masteronly ({g.regime}, {g.ranks} "
                     "ranks)", fontsize=9)
        ax.legend(loc="best", ncol=2)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def stencil2d_models(records, title: str | None = None) -> Figure | None:
    """Paper 004's Stencil2D model by model: time per iteration (the slowest
    rank's, median) of every variant, grouped by programming model (Coarray
    Fortran, MPI two-sided, MPI-3 RMA, OpenSHMEM; a colour each), a bar per
    rank count; a panel per radius (rows) and local size (columns), and per
    regime. Whiskers: min–max over the lab's repeats."""
    from matplotlib.patches import Patch

    from .results import STENCIL2D_MODELS, stencil2d_spreads
    spreads = {k: s for k, s in stencil2d_spreads(list(records)).items() if s.median is not None}
    if not spreads:
        return None
    rows = sorted({(k[0], k[4]) for k in spreads})          # (regime, radius)
    cols = sorted({k[5] for k in spreads})                  # local
    cats = list(dict.fromkeys((k[1], k[2]) for k in spreads))  # (model, variant)
    ranks = sorted({k[3] for k in spreads})
    models = list(dict.fromkeys(m for m, _ in cats))
    colours = {m: plt.get_cmap("tab10")(list(STENCIL2D_MODELS).index(m) if m in STENCIL2D_MODELS
                                        else 9 - i) for i, m in enumerate(models)}
    width = 0.8 / len(ranks)
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(max(6.0, 0.55 * len(cats) + 1.5)
                                                             * len(cols), 3.6 * len(rows)),
                             squeeze=False, sharey=True)
    for (regime, radius), row in zip(rows, axes, strict=True):
        for local, ax in zip(cols, row, strict=True):
            for j, n in enumerate(ranks):
                shade = 0.45 + 0.55 * (j + 1) / len(ranks)
                for i, (model, variant) in enumerate(cats):
                    sp = spreads.get((regime, model, variant, n, radius, local))
                    if sp is None:
                        continue
                    ax.bar(i + (j - (len(ranks) - 1) / 2) * width, sp.median, width,
                           color=colours[model], alpha=shade, edgecolor="black", linewidth=0.3,
                           hatch="//" if j % 2 == 0 and len(ranks) > 1 else None,
                           yerr=[[sp.median - sp.lo], [sp.hi - sp.median]], capsize=2)
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels([v for _, v in cats], rotation=60, fontsize=7)
            _log_y_labelled(ax)
            ax.set_title(f"radius {radius}, local {local}², {REGIME_NAME.get(regime, regime)}",
                         fontsize=9)
        row[0].set_ylabel("time per iteration (µs)")
    handles = [Patch(color=colours[m], label=STENCIL2D_MODELS.get(m, m)) for m in models]
    handles += [Patch(facecolor="white", edgecolor="black", hatch="//" if j % 2 == 0 and
                      len(ranks) > 1 else None, alpha=0.45 + 0.55 * (j + 1) / len(ranks),
                      label=f"{n} ranks/images") for j, n in enumerate(ranks)]
    fig.legend(handles=handles, loc="lower center", ncol=min(8, len(handles)), fontsize=8,
               frameon=False)
    fig.suptitle(title or "Stencil2D model by model (paper 004): time per iteration, slowest "
                 "rank, median (whiskers: min–max over repeats)")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def stencil2d(gs: list[Group], title: str | None = None) -> Figure | None:
    """bench stencil2d and asyncsolve-stencil2d-caf: stencil2d_models of one experiment."""
    return stencil2d_models([r for g in gs for r in g.records], title)


DEFAULT_PLOTS = {
    "asyncsolve.result": [{"kind": "time"}],
    "asyncsolve.bench.allreduce": [{"kind": "allreduce"}],
    "asyncsolve.bench.hybrid_mvm": [{"kind": "mvm"}],
    "asyncsolve.bench.beff": [{"kind": "beff"}],
    "asyncsolve.model.hybrid": [{"kind": "model"}],
    "asyncsolve.bench.stencil2d": [{"kind": "stencil2d"}],
}


def make(spec: dict, records) -> Figure | None:
    """The figure a plot spec asks for, or None when the runs lack its data."""
    gs = groups(records)
    if not any(g.ok for g in gs):
        return None
    kind, title = spec["kind"], spec.get("title")
    if kind == "bars":
        return bars(gs, spec.get("x", "ranks"), spec.get("y") or "time", spec.get("series"),
                    title)
    if kind in ("line", "rate", "time"):
        y = spec.get("y") or ("rate" if kind == "rate" else "time")
        return line(gs, spec.get("x", "ranks"), y, title)
    fn = {"histogram": histogram, "convergence": convergence, "phases": phases,
          "allreduce": allreduce, "noise": noise, "model": model, "mvm": mvm,
          "beff": beff, "stencil2d": stencil2d}[kind]
    return fn(gs, title)
