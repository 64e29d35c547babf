"""The server cases of Autobahn's sections 1 to 5 (framing, pings and pongs, reserved bits,
opcodes, fragmentation), generated from tables where RFC 6455 gives the shape
(expectations.py says what each expectation asks)."""

from __future__ import annotations

from typing import Callable

from ..conformance.frames import BINARY, CLOSE, CONT, PING, PONG, TEXT, close_payload
from .expectations import (PROTOCOL_ERROR, Msg, ServerCase, ascii_text, binary, echo, fails, info, pattern, text,
                           then_close)
from .steps import Chop, Close, Pause, Step, bytewise, close, frame, split_at


# --- 1 framing (RFC 6455 5.2, 5.3)

LENGTHS = (0, 125, 126, 127, 128, 65535, 65536)


def framing() -> list[ServerCase]:
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

def pings() -> list[ServerCase]:
    p125 = pattern(125, 125)
    ten = tuple(f"ping {i}".encode() for i in range(10))
    return [
        ServerCase("2-ping-empty", "2", "5.5.2", "ping without payload", then_close(frame(PING)),
                   echo(pongs=(b"",)), "5.5.2: a ping MUST be answered by a pong"),
        ServerCase("2-ping-text", "2", "5.5.2", "ping with a small text payload",
                   then_close(frame(PING, b"Hello, world!")),
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


def reserved_bits() -> list[ServerCase]:
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


def opcodes() -> list[ServerCase]:
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
                       lambda op=op: (frame(TEXT, b"before"), frame(op, b"reserved"),  # type: ignore[misc]
                                      frame(PING, b"after")),
                       fails(PROTOCOL_ERROR, messages=(text("before"),)), rule),
            ServerCase(f"4-opcode-{op:x}-in-fragments", "4", "5.2",
                       f"reserved opcode 0x{op:X} between the fragments of a text message",
                       lambda op=op: (frame(TEXT, b"frag", fin=False), frame(op, b"x"),  # type: ignore[misc]
                                      frame(CONT, b"ment")), fails(PROTOCOL_ERROR), rule),
        ]
    return out


# --- 5 fragmentation (RFC 6455 5.4)

def fragmentation() -> list[ServerCase]:
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
