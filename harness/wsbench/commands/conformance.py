"""``wsbench conformance``: every client against the RFC 6455 cases (conformance/), and with
``--tls`` behind TLS, plus the TLS-failure set; with ``--servers`` the servers against the
server cases instead (server_conformance/); with ``--deflate`` the permessage-deflate cases
of either side (deflate_conformance/)."""

from __future__ import annotations

import argparse

from ..catalog import Program, load_catalog
from ..conformance import cases, schedule, tls_cases, tls_setup
from ..deflate_conformance import command as deflate_command
from ..server_conformance import server_cases, server_schedule
from ..target import target_programs
from ..errors import WsbenchError
from ..paths import relative, report_files
from ..progress import Progress
from ..report import printed
from . import EXIT_FAILED, measure_and_record


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if not 1 <= args.jobs <= 64:
        raise WsbenchError(f"--jobs must be between 1 and 64, got {args.jobs}")
    if getattr(args, "deflate", False):  # permessage-deflate (RFC 7692): a room of its own
        return deflate_command.main(args, argv)
    if args.servers:
        return servers(args, argv)
    if args.server or args.target:
        raise WsbenchError("-s/--server and --target name servers: add --servers")
    catalog = load_catalog(args.catalog)
    clients = catalog.select("client", args.client, None)
    try:
        chosen = tls_cases.select(args.case, args.tls, args.quick)
    except KeyError as exc:
        raise WsbenchError(f"unknown case '{exc.args[0]}' (`wsbench list` shows the {len(cases.CASES)} client "
                           f"cases and the {len(tls_cases.TLS_CASES)} TLS-failure cases)") from None
    except ValueError as exc:
        raise WsbenchError(f"case '{exc.args[0]}' is a TLS-failure case: it runs only with --tls") from None
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


def servers(args: argparse.Namespace, argv: list[str]) -> int:
    """``--servers``: every catalog server (``-s NAME``) and every ``--target NAME=URL``
    against the server cases; with ``--tls`` the catalog servers' TLS twins (NAME/wss)."""
    if args.client:
        raise WsbenchError("--servers plays the server cases: name servers with -s NAME, not clients with -c")
    if args.tls and args.target:
        raise WsbenchError("--servers --tls plays the catalog servers' TLS twins; a --target is played over ws:// "
                           "only: drop --tls or --target")
    catalog = load_catalog(args.catalog)
    targets: list[Program] = []
    if args.target:
        catalog, targets = target_programs(args.target, catalog, allow_remote=False)
    chosen_servers = catalog.select("server", args.server, None) if args.server or not targets else []
    chosen_servers = [s for s in chosen_servers if s not in targets] + targets
    tls = server_schedule.over_tls(chosen_servers) if args.tls else None
    if tls:
        chosen_servers = tls.servers
    try:
        chosen = server_cases.select(args.case, args.quick)
    except KeyError as exc:
        raise WsbenchError(f"unknown server case '{exc.args[0]}' (`wsbench list` shows the "
                           f"{len(server_cases.CASES)} server cases)") from None
    if not chosen_servers:
        raise WsbenchError("no server to play")
    files = report_files(args.out, "server-conformance")
    run = server_schedule.new_run(catalog, chosen_servers, chosen, argv, args.jobs, tls)
    progress = Progress(total=0, quiet=args.quiet)
    over = " over TLS (wss://)" if tls else ""
    progress.note(f"wsbench conformance --servers: {len(chosen)} cases x {len(chosen_servers)} servers{over}, "
                  f"{args.jobs} connections at a time; results: {relative(files.json)}")
    measure_and_record(run, files, lambda: server_schedule.execute(
        chosen_servers, chosen, run, args.out / "logs" / files.stamp, args.jobs, progress, files.json,
        tls.context if tls else None), printed)
    return EXIT_FAILED if any(r.error for r in run.servers.values()) else 0
