"""Bytes on the wire, counted by the kernel on the server's sockets: the TCP payload each
established connection of the server's port has received (client to server) and sent
(server to client), from ``ss -tin`` (tcp_info's ``bytes_received``, and ``bytes_sent`` less
``bytes_retrans``), read at the start barrier and at the end barrier. Not ``bytes_acked``,
which a delayed ACK moves across a barrier; and not ``bytes_sent`` alone, which counts a
segment again when TCP sends it again: on a loaded machine a delayed ACK lets the tail loss
probe resend the last segment on loopback too (seen: one 66-byte echo counted twice). Their difference is
what the measured phase put on the wire: frame headers, masking keys, compressed or not,
TLS records and all -- the figure that says what permessage-deflate saved, measured rather
than assumed (schema 13, ``extra.wire``).

Only a phase whose connections are the same at both barriers is counted: a connection
that closed before the end reading took its counters with it, so a kind that opens and
closes connections while measured (handshakes) has no reading, with the reason."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from typing import Any, Callable, TypeVar
from urllib.parse import urlsplit

SS_TIMEOUT_S = 10.0
_COUNTER = re.compile(r"\b(bytes_received|bytes_sent|bytes_retrans):(\d+)")


@dataclass(frozen=True)
class Reading:
    """Per connection (the peer's address and port): bytes received, bytes sent (each once),
    bytes sent again."""

    sockets: dict[str, tuple[int, int, int]]


def parse_ss(text: str) -> Reading:
    """``ss -tinH state established`` output: a line per socket (its queues, local and peer
    address), then its information line, indented."""
    sockets: dict[str, tuple[int, int, int]] = {}
    peer: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            fields = line.split()
            peer = fields[3] if len(fields) >= 4 else None
            if peer is not None:
                sockets[peer] = (0, 0, 0)
            continue
        if peer is None:
            continue
        counters = dict((k, int(v)) for k, v in _COUNTER.findall(line))
        again = counters.get("bytes_retrans", 0)
        sockets[peer] = (counters.get("bytes_received", 0), counters.get("bytes_sent", 0) - again, again)
    return Reading(sockets)


def port_of(url: str) -> int | None:
    try:
        return urlsplit(url).port
    except ValueError:
        return None


def read(port: int) -> Reading | str:
    """The server's established connections on ``port`` and their counters, or why not."""
    return ss_established(f"( sport = :{port} )", parse_ss)


T = TypeVar("T")


def ss_established(selector: str, parse: Callable[[str], T]) -> T | str:
    """``parse`` of ``ss -tinH``'s lines for the established TCP connections ``selector``
    names (an ss filter), or why ss could not be run, in one line."""
    try:
        done = subprocess.run(["ss", "-tinH", "state", "established", selector],
                              capture_output=True, text=True, timeout=SS_TIMEOUT_S)
    except FileNotFoundError:
        return "ss (iproute2) is not installed"
    except subprocess.TimeoutExpired:
        return f"ss took more than {SS_TIMEOUT_S:.0f} s"
    if done.returncode != 0:
        return f"ss exited {done.returncode}: {done.stderr.strip()[:200]}"
    return parse(done.stdout)


def phase(start: Reading | str, end: Reading | str, messages: int) -> dict[str, Any] | str:
    """What the measured phase put on the wire (``extra.wire``), or why it is not counted."""
    if isinstance(start, str):
        return f"at the start barrier: {start}"
    if isinstance(end, str):
        return f"at the end barrier: {end}"
    if not start.sockets:
        return "no established connection on the server's port at the start barrier"
    if start.sockets.keys() != end.sockets.keys():
        gone, new = len(start.sockets.keys() - end.sockets.keys()), len(end.sockets.keys() - start.sockets.keys())
        return (f"the connections changed while measured ({gone} closed, {new} opened): "
                "a closed connection's counters are gone")
    c2s = sum(end.sockets[p][0] - start.sockets[p][0] for p in start.sockets)
    s2c = sum(end.sockets[p][1] - start.sockets[p][1] for p in start.sockets)
    again = sum(end.sockets[p][2] - start.sockets[p][2] for p in start.sockets)
    wire: dict[str, Any] = {"connections": len(start.sockets), "c2s_bytes": c2s, "s2c_bytes": s2c,
                            "s2c_resent_bytes": again}
    if messages > 0:
        wire["c2s_per_msg"] = c2s / messages
        wire["s2c_per_msg"] = s2c / messages
    return wire
