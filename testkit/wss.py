"""The TLS track's test side, shared by every room's TLS tests: the certificates of
build/tls (scripts/setup-tls.sh), an echo server started in TLS mode with its stdout
drained, and a Python wss:// client that trusts only the test CA.

What each program needs for TLS on its command line or in its environment comes from the
harness catalog (harness/runtimes.toml's `tls` tables, wsbench.catalog.Program.over_tls),
so these tests check exactly what a measured run uses."""

from __future__ import annotations

import argparse
import json
import re
import ssl
import time
from pathlib import Path
from typing import Callable

from . import ROOT
from .background import Background

TLS_DIR = ROOT / "build" / "tls"
CA = TLS_DIR / "ca.pem"
TLS_LINE = re.compile(r'^WSBENCH-TLS version=(\S+) cipher=(\S+) group=(\S+) resumed=(yes|no|\?) '
                      r'library=("[^"]*"|\?)$')

SERVERS = ("lws", "node-ws", "bun", "deno")  # every server of the catalog speaks TLS


def _catalog():  # type: ignore[no-untyped-def]
    from wsbench.catalog import load_catalog  # the venv's harness (make setup)

    return load_catalog()


def _values(cert: str) -> dict[str, str]:
    from wsbench.certificates import load_certs

    return load_certs(TLS_DIR).values(cert)


def manifest() -> dict[str, dict[str, object]]:
    return json.loads((TLS_DIR / "manifest.json").read_text())


def cert_files(name: str) -> tuple[Path, Path]:
    entry = manifest()[name]
    return TLS_DIR / str(entry["cert"]), TLS_DIR / str(entry["key"])


def cert_args(cert: str = "server") -> list[str]:
    """``--tls-cert FILE --tls-key FILE`` for build/tls's ``cert`` (a manifest name), as every
    test peer takes them."""
    pem, key = TLS_DIR / f"{cert}.pem", TLS_DIR / f"{cert}.key"
    return ["--tls-cert", str(pem), "--tls-key", str(key)]


def peer_options(argv: list[str] | None = None,
                 more: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    """A test peer's command line: ``--port N`` (0: any), and in TLS mode ``--tls-cert FILE
    --tls-key FILE`` (cert_args); ``more`` adds the peer's own options."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    if more is not None:
        more(parser)
    return parser.parse_args(argv)


def peer_context(options: argparse.Namespace) -> ssl.SSLContext | None:
    """The TLS server context of a peer started with ``--tls-cert``/``--tls-key`` (TLS 1.2
    at least), or None for a plain one."""
    if not options.tls_cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(options.tls_cert, options.tls_key)
    return context


def server_tls(server: str, cert: str = "server") -> tuple[list[str], dict[str, str]]:
    """The server's command line in TLS mode presenting ``cert`` (servers/README.md, "TLS
    per server"), and its environment: the catalog's twin NAME/wss."""
    program = _catalog().servers[server].over_tls(_values(cert))
    return [*program.command, "--port", "0"], dict(program.env)


def server_tls_command(server: str, cert: str = "server") -> list[str]:
    return server_tls(server, cert)[0]


def client_trust(client: str) -> tuple[list[str], dict[str, str]]:
    """A client's command line and extra environment trusting only the test CA, the
    runtime's documented way (clients/README.md, "wss://"), as the catalog says."""
    program = _catalog().clients[client]
    secure = program.over_tls(_values("server"))
    return list(secure.command), {k: v for k, v in secure.env.items() if program.env.get(k) != v}


def client_context(ca: Path = CA) -> ssl.SSLContext:
    """Trusts `ca` alone and checks the host name (ssl's defaults otherwise)."""
    context = ssl.create_default_context(cafile=str(ca))
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    return context


class Server(Background):
    """An echo server in the background (``Background``: its own process group, every
    stdout line kept), reached over wss://."""

    def url(self, path: str = "/") -> str:
        return f"wss://127.0.0.1:{self.port}{path}"

    def tls_lines(self, count: int, timeout: float = 5.0) -> list[re.Match[str]]:
        """The first `count` WSBENCH-TLS lines, waiting for them a little."""
        deadline = time.monotonic() + timeout
        while True:
            found = [m for m in (TLS_LINE.match(line) for line in self.lines) if m]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.02)
