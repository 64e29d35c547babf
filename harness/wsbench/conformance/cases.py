"""The conformance cases, as data: what the peer sends and what a strict client must do.

Each case names its RFC 6455 section, a title, the bytes the peer plays after the
opening handshake (frames, possibly broken, with pauses between them) and the
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
  answered with another valid code. Fail: anything else (a missing or wrong message or
  pong, no close answer, the connection failed on valid input).
- ``reject``: the opening handshake is wrong (4.1: the client "MUST _Fail the WebSocket
  Connection_"); the connection is never established, so there is no close frame to
  send. Strict: no ``open`` event, TCP dropped. Non-strict: a close frame sent first.
  Fail: ``open`` fired or data sent, or no reaction.
- ``refuse`` and ``fault``: the TLS-failure set (tls_cases.py, judged by tls_judge.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Callable, Literal, Union

from .frames import BINARY, CLOSE, CONT, PING, PONG, TEXT, close_payload, server_frame

PROTOCOL_ERROR, INVALID_DATA = 1002, 1007
REACT_S = 2.0  # how long a client has to react once the script has been played


@dataclass(frozen=True)
class Pause:
    """The peer waits this long before its next step."""

    seconds: float


@dataclass(frozen=True)
class Closes:
    """Bytes that hold the peer's close frame (valid or not): the peer then answers no
    close of the client's with another close."""

    data: bytes


@dataclass(frozen=True)
class Fault:
    """The peer ends the TLS session in the middle of the stream (wire.py, FAULTS):
    ``truncate``, ``alert`` or ``close-notify``; nothing is played after it."""

    kind: str


Step = Union[bytes, Closes, Pause, Fault]


@dataclass(frozen=True)
class Message:
    """A message the client must deliver to the application, whole."""

    kind: Literal["text", "binary"]
    source: bytes | Callable[[], bytes]  # text: its UTF-8; a function builds a big one when needed

    @property
    def data(self) -> bytes:
        return self.source() if callable(self.source) else self.source


@dataclass(frozen=True)
class Expect:
    verdict: Literal["fail", "deliver", "reject", "refuse", "fault"]
    codes: tuple[int, ...] = ()  # fail: the close codes a strict client sends
    messages: tuple[Message, ...] = ()  # deliver: in order; fail: allowed before the failure
    pongs: tuple[bytes, ...] = ()  # deliver: the payloads the client's pongs must carry, in order
    close_reply: tuple[int | None, ...] = (1000,)  # deliver: strict answers to our close (None: no code)
    before_end: bool = False  # fail: strict only if the close comes before the script's last step
    error_required: bool = True  # fault: no error event before close fails (else it is non-strict)

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
    group: str
    title: str
    build: Callable[[], tuple[Step, ...]] = field(repr=False)
    expect: Expect
    why: str  # the RFC's rule, in a sentence
    wrong_accept: bool = False  # answer the upgrade with a wrong Sec-WebSocket-Accept
    with_101: bool = False  # the first step goes out in the same write as the 101 response
    react_s: float = REACT_S
    certificate: str | None = None  # the TLS-failure set: what the peer presents (certificates.py's manifest entry)

    def steps(self) -> tuple[Step, ...]:
        return _steps(self)

    def script_seconds(self) -> float:
        """The pauses in the script (what the peer itself takes, besides writing)."""
        return sum(s.seconds for s in self.steps() if isinstance(s, Pause))

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "section": self.section, "group": self.group, "title": self.title,
                "expect": self.expect.verdict, "strict": self.expect.describe(), "why": self.why}


@cache
def _steps(case: Case) -> tuple[Step, ...]:
    return case.build()


frame = server_frame


def closing(code: int | None = 1000, reason: bytes = b"") -> Closes:
    return Closes(server_frame(CLOSE, close_payload(code, reason)))


def text(s: str) -> Message:
    return Message("text", s.encode("utf-8"))


