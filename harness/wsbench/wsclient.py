"""A blocking WebSocket client whose TLS session only one thread ever touches.

websockets' own blocking client (``websockets.sync``) receives in a thread of its own
while the caller's thread sends, both through one ``ssl.SSLSocket``, and CPython's ssl
before 3.13 does not serialize ``SSL_read`` and ``SSL_write`` on one session (OpenSSL
forbids using a session from two threads at once). Over wss:// the server's session
tickets arrive right after the handshake, while the upgrade request is being written: now
and then the request never left the client (its capture shows the ClientHello and the
Finished, then nothing), the server waited for it, the client timed out waiting for the
response, and its receiving thread stayed blocked for good (docs/measurement.md, "An
upgrade not answered after TLS"). This client runs websockets' asyncio client on an
event loop in a thread of its own (asyncio's TLS: one ``SSLObject`` on memory buffers,
used by that thread only); each call of the caller's waits for its result.
"""

from __future__ import annotations

import asyncio
import ssl as ssl_module
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as _aconnect
from websockets.typing import Data

T = TypeVar("T")


class _Watched(ClientConnection):
    """asyncio calls ``connection_made`` once the transport is up: TCP connected and, over
    wss://, the TLS handshake done."""

    transport_up = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport_up = True
        super().connection_made(transport)


class Connection:
    """One connection: ``send``, ``recv(timeout)`` and ``close`` as websockets.sync has
    them (TimeoutError, OSError and websockets' exceptions as it raises them). An opening
    that timed out once the transport was up says so: "upgrade not answered after TLS"
    (wss://) or "upgrade not answered" (ws://)."""

    def __init__(self, url: str, ssl: ssl_module.SSLContext | None = None, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="wsclient", daemon=True)
        self._thread.start()
        made: list[_Watched] = []

        def watched(*args: Any, **kwargs: Any) -> _Watched:
            made.append(_Watched(*args, **kwargs))
            return made[-1]

        # websockets takes a connection class; ours is a factory that keeps what it made
        arguments: dict[str, Any] = {"create_connection": watched, **options}
        if ssl is not None:
            arguments["ssl"] = ssl

        async def opened() -> ClientConnection:
            try:
                return await _aconnect(url, **arguments)
            except TimeoutError:
                if not (made and made[-1].transport_up):
                    raise
                after = " after TLS" if url.startswith("wss:") else ""
                raise TimeoutError(f"upgrade not answered{after} within {options.get('open_timeout', 10):g} s: "
                                   "the server took the connection but sent no response") from None

        try:
            self._ws = self._run(opened())
        except BaseException:
            self._stop()
            raise

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def send(self, message: Data) -> None:
        self._run(self._ws.send(message))

    def recv(self, timeout: float | None = None) -> Data:
        """The next message; TimeoutError after ``timeout`` seconds (None: no limit)."""
        return self._run(asyncio.wait_for(self._ws.recv(), timeout))

    def close(self) -> None:
        try:
            self._run(self._ws.close())
        finally:
            self._stop()

    def _stop(self) -> None:
        async def cancel_the_rest() -> None:
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        if self._loop.is_closed():
            return
        self._run(cancel_the_rest())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(url: str, ssl: ssl_module.SSLContext | None = None, **options: Any) -> Connection:
    """Open a connection (``options``: websockets' connect options: open_timeout,
    close_timeout, max_size, compression, ...)."""
    return Connection(url, ssl, **options)
