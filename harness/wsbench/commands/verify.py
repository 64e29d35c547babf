"""``wsbench verify``: start servers and check each against the echo contract."""

from __future__ import annotations

import argparse

from .. import tls
from ..catalog import load_catalog
from ..errors import WsbenchError
from ..paths import REPORTS_DIR
from ..runner import tls_axis
from ..server import start_server
from ..verify import verify_echo
from . import EXIT_FAILED


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    servers, settings, _ = tls_axis(args.tls, args.tls_key, catalog.select("server", args.server, None))
    context = tls.client_context(tls.load_certs()) if settings else None
    failed = 0
    for server in servers:
        try:
            live = start_server(server, REPORTS_DIR / "logs" / "verify")
        except WsbenchError as exc:
            print(f"FAIL {server.name}: {exc}")
            failed += 1
            continue
        try:
            check = verify_echo(live.url(), context if server.secure else None)
        finally:
            live.stop()
        if check.ok:
            over = f" over {live.url().split(':', 1)[0]}://, certificate and host name verified" if server.secure else ""
            print(f"ok   {server.name}: {len(check.checks)} echoes byte-exact ({', '.join(check.checks)}){over}")
        else:
            print(f"FAIL {server.name}: {check.error}")
            failed += 1
    return EXIT_FAILED if failed else 0
