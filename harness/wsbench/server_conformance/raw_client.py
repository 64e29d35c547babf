"""One connection playing one case against a server: a WebSocket client on raw bytes
(asyncio streams, no WebSocket library). It upgrades (checking the server's
Sec-WebSocket-Accept, RFC 6455 4.1), writes the case's steps (steps.py) while it reads
everything the server sends, and records it all (replies.py).

While the script runs, a ping from the server is answered with a pong. A close frame from
the server stops the script (unless the script has sent its own close already, then the
rest of it is played: what comes after a close is part of such cases) and is answered
with a close (echoing a code that may be sent), as a client must; the client then waits
``CLOSE_WAIT_S`` for the server to close TCP (7.1.1: the server closes first) and closes
it itself otherwise. Once the script is written the server has ``case.react_s`` to end
the connection; after that the client gives up and closes TCP (a hang)."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import ssl

from ..conformance.frames import (BINARY, CLOSE, CONT, PING, PONG, TEXT, ClientFrame, accept_for, close_payload,
                                  read_client_frame)
from ..conformance.observation import sendable
from .server_cases import ServerCase
from .replies import CLIENT_CLOSED, GAVE_UP, SERVER_EOF, SERVER_RESET, ServerObservation
from .steps import Chop, Close, Pause, Step, frame

CONNECT_S = 5.0
HANDSHAKE_S = 5.0
CLOSE_WAIT_S = 1.0  # after the closing handshake, for the server to close TCP
MAX_FRAME = (64 << 20) + 4096  # the echo contract's largest message, and some
USER_AGENT = "wsbench-server-conformance"


def upgrade_request(host: str, port: int, path: str, key: str, offer: str | None = None) -> bytes:
    """The client's opening handshake (4.1): no subprotocol offered, and no extension but
    ``offer`` (a Sec-WebSocket-Extensions value, 9.1)."""
    extension = f"Sec-WebSocket-Extensions: {offer}\r\n" if offer is not None else ""
    return (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extension}User-Agent: {USER_AGENT}"
            "\r\n\r\n").encode()


def response_headers(head: bytes) -> dict[str, str]:
    """The response's header fields, names in lower case."""
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers


def check_response(head: bytes, key: str, offered: bool = False) -> str | None:
    """Why the server's answer to the upgrade is not a valid 101 (4.1, 4.2.2), or None;
    an extension in it is one only when none was ``offered`` (else its judge's to check)."""
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or status[1] != "101":
        return f"answered the upgrade with '{lines[0][:80]}'"
    headers = response_headers(head)
    if headers.get("upgrade", "").lower() != "websocket":
        return "101 without 'Upgrade: websocket' (4.1)"
    if headers.get("sec-websocket-accept") != accept_for(key):
        return f"wrong Sec-WebSocket-Accept '{headers.get('sec-websocket-accept')}' (4.2.2)"
    if headers.get("sec-websocket-extensions") and not offered:
        return f"negotiated an extension that was not offered: {headers['sec-websocket-extensions']} (4.1)"
    return None


async def play(case: ServerCase, host: str, port: int, path: str,
               context: ssl.SSLContext | None = None) -> ServerObservation:
    """Connect (over TLS with ``context``), upgrade, play ``case`` and return what the
    server did."""
    obs = ServerObservation(case.id)
    steps = await asyncio.to_thread(case.steps) if case.offer is None else ()  # megabytes of masking off the loop
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            host, port, limit=1 << 16, ssl=context, server_hostname=host if context else None), CONNECT_S)
    except (OSError, asyncio.TimeoutError) as exc:
        obs.handshake = f"cannot connect to {host}:{port}{' over TLS' if context else ''}: {exc or 'timed out'}"
        return obs
    try:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode("ascii")
        writer.write(upgrade_request(host, port, path, key, case.offer))
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANDSHAKE_S)
        except asyncio.TimeoutError:
            obs.handshake = f"no answer to the upgrade within {HANDSHAKE_S:g} s"
            return obs
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError) as exc:
            obs.handshake = f"no valid answer to the upgrade ({type(exc).__name__})"
            return obs
        obs.handshake = check_response(head, key, offered=case.offer is not None)
        if case.offer is not None:  # the script depends on the answer (deflate_conformance/)
            obs.extensions = response_headers(head).get("sec-websocket-extensions")
            if obs.handshake is None:
                steps = await asyncio.to_thread(case.steps_for, obs.extensions)
        if obs.handshake is None:
            await Session(case, obs, reader, writer).run(steps)
    finally:
        writer.transport.abort()
    return obs


