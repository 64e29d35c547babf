"""WebSocket by hand for tests: a client's upgrade and close frame, a server's reading of
an upgrade request and its answer. Every frame and the 101 response come from the
product's ``wsbench.conformance.frames``, the one writer and reader of raw frames (what
``wsbench conformance`` sends is what the tests send)."""

from __future__ import annotations

import socket
import ssl

from wsbench.conformance.frames import CLOSE, accept_for, close_payload, server_frame, switching_protocols

SAMPLE_KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 section 1.3's
CLIENT_MASK = b"\x01\x02\x03\x04"


def raw_client(url: str, key: str = SAMPLE_KEY, context: ssl.SSLContext | None = None,
               ragged_eofs: bool = True) -> tuple[socket.socket, bytes]:
    """Upgrade by hand (over TLS for a wss:// URL, with ``context``); returns the socket
    and the response head (plus any frames after it)."""
    host_port, path = url.split("://", 1)[1].split("/", 1)
    host, port = host_port.split(":")
    s = socket.create_connection((host, int(port)), timeout=5)
    if url.startswith("wss://"):
        assert context is not None
        s = context.wrap_socket(s, server_hostname=host, suppress_ragged_eofs=ragged_eofs)
    s.sendall((f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    return s, read_head(s.recv, whole=False)


def masked_close(code: int) -> bytes:
    """A client's close frame with ``code``, masked as a client must."""
    return server_frame(CLOSE, close_payload(code), mask=CLIENT_MASK)


def request_headers(head: bytes) -> dict[str, str]:
    """An upgrade request's header fields, names in lower case."""
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return headers


def upgrade_answer(head: bytes) -> bytes:
    """The 101 a server answers the upgrade request ``head`` with."""
    return switching_protocols(accept_for(request_headers(head).get("sec-websocket-key", "")))


def read_head(recv, whole: bool = True) -> bytes:  # type: ignore[no-untyped-def]
    """An HTTP head (an upgrade request, a response) read by ``recv(n)`` (a socket's, or
    memory_tls.BlockingTls's) up to its blank line, and what came in the same reads after
    it; at the end of the stream before it: ConnectionError, or (``whole`` False) what
    came."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = recv(4096)
        if not chunk:
            if whole:
                raise ConnectionError("the peer closed before its head was complete")
            break
        head += chunk
    return head

