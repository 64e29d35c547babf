"""``wsbench conformance --tls``: the certificates the peer presents and the clients'
trust, as ``wsbench run --tls`` has them (certificates.py, the catalog's ``tls`` tables).

The peer presents build/tls/'s default server certificate (ECDSA P-256, for 127.0.0.1,
::1 and localhost, signed by the test CA) on its shared listener, and the TLS-failure
cases' certificates on theirs; every client trusts the test CA only, through its
runtime's own mechanism (``Program.over_tls``). A client without a ``tls`` table is n/a
with the catalog's reason (``Program.cannot_tls``).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any

from .. import certificates
from ..catalog import Program
from ..paths import relative
from .cases import Case

DEFAULT_ENTRY = "server"


@dataclass(frozen=True)
class TlsPlan:
    values: dict[str, str]  # the clients' placeholders ({ca}, ...)
    contexts: dict[str, ssl.SSLContext]  # per certificate entry the peer presents
    settings: dict[str, Any]  # what the run records as settings.tls


def plan(cases: list[Case]) -> TlsPlan:
    """The certificates the cases need, loaded; a missing one is a one-line WsbenchError."""
    certs = certificates.load_certs(certificates.TLS_DIR)  # looked up now: tests point it elsewhere
    failure = sorted({c.certificate for c in cases if c.certificate and c.certificate != DEFAULT_ENTRY})
    contexts = {entry: certificates.server_context(certs, entry) for entry in (DEFAULT_ENTRY, *failure)}
    settings = {"mode": "on", **certs.describe(DEFAULT_ENTRY),
                "failure_certificates": {entry: relative(certs.file(entry)) for entry in failure}}
    return TlsPlan(certs.values(DEFAULT_ENTRY), contexts, settings)


def over_tls(clients: list[Program], tls: TlsPlan | None) -> list[Program]:
    """Each client as it runs: over TLS with its trust where it can (``secure``), as it
    is where it cannot (it is then n/a: ``unable``) or without ``tls``."""
    if tls is None:
        return clients
    return [c.over_tls(tls.values) if c.cannot_tls() is None else c for c in clients]


def unable(client: Program, tls: TlsPlan | None) -> str | None:
    """Why the client cannot take part over TLS (None: it can, or the run is plain)."""
    if tls is None or client.secure:
        return None
    return client.cannot_tls() or "could not be set up for TLS"
