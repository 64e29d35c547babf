"""What the client saw of one server in one case: every frame the server sent (with its
time), the messages those frames make, when the client wrote each step and its close,
and how the TCP connection ended. Times are seconds since the 101 response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..conformance.frames import BINARY, CLOSE, CONT, OPCODE_NAMES, PING, PONG, TEXT, ClientFrame

# how the TCP connection ended
SERVER_EOF = "server-eof"  # the server closed TCP (FIN)
SERVER_RESET = "server-reset"  # the server reset it
CLIENT_CLOSED = "client-closed"  # after the closing handshake the server did not close TCP: we did
GAVE_UP = "gave-up"  # the server did not react in time: we closed TCP
HEAD_BYTES = 32  # of each data frame's payload kept in the results (a control frame's: all of it)


@dataclass
class Received:
    """A message the server sent, reassembled from its frames."""

    kind: str  # text, binary
    data: bytes
    frames: int
    t: float


@dataclass
class ServerObservation:
    case_id: str
    handshake: str | None = None  # None: upgraded; else why not (one line)
    frames: list[tuple[float, ClientFrame]] = field(default_factory=list)  # what the server sent
    step_t: list[float] = field(default_factory=list)  # when each step was written
    script_done_t: float | None = None
    our_close_t: float | None = None  # our close frame written (in the script or as an answer)
    answered: bool = False  # our close answered the server's (the server started the closing handshake)
    tcp_end: str | None = None
    tcp_end_t: float | None = None
    write_failed: str | None = None  # the script could not be written to the end, and why
    notes: list[str] = field(default_factory=list)
    extensions: str | None = None  # with an offer (ServerCase.offer): the 101's Sec-WebSocket-Extensions, if any

    @property
    def server_dropped(self) -> bool:
        return self.tcp_end in (SERVER_EOF, SERVER_RESET)

    def closes(self) -> list[tuple[float, ClientFrame]]:
        return [(t, f) for t, f in self.frames if f.opcode == CLOSE]

    def server_close(self) -> tuple[float, ClientFrame] | None:
        closes = self.closes()
        return closes[0] if closes else None

    def server_started_close(self) -> bool:
        """The server sent its close frame before the client sent one."""
        return self.server_close() is not None and (self.our_close_t is None or self.answered)

    def pongs(self) -> list[bytes]:
        return [f.payload for _, f in self.frames if f.opcode == PONG]

    def messages(self) -> list[Received]:
        """The data messages, whole (however the server fragmented them); broken
        fragmentation is reported by ``problems``."""
        out: list[Received] = []
        kind, parts, n = None, [], 0
        for t, f in self.frames:
            if f.opcode in (TEXT, BINARY):
                kind, parts, n = ("text" if f.opcode == TEXT else "binary"), [f.payload], 1
            elif f.opcode == CONT and kind is not None:
                parts.append(f.payload)
                n += 1
            else:
                continue
            if f.fin and kind is not None:
                out.append(Received(kind, b"".join(parts), n, t))
                kind, parts, n = None, [], 0
        return out

    def problems(self) -> str | None:
        """A frame a server must never send (RFC 6455 5.1, 5.2, 5.4, 5.5, 5.5.1), or None."""
        in_message = False
        closed = False
        for _, f in self.frames:
            name = OPCODE_NAMES.get(f.opcode, f"reserved opcode 0x{f.opcode:X}")
            if f.masked:
                return f"sent a masked {name} frame (5.1: a server MUST NOT mask)"
            if f.rsv:
                return f"sent a {name} frame with RSV bits {f.rsv:03b} (5.2: none negotiated)"
            if f.opcode not in OPCODE_NAMES:
                return f"sent a frame with {name} (5.2)"
            if f.opcode >= 8 and (len(f.payload) > 125 or not f.fin):
                return f"sent a {'fragmented' if not f.fin else 'too long'} {name} frame (5.5)"
            if closed and f.opcode in (TEXT, BINARY, CONT):
                return f"sent a {name} frame after its close frame (5.5.1: MUST NOT send data after a close)"
            if f.opcode == CONT and not in_message:
                return "sent a continuation frame with no message started (5.4)"
            if f.opcode in (TEXT, BINARY) and in_message:
                return f"started a {name} message inside another (5.4)"
            if f.opcode in (TEXT, BINARY, CONT):
                in_message = not f.fin
            if f.opcode == CLOSE:
                closed = True
                if len(f.payload) == 1:
                    return "sent a close frame with a 1-byte body (5.5.1)"
        return None

    def to_json(self) -> dict[str, Any]:
        """What the results record: the first 40 frames (a data frame's first 32 bytes, a
        control frame's whole payload), the steps' times, how TCP ended."""
        return {
            "handshake": self.handshake,
            "frames": [{"t": t, "fin": f.fin, "rsv": f.rsv, "opcode": f.opcode, "masked": f.masked,
                        "length": len(f.payload),
                        "head": (f.payload if f.opcode >= 8 else f.payload[:HEAD_BYTES]).hex(),
                        **({"close_code": f.close_code(),
                            "close_reason": f.close_reason().decode("utf-8", "replace")} if f.opcode == CLOSE else {})}
                       for t, f in self.frames[:40]],
            "frames_total": len(self.frames), "script_done_t": self.script_done_t, "our_close_t": self.our_close_t,
            "answered": self.answered,
            "tcp_end": self.tcp_end, "tcp_end_t": self.tcp_end_t, "write_failed": self.write_failed,
            "notes": self.notes, **({"extensions": self.extensions} if self.extensions is not None else {}),
        }


__all__ = ["CLIENT_CLOSED", "GAVE_UP", "PING", "Received", "SERVER_EOF", "SERVER_RESET", "ServerObservation"]
