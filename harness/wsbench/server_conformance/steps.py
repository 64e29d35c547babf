"""What a server case writes, step by step: client frames (masked, as RFC 6455 5.3 asks of
a client, with a fresh key per frame; unmasked only where a case says so), bytes written
in chops, pauses, and our close frame (which marks when the client started the closing
handshake). Frames come from ``conformance.frames``, the repository's one frame writer."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Union

from ..conformance.frames import CLOSE, CONT, TEXT, close_payload, server_frame


@dataclass(frozen=True)
class Pause:
    """The client waits this long before its next step (it still reads meanwhile)."""

    seconds: float


@dataclass(frozen=True)
class Chop:
    """Bytes written ``size`` at a time (each piece its own write, TCP_NODELAY), with
    ``pause`` seconds after each piece."""

    data: bytes
    size: int
    pause: float = 0.0


@dataclass(frozen=True)
class Close:
    """Our close frame (the bytes may be a broken one): the client has started the
    closing handshake once it is written. With ``wait`` the client first waits (up to the
    case's reaction time) until every echo and pong the case expects has come, so that a
    server is never judged on whether its echo won a race against our close; without it
    the close follows at once (the cases about that race)."""

    data: bytes
    wait: bool = True


Step = Union[bytes, Chop, Pause, Close]


def frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0, masked: bool = True,
          declared: int | None = None, length_bytes: int | None = None) -> bytes:
    """One client frame: masked with a fresh random key unless ``masked`` is False."""
    return server_frame(opcode, payload, fin=fin, rsv=rsv, mask=os.urandom(4) if masked else None,
                        declared=declared, length_bytes=length_bytes)


def close(code: int | None = 1000, reason: bytes = b"", wait: bool = True) -> Close:
    return Close(frame(CLOSE, close_payload(code, reason)), wait)


def fragments(opcode: int, data: bytes, size: int) -> bytes:
    """``data`` as one message in fragments of ``size`` bytes (the last may be shorter)."""
    if not data:
        return frame(opcode, b"")
    pieces = [data[i:i + size] for i in range(0, len(data), size)]
    return b"".join(frame(opcode if i == 0 else CONT, p, fin=i == len(pieces) - 1) for i, p in enumerate(pieces))


def split_at(data: bytes, cuts: list[int], opcode: int = TEXT) -> bytes:
    """``data`` as one message cut at the byte positions ``cuts`` (fragments may be empty)."""
    bounds = [0, *cuts, len(data)]
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    return b"".join(frame(opcode if i == 0 else CONT, p, fin=i == len(pieces) - 1) for i, p in enumerate(pieces))


def bytewise(data: bytes, pause: float = 0.001) -> Chop:
    """Every byte its own write."""
    return Chop(data, 1, pause)
