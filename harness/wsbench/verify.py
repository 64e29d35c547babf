"""Checking a server against the echo contract before anything is measured with it.

The verifier is an independent peer (the Python ``websockets`` library), so a server is
never vouched for by a client of the same runtime.
"""

from __future__ import annotations

import random
import ssl
from dataclasses import dataclass, field

from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

SIZES = (0, 11, 64 * 1024, 1024 * 1024)
# One character of each UTF-8 length: 1, 2, 3 and 4 bytes.
_MIXED = ("a", "é", "€", "😀")


@dataclass
class Verification:
    ok: bool
    checks: list[str] = field(default_factory=list)
    error: str | None = None


def text_payload(size: int, seed: int = 7) -> str:
    """A string of exactly ``size`` UTF-8 bytes, mostly ASCII with multibyte characters."""
    rng = random.Random(seed)
    out: list[str] = []
    used = 0
    while used < size:
        room = size - used
        ch = rng.choice(_MIXED) if rng.random() < 0.1 else chr(rng.randrange(32, 127))
        if len(ch.encode()) > room:
            ch = "x"
        out.append(ch)
        used += len(ch.encode())
    return "".join(out)


def binary_payload(size: int, seed: int = 11) -> bytes:
    return random.Random(seed).randbytes(size)


def verify_echo(url: str, tls: ssl.SSLContext | None = None, timeout_s: float = 10.0) -> Verification:
    """Byte-exact echo of text and binary at every size in SIZES, types preserved; over
    wss:// with ``tls`` (tls.client_context: the certificate and the host name checked)."""
    result = Verification(ok=False)
    try:
        with connect(url, max_size=None, compression=None, open_timeout=timeout_s,
                     close_timeout=2, ssl=tls) as ws:
            for size in SIZES:
                for kind, payload in (("text", text_payload(size)), ("binary", binary_payload(size))):
                    ws.send(payload)
                    reply = ws.recv(timeout=timeout_s)
                    name = f"{kind} {size} B"
                    if type(reply) is not type(payload):
                        result.error = f"{name}: echoed as {'text' if isinstance(reply, str) else 'binary'}"
                        return result
                    if reply != payload:
                        result.error = f"{name}: echo differs {_where(payload, reply)}"
                        return result
                    result.checks.append(name)
    except TimeoutError:
        result.error = f"no echo within {timeout_s:g} s after {len(result.checks)} checks"
        return result
    except (OSError, WebSocketException) as exc:
        result.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        return result
    result.ok = True
    return result


def _where(sent: str | bytes, got: str | bytes) -> str:
    a = sent.encode() if isinstance(sent, str) else sent
    b = got.encode() if isinstance(got, str) else got
    if len(a) != len(b):
        return f"in length ({len(b)} bytes back, {len(a)} sent)"
    first = next(i for i in range(len(a)) if a[i] != b[i])
    return f"at byte {first}"