def binary(b: bytes) -> Message:
    return Message("binary", b)


def fails(*codes: int, before_end: bool = False) -> Expect:
    return Expect("fail", codes=codes, before_end=before_end)


def delivers(*messages: Message, pongs: tuple[bytes, ...] = (), close_reply: tuple[int | None, ...] = (1000,)) -> Expect:
    return Expect("deliver", messages=messages, pongs=pongs, close_reply=close_reply)


def bytewise(data: bytes, pause: float) -> tuple[Step, ...]:
    """Every byte in its own write, with a pause after each."""
    out: list[Step] = []
    for i in range(len(data)):
        out += [data[i:i + 1], Pause(pause)]
    return tuple(out)


def pattern(n: int, seed: int) -> bytes:
    """n bytes that do not repeat with any short period (a message's digest can then
    tell a reordered or shifted delivery from the right one)."""
    out = bytearray(n)
    x = seed or 1
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = x >> 16 & 0xFF
    return bytes(out)


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


def _big_text_fragments() -> tuple[Step, ...]:
    data = big_text()
    frames = [frame(TEXT if off == 0 else CONT, data[off:off + BIG_FRAGMENT],
                    fin=off + BIG_FRAGMENT >= len(data))
              for off in range(0, len(data), BIG_FRAGMENT)]
    return (b"".join(frames), closing())


def _one_byte_fragments() -> tuple[Step, ...]:
    data = bytes(0x61 + i % 26 for i in range(1000))
    frames = [frame(TEXT if i == 0 else CONT, data[i:i + 1], fin=i == 999) for i in range(1000)]
    return (b"".join(frames), closing())


def _header_split() -> tuple[Step, ...]:
    return (*bytewise(frame(TEXT, b"split, byte by byte"), 0.005),
            *bytewise(frame(BINARY, b"", declared=300)[:4], 0.005), pattern(300, 7),
            *bytewise(frame(BINARY, b"", declared=70000)[:10], 0.005), pattern(70000, 8),
            closing())


def _bad_close(code: int) -> Case:
    return Case(f"close-code-{code}", "7.4.1", "closing", f"close frame with code {code}",
                lambda: (closing(code),), fails(PROTOCOL_ERROR),
                "7.4.1/7.4.2: codes 0-999 are not used, 1004 is reserved, 1005, 1006 and 1015 "
                "MUST NOT be set in a close frame, 1016-2999 are reserved for future RFCs: "
                "receiving one is a protocol error")


def _bad_text(case_id: str, title: str, payload: bytes, rule: str) -> Case:
    """One text frame that is not valid UTF-8."""
    return Case(case_id, "5.6", "utf8", title, lambda: (frame(TEXT, payload),), fails(INVALID_DATA),
                f"5.6/8.1: {rule}; invalid UTF-8 fails the connection with 1007 (7.4.1)")


def _valid_close(code: int) -> Case:
    return Case(f"close-code-{code}", "7.4.2", "closing", f"close frame with code {code} (application range)",
                lambda: (closing(code),), delivers(close_reply=(code,)),
                "7.4.2: 3000-4999 are valid codes for libraries and applications; 5.5.1: the "
                "answer typically echoes the code received")


