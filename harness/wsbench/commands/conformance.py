"""``wsbench conformance``: every client against the RFC 6455 cases (conformance/), and with
``--tls`` behind TLS, plus the TLS-failure set."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..conformance import schedule, tls_cases, tls_setup
from ..errors import WsbenchError
from ..paths import relative, report_files
from ..progress import Progress
from ..report import printed
from . import EXIT_FAILED, measure_and_record


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    clients = catalog.select("client", args.client, None)
    try:
        chosen = tls_cases.select(args.case, args.tls)
    except KeyError as exc:
        raise WsbenchError(f"unknown case '{exc.args[0]}' (`wsbench list` shows the {len(tls_cases.CASES)} cases "
                           f"and the {len(tls_cases.TLS_CASES)} TLS-failure cases)") from None
    except ValueError as exc:
        raise WsbenchError(f"case '{exc.args[0]}' is a TLS-failure case: it runs only with --tls") from None
    if not 1 <= args.jobs <= 64:
        raise WsbenchError(f"--jobs must be between 1 and 64, got {args.jobs}")
    if not clients:
        raise WsbenchError("no client to run")
    tls = tls_setup.plan(chosen) if args.tls else None
    clients = tls_setup.over_tls(clients, tls)
    files = report_files(args.out, "conformance")
    run = schedule.new_run(clients, chosen, catalog, argv, args.jobs, tls)
    progress = Progress(total=0, quiet=args.quiet)
    over = " over TLS (wss://)" if tls else ""
    progress.note(f"wsbench conformance: {len(chosen)} cases x {len(clients)} clients{over}, {args.jobs} at a time; "
                  f"results: {relative(files.json)}")
    measure_and_record(run, files, lambda: schedule.execute(clients, chosen, run, args.out / "logs" / files.stamp,
                                                            args.jobs, progress, files.json, tls), printed)
    return EXIT_FAILED if any(r.error for r in run.clients.values()) else 0
