"""asyncsolve-lab: run suites (asyncsolve-lab run SUITE.toml), report on
their results (asyncsolve-lab report RESULTS) and write a page's verdict
tables from them (asyncsolve-lab reproduce PAGE.md RESULTS...).

Exit codes: 0 success (run without --strict: also when runs failed, even
every one; they are recorded and a warning says so); 1 (run --strict) some
run failed, (reproduce --check) the page's generated parts differ from what
the folders give; 2 bad input (suite file and its option values, results
folder, schema, arguments: one line on stderr); 130, 143, 129
interrupted by SIGINT, SIGTERM or SIGHUP (the runs' process groups are ended;
rerun to resume).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from . import LabError, __version__


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (exit 2), like every other user error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled like Ctrl-C (runs stopped, partial documents
    removed, the suite resumable); the exit code is 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, _frame):
    # Later signals must not interrupt the clean-up the first one starts.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="asyncsolve-lab", description=__doc__.split("\n\n")[0],
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"asyncsolve-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a suite (resumes: finished runs are skipped)")
    r.add_argument("suite", help="suite file (TOML)")
    r.add_argument("--results", help="results folder (default: the suite's results, "
                   "else results/SUITE-NAME)")
    r.add_argument("--binary", help="asyncsolve executable (default: $ASYNCSOLVE_BINARY, "
                   "build/asyncsolve, PATH, the build of the lab's source tree)")
    r.add_argument("--only", help="comma-separated experiments to run")
    r.add_argument("--retry-failed", action="store_true", help="rerun failed or timed-out runs")
    r.add_argument("--dry-run", action="store_true", help="print the command lines, run nothing")
    r.add_argument("--check", action="store_true",
                   help="validate the suite against the binary and exit")
    r.add_argument("--strict", action="store_true", help="exit 1 if any run failed")
    r.add_argument("--report", action="store_true", help="write the report afterwards")
    r.add_argument("--max-ranks", type=_positive_int, default=None,
                   help="refuse experiments with more ranks than this (default: 4 x the cores "
                   "of this machine)")
    rep = sub.add_parser("report", help="write report.md and report.html from a results folder")
    rep.add_argument("results", help="results folder (with runs/*.lab.json)")
    rep.add_argument("--out", help="output folder (default: RESULTS/report)")
    rep.add_argument("--quiet", action="store_true", help="do not print the summary tables")
    pro = sub.add_parser("reproduce", help="write the verdict tables of a page (between its "
                         "<!-- reproduce: SUITE --> markers) from results folders",
                         description="Rewrite the parts of PAGE between <!-- reproduce: SUITE "
                         "--> and <!-- /reproduce: SUITE --> (and <!-- reproduce-summary --> "
                         "... <!-- /reproduce-summary -->) from the results folders; the "
                         "rest of the page is left as it is.")
    pro.add_argument("page", help="Markdown page with the markers (docs/REPRODUCTION.md)")
    pro.add_argument("results", nargs="+", help="results folders (with suite.json and runs/), "
                     "or their suite.json files (results/*/suite.json)")
    pro.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page's "
                     "generated parts differ from what the folders give")
    return p


def main(argv: list[str] | None = None) -> int:
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)
    try:
        return _main(argv)
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)


def _main(argv: list[str] | None) -> int:
    from rich.console import Console
    console = Console(highlight=False)
    if not console.is_terminal:  # a log or a pipe: room for the tables
        console = Console(highlight=False, width=160)
    err = Console(stderr=True, highlight=False)
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            from .capabilities import Capabilities, check_suite, find_binary
            from .runner import check_only, check_ranks, check_results_folder, cores, run_suite
            from .suite import load_suite
            suite = load_suite(args.suite)
            only = args.only.split(",") if args.only is not None else None
            if only is not None:
                check_only(suite, only)  # --check and --dry-run alike
            max_ranks = args.max_ranks or 4 * cores()
            check_ranks(suite, max_ranks)
            results = Path(args.results or suite.results or f"results/{suite.name}")
            check_results_folder(results, "--results" if args.results else "the results folder",
                                 create=not (args.check or args.dry_run))
            caps = Capabilities(find_binary(args.binary, suite.simulated),
                                sim_help_launcher(suite))
            if args.check:
                check_suite(suite, caps)
                n = len(suite.runs())
                console.print(f"{args.suite}: valid; {len(suite.experiments)} experiments, "
                              f"{n} runs")
                return 0
            counts = run_suite(suite, results, caps, retry_failed=args.retry_failed,
                               dry_run=args.dry_run, only=only, console=console)
            if counts["ran"] and not counts["ok"]:
                err.print(f"asyncsolve-lab: warning: every run of suite {suite.name} failed "
                          f"({counts['failed']} of {counts['ran']}); their reasons are in "
                          f"{results}/runs/*.lab.json" + ("" if args.strict else
                                                         "; --strict makes this exit 1"),
                          markup=False, soft_wrap=True)
            if args.report and not args.dry_run:
                _report(results, None, console, quiet=False)
            return 1 if args.strict and counts["failed"] else 0
        if args.command == "reproduce":
            return _reproduce(args.page, args.results, args.check, console)
        return _report(Path(args.results), args.out, console, quiet=args.quiet)
    except LabError as e:
        err.print(f"asyncsolve-lab: {_one_line(str(e))}", markup=False, soft_wrap=True)
        return e.exit_code
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", signal.SIGINT)
        err.print(f"asyncsolve-lab: interrupted ({signal.Signals(signum).name}); run the same "
                  "command again to resume", markup=False, soft_wrap=True)
        return 128 + int(signum)
    except OSError as e:  # a path of the user's that the checks above did not foresee
        where = f"{e.filename}: " if e.filename else ""
        err.print(f"asyncsolve-lab: {_one_line(where + (e.strerror or str(e)))}", markup=False,
                  soft_wrap=True)
        return 2


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


def sim_help_launcher(suite) -> list[str] | None:
    """For a suite of sim regimes: smpirun on one host of its first platform,
    to read the simulation build's --help."""
    if not suite.simulated:
        return None
    import atexit
    import shutil
    import tempfile

    from .simulation import launch_prefix, write_hostfile
    platform = next(iter(suite.platforms.values()))
    folder = Path(tempfile.mkdtemp(prefix="asyncsolve-lab-"))
    atexit.register(shutil.rmtree, folder, True)
    return launch_prefix(platform, 1, write_hostfile(platform, folder))


