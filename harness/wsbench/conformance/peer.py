"""The conformance peer: a WebSocket server on raw bytes (asyncio streams, no WebSocket
library), on 127.0.0.1 and ports the kernel picks; with TLS contexts (``wsbench
conformance --tls``) every connection is TLS, done by hand (wire.py).

Over plain TCP a client connects to ``ws://127.0.0.1:PORT/<case>/<token>`` on the shared
listener; the token was registered with ``expect()`` beforehand and names the case to
play. Over TLS every expected connection gets a listener of its own instead
(``wss://127.0.0.1:PORT2/...``, ``Pending.url``), whose first connection is that
client's: the TLS handshake comes before the request that holds the token, and a client
that refuses the certificate (the TLS-failure set) never sends it, so only the port can
tell whose handshake it was. A ``Session`` (play.py) then plays the case and records
everything the client does: every frame it sends (unmasked, with the time), and whether
and when it ended the TCP connection (observation.py).

The server runs its own event loop in a background thread, so the synchronous runner
can start client processes and wait for an observation with ``Pending.wait()``.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from functools import partial

from .cases import Case
from .observation import Observation, Pending, sendable
from .play import Session
from .wire import TlsWire, Wire, ssl_reason

__all__ = ["Observation", "Peer", "Pending", "sendable"]  # the judges and tests read them from here too

HANDSHAKE_S = 10.0  # for the client's TLS handshake


class Peer:
    """The server and its thread; ``start()`` returns the shared listener's port (0 over
    TLS). ``contexts``: TLS, a server context per certificate the peer may present (certificates.py's
    manifest entries; ``server`` for every case without a certificate of its own)."""

    def __init__(self, contexts: dict[str, ssl.SSLContext] | None = None) -> None:
        self._contexts = contexts
        self._pending: dict[str, Pending] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="conformance-peer", daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: set[asyncio.AbstractServer] = set()  # over TLS, each expected connection's own
        self.port = 0

    def start(self) -> int:
        self._thread.start()
        if not self._contexts:
            self._server = asyncio.run_coroutine_threadsafe(
                asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop).result(10)
            self.port = self._server.sockets[0].getsockname()[1]
        return self.port


    @property
    def scheme(self) -> str:
        return "wss" if self._contexts else "ws"

    def url(self, case: Case, token: str, port: int | None = None) -> str:
        return f"{self.scheme}://127.0.0.1:{port or self.port}/{case.id}/{token}"

    def expect(self, token: str, case: Case) -> Pending:
        """Register the next connection for ``token``: it plays ``case`` (``pending.url``
        says where: over TLS, a listener of its own presenting the case's certificate)."""
        if not self._contexts:
            if case.certificate is not None:
                raise ValueError(f"case '{case.id}' runs only over TLS")
            pending = Pending(case, self.url(case, token))
            with self._lock:
                self._pending[token] = pending
            return pending
        context = self._contexts.get(case.certificate or "server")
        if context is None:
            raise ValueError(f"case '{case.id}' needs the TLS certificate '{case.certificate}'")
        pending = Pending(case)
        pending.listener = asyncio.run_coroutine_threadsafe(self._own_listener(pending, context), self._loop).result(10)
        pending.url = self.url(case, token, pending.listener.sockets[0].getsockname()[1])
        return pending

    async def _own_listener(self, pending: Pending, context: ssl.SSLContext) -> asyncio.AbstractServer:
        server = await asyncio.start_server(partial(self._serve, context=context, pending=pending), "127.0.0.1", 0)
        self._listeners.add(server)  # in the loop's thread, as every change to the set
        return server

    def release(self, pending: Pending) -> None:
        """Close the listener of its own, if it has one (the runner, after the client run)."""
        listener = pending.listener
        if listener is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._close_listener, listener)

    def _close_listener(self, listener: asyncio.AbstractServer) -> None:
        listener.close()
        self._listeners.discard(listener)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        for server in (self._server, *list(self._listeners)):
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
        says which case), or on a listener of its own (its first connection only)."""
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
        try:
            await Session(pending, wire, headers).run()
        finally:
            pending.finish()


def _parse_head(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return lines[0], headers