class Session:
    """One upgraded connection playing one case."""

    def __init__(self, case: ServerCase, obs: ServerObservation, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.case, self.obs, self.reader, self.writer = case, obs, reader, writer
        self.done = asyncio.Event()  # the TCP connection is over (or given up)
        self.server_closed = False  # the server's close frame arrived
        self.script_closed = False  # the script wrote its own close frame
        self.arrival = asyncio.Event()  # a frame came from the server
        self.messages = self.pongs = 0  # data messages ended (a frame with FIN) and pongs, so far
        self.last_pong: bytes | None = None
        self.t0 = 0.0

    def now(self) -> float:
        return round(asyncio.get_running_loop().time() - self.t0, 4)

    def end(self, how: str) -> None:
        if self.obs.tcp_end is None:
            self.obs.tcp_end, self.obs.tcp_end_t = how, self.now()
        self.done.set()
        self.arrival.set()

    async def run(self, steps: tuple[Step, ...]) -> None:
        self.t0 = asyncio.get_running_loop().time()
        reading = asyncio.create_task(self.read())
        script = asyncio.create_task(self.play(steps))
        over = asyncio.create_task(self.done.wait())
        try:
            await asyncio.wait({script, over}, return_when=asyncio.FIRST_COMPLETED)
            if not self.done.is_set():  # the script is written: the server's turn
                try:
                    await asyncio.wait_for(self.done.wait(), self.case.react_s)
                except asyncio.TimeoutError:
                    if self.server_closed:  # the closing handshake is under way: let it end
                        try:
                            await asyncio.wait_for(self.done.wait(), CLOSE_WAIT_S + 1.0)
                        except asyncio.TimeoutError:
                            pass
                    self.end(GAVE_UP)
        finally:
            for task in (reading, script, over):
                task.cancel()
            await asyncio.gather(reading, script, over, return_exceptions=True)

    async def play(self, steps: tuple[Step, ...]) -> None:
        for step in steps:
            if self.done.is_set() or (self.server_closed and not self.script_closed):
                return
            if isinstance(step, Pause):
                try:
                    await asyncio.wait_for(self.done.wait(), step.seconds)
                except asyncio.TimeoutError:
                    pass
                continue
            if isinstance(step, Close) and step.wait:
                await self.expected(self.case.react_s)
                if self.done.is_set() or self.server_closed:
                    return
            self.obs.step_t.append(self.now())
            if isinstance(step, Close):
                self.script_closed = True
                self.obs.our_close_t = self.obs.our_close_t or self.now()
            data = step.data if isinstance(step, (Close, Chop)) else step
            size = step.size if isinstance(step, Chop) else len(data) or 1
            pause = step.pause if isinstance(step, Chop) else 0.0
            for at in range(0, max(len(data), 1), size):
                if not await self.send(data[at:at + size]):
                    return
                if pause:
                    await asyncio.sleep(pause)
        self.obs.script_done_t = self.now()

    async def expected(self, timeout: float) -> None:
        """Wait until every echo and pong the case expects has come (or a pong for the
        latest ping, where pongs may be coalesced), the server closed, or ``timeout``."""
        want = self.case.expect
        deadline = asyncio.get_running_loop().time() + timeout

        def arrived() -> bool:
            enough = self.pongs >= len(want.pongs) or (want.coalesce and self.last_pong == want.pongs[-1])
            return (self.messages >= len(want.messages) and enough) or self.server_closed
        while not arrived() and not self.done.is_set():
            self.arrival.clear()
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return
            try:
                await asyncio.wait_for(self.arrival.wait(), remaining)
            except asyncio.TimeoutError:
                return

    async def send(self, data: bytes) -> bool:
        if self.writer.is_closing():
            return False
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (ConnectionError, OSError) as exc:
            self.obs.write_failed = self.obs.write_failed or f"{type(exc).__name__} at {self.now():.3f} s"
            return False
        return True

    async def read(self) -> None:
        """Record the server's frames until it ends the connection or the closing
        handshake is over."""
        try:
            while True:
                f = await read_client_frame(self.reader, MAX_FRAME)
                self.obs.frames.append((self.now(), f))
                if f.opcode in (TEXT, BINARY, CONT) and f.fin:
                    self.messages += 1
                elif f.opcode == PONG:
                    self.pongs, self.last_pong = self.pongs + 1, f.payload
                self.arrival.set()
                if f.opcode == CLOSE:
                    await self.closing(f)
                    return
                if f.opcode == PING and self.obs.our_close_t is None:
                    await self.send(frame(PONG, f.payload))
        except asyncio.IncompleteReadError:
            self.end(SERVER_EOF)
        except (ConnectionError, OSError):
            self.end(SERVER_RESET)
        except ValueError as exc:
            self.obs.notes.append(f"the server sent a {exc}: more than the echo contract's 64 MiB")
            self.end(GAVE_UP)

    async def closing(self, f: ClientFrame) -> None:
        """The server's close: answer it (unless ours went first), then wait for the
        server to close TCP."""
        self.server_closed = True
        if self.obs.our_close_t is None:
            code = f.close_code()
            self.obs.our_close_t, self.obs.answered = self.now(), True
            await self.send(frame(CLOSE, close_payload(code if sendable(code) else None)))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLOSE_WAIT_S
        while True:
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise asyncio.TimeoutError
                extra = await asyncio.wait_for(read_client_frame(self.reader, MAX_FRAME), remaining)
            except asyncio.TimeoutError:
                self.end(CLIENT_CLOSED)
                return
            except asyncio.IncompleteReadError:
                self.end(SERVER_EOF)
                return
            except (ConnectionError, OSError, ValueError):
                self.end(SERVER_RESET)
                return
            self.obs.frames.append((self.now(), extra))
