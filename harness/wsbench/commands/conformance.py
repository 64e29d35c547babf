"""``wsbench conformance``: every client against the RFC 6455 cases (conformance/)."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..conformance import cases, runner
from ..errors import WsbenchError
from ..paths import relative, report_files
from ..progress import Progress
from ..report.table import render_markdown
from . import EXIT_FAILED, record_and_report


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    clients = catalog.select("client", args.client, None)
    try:
        chosen = cases.select(args.case)
    except KeyError as exc:
        raise WsbenchError(f"unknown case '{exc.args[0]}' (`wsbench list` shows the "
                           f"{len(cases.CASES)} cases)") from None
    if not 1 <= args.jobs <= 64:
        raise WsbenchError(f"--jobs must be between 1 and 64, got {args.jobs}")
    if not clients:
        raise WsbenchError("no client to run")
    files = report_files(args.out, "conformance")
    run = runner.new_run(clients, chosen, catalog, argv, args.jobs)
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench conformance: {len(chosen)} cases x {len(clients)} clients, {args.jobs} at a time; "
                  f"results: {relative(files.json)}")
    record_and_report(lambda save: runner.execute(clients, chosen, run, args.out / "logs" / files.stamp, args.jobs,
                                                  progress, save), run, files, render_markdown)
    return EXIT_FAILED if any(r.error for r in run.clients.values()) else 0