def _reproduce(page: str, folders: list[str], check: bool, console) -> int:
    from .reproduce import describe_stale, reproduce, write_page
    out = reproduce(page, folders)
    left = (f"; left as they were (no results folder given): {', '.join(out.left)}"
            if out.left else "")

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    if check:
        if out.stale:
            say(f"{page}: out of date: {describe_stale(out)}; asyncsolve-lab reproduce "
                f"{page} {' '.join(folders)} rewrites them{left}")
            return 1
        say(f"{page}: up to date: {', '.join(out.written)}{left}")
        return 0
    if write_page(out):
        say(f"{page}: rewrote {', '.join(label for label, _ in out.stale)}{left}")
    else:
        say(f"{page}: already up to date: {', '.join(out.written)}{left}")
    return 0


def _report(results: Path, out, console, quiet: bool) -> int:
    from .claims import evaluate_all
    from .report import print_tables, print_verdicts, summary_tables, write_report
    md, page, res, sections = write_report(results, out)
    if not quiet:
        print_tables(summary_tables(sections), console)
    if res.stale:
        console.print(f"left out: {len(res.stale)} run(s) in {res.root} made with options the "
                      "suite in suite.json no longer gives (the suite changed since), e.g. "
                      f"{res.stale[0].name}", soft_wrap=True, markup=False)
    console.print(f"report: {page}", soft_wrap=True)
    console.print(f"markdown: {md}", soft_wrap=True)
    if not quiet:
        print_verdicts(evaluate_all(res), console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
