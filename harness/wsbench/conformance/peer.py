"""The conformance peer: a WebSocket server on raw bytes (asyncio streams, no WebSocket
library), on 127.0.0.1 and a port the kernel picks; with TLS contexts (``wsbench
conformance --tls``) every connection is TLS, done by hand (wire.py).

A client connects to ``ws://127.0.0.1:PORT/<case>/<token>`` (``wss://``); the token was
registered with ``expect()`` beforehand and names the case to play. A case of the
TLS-failure set (a ``certificate`` of its own) gets a listener of its own instead, on
another port, whose first connection is that client's: a client that refuses the
certificate never sends the request the token is in. The peer answers the upgrade
(with the right Sec-WebSocket-Accept, or a wrong one if the case says so), plays the
case's steps, and records everything the client does: every frame it sends (unmasked,
with the time), and whether and when it ended the TCP connection. A close frame from the
client is answered with a close frame (echoing a code that may be sent, else empty),
unless the peer has sent one already, and the peer then closes TCP. Once the script has
been played the client has ``case.react_s`` to end the connection; after that the peer
gives up and closes it (a hang).

The server runs its own event loop in a background thread, so the synchronous runner
can start client processes and wait for an observation with ``Pending.wait()``.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .cases import Case, Closes, Fault, Pause
from .frames import CLOSE, PONG, ClientFrame, accept_for, close_payload, read_client_frame, server_frame
from .wire import TlsWire, Wire, ssl_reason

HANDSHAKE_S = 10.0  # for the client's TLS handshake
SETTLE_S = 0.05  # between the 101 and the first step, so the client has taken the response alone
CLOSE_LINGER_S = 0.05  # after our answering close frame: does the client end TCP itself?


@dataclass
class Observation:
    """What one client did in one case; times in seconds since the 101 response."""

    case_id: str
    connected: bool = False  # an upgrade request for this token arrived
    request: dict[str, str] = field(default_factory=dict)  # its headers (lower-case names)
    frames: list[tuple[float, ClientFrame]] = field(default_factory=list)
    step_t: list[float] = field(default_factory=list)  # when each step of the script was written
    script_done_t: float | None = None  # the whole script written
    peer_close_t: float | None = None  # our close frame written (in the script or as an answer)
    tcp_end: str | None = None  # "client-eof", "client-reset", "peer" (after a close), "peer-gave-up"
    tcp_end_t: float | None = None
    notes: list[str] = field(default_factory=list)
    tls_handshake: str | None = None  # TLS: "done", or how it failed ("the client's alert: unknown ca")
    tls_end: str | None = None  # TLS: how the client ended the session (wire.py)
    fault: str | None = None  # what the peer did to the TLS session (cases.Fault), in words
    fault_t: float | None = None

    @property
    def client_dropped(self) -> bool:
        return self.tcp_end in ("client-eof", "client-reset")

    @property
    def gave_up(self) -> bool:
        return self.tcp_end == "peer-gave-up"

    def closes(self) -> list[tuple[float, ClientFrame]]:
        return [(t, f) for t, f in self.frames if f.opcode == CLOSE]

    def pongs(self) -> list[bytes]:
        return [f.payload for _, f in self.frames if f.opcode == PONG]

    def others(self) -> list[ClientFrame]:
        """Frames that are neither close nor pong (the observe client sends no data)."""
        return [f for _, f in self.frames if f.opcode not in (CLOSE, PONG)]

    def to_json(self) -> dict[str, Any]:
        return {
            "frames": [{"t": round(t, 4), "fin": f.fin, "rsv": f.rsv, "opcode": f.opcode, "masked": f.masked,
                        "length": len(f.payload), "close_code": f.close_code()} for t, f in self.frames],
            "script_done_t": self.script_done_t, "peer_close_t": self.peer_close_t,
            "tcp_end": self.tcp_end, "tcp_end_t": self.tcp_end_t, "notes": self.notes,
            "tls_handshake": self.tls_handshake, "tls_end": self.tls_end, "fault": self.fault,
            "fault_t": self.fault_t,
        }


class Pending:
    """An observation that is complete once the connection is over."""

    def __init__(self, case: Case, url: str = "") -> None:
        self.case = case
        self.url = url  # where the client connects
        self.observation = Observation(case.id)
        self._done = threading.Event()
        self.listener: asyncio.AbstractServer | None = None  # a listener of its own (TLS-failure set)

    def finish(self) -> None:
        self._done.set()

    def wait(self, timeout: float) -> Observation | None:
        """The observation, or None if the connection is not over within ``timeout``."""
        return self.observation if self._done.wait(timeout) else None


def sendable(code: int | None) -> bool:
    """Whether a close code may appear in a close frame (RFC 6455 7.4)."""
    return code is not None and (1000 <= code <= 1003 or 1007 <= code <= 1014 or 3000 <= code <= 4999)


class Peer:
    """The server and its thread; ``start()`` returns the port. ``contexts``: TLS, a server
    context per certificate the peer may present (tls.py's manifest entries; ``server``
    for the shared listener)."""

    def __init__(self, contexts: dict[str, ssl.SSLContext] | None = None) -> None:
        self._contexts = contexts
        self._pending: dict[str, Pending] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="conformance-peer", daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: list[asyncio.AbstractServer] = []  # the TLS-failure cases' own
        self.port = 0

    def start(self) -> int:
        self._thread.start()
        context = self._contexts["server"] if self._contexts else None
        self._server = self._listen(partial(self._serve, context=context))
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def _listen(self, serve: Any) -> asyncio.AbstractServer:
        return asyncio.run_coroutine_threadsafe(asyncio.start_server(serve, "127.0.0.1", 0), self._loop).result(10)

    @property
    def scheme(self) -> str:
        return "wss" if self._contexts else "ws"

    def url(self, case: Case, token: str, port: int | None = None) -> str:
        return f"{self.scheme}://127.0.0.1:{port or self.port}/{case.id}/{token}"

    def expect(self, token: str, case: Case) -> Pending:
        """Register the next connection for ``token``: it plays ``case`` (``pending.url``
        says where; a case with a certificate of its own gets its own listener)."""
        if case.certificate is None:
            pending = Pending(case, self.url(case, token))
            with self._lock:
                self._pending[token] = pending
            return pending
        if not self._contexts or case.certificate not in self._contexts:
            raise ValueError(f"case '{case.id}' needs the TLS certificate '{case.certificate}'")
        pending = Pending(case)
        pending.listener = self._listen(partial(self._serve, context=self._contexts[case.certificate],
                                                pending=pending))
        self._listeners.append(pending.listener)
        pending.url = self.url(case, token, pending.listener.sockets[0].getsockname()[1])
        return pending

    def release(self, pending: Pending) -> None:
        """Close the listener of its own, if it has one."""
        if pending.listener is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(pending.listener.close)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        for server in (self._server, *self._listeners):
            if server is not None:
                server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def __enter__(self) -> "Peer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     context: ssl.SSLContext | None = None, pending: Pending | None = None) -> None:
        """One connection: on the shared listener (``pending`` None: the request's token
        says which case), or on a case's own listener (its first connection only)."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if pending is not None:
                if pending.observation.tls_handshake is not None:
                    return  # a second connection: not the one this listener waited for
                pending.observation.tls_handshake = "started"
                assert pending.listener is not None
                pending.listener.close()
            wire = await self._open(reader, writer, context, pending)
            if wire is not None:
                await self._connection(wire, pending)
        except asyncio.CancelledError:
            pass  # stopping: end quietly (asyncio would log a cancelled connection task)
        finally:
            self._tasks.discard(task)
            writer.transport.abort()
            if pending is not None:
                pending.finish()

    async def _open(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    context: ssl.SSLContext | None, pending: Pending | None) -> Wire | None:
        """The connection's wire: plain, or TLS once the handshake is done (None if it failed)."""
        if context is None:
            return Wire(reader, writer)
        wire = TlsWire(reader, writer, context)
        try:
            await asyncio.wait_for(wire.handshake(), HANDSHAKE_S)
        except (ssl.SSLError, OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as exc:
            if pending is not None:
                pending.observation.tls_handshake = f"failed: {ssl_reason(exc)}"
            return None
        if pending is not None:
            pending.observation.tls_handshake = "done"
        return wire

    async def _connection(self, wire: Wire, pending: Pending | None) -> None:
        try:
            head = await asyncio.wait_for(wire.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, OSError):
            return
        request_line, headers = _parse_head(head)
        parts = request_line.split(" ")
        token = parts[1].rsplit("/", 1)[-1] if len(parts) >= 2 else ""
        if pending is None:
            with self._lock:
                pending = self._pending.pop(token, None)
            if pending is None:
                wire.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            if isinstance(wire, TlsWire):
                pending.observation.tls_handshake = "done"
        try:
            await Session(pending, wire, headers).run()
        finally:
            pending.finish()


class Session:
    """One connection playing one case."""

    def __init__(self, pending: Pending, wire: Wire, headers: dict[str, str]) -> None:
        self.case = pending.case
        self.obs = pending.observation
        self.obs.connected = True
        self.obs.request = headers
        self.wire = wire
        self.headers = headers
        # the client sent a close frame or the TCP connection is over: the script stops
        self.stop = asyncio.Event()
        self.t0 = 0.0

    def now(self) -> float:
        return asyncio.get_running_loop().time() - self.t0

    def end(self, how: str) -> None:
        if self.obs.tcp_end is None:
            self.obs.tcp_end, self.obs.tcp_end_t = how, round(self.now(), 4)
        self.stop.set()

    async def run(self) -> None:
        key = self.headers.get("sec-websocket-key")
        if not key:
            self.obs.notes.append("upgrade request without Sec-WebSocket-Key")
            self.wire.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        accept = accept_for(key + "-wrong" if self.case.wrong_accept else key)
        response = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode("ascii")
        steps = list(self.case.steps())
        first = b""
        if self.case.with_101 and steps and not isinstance(steps[0], Pause):
            step = steps.pop(0)
            first = step.data if isinstance(step, Closes) else step  # type: ignore[union-attr]
        self.t0 = asyncio.get_running_loop().time()
        self.wire.write(response + first)
        if first:
            self.obs.step_t.append(0.0)
        reading = asyncio.create_task(self.read())
        script = asyncio.create_task(self.play(steps, settle=not first))
        stopped = asyncio.create_task(self.stop.wait())
        try:
            await asyncio.wait({script, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not self.stop.is_set():  # the script is played: the client's turn
                try:
                    await asyncio.wait_for(self.stop.wait(), self.case.react_s)
                except asyncio.TimeoutError:
                    self.end("peer-gave-up")
            if not self.obs.gave_up:  # a close frame is being answered, or TCP ending: let it finish
                await asyncio.wait({reading}, timeout=CLOSE_LINGER_S + 0.5)
            if self.obs.tcp_end is None:
                self.end("peer")
        finally:
            for task in (reading, script, stopped):
                task.cancel()
            await asyncio.gather(reading, script, stopped, return_exceptions=True)
            self.obs.tls_end = self.wire.tls_end
            self.wire.abort()

    async def play(self, steps: list[Any], settle: bool) -> None:
        """Write the steps; stop once the client has closed or the connection is over."""
        if settle:
            await asyncio.sleep(SETTLE_S)
        for step in steps:
            if self.stop.is_set():
                return
            if isinstance(step, Pause):
                try:
                    await asyncio.wait_for(self.stop.wait(), step.seconds)
                except asyncio.TimeoutError:
                    pass
                continue
            if isinstance(step, Fault):
                self.obs.fault_t = round(self.now(), 4)
                self.obs.fault = await self.wire.fault(step.kind)
                continue
            data = step.data if isinstance(step, Closes) else step
            self.obs.step_t.append(round(self.now(), 4))
            if isinstance(step, Closes):
                self.obs.peer_close_t = self.obs.step_t[-1]
            if not await self.send(data):
                return
        self.obs.script_done_t = round(self.now(), 4)

    async def send(self, data: bytes) -> bool:
        if self.wire.closing():
            return False
        try:
            self.wire.write(data)
            await self.wire.drain()
        except (ConnectionError, OSError):
            self.end("client-reset")
            return False
        return True

    async def read(self) -> None:
        """Record the client's frames until it ends the connection or our close is done."""
        try:
            while True:
                f = await read_client_frame(self.wire)
                self.obs.frames.append((round(self.now(), 4), f))
                if f.opcode == CLOSE:
                    self.stop.set()
                    await self.answer_close(f)
                    return
        except asyncio.IncompleteReadError:
            self.end("client-eof")
        except (ConnectionError, OSError):
            self.end("client-reset")
        except ValueError as exc:
            self.obs.notes.append(str(exc))
            self.end("peer-gave-up")

    async def answer_close(self, f: ClientFrame) -> None:
        """Complete the closing handshake: our close (unless sent already), then TCP."""
        if self.obs.peer_close_t is None:
            code = f.close_code()
            self.obs.peer_close_t = round(self.now(), 4)
            await self.send(server_frame(CLOSE, close_payload(code if sendable(code) else None)))
        # the client may end TCP itself in the meantime (RFC 6455 7.1.1: the server
        # should close first, but a client may too)
        try:
            rest = await asyncio.wait_for(self.wire.read(1), CLOSE_LINGER_S)
            if not rest:
                self.end("client-eof")
                return
            self.obs.notes.append("the client sent bytes after its close frame")
        except asyncio.TimeoutError:
            pass
        except (ConnectionError, OSError):
            self.end("client-reset")
            return
        self.end("peer")
        self.wire.close()


def _parse_head(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers
