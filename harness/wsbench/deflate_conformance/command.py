"""``wsbench conformance --deflate`` (the clients) and ``--servers --deflate`` (the servers'
deflate twins): choosing programs and cases, the run file and the printed tables (through
the report's exporters: ``report.render``)."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..commands import EXIT_FAILED, measure_and_record
from ..doc import Report
from ..errors import WsbenchError
from ..model import Run
from ..paths import relative, report_files
from ..progress import Progress
from . import choose, pmd_client_cases as client_cases, pmd_schedule as schedule, pmd_server_cases as server_cases, pmd_tables as tables


def printed(run: Run) -> str:
    """The tables, as Markdown, through the report's one exporter interface."""
    from ..report import render
    from ..report.ranked import environment

    facts = [line for line in environment(run) if not line.startswith("permessage-deflate:")]  # the run axis' line
    return render(Report(f"wsbench results — {run.created}", None, facts, tables.sections(run), run=run), "md")


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if args.tls:
        raise WsbenchError("--deflate plays over ws:// only: drop --tls")
    if args.target:
        raise WsbenchError("--deflate plays the catalog servers' deflate twins (NAME/deflate); a --target cannot be "
                           "turned into one: drop --target")
    catalog = load_catalog(args.catalog)
    side = "server" if args.servers else "client"
    if args.servers and args.client:
        raise WsbenchError("--servers plays the server cases: name servers with -s NAME, not clients with -c")
    if not args.servers and args.server:
        raise WsbenchError("-s/--server names servers: add --servers")
    try:
        chosen = (choose.servers(args.case, args.quick) if args.servers else choose.clients(args.case, args.quick))
    except KeyError as exc:
        total = len(server_cases.CASES) if args.servers else len(client_cases.CASES)
        raise WsbenchError(f"unknown {side} deflate case '{exc.args[0]}' (`wsbench list` shows the {total})") from None
    programs, unable = schedule.deflating(catalog.select(side, args.server if args.servers else args.client, None))
    if not programs:
        raise WsbenchError(f"no {side} to play")
    files = report_files(args.out, f"{side}-deflate-conformance")
    log_dir = args.out / "logs" / files.stamp
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench conformance --deflate: {len(chosen)} {side} cases x {len(programs)} {side}s "
                  f"({len(unable)} n/a), {args.jobs} at a time; results: {relative(files.json)}")
    if args.servers:
        run = schedule.new_run(catalog, argv, args.jobs, servers=programs,
                               server_cases=chosen)  # type: ignore[arg-type]
        measure_and_record(run, files, lambda: schedule.execute_servers(
            programs, chosen, run, log_dir, args.jobs, progress, files.json), printed)  # type: ignore[arg-type]
        return EXIT_FAILED if any(r.error for r in run.servers.values()) else 0
    run = schedule.new_run(catalog, argv, args.jobs, clients=programs, client_cases=chosen)  # type: ignore[arg-type]
    measure_and_record(run, files, lambda: schedule.execute_clients(
        programs, chosen, run, log_dir, args.jobs, progress, files.json), printed)  # type: ignore[arg-type]
    return EXIT_FAILED if any(r.error for r in run.clients.values()) else 0
