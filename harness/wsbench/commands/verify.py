"""``wsbench verify``: start servers and check each against the echo contract."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..errors import WsbenchError
from ..paths import REPORTS_DIR
from ..server import start_server
from ..verify import verify_echo
from . import EXIT_FAILED


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    failed = 0
    for server in catalog.select("server", args.server, None):
        try:
            live = start_server(server, REPORTS_DIR / "logs" / "verify")
        except WsbenchError as exc:
            print(f"FAIL {server.name}: {exc}")
            failed += 1
            continue
        try:
            check = verify_echo(live.url())
        finally:
            live.stop()
        if check.ok:
            print(f"ok   {server.name}: {len(check.checks)} echoes byte-exact ({', '.join(check.checks)})")
        else:
            print(f"FAIL {server.name}: {check.error}")
            failed += 1
    return EXIT_FAILED if failed else 0
