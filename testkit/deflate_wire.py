"""permessage-deflate (RFC 7692) by hand for tests: a raw client that offers it and reads
the server's frames as sent (RSV1 and all), and a raw server that logs what a client
offers in its upgrade request and counts the frames it sends compressed (RSV1). Frames
are written and split by the product's ``wsbench.conformance.frames``."""

from __future__ import annotations

import socket
import threading
import zlib
from dataclasses import dataclass, field

from wsbench.conformance.frames import ClientFrame, accept_for, server_frame, split_frame

from .raw_ws import CLIENT_MASK, SAMPLE_KEY, read_head, request_headers

OFFER = "permessage-deflate; client_max_window_bits"  # what ws, undici and Bun offer
TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.1: removed by the sender, appended to inflate
RSV1 = 4  # the RSV bits as a number: RSV1 is the highest
TEXT = 1


def inflate(payload: bytes) -> bytes:
    """A compressed message's payload inflated (raw DEFLATE, RFC 7692 7.2.2)."""
    return zlib.decompressobj(wbits=-15).decompress(payload + TAIL)


class FrameReader:
    """Whole frames from a socket, in order; ``leftover`` what came with the head."""

    def __init__(self, sock: socket.socket, leftover: bytes = b"") -> None:
        self.sock, self.buf = sock, bytearray(leftover)

    def next(self) -> ClientFrame:
        while True:
            got = split_frame(self.buf)
            if got is not None:
                frame, used = got
                del self.buf[:used]
                return frame
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the peer closed the connection")
            self.buf += chunk


def deflate_client(port: int, offer: str | None = OFFER) -> tuple[socket.socket, dict[str, str], FrameReader]:
    """Upgrade by hand on 127.0.0.1:``port``, offering ``offer`` (None: no extension);
    returns the socket, the response's header fields (names in lower case) and a reader
    of the frames after it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    extension = f"Sec-WebSocket-Extensions: {offer}\r\n" if offer else ""
    s.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {SAMPLE_KEY}\r\nSec-WebSocket-Version: 13\r\n{extension}\r\n").encode())
    data = read_head(s.recv)
    head, rest = data.split(b"\r\n\r\n", 1)
    return s, {"status": head.split(b"\r\n", 1)[0].decode(), **request_headers(head)}, FrameReader(s, rest)


def send_text(s: socket.socket, text: bytes) -> None:
    """One uncompressed text message, masked as a client's."""
    s.sendall(server_frame(TEXT, text, mask=CLIENT_MASK))


@dataclass
class Seen:
    """What a raw server saw of one client connection."""

    extensions: str | None = None  # its Sec-WebSocket-Extensions header (None: it sent none)
    frames: list[ClientFrame] = field(default_factory=list)  # its data frames, as sent


class RawDeflateServer:
    """A one-thread server for one client at a time: it accepts permessage-deflate when the
    client offers it (answering ``permessage-deflate``, no parameters), keeps the client's
    offer and its data frames as sent, and echoes each message uncompressed (inflated where
    the client compressed it); RFC 7692 lets a side send uncompressed messages."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.seen: list[Seen] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                try:
                    self._one(conn)
                except (OSError, ConnectionError):
                    pass

    def _one(self, conn: socket.socket) -> None:
        head, rest = read_head(conn.recv).split(b"\r\n\r\n", 1)
        headers = request_headers(head)
        seen = Seen(headers.get("sec-websocket-extensions"))
        self.seen.append(seen)
        agreed = "Sec-WebSocket-Extensions: permessage-deflate\r\n" if seen.extensions else ""
        conn.sendall((f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept_for(headers['sec-websocket-key'])}\r\n{agreed}\r\n").encode())
        frames = FrameReader(conn, rest)
        # its answer leaves the client its context (no client_no_context_takeover): one
        # stream for the connection, not one per message
        stream = zlib.decompressobj(wbits=-15)
        while True:
            frame = frames.next()
            if frame.opcode == 8:
                conn.sendall(server_frame(8, frame.payload[:2]))
                return
            if frame.opcode in (1, 2):
                seen.frames.append(frame)
                payload = stream.decompress(frame.payload + TAIL) if frame.rsv & RSV1 else frame.payload
                conn.sendall(server_frame(frame.opcode, payload))

    def close(self) -> None:
        self.listener.close()
