"""TLS by hand on a blocking socket, for the tests' threaded peers: the product's
``MemoryTls`` (harness/wsbench/conformance/wire.py, the repository's one TLS over memory
BIOs) between the socket and the WebSocket bytes, so that a test can send part of an
encrypted record or raw bytes, end the session without close_notify, reset TCP mid-record.

``BlockingTls``: one accepted connection. ``TlsPeer``: a wss:// server that hands every
connection, once upgraded, to a test's script (loopback only; each connection in its own
thread)."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from pathlib import Path
from typing import Callable

from wsbench.conformance.wire import READ_SIZE, MemoryTls

from .raw_ws import read_head, upgrade_answer


def server_context(tls_dir: Path, cert: str = "server") -> ssl.SSLContext:
    """A server context presenting build/tls's ``cert`` (a manifest name)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls_dir / f"{cert}.pem", tls_dir / f"{cert}.key")
    return context


class BlockingTls:
    """The server side of one TLS connection over the blocking socket ``sock``; the
    handshake is done in the constructor (ConnectionError if the client ends TCP first)."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext) -> None:
        self.sock = sock
        self.tls = MemoryTls(context)
        while not self.tls.handshake():
            self._flush()
            if not self._fill():
                raise ConnectionError("the client closed TCP during the TLS handshake")
        self._flush()

    def _flush(self) -> None:
        data = self.tls.take()
        if data:
            self.sock.sendall(data)

    def _fill(self) -> bool:
        data = self.sock.recv(READ_SIZE)
        if data:
            self.tls.feed(data)
        return bool(data)

    def recv(self, n: int = READ_SIZE) -> bytes:
        """Up to ``n`` bytes of the client's plain text; b"" at its end (close_notify, TCP
        closed)."""
        while True:
            try:
                data = self.tls.decrypt(n)
            except ssl.SSLEOFError:
                return b""
            if data is not None:
                return data
            self._flush()
            if not self._fill():
                return b""

    def encrypt(self, data: bytes) -> bytes:
        """The TLS records carrying ``data``, not sent."""
        return self.tls.encrypt(data)

    def sendall(self, data: bytes) -> None:
        self.sock.sendall(self.encrypt(data))

    def close_notify(self) -> None:
        """End the TLS session (close_notify), TCP left open."""
        self.sock.sendall(self.tls.close_notify())

    def reset(self) -> None:
        """Abort the TCP connection (RST)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def linger(self, seconds: float = 5.0) -> None:
        """Keep TCP open until the client closes it (or ``seconds``)."""
        self.sock.settimeout(seconds)
        try:
            while self.sock.recv(READ_SIZE):
                pass
        except OSError:
            pass


Script = Callable[[BlockingTls], None]


class TlsPeer:
    """Serves ``script`` on every connection once its TLS handshake and WebSocket upgrade
    are done, with build/tls's ``cert`` (a manifest name); what went wrong with a
    connection in ``errors``."""

    def __init__(self, tls_dir: Path, script: Script, cert: str = "server") -> None:
        self.context = server_context(tls_dir, cert)
        self.script = script
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.errors: list[str] = []
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"wss://127.0.0.1:{self.port}/"

    def __enter__(self) -> "TlsPeer":
        self._accepter.start()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone does not)
        except OSError:
            pass
        self.listener.close()
        self._accepter.join(timeout=5)
        for t in self._threads:
            t.join(timeout=10)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(sock,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            session = BlockingTls(sock, self.context)
            session.sendall(upgrade_answer(read_head(session.recv)))
            self.script(session)
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self.errors.append(repr(exc))
        finally:
            try:
                sock.close()
            except OSError:
                pass