CASES: tuple[Case, ...] = (
    # --- framing (5.1, 5.2)
    Case("rsv1-text", "5.2", "framing", "text frame with RSV1 set, no extension negotiated",
         lambda: (frame(TEXT, b"hello", rsv=4),), fails(PROTOCOL_ERROR),
         "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
    Case("rsv2-binary", "5.2", "framing", "binary frame with RSV2 set",
         lambda: (frame(BINARY, b"\x01\x02", rsv=2),), fails(PROTOCOL_ERROR),
         "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
    Case("rsv3-ping", "5.2", "framing", "ping frame with RSV3 set",
         lambda: (frame(PING, b"p", rsv=1),), fails(PROTOCOL_ERROR),
         "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
    Case("opcode-3", "5.2", "framing", "reserved data opcode 0x3",
         lambda: (frame(0x3, b"data"),), fails(PROTOCOL_ERROR),
         "5.2: opcodes 0x3-0x7 are reserved; an unknown opcode MUST fail the connection"),
    Case("opcode-7", "5.2", "framing", "reserved data opcode 0x7 inside a fragmented message",
         lambda: (frame(TEXT, b"start", fin=False), frame(0x7, b"x")), fails(PROTOCOL_ERROR),
         "5.2: opcodes 0x3-0x7 are reserved; an unknown opcode MUST fail the connection"),
    Case("opcode-b", "5.2", "framing", "reserved control opcode 0xB",
         lambda: (frame(0xB, b"ctl"),), fails(PROTOCOL_ERROR),
         "5.2: opcodes 0xB-0xF are reserved; an unknown opcode MUST fail the connection"),
    Case("opcode-f", "5.2", "framing", "reserved control opcode 0xF after a valid message",
         lambda: (frame(TEXT, b"valid"), frame(0xF, b"")), Expect("fail", codes=(PROTOCOL_ERROR,),
                                                                    messages=(text("valid"),)),
         "5.2: opcodes 0xB-0xF are reserved; an unknown opcode MUST fail the connection "
         "(the valid message before it may be delivered)"),
    Case("masked-text", "5.1", "framing", "masked text frame from the server",
         lambda: (frame(TEXT, b"masked", mask=b"\x11\x22\x33\x44"),), fails(PROTOCOL_ERROR),
         "5.1: a server MUST NOT mask; a client MUST close the connection if it detects a masked frame"),
    Case("length-top-bit", "5.2", "framing", "64-bit length with the most significant bit set",
         lambda: (frame(BINARY, b"", declared=(1 << 63) | 5) + b"12345",), fails(PROTOCOL_ERROR),
         "5.2: in the 64-bit length the most significant bit MUST be 0: such a header is "
         "malformed (a protocol error, not a message too big)"),
    Case("header-split", "5.2", "framing", "frames sent byte by byte (7-, 16- and 64-bit length headers)",
         _header_split, delivers(text("split, byte by byte"), binary(pattern(300, 7)), binary(pattern(70000, 8))),
         "5.2: a frame is a byte stream; how TCP splits it does not change it"),
    Case("length-forms", "5.2", "framing", "payloads of 125, 126, 127, 65535 and 65536 bytes",
         lambda: (*(frame(BINARY, pattern(n, n)) for n in (125, 126, 127, 65535, 65536)), closing()),
         delivers(*(binary(pattern(n, n)) for n in (125, 126, 127, 65535, 65536))),
         "5.2: lengths up to 125 in 7 bits, up to 65535 in 16 bits, larger in 64 bits"),
    # --- control frames (5.5)
    Case("ping-126", "5.5", "control", "ping with a 126-byte payload",
         lambda: (frame(PING, b"p" * 126),), fails(PROTOCOL_ERROR),
         "5.5: all control frames MUST have a payload length of 125 bytes or less"),
    Case("close-126", "5.5", "control", "close frame with a 126-byte payload (code 1000 and 124 bytes)",
         lambda: (closing(1000, b"r" * 124),), fails(PROTOCOL_ERROR),
         "5.5: all control frames MUST have a payload length of 125 bytes or less"),
    Case("ping-fragmented", "5.5", "control", "ping split into two frames",
         lambda: (frame(PING, b"fr", fin=False), frame(CONT, b"ag")), fails(PROTOCOL_ERROR),
         "5.5: control frames MUST NOT be fragmented"),
    Case("ping-125", "5.5.2", "control", "ping with a 125-byte payload",
         lambda: (frame(PING, pattern(125, 125)), Pause(0.2), closing()),
         delivers(pongs=(pattern(125, 125),)),
         "5.5.2/5.5.3: a ping MUST be answered by a pong whose application data is identical"),
    Case("ping-empty", "5.5.2", "control", "ping with an empty payload",
         lambda: (frame(PING), Pause(0.2), closing()), delivers(pongs=(b"",)),
         "5.5.2: a ping MUST be answered by a pong (here with empty data)"),
    Case("ping-between-fragments", "5.4", "control", "ping between the fragments of a text message",
         lambda: (frame(TEXT, b"Hello, ", fin=False), frame(PING, b"between"), Pause(0.1),
                  frame(CONT, b"world"), closing()),
         delivers(text("Hello, world"), pongs=(b"between",)),
         "5.4: control frames MAY be injected in the middle of a fragmented message; 5.5.3: "
         "the pong is due as soon as practical"),
    Case("pong-unsolicited", "5.5.3", "control", "unsolicited pong, then a message",
         lambda: (frame(PONG, b"unasked"), frame(TEXT, b"after the pong"), closing()),
         delivers(text("after the pong")),
         "5.5.3: a pong MAY be sent unsolicited; no response is expected"),
    # --- fragmentation (5.4)
    Case("continuation-first", "5.4", "fragmentation", "continuation frame without a message started",
         lambda: (frame(CONT, b"orphan"),), fails(PROTOCOL_ERROR),
         "5.4: a fragmented message starts with a non-continuation frame; anything else is a protocol error"),
    Case("text-inside-fragmented", "5.4", "fragmentation", "new text frame before a fragmented message ended",
         lambda: (frame(TEXT, b"abc", fin=False), frame(TEXT, b"def")), fails(PROTOCOL_ERROR),
         "5.4: fragments of one message MUST NOT be interleaved with another data message"),
    Case("fragments-1000", "5.4", "fragmentation", "a text message in 1,000 one-byte fragments",
         _one_byte_fragments, delivers(Message("text", bytes(0x61 + i % 26 for i in range(1000)))),
         "5.4: a message may be split into any number of fragments; it is delivered as one"),
    Case("fragments-empty", "5.4", "fragmentation", "a message with empty first and last fragments",
         lambda: (frame(BINARY, b"", fin=False), frame(CONT, b"ab", fin=False), frame(CONT, b""), closing()),
         delivers(binary(b"ab")),
         "5.4: fragments may carry no payload; the message is the concatenation"),
    # --- UTF-8 (5.6, 8.1)
    _bad_text("utf8-overlong-2", "overlong 2-byte form of '/' (C0 AF)", b"a\xc0\xafb",
              "text MUST be valid UTF-8; an overlong form is not (RFC 3629)"),
    _bad_text("utf8-overlong-3", "overlong 3-byte form (E0 80 AF)", b"a\xe0\x80\xafb",
              "text MUST be valid UTF-8; an overlong form is not (RFC 3629)"),
    _bad_text("utf8-surrogate", "UTF-16 surrogate D800 encoded (ED A0 80)", b"a\xed\xa0\x80b",
              "surrogates are not valid UTF-8 (RFC 3629)"),
    _bad_text("utf8-above-max", "code point above U+10FFFF (F4 90 80 80)", b"a\xf4\x90\x80\x80",
              "UTF-8 ends at U+10FFFF (RFC 3629)"),
    _bad_text("utf8-ff", "byte FF in a text message", b"valid until \xff", "FF never occurs in UTF-8"),
    _bad_text("utf8-truncated-end", "text message ending inside a 3-byte sequence (E2 82)", b"abc\xe2\x82",
              "a message that ends mid-sequence is not valid UTF-8"),
    Case("utf8-split-invalid", "5.6", "utf8", "E2 82 ends fragment 1, fragment 2 starts with '('",
         lambda: (frame(TEXT, b"ok \xe2\x82", fin=False), frame(CONT, b"(ok")), fails(INVALID_DATA),
         "5.6/8.1: validity is a property of the whole message, across fragments; 1007 (7.4.1)"),
    Case("utf8-fail-fast", "8.1", "utf8", "invalid first fragment, 1 s pause, then the last fragment",
         lambda: (frame(TEXT, b"ok \xff", fin=False), Pause(1.0), frame(CONT, b"end")),
         fails(INVALID_DATA, before_end=True),
         "8.1: an endpoint that finds the byte stream is not valid UTF-8 MUST fail the "
         "connection; strict clients do it when they find it, not at the message's end"),
    Case("utf8-split-valid", "5.6", "utf8", "'€' (E2 82 AC) split across two fragments",
         lambda: (frame(TEXT, b"x\xe2", fin=False), frame(CONT, b"\x82\xacy"), closing()),
         delivers(text("x€y")),
         "5.6: only the whole message must be valid UTF-8; a fragment may end mid-character"),
    Case("utf8-4-byte", "5.6", "utf8", "valid text with 1- to 4-byte characters",
         lambda: (frame(TEXT, "a é € 😀 𝄞 z".encode()), closing()), delivers(text("a é € 😀 𝄞 z")),
         "5.6: any valid UTF-8 is a valid text message"),
    # --- closing (5.5.1, 7)
    Case("close-1-byte", "5.5.1", "closing", "close frame with a 1-byte payload",
         lambda: (Closes(frame(CLOSE, b"\x03")),), fails(PROTOCOL_ERROR),
         "5.5.1: a close body MUST start with a 2-byte status code; one byte cannot"),
    *(_bad_close(code) for code in (0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999)),
    Case("close-code-1000", "5.5.1", "closing", "close frame 1000 with a reason",
         lambda: (closing(1000, b"bye"),), delivers(),
         "5.5.1: a close frame MUST be answered with a close frame, typically echoing the code"),
    *(_valid_close(code) for code in (3000, 4999)),
    Case("close-empty", "5.5.1", "closing", "close frame without a body",
         lambda: (closing(None),), delivers(close_reply=(None, 1000)),
         "5.5.1: a close without a body is valid (7.1.5: its code is 1005, which is never "
         "sent); the answer carries no code or 1000"),
    Case("close-reason-invalid", "5.5.1", "closing", "close 1000 with a reason that is not UTF-8 (FF FE)",
         lambda: (closing(1000, b"\xff\xfe"),), fails(INVALID_DATA),
         "5.5.1: the reason MUST be UTF-8; 8.1/7.4.1: invalid UTF-8 fails the connection with 1007"),
    # --- opening handshake (4.1, 4.2.2)
    Case("accept-wrong", "4.1", "handshake", "101 response with a wrong Sec-WebSocket-Accept",
         lambda: (frame(TEXT, b"never"),), Expect("reject"),
         "4.1: a Sec-WebSocket-Accept other than base64(SHA-1(key + GUID)) MUST fail the "
         "connection; it never opens", wrong_accept=True, with_101=True),
    Case("frames-with-101", "4.1", "handshake", "a message in the same TCP write as the 101 response",
         lambda: (frame(TEXT, b"early") + frame(BINARY, b"\x00bird"), closing()),
         delivers(text("early"), binary(b"\x00bird")),
         "4.1: once the 101 is received the connection is open; the server may send at once",
         with_101=True),
    # --- size
    Case("text-16mib", "5.4", "size", "16 MiB of UTF-8 text in 16,384 fragments of 1 KiB",
         _big_text_fragments, delivers(Message("text", big_text)),
         "5.4: fragments of any size and number make one message; 5.6: characters may be split "
         "between fragments", react_s=30.0),
)

BY_ID: dict[str, Case] = {c.id: c for c in CASES}


def select(ids: list[str] | None) -> list[Case]:
    """The cases named (all when none); unknown names raise KeyError with the name."""
    if not ids:
        return list(CASES)
    for i in ids:
        if i not in BY_ID:
            raise KeyError(i)
    return [c for c in CASES if c.id in ids]
