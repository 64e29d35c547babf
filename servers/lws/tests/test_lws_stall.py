"""lws-echo's ?stall=MS (servers/README.md, item 16): after the upgrade it reads nothing for
MS ms, so a client that keeps sending fills the server's receive queue and its own send
queue until the kernel takes no more (the queues then stand still, read from both ends of
the connection: tcp_ends.py), nothing is echoed meanwhile, and then every byte sent is read
and echoed, in order. A value outside 1..60000 is refused: the connection is closed at
once, as for a bad ?fragments."""

from __future__ import annotations

import socket
import time

import pytest
from testkit.background import Background
from testkit.raw_ws import raw_client

from wsbench import tcp_ends
from wsbench.catalog import load_catalog
from wsbench.conformance.frames import BINARY, server_frame

STALL_MS = 1000
SIZE = 60000  # 16-bit length form both ways
MASK = b"\x01\x02\x03\x04"


def _lws() -> list[str]:
    program = load_catalog().servers["lws"]
    if program.missing():
        pytest.skip(f"{program.missing()[0]} missing (make setup)")
    return [*program.command, "--port", "0"]


def _ends(port: int) -> dict:  # type: ignore[type-arg]
    reading = tcp_ends.read(port)
    assert isinstance(reading, dict), reading
    [conn] = reading["connections"]
    return conn  # type: ignore[no-any-return]


def test_a_stalled_server_reads_nothing_until_the_stall_is_over_then_echoes_everything() -> None:
    with Background(_lws()) as srv:
        sock, head = raw_client(f"ws://127.0.0.1:{srv.port}/?stall={STALL_MS}")
        upgraded = time.monotonic()
        assert head.startswith(b"HTTP/1.1 101"), head[:80]
        begin = _ends(srv.port)
        sock.setblocking(False)
        sent, payloads = 0, []
        deadline = upgraded + STALL_MS / 1000 / 2
        pending = b""
        while time.monotonic() < deadline:  # as much as the kernel takes, whole frames
            if not pending:
                payloads.append(len(payloads).to_bytes(4, "little") + bytes(SIZE - 4))
                pending = server_frame(BINARY, payloads[-1], mask=MASK)
            try:
                n = sock.send(pending)
            except BlockingIOError:
                break
            sent, pending = sent + n, pending[n:]
        assert time.monotonic() < deadline, "the kernel never stopped taking bytes"
        full = _ends(srv.port)
        time.sleep(0.2)
        later = _ends(srv.port)
        assert full["client"]["sendq"] > 1 << 20 and full["server"]["recvq"] > 0, full
        # the window is full: the kernel takes nothing more from the client (bytes move only
        # from its send queue into the server's receive queue, a few KiB at a time)
        assert tcp_ends.handed(later["client"]) == tcp_ends.handed(full["client"])
        assert later["client"]["sendq"] + later["server"]["recvq"] > full["client"]["sendq"] - (256 << 10)
        assert tcp_ends.read_by_app(full["server"]) == tcp_ends.read_by_app(begin["server"])  # read nothing
        assert tcp_ends.handed(full["client"]) - tcp_ends.handed(begin["client"]) == sent
        with pytest.raises(BlockingIOError):
            sock.recv(1)  # nothing echoed during the stall
        sock.setblocking(True)
        sock.settimeout(10)
        sock.sendall(pending)  # the rest of the last frame, once the server reads again
        want = b"".join(server_frame(BINARY, p) for p in payloads)
        got = bytearray()
        while len(got) < len(want):
            chunk = sock.recv(1 << 20)
            assert chunk, f"closed after {len(got)} of {len(want)} bytes"
            if not got:
                assert time.monotonic() - upgraded >= STALL_MS / 1000 * 0.95
            got += chunk
        assert bytes(got) == want  # every message, in order
        sock.close()
    assert any("stalling: reading nothing for 1000 ms" in line for line in srv.stderr().splitlines())


def test_a_stall_outside_1_to_60000_ms_is_refused() -> None:
    with Background(_lws()) as srv:
        for value in ("0", "60001", "x", ""):
            _refused(srv, value)
    assert srv.stderr().count("rejecting connection: bad stall=") == 4


def _refused(srv: Background, value: str) -> None:
    sock, head = raw_client(f"ws://127.0.0.1:{srv.port}/?stall={value}")
    sock.settimeout(5)
    tail = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
    while True:  # closed at once (a close frame at most, then the end of the stream)
        chunk = sock.recv(4096)
        if not chunk:
            break
        tail += chunk
    sock.close()
    assert len(tail) <= 4, (value, tail)
