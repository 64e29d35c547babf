"""``wsbench verify``: start servers and check each against the echo contract, and the
servers with the ``broadcast`` feature against /broadcast too."""

from __future__ import annotations

import argparse

from .. import certificates
from ..catalog import load_catalog
from ..errors import WsbenchError
from ..paths import REPORTS_DIR
from ..runner import tls_axis
from ..server import start_server
from ..verify import verify_broadcast, verify_echo
from . import EXIT_FAILED


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    servers, settings, _ = tls_axis(args.tls, args.tls_key, catalog.select("server", args.server, None))
    context = certificates.client_context(certificates.load_certs()) if settings else None
    failed = 0
    for server in servers:
        try:
            live = start_server(server, REPORTS_DIR / "logs" / "verify")
        except WsbenchError as exc:
            print(f"FAIL {server.name}: {exc}")
            failed += 1
            continue
        fans = None
        try:
            check = verify_echo(live.url(), context if server.secure else None)
            if check.ok and "broadcast" in server.features:
                fans = verify_broadcast(live.url(), context if server.secure else None)
        finally:
            live.stop()
        over = f" over {live.url().split(':', 1)[0]}://, certificate and host name verified" if server.secure else ""
        if check.ok:
            print(f"ok   {server.name}: {len(check.checks)} echoes byte-exact ({', '.join(check.checks)}){over}")
        else:
            print(f"FAIL {server.name}: {check.error}")
            failed += 1
        if fans is not None and fans.ok:
            print(f"ok   {server.name} /broadcast: {'; '.join(fans.checks)}{over}")
        elif fans is not None:
            print(f"FAIL {server.name}: {fans.error}")
            failed += 1
    return EXIT_FAILED if failed else 0
