"""What both directions' cases are made of: the steps a script writes (bytes, chopped
writes, pauses, a close frame), the messages a case expects, the payloads, Autobahn's
sections, and ``Direction``: who the tester plays, which turns one table of case shapes
(framing_cases.py, payload_cases.py) into the clients' cases (the tester is a server: its
frames unmasked) or the servers' cases (the tester is a client: its frames masked, RFC
6455 5.1/5.3). The server room (server_conformance/) imports this; this imports nothing
of it."""

from __future__ import annotations

import fnmatch
import os
import random
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Literal, Union

from .frames import CLOSE, CONT, TEXT, close_payload, server_frame

PROTOCOL_ERROR, INVALID_DATA, POLICY, TOO_BIG = 1002, 1007, 1008, 1009
REACT_S = 2.0  # how long the other side has to react once the script has been written
HEAVY_REACT_S = 30.0  # the same, for the cases of megabytes
WRONG_KEY = b"\x11\x22\x33\x44"  # the masking key of a server's (wrongly) masked frame

# Autobahn|Testsuite's sections, the groups of both directions' cases
GROUPS: dict[str, str] = {"1": "framing", "2": "pings and pongs", "3": "reserved bits", "4": "opcodes",
                          "5": "fragmentation", "6": "UTF-8", "7": "closing", "9": "limits",
                          "10": "auto-fragmentation"}


@dataclass(frozen=True)
class Pause:
    """The tester waits this long before its next step (it still reads meanwhile)."""

    seconds: float


@dataclass(frozen=True)
class Chop:
    """Bytes written ``size`` at a time (each piece its own write), with ``pause`` seconds
    after each piece."""

    data: bytes
    size: int
    pause: float = 0.0


@dataclass(frozen=True)
class Close:
    """The tester's close frame (the bytes may be a broken one): the closing handshake has
    started once it is written. With ``wait`` the tester first waits (up to the case's
    reaction time) until every reply the case expects has come (the server's echoes and
    pongs; the client's pongs), so that no side is judged on whether its reply won a race
    against the close; without it the close follows at once (the cases about that race)."""

    data: bytes
    wait: bool = True


Step = Union[bytes, Chop, Pause, Close]


@dataclass(frozen=True)
class Message:
    """A message the other side must deliver (a client) or echo (a server), whole."""

    kind: Literal["text", "binary"]
    source: bytes | Callable[[], bytes] = field(repr=False)  # text: its UTF-8; a function builds a big one

    @property
    def data(self) -> bytes:
        return self.source() if callable(self.source) else self.source


def text(data: bytes | str) -> Message:
    return Message("text", data.encode() if isinstance(data, str) else data)


def binary(data: bytes) -> Message:
    return Message("binary", data)


def pattern(n: int, seed: int) -> bytes:
    """n bytes that do not repeat with any short period (a message shifted or reordered shows)."""
    out = bytearray(n)
    x = seed or 1
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = x >> 16 & 0xFF
    return bytes(out)


@cache
def ascii_text(n: int) -> bytes:
    """n bytes of printable ASCII (valid UTF-8 however it is cut)."""
    line = b"wsbench server conformance: the quick brown fox jumps over the lazy dog 0123456789\n"
    return (line * (n // len(line) + 1))[:n]


@cache
def big_binary(n: int) -> bytes:
    return random.Random(n).randbytes(n)


def mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB" if n >= 1024 else f"{n} B"


def bytewise(data: bytes, pause: float = 0.001) -> Chop:
    """Every byte its own write."""
    return Chop(data, 1, pause)


@dataclass(frozen=True)
class Direction:
    """Who the tester plays, and how a case shape becomes a case of that direction.

    ``masked``: whether the tester's frames are masked (it plays a client: True). The
    constructors take a shape's parts and return the direction's case and expectations;
    ``info`` (an answer the RFC leaves open) may return None, and ``case`` then returns
    None: the direction has no such case. ``receiver`` names the side under test,
    ``handled`` what it does with valid messages ("echoed", "delivered")."""

    masked: bool
    case: Callable[..., Any]  # (id, group, section, title, build, expect, why, react_s=, heavy=)
    echo: Callable[..., Any]  # (*messages, pongs=, close_reply=, too_big_ok=, coalesce=)
    fails: Callable[..., Any]  # (*codes, messages=, before_end=)
    info: Callable[..., Any]  # (question, *awaited)
    receiver: str
    handled: str

    @property
    def tester(self) -> str:
        return "client" if self.masked else "server"

    @property
    def wrong_mask(self) -> str:
        """What a frame the other side must refuse is: "unmasked" from a client, "masked" from a server."""
        return "masked" if not self.masked else "unmasked"

    def frame(self, opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0, wrong_mask: bool = False,
              declared: int | None = None, length_bytes: int | None = None) -> bytes:
        """One frame of the tester's: masked (a fresh random key) if it plays a client,
        else not; the other way round with ``wrong_mask`` (a server's masked frame has a
        fixed key, so that what a client that takes the key for payload delivers does not
        depend on chance)."""
        key = None if self.masked == wrong_mask else os.urandom(4) if self.masked else WRONG_KEY
        return server_frame(opcode, payload, fin=fin, rsv=rsv, mask=key, declared=declared, length_bytes=length_bytes)

    def close(self, code: int | None = 1000, reason: bytes = b"", wait: bool = True) -> Close:
        return Close(self.frame(CLOSE, close_payload(code, reason)), wait)

    def then_close(self, *steps: Step) -> Callable[[], tuple[Step, ...]]:
        """A script of valid input: the steps, then the tester's close 1000 (once the replies came)."""
        return lambda: (*steps, self.close())

    def fragments(self, opcode: int, data: bytes, size: int) -> bytes:
        """``data`` as one message in fragments of ``size`` bytes (the last may be shorter)."""
        if not data:
            return self.frame(opcode, b"")
        return self.split_at(data, list(range(size, len(data), size)), opcode)

    def split_at(self, data: bytes, cuts: list[int], opcode: int = TEXT) -> bytes:
        """``data`` as one message cut at the byte positions ``cuts`` (fragments may be empty)."""
        bounds = [0, *cuts, len(data)]
        pieces = [data[a:b] for a, b in zip(bounds, bounds[1:])]
        return b"".join(self.frame(opcode if i == 0 else CONT, p, fin=i == len(pieces) - 1)
                        for i, p in enumerate(pieces))


def chosen_ids(every: list[str], quick: tuple[str, ...], names: list[str] | None, with_quick: bool) -> set[str]:
    """The ids of the cases named, a name being an id or a shell pattern of ids
    (``6-invalid-*``), and of the quick subset with ``with_quick``; every id when
    neither. A name that is no id and matches none raises KeyError with the name."""
    wanted: set[str] = set(quick) if with_quick else set()
    for name in names or []:
        matched = fnmatch.filter(every, name) if any(ch in name for ch in "*?[") else [name] if name in every else []
        if not matched:
            raise KeyError(name)
        wanted.update(matched)
    return wanted or set(every)


def gathered(*tables: list[Any]) -> tuple[Any, ...]:
    """The cases of the tables, in order, but those the direction has not (None)."""
    return tuple(c for table in tables for c in table if c is not None)
