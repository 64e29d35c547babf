"""Checking a server against the echo contract before anything is measured with it.

The verifier is an independent peer (the Python ``websockets`` library), so a server is
never vouched for by a client of the same runtime.
"""

from __future__ import annotations

import random
import ssl
from contextlib import ExitStack
from dataclasses import dataclass, field

from websockets.exceptions import WebSocketException

from .wsclient import connect

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
    opened = False
    try:
        with connect(url, max_size=None, compression=None, open_timeout=timeout_s,
                     close_timeout=2, ssl=tls) as ws:
            opened = True
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
    except TimeoutError as exc:  # (the opening's: "upgrade not answered ...", wsclient.py)
        result.error = f"no echo within {timeout_s:g} s after {len(result.checks)} checks" if opened \
            else _one_line(exc)
        return result
    except (OSError, WebSocketException) as exc:
        result.error = _one_line(exc)
        return result
    result.ok = True
    return result


def _one_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:200]


def _where(sent: str | bytes, got: str | bytes) -> str:
    a = sent.encode() if isinstance(sent, str) else sent
    b = got.encode() if isinstance(got, str) else got
    if len(a) != len(b):
        return f"in length ({len(b)} bytes back, {len(a)} sent)"
    first = next(i for i in range(len(a)) if a[i] != b[i])
    return f"at byte {first}"


# --- /broadcast (servers/README.md): every message to every /broadcast connection -----

BROADCAST_PEERS = 3


@dataclass(frozen=True)
class _Sent:
    number: int  # counted from 1 over the whole check
    sender: int  # connection, counted from 1
    payload: str | bytes

    def describe(self) -> str:
        kind = "text" if isinstance(self.payload, str) else "binary"
        size = len(self.payload.encode()) if isinstance(self.payload, str) else len(self.payload)
        return f"message {self.number} ({kind}, {size} B, sent by connection {self.sender})"


class BroadcastFailure(Exception):
    """One line: which message did not reach which connection as it should."""


