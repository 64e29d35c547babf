"""What a server case writes, step by step (the step kinds are both directions':
conformance.script): client frames (masked, as RFC 6455 5.3 asks of a client, with a fresh
key per frame; unmasked only where a case says so), bytes written in chops, pauses, and
our close frame (which marks when the client started the closing handshake). Frames come
from ``conformance.frames``, the repository's one frame writer."""

from __future__ import annotations

import os

from ..conformance.frames import server_frame
from ..conformance.script import Chop, Close, Pause, Step, bytewise

__all__ = ["Chop", "Close", "Pause", "Step", "bytewise", "frame"]


def frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0) -> bytes:
    """One client frame, masked with a fresh random key (what the raw client answers with:
    pongs, its close)."""
    return server_frame(opcode, payload, fin=fin, rsv=rsv, mask=os.urandom(4))
