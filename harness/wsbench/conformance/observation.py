"""What the peer saw of one client in one case (``Observation``), and the handle the
runner waits on until the connection is over (``Pending``). Written by the peer's
thread (peer.py, play.py), read by the judges once the connection is over."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from .cases import Case
from .frames import CLOSE, PONG, ClientFrame


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
