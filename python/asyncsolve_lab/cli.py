"""asyncsolve-lab: run suites (asyncsolve-lab run SUITE.toml) and report on
their results (asyncsolve-lab report RESULTS).

Exit codes: 0 success; 1 (run --strict) some run failed; 2 bad input (suite
file, results folder, schema); 130 interrupted (rerun to resume).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import LabError, __version__


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="asyncsolve-lab", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"asyncsolve-lab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a suite (resumes: finished runs are skipped)")
    r.add_argument("suite", help="suite file (TOML)")
    r.add_argument("--results", help="results folder (default: the suite's results, "
                   "else results/SUITE-NAME)")
    r.add_argument("--binary", help="asyncsolve executable (default: $ASYNCSOLVE_BINARY, "
                   "build/asyncsolve, PATH)")
    r.add_argument("--only", help="comma-separated experiments to run")
    r.add_argument("--retry-failed", action="store_true", help="rerun failed or timed-out runs")
    r.add_argument("--dry-run", action="store_true", help="print the command lines, run nothing")
    r.add_argument("--check", action="store_true",
                   help="validate the suite against the binary and exit")
    r.add_argument("--strict", action="store_true", help="exit 1 if any run failed")
    r.add_argument("--report", action="store_true", help="write the report afterwards")
    rep = sub.add_parser("report", help="write report.md and report.html from a results folder")
    rep.add_argument("results", help="results folder (with runs/*.lab.json)")
    rep.add_argument("--out", help="output folder (default: RESULTS/report)")
    rep.add_argument("--quiet", action="store_true", help="do not print the summary tables")
    return p


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    console = Console(highlight=False)
    if not console.is_terminal:  # a log or a pipe: room for the tables
        console = Console(highlight=False, width=160)
    err = Console(stderr=True, highlight=False)
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            from .capabilities import Capabilities, check_suite, find_binary
            from .runner import run_suite
            from .suite import load_suite
            suite = load_suite(args.suite)
            caps = Capabilities(find_binary(args.binary))
            results = Path(args.results or suite.results or f"results/{suite.name}")
            if args.check:
                check_suite(suite, caps)
                n = len(suite.runs())
                console.print(f"{args.suite}: valid; {len(suite.experiments)} experiments, "
                              f"{n} runs")
                return 0
            only = args.only.split(",") if args.only else None
            counts = run_suite(suite, results, caps, retry_failed=args.retry_failed,
                               dry_run=args.dry_run, only=only, console=console)
            if args.report and not args.dry_run:
                _report(results, None, console, quiet=False)
            return 1 if args.strict and counts["failed"] else 0
        return _report(Path(args.results), args.out, console, quiet=args.quiet)
    except LabError as e:
        err.print(f"asyncsolve-lab: {e}", markup=False, soft_wrap=True)
        return e.exit_code
    except KeyboardInterrupt:
        err.print("asyncsolve-lab: interrupted")
        return 130


def _report(results: Path, out, console, quiet: bool) -> int:
    from .report import print_tables, summary_tables, write_report
    md, page, _, sections = write_report(results, out)
    if not quiet:
        print_tables(summary_tables(sections), console)
    console.print(f"report: {page}", soft_wrap=True)
    console.print(f"markdown: {md}", soft_wrap=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