def broadcast_url(url: str) -> str:
    """The server's URL with the path /broadcast (scheme, host and port kept)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}/broadcast"


def verify_broadcast(url: str, tls: ssl.SSLContext | None = None, timeout_s: float = 10.0,
                     peers: int = BROADCAST_PEERS) -> Verification:
    """/broadcast: ``peers`` connections; messages sent one at a time by each (text and
    binary, 0 B to 64 KiB), then a burst from one, then bursts from all at once. Every
    connection, the sender included, must receive every message once, byte-exact, with
    its type: in the order sent, and for the concurrent bursts in one order shared by all
    (each sender's own order kept). A failure names the message and the connection."""
    result = Verification(ok=False)
    target = broadcast_url(url)
    sent: list[_Sent] = []
    try:
        with ExitStack() as stack:
            conns = [stack.enter_context(connect(target, max_size=None, compression=None,
                                                 open_timeout=timeout_s, close_timeout=2, ssl=tls))
                     for _ in range(peers)]
            _broadcast_rounds(conns, sent, timeout_s, result.checks)
    except BroadcastFailure as exc:
        result.error = f"/broadcast: {exc}"
    except (OSError, WebSocketException) as exc:
        result.error = f"/broadcast: {_one_line(exc)}"
    result.ok = result.error is None
    return result


def _payload(number: int, text: bool, size: int) -> str | bytes:
    """Unique per message (its number leads), ``size`` bytes; 0 B when size is 0."""
    if size == 0:
        return "" if text else b""
    head = f"#{number}:"
    if text:
        body = text_payload(max(size - len(head), 0), seed=number)
        return (head + body) if len(head) <= size else head[:size]
    return (head.encode() + binary_payload(size, seed=number))[:size]


def _broadcast_rounds(conns: list, sent: list[_Sent], timeout_s: float, checks: list[str]) -> None:
    n = len(conns)

    def new(sender: int, text: bool, size: int) -> _Sent:
        m = _Sent(len(sent) + 1, sender, _payload(len(sent) + 1, text, size))
        sent.append(m)
        return m

    # 1. one message at a time from each connection: it must reach every one next
    for sender in range(1, n + 1):
        for text, size in ((True, 11), (False, 11), (True, 0), (False, 65536)):
            m = new(sender, text, size)
            conns[sender - 1].send(m.payload)
            for j, ws in enumerate(conns, 1):
                _expect_in_order(ws, j, [m], sent, timeout_s)
    checks.append(f"{len(sent)} messages one at a time from {n} connections")
    # 2. a burst from the first connection: every connection gets it in the order sent
    burst = [new(1, i % 2 == 0, (7, 300, 70000, 12)[i % 4]) for i in range(12)]
    for m in burst:
        conns[0].send(m.payload)
    for j, ws in enumerate(conns, 1):
        _expect_in_order(ws, j, burst, sent, timeout_s)
    checks.append(f"a burst of {len(burst)} from connection 1, in order")
    # 3. bursts from every connection at once: one order, shared by all receivers
    mixed = [new(s, i % 2 == 1, 40 + i) for s in range(1, n + 1) for i in range(4)]
    for m in mixed:
        conns[m.sender - 1].send(m.payload)
    orders = [_receive_all(ws, j, mixed, sent, timeout_s) for j, ws in enumerate(conns, 1)]
    for j, order in enumerate(orders, 1):
        for s in range(1, n + 1):
            own = [m.number for m in order if m.sender == s]
            want = [m.number for m in mixed if m.sender == s]
            if own != want:
                raise BroadcastFailure(f"connection {j} received connection {s}'s messages in the order "
                                       f"{own}, sent as {want}")
        if [m.number for m in order] != [m.number for m in orders[0]]:
            raise BroadcastFailure(f"connection {j} received the concurrent messages in another order "
                                   f"than connection 1: {[m.number for m in order]} against "
                                   f"{[m.number for m in orders[0]]}")
    checks.append(f"{len(mixed)} sent at once by {n} connections, one order for all")
    # nothing more may come
    for j, ws in enumerate(conns, 1):
        try:
            extra = ws.recv(timeout=0.2)
        except TimeoutError:
            continue
        raise BroadcastFailure(f"connection {j} received {_which(extra, sent)} once more")
    checks.append(f"every message received once by each of {n} connections")


def _which(reply: str | bytes, sent: list[_Sent]) -> str:
    for m in sent:
        if type(m.payload) is type(reply) and m.payload == reply:
            return m.describe()
    kind = "text" if isinstance(reply, str) else "binary"
    size = len(reply.encode()) if isinstance(reply, str) else len(reply)
    return f"a message that was never sent ({kind}, {size} B)"


def _recv(ws, j: int, due: _Sent, timeout_s: float):  # type: ignore[no-untyped-def]
    try:
        return ws.recv(timeout=timeout_s)
    except TimeoutError:
        raise BroadcastFailure(f"{due.describe()} never reached connection {j} "
                               f"(nothing within {timeout_s:g} s)") from None


def _expect_in_order(ws, j: int, due: list[_Sent], sent: list[_Sent], timeout_s: float) -> None:  # type: ignore[no-untyped-def]
    for m in due:
        reply = _recv(ws, j, m, timeout_s)
        if type(reply) is type(m.payload) and reply == m.payload:
            continue
        if type(reply) is type(m.payload) and len(reply) == len(m.payload):
            raise BroadcastFailure(f"{m.describe()} reached connection {j} altered "
                                   f"{_where(m.payload, reply)}")
        got = _which(reply, sent)
        if got.startswith("a message that was never sent") and len(_bytes(reply)) == len(_bytes(m.payload)):
            raise BroadcastFailure(f"{m.describe()} reached connection {j} as "
                                   f"{'text' if isinstance(reply, str) else 'binary'}")
        raise BroadcastFailure(f"connection {j} received {got} where {m.describe()} was due "
                               f"(lost, duplicated or out of order)")


def _receive_all(ws, j: int, due: list[_Sent], sent: list[_Sent], timeout_s: float) -> list[_Sent]:  # type: ignore[no-untyped-def]
    got: list[_Sent] = []
    numbers = {m.number for m in due}
    while len(got) < len(due):
        missing = [m for m in due if m not in got]
        reply = _recv(ws, j, missing[0], timeout_s)
        which = next((m for m in due if type(m.payload) is type(reply) and m.payload == reply), None)
        if which is None:
            raise BroadcastFailure(f"connection {j} received {_which(reply, sent)} "
                                   f"while messages {min(numbers)}-{max(numbers)} were due")
        if which in got:
            raise BroadcastFailure(f"connection {j} received {which.describe()} twice")
        got.append(which)
    return got


def _bytes(payload: str | bytes) -> bytes:
    return payload.encode() if isinstance(payload, str) else payload
