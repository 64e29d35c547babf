"""The client cases, as data: what the peer (a server) sends and what a strict client must
do. Grouped as Autobahn|Testsuite's sections (1 framing, 2 pings and pongs, 3 reserved
bits, 4 opcodes, 5 fragmentation, 6 UTF-8, 7 closing, 9 limits, 10 auto-fragmentation),
from the case shapes both directions share (framing_cases.py, payload_cases.py, with the
peer playing a server: ``AS_SERVER``, its frames unmasked), plus the opening handshake
and a 16 MiB text; each names its RFC 6455 section, a title, the steps the peer plays
after the opening handshake (frames, possibly broken, chopped writes, pauses) and the
expectation:

- ``fail``: the client must _Fail the WebSocket Connection_ (section 7.1.7). Strict: it
  sends a close frame with one of ``codes`` (section 7.4.1) and delivers no message the
  case does not list. Non-strict: it drops TCP without a close frame, which 7.1.7
  permits ("SHOULD" send a close frame). Fail: another code, a message delivered, or no
  reaction. With ``before_end`` the close must come before the script's last step
  (the peer pauses before it): failing only once the message is complete is non-strict.
- ``deliver``: valid input. Strict: exactly ``messages`` are delivered, every ping is
  answered by a pong with its payload (5.5.3), and the peer's closing close frame is
  answered with one of ``close_reply`` (5.5.1: "MUST send a Close frame in response ...
  typically echos the status code it received"). Non-strict: all that, but the close is
  answered with another valid code, or (``coalesce``) only the latest of several pings
  answered (5.5.3 MAY), or (``too_big_ok``) the message refused with 1009 or 1008, a
  limit of the client's (7.4.1). Fail: anything else (a missing or wrong message or
  pong, no close answer, the connection failed on valid input).
- ``reject``: the opening handshake is wrong (4.1: the client "MUST _Fail the WebSocket
  Connection_"); the connection is never established, so there is no close frame to
  send. Strict: no ``open`` event, TCP dropped. Non-strict: a close frame sent first.
  Fail: ``open`` fired or data sent, or no reaction.
- ``refuse`` and ``fault``: the TLS-failure set (tls_cases.py, judged by tls_judge.py).

Where the RFC leaves the answer open (Autobahn's INFORMATIONAL, the server cases' ``info``)
the clients have no case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Callable, Literal, Union

from .framing_cases import fragmentation, framing, opcodes, pings, reserved_bits
from .frames import BINARY, CLOSE, TEXT, close_payload, server_frame
from .payload_cases import auto_fragmentation, closing as closing_shapes, limits, utf8_cases
from .script import (GROUPS, HEAVY_REACT_S, INVALID_DATA, PROTOCOL_ERROR, REACT_S, Chop, Close, Direction, Message,
                     Pause, binary, chosen_ids, gathered, pattern, text)

__all__ = ["AS_SERVER", "BY_ID", "CASES", "Case", "Close", "Expect", "Fault", "GROUPS", "HANDSHAKE", "INVALID_DATA",
           "Message", "PROTOCOL_ERROR", "Pause", "QUICK", "Step", "binary", "by_group", "closing", "frame", "group_label",
           "pattern", "select", "text"]

HANDSHAKE = "handshake"  # the opening handshake (RFC 6455 4.1): a group of the clients' own


def group_label(group: str) -> str:
    """A group as the results and `wsbench list` name it: "6 UTF-8", "handshake", "tls-failure"."""
    return f"{group} {GROUPS[group]}" if group in GROUPS else group


@dataclass(frozen=True)
class Fault:
    """The peer ends the TLS session in the middle of the stream (wire.py, FAULTS):
    ``truncate``, ``alert`` or ``close-notify``; nothing is played after it."""

    kind: str


Step = Union[bytes, Chop, Close, Pause, Fault]


@dataclass(frozen=True)
class Expect:
    verdict: Literal["fail", "deliver", "reject", "refuse", "fault"]
    codes: tuple[int, ...] = ()  # fail: the close codes a strict client sends
    messages: tuple[Message, ...] = ()  # deliver: in order; fail: allowed before the failure
    pongs: tuple[bytes, ...] = ()  # deliver: the payloads the client's pongs must carry, in order
    close_reply: tuple[int | None, ...] = (1000,)  # deliver: strict answers to our close (None: no code)
    before_end: bool = False  # fail: strict only if the close comes before the script's last step
    error_required: bool = True  # fault: no error event before close fails (else it is non-strict)
    too_big_ok: bool = False  # deliver: refusing the message with 1009 or 1008 (a limit of the client's) is non-strict
    coalesce: bool = False  # deliver: pongs for only the latest of several pings are non-strict (5.5.3)

    def describe(self) -> str:
        """One line: what a strict client does."""
        if self.verdict == "fail":
            codes = " or ".join(map(str, self.codes))
            return f"close {codes}" + (" before the message ends" if self.before_end else "")
        if self.verdict == "reject":
            return "never open; drop TCP"
        if self.verdict == "refuse":
            return "never open: error, then close 1006 (not clean)"
        if self.verdict == "fault":
            n = len(self.messages)
            return (f"deliver the {n} complete message{'s' if n != 1 else ''}, not the partial one; "
                    f"error{'' if self.error_required else ' (non-strict without)'}, then close 1006 (not clean)")
        n = len(self.messages)
        parts = [f"deliver {n} message{'s' if n != 1 else ''}"] if n else []
        if self.pongs:
            parts.append(f"pong {len(self.pongs)}")
        replies = ["empty" if c is None else str(c) for c in self.close_reply]
        parts.append("answer the close with " + " or ".join(replies))
        return ", ".join(parts)


@dataclass(frozen=True)
class Case:
    id: str
    section: str  # of RFC 6455
    group: str  # a key of GROUPS (Autobahn's section number), HANDSHAKE, or the TLS-failure set's
    title: str
    build: Callable[[], tuple[Step, ...]] = field(repr=False)
    expect: Expect
    why: str  # the RFC's rule, in a sentence
    wrong_accept: bool = False  # answer the upgrade with a wrong Sec-WebSocket-Accept
    with_101: bool = False  # the first step goes out in the same write as the 101 response
    react_s: float = REACT_S
    certificate: str | None = None  # the TLS-failure set: what the peer presents (certificates.py's manifest entry)
    heavy: bool = False  # megabytes: never in the quick subset
    extensions: str | None = None  # the 101's Sec-WebSocket-Extensions answer (deflate_conformance/; None: none)

    def steps(self) -> tuple[Step, ...]:
        return _steps(self)

    def script_seconds(self) -> float:
        """The pauses in the script (what the peer itself takes, besides writing)."""
        return _script_seconds(self)

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "section": self.section, "group": group_label(self.group), "title": self.title,
                "expect": self.expect.verdict, "strict": self.expect.describe(), "why": self.why}


@lru_cache(maxsize=8)  # a few at a time: the megabyte cases' scripts are large
def _steps(case: Case) -> tuple[Step, ...]:
    return case.build()


@cache
def _script_seconds(case: Case) -> float:
    return sum(s.seconds if isinstance(s, Pause) else s.pause * -(-len(s.data) // s.size)
               for s in case.build() if isinstance(s, (Pause, Chop)))


frame = server_frame


def closing(code: int | None = 1000, reason: bytes = b"", wait: bool = True) -> Close:
    return Close(server_frame(CLOSE, close_payload(code, reason)), wait)


def fails(*codes: int, messages: tuple[Message, ...] = (), before_end: bool = False) -> Expect:
    return Expect("fail", codes=codes or (PROTOCOL_ERROR,), messages=messages, before_end=before_end)


def delivers(*messages: Message, pongs: tuple[bytes, ...] = (), close_reply: tuple[int | None, ...] = (1000,),
             too_big_ok: bool = False, coalesce: bool = False) -> Expect:
    return Expect("deliver", messages=messages, pongs=pongs, close_reply=close_reply, too_big_ok=too_big_ok,
                  coalesce=coalesce)


def _case(id: str, group: str, section: str, title: str, build: Callable[[], tuple[Step, ...]],
          expect: Expect | None, why: str, react_s: float = REACT_S, heavy: bool = False) -> Case | None:
    """A shape's parts as a client case (None where the shape's answer is left open)."""
    return None if expect is None else Case(id, section, group, title, build, expect, why, react_s=react_s,
                                            heavy=heavy)


def _no_case(question: str, *awaited: Message) -> None:
    """The clients have no informational cases."""
    return None


# the peer plays a server: its frames unmasked; valid input is delivered
AS_SERVER = Direction(masked=False, case=_case, echo=delivers, fails=fails, info=_no_case, receiver="client",
                      handled="delivered")

BIG_TEXT_BYTES = 16 << 20
BIG_FRAGMENT = 1024


@cache
def big_text() -> bytes:
    """16 MiB of valid UTF-8: numbered lines of 1-, 2- and 3-byte characters, padded with
    ASCII to exactly 16 MiB. Cut into 1 KiB fragments, many fragments split a character."""
    line = "{:07d} ascii, é ß ü, € 中 文, ok\n"
    parts: list[bytes] = []
    size = i = 0
    while True:
        chunk = line.format(i).encode("utf-8")
        if size + len(chunk) > BIG_TEXT_BYTES:
            break
        parts.append(chunk)
        size += len(chunk)
        i += 1
    parts.append(b"z" * (BIG_TEXT_BYTES - size))
    return b"".join(parts)


def _client_only() -> list[Case]:
    """The cases only a client has: the opening handshake, and 16 MiB of multi-byte text."""
    return [
        Case("handshake-accept-wrong", "4.1", HANDSHAKE, "101 response with a wrong Sec-WebSocket-Accept",
             lambda: (frame(TEXT, b"never"),), Expect("reject"),
             "4.1: a Sec-WebSocket-Accept other than base64(SHA-1(key + GUID)) MUST fail the connection; it never "
             "opens", wrong_accept=True, with_101=True),
        Case("handshake-frames-with-101", "4.1", HANDSHAKE, "a message in the same TCP write as the 101 response",
             lambda: (frame(TEXT, b"early") + frame(BINARY, b"\x00bird"), closing()),
             delivers(text("early"), binary(b"\x00bird")),
             "4.1: once the 101 is received the connection is open; the server may send at once", with_101=True),
        Case("9-text-16mib-utf8-fragments-1kib", "5.4", "9", "16 MiB of UTF-8 text (1- to 3-byte characters) in "
             "16,384 fragments of 1 KiB, many of them cut inside a character",
             lambda: (AS_SERVER.fragments(TEXT, big_text(), BIG_FRAGMENT), closing()),
             delivers(Message("text", big_text), too_big_ok=True),
             "5.4: fragments of any size and number make one message; 5.6: characters may be split between "
             "fragments", react_s=HEAVY_REACT_S, heavy=True),
    ]


CASES: tuple[Case, ...] = gathered(*(table(AS_SERVER) for table in (
    framing, pings, reserved_bits, opcodes, fragmentation, utf8_cases, closing_shapes, limits, auto_fragmentation)),
    _client_only())
BY_ID: dict[str, Case] = {c.id: c for c in CASES}

# every group represented, a few seconds per client (make test)
QUICK: tuple[str, ...] = (
    "1-text-125", "1-binary-65536", "1-text-127-chops-3", "1-header-bytewise-64-bit", "1-masked-text",
    "1-length-top-bit",
    "2-ping-125", "2-ping-126", "2-ten-pings", "2-pong-unsolicited",
    "3-rsv1-text", "3-rsv3-binary", "3-rsv2-ping", "3-rsv12-close",
    "4-opcode-3", "4-opcode-b-between", "4-opcode-7-in-fragments",
    "5-ping-between-fragments", "5-continuation-first-fin", "5-text-inside-text", "5-ping-fragmented",
    "5-fragments-1000",
    "6-valid-one-to-four-per-byte", "6-kosme-split-3", "6-invalid-byte-ff", "6-invalid-surrogate-a080",
    "6-invalid-overlong-slash-2-per-byte", "6-split-invalid", "6-fail-fast-first",
    "7-close-code-1000", "7-close-code-3000", "7-close-empty", "7-close-1-byte", "7-close-code-1005",
    "7-close-reason-invalid-ff", "7-message-after-close", "7-close-reason-124",
    "9-text-64kib", "9-binary-1000-messages",
    "10-text-65536-64-fragments",
    "handshake-accept-wrong", "handshake-frames-with-101",
)


def select(ids: list[str] | None, quick: bool = False) -> list[Case]:
    """The cases named (ids or shell patterns: ``6-invalid-*``), and the quick subset with
    ``quick``; all when neither. Raises KeyError with a name that matches no case."""
    wanted = chosen_ids(list(BY_ID), QUICK, ids, quick)
    return [c for c in CASES if c.id in wanted]


def by_group(chosen: list[Case] | tuple[Case, ...] = CASES) -> dict[str, list[Case]]:
    """The cases by group: Autobahn's sections in order, then the opening handshake."""
    return {g: [c for c in chosen if c.group == g] for g in (*GROUPS, HANDSHAKE) if any(c.group == g for c in chosen)}
