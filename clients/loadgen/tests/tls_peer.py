"""A misbehaving wss:// server for the load generator's TLS tests: each accepted
connection gets the TLS handshake (Python's ssl, with a certificate from build/tls), the
WebSocket upgrade, then whatever the test's script does with it (send frames, end the
TLS session without a WebSocket close, reset the TCP connection in the middle of a
record, send a bare alert record...).

The TLS runs over memory BIOs (ssl.SSLObject), so a script can send part of an encrypted
record or raw bytes. Loopback only; each connection in its own thread."""

from __future__ import annotations

import base64
import hashlib
import socket
import ssl
import struct
import threading
from pathlib import Path
from typing import Callable

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(payload: bytes, opcode: int = 0x1, fin: bool = True) -> bytes:
    """An unmasked server frame."""
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        return head + bytes([n]) + payload
    if n < 65536:
        return head + bytes([126]) + struct.pack("!H", n) + payload
    return head + bytes([127]) + struct.pack("!Q", n) + payload


class Session:
    """One accepted connection: TLS over memory BIOs on a blocking socket."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext) -> None:
        self.sock = sock
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_side=True)

    def _flush(self) -> None:
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def _receive(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the client closed the connection")
        self.incoming.write(data)

    def handshake(self) -> None:
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                self._receive()
        self._flush()

    def read(self) -> bytes:
        while True:
            try:
                return self.tls.read(65536)
            except ssl.SSLWantReadError:
                self._flush()
                self._receive()

    def write(self, data: bytes) -> None:
        self.tls.write(data)
        self._flush()

    def encrypt(self, data: bytes) -> bytes:
        """The TLS records carrying `data`, not sent."""
        self.tls.write(data)
        return self.outgoing.read()

    def upgrade(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.read()
        key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                   if line.lower().startswith(b"sec-websocket-key:"))
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        self.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                   b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")

    def close_notify(self) -> None:
        """End the TLS session (close_notify), TCP left open."""
        try:
            self.tls.unwrap()
        except (ssl.SSLWantReadError, ssl.SSLError):
            pass
        self._flush()

    def reset(self) -> None:
        """Abort the TCP connection (RST)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def linger(self, seconds: float = 5.0) -> None:
        """Keep TCP open until the client closes it (or `seconds`)."""
        self.sock.settimeout(seconds)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass


Script = Callable[[Session], None]


class TlsPeer:
    """Serves `script` on every connection, with build/tls's `cert` (a manifest name)."""

    def __init__(self, tls_dir: Path, script: Script, cert: str = "server") -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(tls_dir / f"{cert}.pem", tls_dir / f"{cert}.key")
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
        session = Session(sock, self.context)
        try:
            session.handshake()
            session.upgrade()
            self.script(session)
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self.errors.append(repr(exc))
        finally:
            try:
                sock.close()
            except OSError:
                pass
