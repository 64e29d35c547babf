"""The TLS track's certificates (``build/tls/``, made by ``make setup``:
scripts/setup-tls.sh and its ``manifest.json``) and what a program needs to use them.

Programs say how they speak TLS in ``harness/runtimes.toml`` (a ``tls`` table, see
catalog.py) with placeholders that this module fills in: ``{ca}`` the test CA (the only
one a client trusts), ``{cert}`` and ``{key}`` the server's certificate and key. Paths
are given relative to the repository root, so the commands a run records read the same
on every machine.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import WsbenchError
from .jsonobj import read_object
from .paths import ROOT, relative

TLS_DIR = ROOT / "build" / "tls"
# --tls-key: the server certificate's key type -> its entry in the manifest
KEY_TYPES = {"ecdsa": "server", "rsa": "server-rsa"}
DEFAULT_KEY_TYPE = "ecdsa"
# the failure set's certificates (a server that presents them must be refused)
FAILURE_CERTS = ("untrusted", "wrong-host", "expired")
PLACEHOLDERS = ("{ca}", "{cert}", "{key}")


@dataclass(frozen=True)
class Certs:
    """The files of ``build/tls/`` as the manifest lists them."""

    dir: Path
    manifest: dict[str, Any]

    def file(self, entry: str, part: str = "cert") -> Path:
        item = self.manifest.get(entry)
        if not isinstance(item, dict) or not isinstance(item.get(part), str):
            raise WsbenchError(f"{relative(self.dir / 'manifest.json')}: no {part} for '{entry}'; run: make setup")
        path = self.dir / item[part]
        if not path.is_file():
            raise WsbenchError(f"{relative(path)} is missing; run: make setup")
        return path

    @property
    def ca(self) -> Path:
        return self.file("ca")

    def describe(self, entry: str) -> dict[str, Any]:
        """What a run records of the certificate a server presents."""
        item = self.manifest.get(entry, {})
        return {"certificate": entry, "key_type": item.get("key_type"), "names": item.get("names"),
                "ca": relative(self.ca), "file": relative(self.file(entry))}

    def values(self, entry: str = "server") -> dict[str, str]:
        """The placeholders' values for a server presenting ``entry`` (and its clients)."""
        return {"{ca}": relative(self.ca), "{cert}": relative(self.file(entry, "cert")),
                "{key}": relative(self.file(entry, "key"))}


def load_certs(directory: Path = TLS_DIR) -> Certs:
    """The certificates, or one line saying what is missing."""
    path = directory / "manifest.json"
    manifest = read_object(path, relative(path), " is missing: the TLS certificates are made by make setup",
                           "; run: make setup")
    certs = Certs(directory, manifest)
    certs.ca  # the one file every TLS run needs: fail now, in one line
    return certs


def key_entry(key_type: str) -> str:
    if key_type not in KEY_TYPES:
        raise WsbenchError(f"--tls-key must be one of {', '.join(KEY_TYPES)}, got '{key_type}'")
    return KEY_TYPES[key_type]


def expand(items: tuple[str, ...], values: dict[str, str]) -> tuple[str, ...]:
    """``items`` with the placeholders replaced."""
    out = []
    for item in items:
        for name, value in values.items():
            item = item.replace(name, value)
        out.append(item)
    return tuple(out)


def client_context(certs: Certs) -> ssl.SSLContext:
    """What a Python client of the harness (the verifier, tests) uses: only the test CA is
    trusted, the host name is checked, TLS 1.2 at least."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(certs.ca))
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def server_context(certs: Certs, entry: str = "server") -> ssl.SSLContext:
    """What a Python server of the harness (the conformance peer) presents: ``entry``'s
    certificate and key (a failure-set entry for a server that must be refused)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(str(certs.file(entry, "cert")), str(certs.file(entry, "key")))
    except ssl.SSLError as exc:
        raise WsbenchError(f"{relative(certs.file(entry, 'cert'))}: cannot be loaded ({exc.reason}); "
                           "run: make setup") from None
    return ctx


def tls_summary(lines: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What a server printed of the connections of one sample (server.parse_tls_line):
    how many, how many resumed, and each field's value (``"mixed: a, b"`` where the
    connections differ); None without a line."""
    if not lines:
        return None
    out: dict[str, Any] = {"connections": len(lines),
                           "resumed": sum(1 for line in lines if line.get("resumed")) if any(
                               line.get("resumed") is not None for line in lines) else None}
    for key in ("version", "cipher", "group", "library"):
        seen = sorted({str(line[key]) for line in lines if line.get(key) is not None})
        out[key] = None if not seen else seen[0] if len(seen) == 1 else "mixed: " + ", ".join(seen)
    return out
