"""RFC 6455 frames on the wire, written by hand: any server frame, broken ones included
(section 5.2), and the client frames the peer reads back (masked, section 5.3); the
server's 101 response (section 4.2.2).

The repository's one writer and reader of raw frames: the conformance peer's, and every
test's that writes or parses frames by hand (testkit/raw_ws.py, the quickjs-websocket
peer), so that the tests and ``wsbench conformance`` never disagree about the wire."""

from __future__ import annotations

import base64
import hashlib
import struct
from dataclasses import dataclass
from typing import Protocol

CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
OPCODE_NAMES = {CONT: "continuation", TEXT: "text", BINARY: "binary", CLOSE: "close", PING: "ping",
                PONG: "pong"}
HANDSHAKE_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 section 1.3


def accept_for(key: str) -> str:
    """The Sec-WebSocket-Accept value a server must answer ``key`` with (section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + HANDSHAKE_GUID).digest()).decode("ascii")


def switching_protocols(accept: str, extensions: str | None = None) -> bytes:
    """The server's 101 response head (blank line included) carrying ``accept``, and
    ``extensions`` as its Sec-WebSocket-Extensions header (RFC 6455 9.1; None: none)."""
    extension = f"Sec-WebSocket-Extensions: {extensions}\r\n" if extensions is not None else ""
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n{extension}\r\n").encode("ascii")


def server_frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0,
                 mask: bytes | None = None, declared: int | None = None, length_bytes: int | None = None) -> bytes:
    """One frame as a server would send it, or deliberately would not.

    rsv: the three RSV bits as a number 0-7 (RSV1 = 4); mask: a 4-byte key (servers must
    not mask); declared: the payload length written in the header instead of the real
    one; length_bytes: force the 7-bit (0), 16-bit (2) or 64-bit (8) length form."""
    n = len(payload) if declared is None else declared
    first = (0x80 if fin else 0) | (rsv & 7) << 4 | opcode & 0x0F
    form = length_bytes if length_bytes is not None else 0 if n < 126 else 2 if n < 65536 else 8
    mask_bit = 0x80 if mask is not None else 0
    if form == 0:
        head = bytes((first, mask_bit | n))
    elif form == 2:
        head = bytes((first, mask_bit | 126)) + struct.pack("!H", n)
    else:
        head = bytes((first, mask_bit | 127)) + struct.pack("!Q", n)
    if mask is None:
        return head + payload
    return head + mask + apply_mask(payload, mask)


def close_payload(code: int | None, reason: bytes = b"") -> bytes:
    return b"" if code is None else struct.pack("!H", code) + reason


def apply_mask(data: bytes, key: bytes) -> bytes:
    """XOR with the 4-byte key (masking and unmasking are the same operation)."""
    if not data:
        return b""
    whole = key * (len(data) // 4 + 1)
    return (int.from_bytes(data, "big") ^ int.from_bytes(whole[:len(data)], "big")).to_bytes(len(data), "big")


@dataclass(frozen=True)
class ClientFrame:
    """A frame read from the client, unmasked."""

    fin: bool
    rsv: int
    opcode: int
    masked: bool
    payload: bytes

    def close_code(self) -> int | None:
        return struct.unpack("!H", self.payload[:2])[0] if self.opcode == CLOSE and len(self.payload) >= 2 else None

    def close_reason(self) -> bytes:
        return self.payload[2:] if self.opcode == CLOSE else b""


MAX_CLIENT_PAYLOAD = 1 << 20  # the observe client sends nothing big; more is a broken client


def _extended(b1: int) -> int:
    """How many bytes of extended payload length follow the second byte."""
    n = b1 & 0x7F
    return 2 if n == 126 else 8 if n == 127 else 0


def _length(b1: int, extended: bytes) -> int:
    return struct.unpack("!H" if len(extended) == 2 else "!Q", extended)[0] if extended else b1 & 0x7F


def _frame(b0: int, masked: bool, key: bytes, payload: bytes) -> ClientFrame:
    return ClientFrame(bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0F, masked, apply_mask(payload, key) if masked else payload)


def split_frame(data: bytes | bytearray) -> tuple[ClientFrame, int] | None:
    """The first whole frame at the start of ``data`` (unmasked) and how many bytes it
    took; None while it is incomplete. For a reader on a blocking socket."""
    if len(data) < 2:
        return None
    at = 2 + _extended(data[1])
    if len(data) < at:
        return None
    n = _length(data[1], bytes(data[2:at]))
    masked = bool(data[1] & 0x80)
    key = bytes(data[at:at + 4]) if masked else b""
    at += len(key) if masked else 0
    if (masked and len(key) < 4) or len(data) < at + n:
        return None
    return _frame(data[0], masked, key, bytes(data[at:at + n])), at + n


class ByteSource(Protocol):
    """What frames are read from: an asyncio.StreamReader, or the peer's wire (wire.py)."""

    async def readexactly(self, n: int) -> bytes: ...


async def read_client_frame(reader: ByteSource, limit: int | None = MAX_CLIENT_PAYLOAD) -> ClientFrame:
    """The next frame from the client; raises asyncio.IncompleteReadError at end of stream
    and ValueError for a frame longer than ``limit`` (None: no limit), too long to be
    anything the peer expects."""
    b0, b1 = await reader.readexactly(2)
    extended = await reader.readexactly(_extended(b1)) if _extended(b1) else b""
    n = _length(b1, extended)
    if limit is not None and n > limit:
        raise ValueError(f"client frame of {n} bytes")
    masked = bool(b1 & 0x80)
    key = await reader.readexactly(4) if masked else b""
    return _frame(b0, masked, key, await reader.readexactly(n))
