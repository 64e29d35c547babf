"""Both ends of the loopback connections to a server's port, read from the kernel at one
instant: each end's queues and byte counters, the client's end found by its port pair.

``ss -tinH state established '( sport = :P or dport = :P )'`` lists the server's end (local
port P) and the client's end (peer port P) of every connection. Per end:

- ``recvq``: bytes the kernel received and the application has not read (Recv-Q);
- ``sendq``: bytes the application wrote and the peer has not acknowledged, sent or not yet
  sent (Send-Q; ``notsent`` is the part not yet sent);
- ``bytes_received``, ``bytes_acked``: tcp_info's counters since the connection opened.

What the application at one end has handed its kernel is ``bytes_acked + sendq`` (less 1
for the SYN, which ``bytes_acked`` counts: the difference of two readings cancels it); what
the application at the other end has read is ``bytes_received - recvq``. Those two are
exact where the queues alone are not: a segment that arrived before its ACK went back is in
the receiver's queue and still in the sender's (seen on loopback: 80 KiB of 4 MiB).

Used at the backpressure kind's marks (harness/wsbench/backpressure.py)."""

from __future__ import annotations

import re
from typing import Any

from .socket_bytes import ss_established

_COUNTERS = ("bytes_received", "bytes_acked", "bytes_sent", "bytes_retrans", "notsent")
_COUNTER = re.compile(r"\b(" + "|".join(_COUNTERS) + r"):(\d+)")


def _port(address: str) -> int | None:
    tail = address.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def parse(text: str, port: int) -> dict[str, Any]:
    """``ss -tinH`` output as ``{"connections": [{"client": end, "server": end}, ...]}``,
    paired by the client's port; an end is ``{"port", "recvq", "sendq", <counters>}``."""
    ends: dict[tuple[str, int], dict[str, int]] = {}  # ("server"|"client", client port)
    current: dict[str, int] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            fields = line.split()
            current = None
            if len(fields) < 4 or not (fields[0].isdigit() and fields[1].isdigit()):
                continue
            local, peer = _port(fields[2]), _port(fields[3])
            if local == port:
                side, client_port = "server", peer
            elif peer == port:
                side, client_port = "client", local
            else:
                continue
            if client_port is None:
                continue
            current = {"port": client_port, "recvq": int(fields[0]), "sendq": int(fields[1]),
                       **{k: 0 for k in _COUNTERS}}
            ends[(side, client_port)] = current
            continue
        if current is not None:
            current.update((k, int(v)) for k, v in _COUNTER.findall(line))
    pairs = sorted({p for _, p in ends})
    return {"connections": [{"client": ends.get(("client", p)), "server": ends.get(("server", p))}
                            for p in pairs]}


def read(port: int) -> dict[str, Any] | str:
    """Both ends of every established connection to ``port``, or why they cannot be read."""
    return ss_established(f"( sport = :{port} or dport = :{port} )", lambda text: parse(text, port))


def handed(end: dict[str, int]) -> int:
    """What the application at this end has handed its kernel (plus 1 for the SYN)."""
    return end["bytes_acked"] + end["sendq"]


def read_by_app(end: dict[str, int]) -> int:
    """What the application at this end has read from its kernel."""
    return end["bytes_received"] - end["recvq"]
