"""The server cases, as data: what the client writes and what a strict server does.

Written from RFC 6455 and from Autobahn|Testsuite's public case descriptions (facts only;
grouped by Autobahn's sections: 1 framing, 2 pings and pongs, 3 reserved bits, 4 opcodes,
5 fragmentation, 6 UTF-8, 7 closing, 9 limits, 10 auto-fragmentation). Where the RFC gives
the shape, cases are generated from tables: every length form, every RSV bit on every
frame kind, every reserved opcode, every close code, every UTF-8 sequence of utf8.py
whole and one byte per fragment, and a text split at every byte position.

Expectations (``Expect.kind``):

- ``echo``: valid input. Strict: every message echoed whole and in order (the echo
  contract, servers/README.md; however the server fragments it), every ping answered by
  a pong with its payload (5.5.3), nothing else sent, and our closing close frame
  answered with one of ``close_reply`` (5.5.1 "typically echos the status code").
  Non-strict: the close answered with another valid code, or pongs coalesced (5.5.3
  MAY answer only the latest ping). ``too_big_ok``: refusing the message with 1009
  (message too big) or 1008 (policy violation: a limit of the server's, e.g. ws's 16,384
  fragments per message), 7.4.1, is informational. Fail: anything else.
- ``fail``: the server must _Fail the WebSocket Connection_ (7.1.7). Strict: a close frame
  with one of ``codes`` (1002 protocol error, 1007 invalid data: 7.4.1), nothing echoed
  that must not be (``messages`` may be echoed before). Non-strict: TCP dropped without
  a close frame (7.1.7 "SHOULD" send one), or with ``before_end`` the close only after
  the script's last step (8.1: fail fast). Fail: another code, an echo of what is
  invalid, no reaction.
- ``info``: the RFC leaves the answer open (Autobahn's INFORMATIONAL): what the server
  did is recorded; only a hang or a frame a server must never send fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Callable, Literal

from ..conformance.frames import BINARY, CLOSE, CONT, PING, PONG, TEXT, close_payload
from . import utf8
from .steps import Chop, Close, Pause, Step, bytewise, close, fragments, frame, split_at

PROTOCOL_ERROR, INVALID_DATA, POLICY, TOO_BIG = 1002, 1007, 1008, 1009
LIMIT_CODES = {TOO_BIG: "message too big", POLICY: "policy violation, e.g. a limit on fragments"}
REACT_S = 2.0  # how long a server has to react once the script has been written
HEAVY_REACT_S = 30.0  # the same, for the cases of megabytes

GROUPS: dict[str, str] = {"1": "framing", "2": "pings and pongs", "3": "reserved bits", "4": "opcodes",
                          "5": "fragmentation", "6": "UTF-8", "7": "closing", "9": "limits",
                          "10": "auto-fragmentation"}


@dataclass(frozen=True)
class Msg:
    """A message the server must echo: its kind and bytes (a function builds a big one)."""

    kind: Literal["text", "binary"]
    source: bytes | Callable[[], bytes] = field(repr=False)

    @property
    def data(self) -> bytes:
        return self.source() if callable(self.source) else self.source


@dataclass(frozen=True)
class Expect:
    kind: Literal["echo", "fail", "info"]
    messages: tuple[Msg, ...] = ()  # echo: in order; fail: may be echoed before the failure; info: awaited
    pongs: tuple[bytes, ...] = ()  # echo: the payloads the server's pongs must carry, in order
    close_reply: tuple[int | None, ...] = (1000,)  # echo: strict answers to our close (None: no code)
    codes: tuple[int, ...] = ()  # fail: the close codes a strict server sends
    before_end: bool = False  # fail: strict only if the close comes before the script's last step
    too_big_ok: bool = False  # echo: a close 1009 or 1008 (a limit of the server's) is informational
    coalesce: bool = False  # echo: pongs for only the latest of several pings are non-strict
    open_question: str = ""  # info: what the RFC leaves open

    def describe(self) -> str:
        """One line: what a strict server does."""
        if self.kind == "fail":
            codes = " or ".join(map(str, self.codes))
            return f"close {codes}" + (" before the message ends" if self.before_end else "")
        if self.kind == "info":
            return f"informational: {self.open_question}"
        parts = []
        if self.messages:
            n = len(self.messages)
            parts.append(f"echo {n} message{'s' if n != 1 else ''}")
        if self.pongs:
            parts.append(f"pong {len(self.pongs)}")
        replies = ["empty" if c is None else str(c) for c in self.close_reply]
        parts.append("answer the close with " + " or ".join(replies))
        return ", ".join(parts)


@dataclass(frozen=True)
class ServerCase:
    id: str
    group: str  # a key of GROUPS (Autobahn's section number)
    section: str  # of RFC 6455
    title: str  # what the client sends
    build: Callable[[], tuple[Step, ...]] = field(repr=False, compare=False)
    expect: Expect
    why: str  # the RFC's rule, in a sentence, starting with its section
    react_s: float = REACT_S
    heavy: bool = False  # megabytes: played one at a time

    def steps(self) -> tuple[Step, ...]:
        return self.build()

    def script_seconds(self) -> float:
        return sum(s.seconds for s in self.steps() if isinstance(s, Pause))

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "section": self.section, "group": f"{self.group} {GROUPS[self.group]}",
                "title": self.title, "expect": self.expect.kind, "strict": self.expect.describe(), "why": self.why}


def text(data: bytes | str) -> Msg:
    return Msg("text", data.encode() if isinstance(data, str) else data)


def binary(data: bytes) -> Msg:
    return Msg("binary", data)


def echo(*messages: Msg, pongs: tuple[bytes, ...] = (), close_reply: tuple[int | None, ...] = (1000,),
         **kw: object) -> Expect:
    return Expect("echo", messages=messages, pongs=pongs, close_reply=close_reply, **kw)  # type: ignore[arg-type]


def fails(*codes: int, messages: tuple[Msg, ...] = (), before_end: bool = False) -> Expect:
    return Expect("fail", codes=codes or (PROTOCOL_ERROR,), messages=messages, before_end=before_end)


def info(question: str, *awaited: Msg) -> Expect:
    """``awaited``: the echoes a server that accepts the input sends, which the client waits
    for before its close (so that the answer is not a race against the close)."""
    return Expect("info", open_question=question, messages=awaited)


def then_close(*steps: Step) -> Callable[[], tuple[Step, ...]]:
    """A script of valid input: the steps, then our close 1000 (once the echoes came)."""
    return lambda: (*steps, close())


def pattern(n: int, seed: int) -> bytes:
    """n bytes that do not repeat with any short period (an echo shifted or reordered shows)."""
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
    import random
    return random.Random(n).randbytes(n)


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB" if n >= 1024 else f"{n} B"


# --- 1 framing (RFC 6455 5.2, 5.3)

LENGTHS = (0, 125, 126, 127, 128, 65535, 65536)


def _framing() -> list[ServerCase]:
    out = []
    for kind, op in (("text", TEXT), ("binary", BINARY)):
        for n in LENGTHS:
            data = ascii_text(n) if op == TEXT else pattern(n, n + 1)
            out.append(ServerCase(
                f"1-{kind}-{n}", "1", "5.2", f"{kind} message of {n} bytes in one frame",
                then_close(frame(op, data)), echo(Msg(kind, data)),  # type: ignore[arg-type]
                "5.2: payload lengths 0-125 take 7 bits, 126-65535 16 bits, larger 64 bits; every form is valid"))
        if op == TEXT:
            for n in LENGTHS[1:5]:  # every header form's edges, the header and payload split in 3-byte writes
                data = ascii_text(n)
                out.append(ServerCase(
                    f"1-text-{n}-chops-3", "1", "5.2", f"text message of {n} bytes in one frame, written in "
                    "chops of 3 bytes", then_close(Chop(frame(TEXT, data), 3)), echo(text(data)),
                    "5.2: a frame is a byte stream; how TCP splits it does not change it"))
        data = ascii_text(65536) if op == TEXT else pattern(65536, 3)
        out.append(ServerCase(
            f"1-{kind}-65536-chopped", "1", "5.2", f"{kind} message of 65536 bytes written in chops of 997 bytes",
            then_close(Chop(frame(op, data), 997)), echo(Msg(kind, data)),  # type: ignore[arg-type]
            "5.2: a frame is a byte stream; how TCP splits it does not change it"))
    for n, label in ((5, "7-bit"), (300, "16-bit"), (70000, "64-bit")):
        data = pattern(n, n)
        whole = frame(BINARY, data)
        out.append(ServerCase(
            f"1-header-bytewise-{label}", "1", "5.2", f"binary frame with a {label} length, its header and first "
            "bytes written byte by byte", then_close(bytewise(whole[:20]), whole[20:]), echo(binary(data)),
            "5.2: a frame header may arrive in any number of reads"))
    out += [
        ServerCase("1-two-in-one-write", "1", "5.2", "two text messages in one TCP write",
                   then_close(frame(TEXT, b"first") + frame(TEXT, b"second")), echo(text("first"), text("second")),
                   "5.2: frames follow each other in the byte stream; a read may hold several"),
        ServerCase("1-unmasked-text", "1", "5.1", "unmasked text frame from the client",
                   lambda: (frame(TEXT, b"unmasked", masked=False),), fails(PROTOCOL_ERROR),
                   "5.1: a server MUST close the connection upon receiving a frame that is not masked "
                   "(it MAY send 1002, 7.4.1)"),
        ServerCase("1-unmasked-binary", "1", "5.1", "unmasked binary frame after a valid message",
                   lambda: (frame(TEXT, b"valid"), frame(BINARY, b"\x00\x01", masked=False)),
                   fails(PROTOCOL_ERROR, messages=(text("valid"),)),
                   "5.1: a server MUST close the connection upon receiving a frame that is not masked"),
        ServerCase("1-unmasked-ping", "1", "5.1", "unmasked ping frame",
                   lambda: (frame(PING, b"unmasked", masked=False),), fails(PROTOCOL_ERROR),
                   "5.1: every client frame, control frames included, MUST be masked"),
        ServerCase("1-unmasked-close", "1", "5.1", "unmasked close frame 1000",
                   lambda: (Close(frame(CLOSE, close_payload(1000), masked=False)),), fails(PROTOCOL_ERROR),
                   "5.1: every client frame, close frames included, MUST be masked"),
        ServerCase("1-length-top-bit", "1", "5.2", "64-bit length with the most significant bit set",
                   lambda: (frame(BINARY, b"12345", declared=(1 << 63) | 5),), fails(PROTOCOL_ERROR),
                   "5.2: the most significant bit of a 64-bit length MUST be 0; such a header is malformed"),
        ServerCase("1-length-16-for-5", "1", "5.2", "5-byte text frame whose length is written in 16 bits",
                   then_close(frame(TEXT, b"short", length_bytes=2)),
                   info("5.2 says the minimal number of bytes MUST be used for the length, but not what the "
                        "receiver does with a longer form: echoed or failed, both are recorded", text("short")),
                   "5.2: the minimal number of bytes MUST be used to encode the length"),
        ServerCase("1-length-64-for-200", "1", "5.2", "200-byte binary frame whose length is written in 64 bits",
                   then_close(frame(BINARY, pattern(200, 2), length_bytes=8)),
                   info("5.2 says the minimal length form MUST be used, not what a receiver does with another",
                        binary(pattern(200, 2))),
                   "5.2: the minimal number of bytes MUST be used to encode the length"),
    ]
    return out


# --- 2 pings and pongs (RFC 6455 5.5.2, 5.5.3)

def _pings() -> list[ServerCase]:
    p125 = pattern(125, 125)
    ten = tuple(f"ping {i}".encode() for i in range(10))
    return [
        ServerCase("2-ping-empty", "2", "5.5.2", "ping without payload", then_close(frame(PING)),
                   echo(pongs=(b"",)), "5.5.2: a ping MUST be answered by a pong"),
        ServerCase("2-ping-text", "2", "5.5.2", "ping with a small text payload", then_close(frame(PING, b"Hello, world!")),
                   echo(pongs=(b"Hello, world!",)), "5.5.3: the pong carries the ping's application data"),
        ServerCase("2-ping-binary", "2", "5.5.2", "ping with a binary payload (00 FF FE FD FC FB 00 FF)",
                   then_close(frame(PING, bytes.fromhex("00fffefdfcfb00ff"))),
                   echo(pongs=(bytes.fromhex("00fffefdfcfb00ff"),)),
                   "5.5.3: the pong's application data is identical to the ping's, whatever the bytes"),
        ServerCase("2-ping-125", "2", "5.5.2", "ping with a 125-byte payload", then_close(frame(PING, p125)),
                   echo(pongs=(p125,)), "5.5: a control frame may carry up to 125 bytes"),
        ServerCase("2-ping-126", "2", "5.5", "ping with a 126-byte payload", lambda: (frame(PING, b"p" * 126),),
                   fails(PROTOCOL_ERROR), "5.5: all control frames MUST have a payload length of 125 bytes or less"),
        ServerCase("2-ping-125-bytewise", "2", "5.5.2", "ping with a 125-byte payload, written byte by byte",
                   then_close(bytewise(frame(PING, p125))), echo(pongs=(p125,)),
                   "5.5.2: a ping arriving in many reads is still a ping"),
        ServerCase("2-pong-unsolicited-empty", "2", "5.5.3", "unsolicited pong without payload",
                   then_close(frame(PONG)), echo(), "5.5.3: a pong MAY be sent unsolicited; no response is expected"),
        ServerCase("2-pong-unsolicited", "2", "5.5.3", "unsolicited pong with payload",
                   then_close(frame(PONG, b"unsolicited")), echo(),
                   "5.5.3: a pong MAY be sent unsolicited; no response is expected"),
        ServerCase("2-pong-then-ping", "2", "5.5.3", "unsolicited pong, then a ping",
                   then_close(frame(PONG, b"unsolicited"), frame(PING, b"then a ping")),
                   echo(pongs=(b"then a ping",)), "5.5.3: an unsolicited pong is ignored; the ping is answered"),
        ServerCase("2-ten-pings", "2", "5.5.3", "ten pings in a row, one write each",
                   then_close(*(frame(PING, p) for p in ten)), echo(pongs=ten, coalesce=True),
                   "5.5.3: every ping is answered (it MAY answer only the latest of pings not yet answered)"),
        ServerCase("2-ten-pings-chopped", "2", "5.5.3", "ten pings written in chops of 3 bytes",
                   then_close(Chop(b"".join(frame(PING, p) for p in ten), 3)), echo(pongs=ten, coalesce=True),
                   "5.5.3: every ping is answered (it MAY answer only the latest of pings not yet answered)"),
        ServerCase("2-ping-after-message", "2", "5.5.2", "a text message, then a ping",
                   then_close(frame(TEXT, b"message"), frame(PING, b"after")), echo(text("message"), pongs=(b"after",)),
                   "5.5.2: a ping between messages is answered as soon as practical"),
    ]


# --- 3 reserved bits (RFC 6455 5.2)

RSV_FRAMES = (("text", TEXT), ("binary", BINARY), ("ping", PING), ("close", CLOSE), ("continuation", CONT))


def _rsv_script(name: str, op: int, rsv: int) -> Callable[[], tuple[Step, ...]]:
    if name == "continuation":
        return lambda: (frame(TEXT, b"fragment ", fin=False), frame(CONT, b"with rsv", rsv=rsv))
    payload = close_payload(1000) if op == CLOSE else b"reserved bits"
    bad = frame(op, payload, rsv=rsv)
    return lambda: (frame(TEXT, b"before"), Close(bad) if op == CLOSE else bad, frame(PING, b"after"))


def _reserved_bits() -> list[ServerCase]:
    out = []
    for rsv in range(1, 8):
        which = [str(i) for i, mask in ((1, 4), (2, 2), (3, 1)) if rsv & mask]
        bits = "+".join(f"RSV{i}" for i in which)
        for name, op in RSV_FRAMES:
            before = () if name == "continuation" else (text("before"),)
            out.append(ServerCase(
                f"3-rsv{''.join(which)}-{name}", "3", "5.2", f"{name} frame with {bits} set (no extension negotiated)",
                _rsv_script(name, op, rsv), fails(PROTOCOL_ERROR, messages=before),
                "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"))
    out += [
        ServerCase("3-rsv1-text-bytewise", "3", "5.2", "text with RSV1 set, written byte by byte",
                   lambda: (bytewise(frame(TEXT, b"before") + frame(TEXT, b"rsv", rsv=4)),),
                   fails(PROTOCOL_ERROR, messages=(text("before"),)),
                   "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
        ServerCase("3-rsv2-binary-chopped", "3", "5.2", "binary with RSV2 set, written in chops of 2 bytes",
                   lambda: (Chop(frame(TEXT, b"before") + frame(BINARY, b"\x00\x01\x02", rsv=2), 2, 0.001),),
                   fails(PROTOCOL_ERROR, messages=(text("before"),)),
                   "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
    ]
    return out


# --- 4 opcodes (RFC 6455 5.2)

RESERVED_OPCODES = (0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF)


def _opcodes() -> list[ServerCase]:
    out = []
    for op in RESERVED_OPCODES:
        kind = "data" if op < 8 else "control"
        rule = (f"5.2: opcodes {'0x3-0x7' if op < 8 else '0xB-0xF'} are reserved for further {kind} frames; "
                "an unknown opcode MUST fail the connection")
        out += [
            ServerCase(f"4-opcode-{op:x}", "4", "5.2", f"reserved {kind} opcode 0x{op:X}, empty",
                       lambda op=op: (frame(op),), fails(PROTOCOL_ERROR), rule),  # type: ignore[misc]
            ServerCase(f"4-opcode-{op:x}-between", "4", "5.2",
                       f"a text message, reserved opcode 0x{op:X} with a payload, then a ping",
                       lambda op=op: (frame(TEXT, b"before"), frame(op, b"reserved"), frame(PING, b"after")),  # type: ignore[misc]
                       fails(PROTOCOL_ERROR, messages=(text("before"),)), rule),
            ServerCase(f"4-opcode-{op:x}-in-fragments", "4", "5.2",
                       f"reserved opcode 0x{op:X} between the fragments of a text message",
                       lambda op=op: (frame(TEXT, b"frag", fin=False), frame(op, b"x"),  # type: ignore[misc]
                                      frame(CONT, b"ment")), fails(PROTOCOL_ERROR), rule),
        ]
    return out


# --- 5 fragmentation (RFC 6455 5.4)

def _fragmentation() -> list[ServerCase]:
    ones = bytes(0x61 + i % 26 for i in range(1000))
    return [
        ServerCase("5-ping-fragmented", "5", "5.5", "ping in two fragments",
                   lambda: (frame(PING, b"frag", fin=False), frame(CONT, b"mented")), fails(PROTOCOL_ERROR),
                   "5.5: control frames MUST NOT be fragmented"),
        ServerCase("5-pong-fragmented", "5", "5.5", "pong in two fragments",
                   lambda: (frame(PONG, b"frag", fin=False), frame(CONT, b"mented")), fails(PROTOCOL_ERROR),
                   "5.5: control frames MUST NOT be fragmented"),
        ServerCase("5-close-fragmented", "5", "5.5", "close frame in two fragments",
                   lambda: (Close(frame(CLOSE, close_payload(1000), fin=False)), frame(CONT, b"")),
                   fails(PROTOCOL_ERROR), "5.5: control frames MUST NOT be fragmented"),
        ServerCase("5-text-2-fragments", "5", "5.4", "text message in two fragments",
                   then_close(split_at(b"fragment1fragment2", [9])), echo(text("fragment1fragment2")),
                   "5.4: a message may be split into fragments; it is one message"),
        ServerCase("5-binary-2-fragments", "5", "5.4", "binary message in two fragments",
                   then_close(split_at(pattern(40, 5), [13], BINARY)), echo(binary(pattern(40, 5))),
                   "5.4: a message may be split into fragments; it is one message"),
        ServerCase("5-text-2-fragments-bytewise", "5", "5.4", "text in two fragments, written byte by byte",
                   then_close(bytewise(split_at(b"fragment1fragment2", [9]))), echo(text("fragment1fragment2")),
                   "5.4/5.2: fragments arriving in many reads are still one message"),
        ServerCase("5-ping-between-fragments", "5", "5.4", "text in two fragments with a ping between them",
                   then_close(frame(TEXT, b"fragment1", fin=False), frame(PING, b"between"),
                              frame(CONT, b"fragment2")),
                   echo(text("fragment1fragment2"), pongs=(b"between",)),
                   "5.4: control frames MAY be injected in the middle of a fragmented message"),
        ServerCase("5-ping-between-fragments-bytewise", "5", "5.4",
                   "text in two fragments with a ping between, written byte by byte",
                   then_close(bytewise(frame(TEXT, b"fragment1", fin=False) + frame(PING, b"between") +
                                       frame(CONT, b"fragment2"))),
                   echo(text("fragment1fragment2"), pongs=(b"between",)),
                   "5.4: control frames MAY be injected in the middle of a fragmented message"),
        ServerCase("5-pings-between-many", "5", "5.4", "text in 10 fragments with a ping after each but the last, "
                   "10 ms apart", then_close(*(s for i in range(10) for s in (
                       frame(TEXT if i == 0 else CONT, f"f{i}".encode(), fin=i == 9),
                       *((frame(PING, f"p{i}".encode()), Pause(0.01)) if i < 9 else ())))),
                   echo(text("".join(f"f{i}" for i in range(10))), pongs=tuple(f"p{i}".encode() for i in range(9))),
                   "5.4: control frames MAY be injected between fragments; 5.5.2: each ping answered"),
        ServerCase("5-continuation-first-nofin", "5", "5.4", "continuation (FIN clear) with nothing to continue, "
                   "then a text", lambda: (frame(CONT, b"orphan", fin=False), frame(TEXT, b"text")),
                   fails(PROTOCOL_ERROR),
                   "5.4: a fragmented message starts with a data opcode; an orphan continuation is a protocol error"),
        ServerCase("5-continuation-first-fin", "5", "5.4", "continuation (FIN set) with nothing to continue",
                   lambda: (frame(CONT, b"orphan"), frame(TEXT, b"text")), fails(PROTOCOL_ERROR),
                   "5.4: a continuation with nothing to continue is a protocol error"),
        ServerCase("5-continuation-first-bytewise", "5", "5.4",
                   "continuation with nothing to continue, written byte by byte",
                   lambda: (bytewise(frame(CONT, b"orphan")),), fails(PROTOCOL_ERROR),
                   "5.4: a continuation with nothing to continue is a protocol error"),
        ServerCase("5-continuation-after-message", "5", "5.4", "a whole text, then a continuation",
                   lambda: (frame(TEXT, b"whole"), frame(CONT, b"orphan")),
                   fails(PROTOCOL_ERROR, messages=(text("whole"),)),
                   "5.4: once a message ended (FIN), a continuation has nothing to continue"),
        ServerCase("5-orphans-then-message-chopped", "5", "5.4",
                   "a text in two fragments, a continuation (FIN clear) with nothing to continue, then a text, "
                   "written in chops of 1 byte", lambda: (bytewise(split_at(b"fragment1fragment2", [9]) +
                                                                   frame(CONT, b"orphan", fin=False) +
                                                                   frame(TEXT, b"after")),),
                   fails(PROTOCOL_ERROR, messages=(text("fragment1fragment2"),)),
                   "5.4: a continuation after a finished message has nothing to continue"),
        ServerCase("5-orphan-nofin-twice", "5", "5.4",
                   "twice: a continuation (FIN clear) with nothing to continue, then a text in two fragments",
                   lambda: (frame(CONT, b"orphan", fin=False), split_at(b"fragment1fragment2", [9]),
                            frame(CONT, b"orphan", fin=False), split_at(b"fragment1fragment2", [9])),
                   fails(PROTOCOL_ERROR), "5.4: a continuation with nothing to continue is a protocol error"),
        ServerCase("5-orphan-fin-twice", "5", "5.4",
                   "twice: a continuation (FIN set) with nothing to continue, then a text in two fragments",
                   lambda: (frame(CONT, b"orphan"), split_at(b"fragment1fragment2", [9]),
                            frame(CONT, b"orphan"), split_at(b"fragment1fragment2", [9])),
                   fails(PROTOCOL_ERROR), "5.4: a continuation with nothing to continue is a protocol error"),
        ServerCase("5-ping-between-fragments-chopped", "5", "5.4",
                   "text in two fragments with a ping between, written in chops of 3 bytes",
                   then_close(Chop(frame(TEXT, b"fragment1", fin=False) + frame(PING, b"between") +
                                   frame(CONT, b"fragment2"), 3)),
                   echo(text("fragment1fragment2"), pongs=(b"between",)),
                   "5.4: control frames MAY be injected in the middle of a fragmented message"),
        ServerCase("5-text-2-fragments-chopped", "5", "5.4", "text in two fragments, written in chops of 3 bytes",
                   then_close(Chop(split_at(b"fragment1fragment2", [9]), 3)), echo(text("fragment1fragment2")),
                   "5.4/5.2: fragments arriving in many reads are still one message"),
        ServerCase("5-text-inside-text", "5", "5.4", "a new text frame before a fragmented text ended",
                   lambda: (frame(TEXT, b"abc", fin=False), frame(TEXT, b"def")), fails(PROTOCOL_ERROR),
                   "5.4: fragments of one message MUST NOT be interleaved with another data message"),
        ServerCase("5-binary-inside-text", "5", "5.4", "a binary frame before a fragmented text ended",
                   lambda: (frame(TEXT, b"abc", fin=False), frame(BINARY, b"def")), fails(PROTOCOL_ERROR),
                   "5.4: fragments of one message MUST NOT be interleaved with another data message"),
        ServerCase("5-text-inside-text-fin", "5", "5.4", "two text frames, both with FIN clear, then a continuation",
                   lambda: (frame(TEXT, b"one", fin=False), frame(TEXT, b"two", fin=False), frame(CONT, b"end")),
                   fails(PROTOCOL_ERROR), "5.4: a second message cannot start inside the first"),
        ServerCase("5-fragments-1000", "5", "5.4", "a text message in 1,000 one-byte fragments",
                   then_close(split_at(ones, list(range(1, 1000)))), echo(text(ones)),
                   "5.4: a message may be split into any number of fragments"),
        ServerCase("5-fragments-empty", "5", "5.4", "a binary message with empty first and last fragments",
                   then_close(split_at(b"ab", [0, 2], BINARY)), echo(binary(b"ab")),
                   "5.4: fragments may be empty; the message is the concatenation"),
        ServerCase("5-fragments-all-empty", "5", "5.4", "a text message of three empty fragments",
                   then_close(split_at(b"", [0, 0])), echo(text(b"")),
                   "5.4: a message of empty fragments is an empty message"),
        ServerCase("5-close-between-fragments", "5", "5.4", "first fragment of a text, then our close",
                   lambda: (frame(TEXT, b"unfinished", fin=False), close(wait=False)), echo(),
                   "5.4: control frames (close included) MAY come between fragments; 5.5.1: the close is "
                   "answered; the unfinished message is never echoed"),
    ]


# --- 6 UTF-8 (RFC 6455 5.6, 8.1)

def _utf8() -> list[ServerCase]:
    out = []
    for s in utf8.VALID:
        out.append(ServerCase(f"6-valid-{s.id}", "6", "5.6", f"valid UTF-8 text: {s.what}",
                              then_close(frame(TEXT, s.data)), echo(text(s.data)),
                              "5.6: any valid UTF-8 (RFC 3629) is a valid text message; noncharacters included"))
        if len(s.data) > 1:
            out.append(ServerCase(
                f"6-valid-{s.id}-per-byte", "6", "5.6", f"valid UTF-8 text, one byte per fragment: {s.what}",
                then_close(split_at(s.data, list(range(1, len(s.data))))), echo(text(s.data)),
                "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"))
    for cut in range(1, len(utf8.KOSME)):
        out.append(ServerCase(
            f"6-kosme-split-{cut}", "6", "5.6", f"'κόσμε' in two fragments cut after byte {cut}",
            then_close(split_at(utf8.KOSME, [cut])), echo(text(utf8.KOSME)),
            "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"))
    four = "😀".encode()
    for cut in range(1, 4):
        out.append(ServerCase(
            f"6-four-byte-split-{cut}", "6", "5.6", f"'😀' (4 bytes) in two fragments cut after byte {cut}",
            then_close(split_at(b"a" + four + b"z", [cut + 1])), echo(text(b"a" + four + b"z")),
            "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"))
    out.append(ServerCase("6-empty", "6", "5.6", "empty text message", then_close(frame(TEXT)),
                          echo(text(b"")), "5.6: an empty text message is valid UTF-8"))
    for s in utf8.INVALID:
        rule = "8.1: an endpoint that receives invalid UTF-8 text MUST fail the connection; 7.4.1: with 1007"
        out.append(ServerCase(f"6-invalid-{s.id}", "6", "8.1", f"invalid UTF-8 text: {s.what}",
                              lambda s=s: (frame(TEXT, s.data),), fails(INVALID_DATA), rule))  # type: ignore[misc]
        if len(s.data) > 1:
            out.append(ServerCase(
                f"6-invalid-{s.id}-per-byte", "6", "8.1", f"invalid UTF-8 text, one byte per fragment: {s.what}",
                lambda s=s: (split_at(s.data, list(range(1, len(s.data)))),),  # type: ignore[misc]
                fails(INVALID_DATA), rule + " (validity is a property of the whole message, across fragments)"))
    fast = "8.1: the connection fails when the invalid byte stream is found, not at the message's end"
    out += [
        ServerCase("6-fail-fast-first", "6", "8.1", "invalid first fragment (FF), 0.5 s pause, then the last",
                   lambda: (frame(TEXT, b"ok \xff", fin=False), Pause(0.5), frame(CONT, b"end")),
                   fails(INVALID_DATA, before_end=True), fast),
        ServerCase("6-fail-fast-middle", "6", "8.1", "valid fragment, then F4 90 80 80 (above U+10FFFF), "
                   "0.5 s pause, then the last", lambda: (frame(TEXT, utf8.KOSME, fin=False), Pause(0.1),
                                                         frame(CONT, b"\xf4\x90\x80\x80", fin=False), Pause(0.5),
                                                         frame(CONT, b"-edited")),
                   fails(INVALID_DATA, before_end=True), fast),
        ServerCase("6-fail-fast-surrogate", "6", "8.1", "a fragment ending in a surrogate (ED A0 80), 0.5 s pause, "
                   "then the last", lambda: (frame(TEXT, b"ab\xed\xa0\x80", fin=False), Pause(0.5),
                                             frame(CONT, b"cd")),
                   fails(INVALID_DATA, before_end=True), fast),
        ServerCase("6-fail-fast-bytewise", "6", "8.1", "invalid text written byte by byte, 0.5 s pause, then "
                   "the rest", lambda: (bytewise(frame(TEXT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xed\xa0\x80ab",
                                                       fin=False)), Pause(0.5), frame(CONT, b"end")),
                   fails(INVALID_DATA, before_end=True), fast),
        ServerCase("6-split-invalid", "6", "8.1", "E2 82 ends fragment 1, fragment 2 starts with '('",
                   lambda: (frame(TEXT, b"ok \xe2\x82", fin=False), frame(CONT, b"(ok")), fails(INVALID_DATA),
                   "8.1: validity is a property of the whole message, across fragments; 7.4.1: 1007"),
        ServerCase("6-truncated-at-end", "6", "8.1", "text message ending inside a 3-byte sequence (E2 82)",
                   lambda: (frame(TEXT, b"abc\xe2\x82"),), fails(INVALID_DATA),
                   "8.1: a message that ends mid-sequence is not valid UTF-8"),
    ]
    return out


# --- 7 closing (RFC 6455 5.5.1, 7)

VALID_CODES = (1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999)
IANA_CODES = (1012, 1013, 1014)  # reserved in RFC 6455's text, registered with IANA since
INVALID_CODES = (0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999)
UNDEFINED_CODES = (5000, 65535)


def _closing() -> list[ServerCase]:
    big = pattern(256 << 10, 9)
    out = [
        ServerCase("7-message-then-close", "7", "5.5.1", "a text message, then our close",
                   then_close(frame(TEXT, b"Hello World!")), echo(text("Hello World!")),
                   "5.5.1: the message is echoed, then the close answered"),
        ServerCase("7-close-twice", "7", "5.5.1", "our close, then a second close",
                   lambda: (close(), frame(CLOSE, close_payload(1000))), echo(),
                   "5.5.1: after the close the server answers once; the second close is ignored"),
        ServerCase("7-ping-after-close", "7", "5.5.1", "our close, then a ping",
                   lambda: (close(), frame(PING, b"after close")), echo(),
                   "5.5.1: after a close, further data is discarded; no pong is due"),
        ServerCase("7-message-after-close", "7", "5.5.1", "our close, then a text message",
                   lambda: (close(), frame(TEXT, b"after close")), echo(),
                   "5.5.1: after sending a close the endpoint MUST NOT send data frames; what follows a close is "
                   "not echoed"),
        ServerCase("7-close-between-fragments", "7", "5.5.1", "a fragment, our close, then the last fragment",
                   lambda: (frame(TEXT, b"frag", fin=False), close(wait=False), frame(CONT, b"ment")), echo(),
                   "5.5.1: a close between fragments is answered; the message is never echoed"),
        ServerCase("7-close-after-256k", "7", "5.5.1", "a 256 KiB binary message, at once our close, then a ping",
                   lambda: (frame(BINARY, big), close(wait=False), frame(PING, b"late")),
                   info("whether a message that arrived just before the close is echoed before the answering "
                        "close: 5.5.1 lets an endpoint finish sending its current message, but does not make it"),
                   "5.5.1: after a close no data frame follows; the ping after the close is ignored"),
        ServerCase("7-message-close-at-once", "7", "5.5.1", "a text in two fragments and our close, in one write",
                   lambda: (split_at(b"fragment1fragment2", [9]) + close(wait=False).data,),
                   info("whether a message that arrived in the same read as the close is echoed: the server may "
                        "answer the close first"),
                   "5.5.1: after a close no data frame follows"),
        ServerCase("7-close-empty", "7", "5.5.1", "close frame without a body",
                   lambda: (close(None),), echo(close_reply=(None, 1000)),
                   "5.5.1: a close without a body is valid (7.1.5: its code is 1005, never sent); the answer "
                   "carries no code or 1000"),
        ServerCase("7-close-1-byte", "7", "5.5.1", "close frame with a 1-byte body",
                   lambda: (Close(frame(CLOSE, b"\x03")),), fails(PROTOCOL_ERROR),
                   "5.5.1: a close body MUST start with a 2-byte status code; one byte cannot"),
        ServerCase("7-close-code-only", "7", "5.5.1", "close 1000 without a reason",
                   lambda: (close(1000),), echo(), "5.5.1: a status code alone is a valid close body"),
        ServerCase("7-close-reason", "7", "5.5.1", "close 1000 with a UTF-8 reason",
                   lambda: (close(1000, "Hello World! µ€".encode()),), echo(),
                   "5.5.1: the reason after the code is UTF-8 for the application"),
        ServerCase("7-close-reason-123", "7", "5.5", "close 1000 with a 123-byte reason (a 125-byte body)",
                   lambda: (close(1000, b"*" * 123),), echo(), "5.5: a control frame may carry 125 bytes"),
        ServerCase("7-close-reason-124", "7", "5.5", "close 1000 with a 124-byte reason (a 126-byte body)",
                   lambda: (close(1000, b"*" * 124),), fails(PROTOCOL_ERROR),
                   "5.5: all control frames MUST have a payload length of 125 bytes or less"),
    ]
    for name, reason in (("ff", b"\xff\xfe"), ("surrogate", b"a\xed\xa0\x80b"), ("truncated", b"abc\xe2\x82"),
                         ("overlong", b"\xc0\xaf")):
        out.append(ServerCase(f"7-close-reason-invalid-{name}", "7", "5.5.1",
                              f"close 1000 whose reason is not UTF-8 ({reason.hex(' ').upper()})",
                              lambda reason=reason: (close(1000, reason),), fails(INVALID_DATA),  # type: ignore[misc]
                              "5.5.1: the reason MUST be UTF-8; 8.1/7.4.1: invalid UTF-8 fails the connection "
                              "with 1007"))
    for code in VALID_CODES:
        out.append(ServerCase(f"7-close-code-{code}", "7", "7.4.1" if code < 3000 else "7.4.2",
                              f"close frame with valid code {code}", lambda code=code: (close(code),),  # type: ignore[misc]
                              echo(close_reply=(code,)),
                              "7.4.1/7.4.2: a defined or application code; 5.5.1: the answer typically echoes it"))
    for code in IANA_CODES:
        out.append(ServerCase(f"7-close-code-{code}", "7", "7.4.2", f"close frame with code {code}",
                              lambda code=code: (close(code),), info(  # type: ignore[misc]
                                  f"RFC 6455 7.4.2 reserves {code} for future use; the IANA registry has since "
                                  "assigned it: echoed or refused, both are recorded"),
                              "7.4.2: 1000-2999 are reserved for this protocol and its extensions"))
    for code in INVALID_CODES:
        out.append(ServerCase(f"7-close-code-{code}", "7", "7.4.1", f"close frame with invalid code {code}",
                              lambda code=code: (close(code),), fails(PROTOCOL_ERROR),  # type: ignore[misc]
                              "7.4.1/7.4.2: 0-999 are not used, 1004 is reserved, 1005, 1006 and 1015 MUST NOT be "
                              "sent, 1016-2999 are unassigned: a protocol error"))
    for code in UNDEFINED_CODES:
        out.append(ServerCase(f"7-close-code-{code}", "7", "7.4.2", f"close frame with code {code}",
                              lambda code=code: (close(code),),  # type: ignore[misc]
                              info("RFC 6455 defines no range above 4999: refused with 1002 or echoed"),
                              "7.4.2: the ranges end at 4999; the RFC says nothing of larger codes"))
    return out


# --- 9 limits (RFC 6455 5.2, 5.4, 7.4.1)

ONE_FRAME_SIZES = (64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20)
FRAGMENT_SIZES = (64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20)
CHOP_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)


def _data(kind: str, n: int) -> Callable[[], bytes]:
    return (lambda: ascii_text(n)) if kind == "text" else (lambda: big_binary(n))


def _limits() -> list[ServerCase]:
    out = []
    refuse = ("; 7.4.1: refusing a message beyond a limit of the server's with 1009 (too big) or 1008 (policy) "
              "is informational")
    for kind, op in (("text", TEXT), ("binary", BINARY)):
        for n in ONE_FRAME_SIZES:
            data = _data(kind, n)
            out.append(ServerCase(
                f"9-{kind}-{_mib(n).replace(' ', '').lower()}", "9", "5.2",
                f"{kind} message of {_mib(n)} in one frame",
                lambda op=op, data=data: (frame(op, data()), close()),  # type: ignore[misc]
                echo(Msg(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.2: a 64-bit length carries any size; servers/README.md: up to 64 MiB echoed" + refuse,
                react_s=HEAVY_REACT_S, heavy=n >= 1 << 20))
        for size in FRAGMENT_SIZES:
            data = _data(kind, 4 << 20)
            out.append(ServerCase(
                f"9-{kind}-4mib-fragments-{_mib(size).replace(' ', '').lower()}", "9", "5.4",
                f"{kind} message of 4 MiB in fragments of {_mib(size)}",
                lambda op=op, data=data, size=size: (fragments(op, data(), size), close()),  # type: ignore[misc]
                echo(Msg(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.4: fragments of any size and number make one message" + refuse,
                react_s=HEAVY_REACT_S, heavy=True))
        for size in CHOP_SIZES:
            data = _data(kind, 1 << 20)
            out.append(ServerCase(
                f"9-{kind}-1mib-chops-{size}", "9", "5.2", f"{kind} message of 1 MiB in one frame, written in "
                f"chops of {size} bytes", lambda op=op, data=data, size=size: (Chop(frame(op, data()), size),  # type: ignore[misc]
                                                                             close()),
                echo(Msg(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.2: a frame is a byte stream; how TCP splits it does not change it" + refuse,
                react_s=HEAVY_REACT_S, heavy=True))
        many = tuple(Msg(kind, f"message {i:04d}".encode()) for i in range(1000))  # type: ignore[arg-type]
        out.append(ServerCase(
            f"9-{kind}-1000-messages", "9", "5.4", f"1,000 {kind} messages of 12 bytes in a row",
            lambda op=op, many=many: (b"".join(frame(op, m.data) for m in many), close()),  # type: ignore[misc]
            echo(*many), "5.4: messages are echoed in the order they came", react_s=HEAVY_REACT_S))
    return out


# --- 10 auto-fragmentation (RFC 6455 5.4)

def _auto_fragmentation() -> list[ServerCase]:
    rule = ("5.4: an intermediary or endpoint MAY fragment a message as it likes; the echo is judged whole, "
            "however the server fragments it")
    return [
        ServerCase("10-text-65536", "10", "5.4", "text message of 65536 bytes in one frame",
                   then_close(frame(TEXT, ascii_text(65536))), echo(text(ascii_text(65536))), rule),
        ServerCase("10-binary-65536", "10", "5.4", "binary message of 65536 bytes in one frame",
                   then_close(frame(BINARY, pattern(65536, 10))), echo(binary(pattern(65536, 10))), rule),
        ServerCase("10-text-65536-64-fragments", "10", "5.4", "text message of 65536 bytes in 64 fragments",
                   then_close(fragments(TEXT, ascii_text(65536), 1024)), echo(text(ascii_text(65536))), rule),
        ServerCase("10-binary-1mib", "10", "5.4", "binary message of 1 MiB in one frame",
                   lambda: (frame(BINARY, big_binary(1 << 20)), close()),
                   echo(binary(big_binary(1 << 20)), too_big_ok=True), rule, react_s=HEAVY_REACT_S, heavy=True),
    ]


CASES: tuple[ServerCase, ...] = (*_framing(), *_pings(), *_reserved_bits(), *_opcodes(), *_fragmentation(),
                                 *_utf8(), *_closing(), *_limits(), *_auto_fragmentation())
BY_ID: dict[str, ServerCase] = {c.id: c for c in CASES}

# every group represented, a few seconds per server (make test)
QUICK: tuple[str, ...] = (
    "1-text-125", "1-binary-65536", "1-header-bytewise-16-bit", "1-unmasked-text", "1-length-16-for-5",
    "2-ping-125", "2-ping-126", "2-ten-pings",
    "3-rsv1-text", "3-rsv3-binary", "3-rsv2-ping",
    "4-opcode-3", "4-opcode-b-between",
    "5-ping-between-fragments", "5-continuation-first-fin", "5-text-inside-text", "5-ping-fragmented",
    "6-valid-one-to-four-per-byte", "6-kosme-split-3", "6-invalid-byte-ff", "6-invalid-surrogate-a080",
    "6-invalid-overlong-slash-2-per-byte", "6-fail-fast-first",
    "7-close-code-1000", "7-close-code-3000", "7-close-empty", "7-close-1-byte", "7-close-code-1005",
    "7-close-reason-invalid-ff", "7-message-after-close", "7-close-code-5000",
    "9-text-64kib", "9-binary-1000-messages",
    "10-text-65536-64-fragments",
)


def select(ids: list[str] | None, quick: bool = False) -> list[ServerCase]:
    """The cases named (the quick subset with ``quick``; all when neither); an unknown
    name raises KeyError with the name."""
    wanted = list(ids or []) + (list(QUICK) if quick else [])
    if not wanted:
        return list(CASES)
    for i in wanted:
        if i not in BY_ID:
            raise KeyError(i)
    return [c for c in CASES if c.id in wanted]


def by_group(chosen: list[ServerCase] | tuple[ServerCase, ...] = CASES) -> dict[str, list[ServerCase]]:
    """The cases by group, in GROUPS' order."""
    return {g: [c for c in chosen if c.group == g] for g in GROUPS if any(c.group == g for c in chosen)}
