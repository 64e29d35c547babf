"""The case shapes of Autobahn's sections 1 to 5 (framing, pings and pongs, reserved bits,
opcodes, fragmentation), for both directions (script.Direction: the tester plays a server
against the clients, a client against the servers), generated from tables where RFC 6455
gives the shape. Written from RFC 6455 and Autobahn|Testsuite's public case descriptions
(facts only)."""

from __future__ import annotations

from typing import Any, Callable

from .frames import BINARY, CLOSE, CONT, PING, PONG, TEXT, close_payload
from .script import (PROTOCOL_ERROR, Chop, Close, Direction, Message, Pause, Step, ascii_text, binary, bytewise,
                     pattern, text)


# --- 1 framing (RFC 6455 5.2, 5.3)

LENGTHS = (0, 125, 126, 127, 128, 65535, 65536)


def framing(d: Direction) -> list[Any]:
    wrong, tester = d.wrong_mask, d.tester
    mask_rule = ("5.1: a server MUST close the connection upon receiving a frame that is not masked" if d.masked else
                 "5.1: a server MUST NOT mask its frames; a client MUST close the connection if it detects a masked "
                 "frame")
    out = []
    for kind, op in (("text", TEXT), ("binary", BINARY)):
        for n in LENGTHS:
            data = ascii_text(n) if op == TEXT else pattern(n, n + 1)
            out.append(d.case(
                f"1-{kind}-{n}", "1", "5.2", f"{kind} message of {n} bytes in one frame",
                d.then_close(d.frame(op, data)), d.echo(Message(kind, data)),  # type: ignore[arg-type]
                "5.2: payload lengths 0-125 take 7 bits, 126-65535 16 bits, larger 64 bits; every form is valid"))
        if op == TEXT:
            for n in LENGTHS[1:5]:  # every header form's edges, the header and payload split in 3-byte writes
                data = ascii_text(n)
                out.append(d.case(
                    f"1-text-{n}-chops-3", "1", "5.2", f"text message of {n} bytes in one frame, written in "
                    "chops of 3 bytes", d.then_close(Chop(d.frame(TEXT, data), 3)), d.echo(text(data)),
                    "5.2: a frame is a byte stream; how TCP splits it does not change it"))
        data = ascii_text(65536) if op == TEXT else pattern(65536, 3)
        out.append(d.case(
            f"1-{kind}-65536-chopped", "1", "5.2", f"{kind} message of 65536 bytes written in chops of 997 bytes",
            d.then_close(Chop(d.frame(op, data), 997)), d.echo(Message(kind, data)),  # type: ignore[arg-type]
            "5.2: a frame is a byte stream; how TCP splits it does not change it"))
    for n, label in ((5, "7-bit"), (300, "16-bit"), (70000, "64-bit")):
        data = pattern(n, n)
        whole = d.frame(BINARY, data)
        out.append(d.case(
            f"1-header-bytewise-{label}", "1", "5.2", f"binary frame with a {label} length, its header and first "
            "bytes written byte by byte", d.then_close(bytewise(whole[:20]), whole[20:]), d.echo(binary(data)),
            "5.2: a frame header may arrive in any number of reads"))
    out += [
        d.case("1-two-in-one-write", "1", "5.2", "two text messages in one TCP write",
               d.then_close(d.frame(TEXT, b"first") + d.frame(TEXT, b"second")), d.echo(text("first"), text("second")),
               "5.2: frames follow each other in the byte stream; a read may hold several"),
        d.case(f"1-{wrong}-text", "1", "5.1", f"{wrong} text frame from the {tester}",
               lambda: (d.frame(TEXT, wrong.encode(), wrong_mask=True),), d.fails(PROTOCOL_ERROR),
               mask_rule + " (it MAY send 1002, 7.4.1)"),
        d.case(f"1-{wrong}-binary", "1", "5.1", f"{wrong} binary frame after a valid message",
               lambda: (d.frame(TEXT, b"valid"), d.frame(BINARY, b"\x00\x01", wrong_mask=True)),
               d.fails(PROTOCOL_ERROR, messages=(text("valid"),)), mask_rule),
        d.case(f"1-{wrong}-ping", "1", "5.1", f"{wrong} ping frame",
               lambda: (d.frame(PING, wrong.encode(), wrong_mask=True),), d.fails(PROTOCOL_ERROR),
               mask_rule + ", control frames included"),
        d.case(f"1-{wrong}-close", "1", "5.1", f"{wrong} close frame 1000",
               lambda: (Close(d.frame(CLOSE, close_payload(1000), wrong_mask=True)),), d.fails(PROTOCOL_ERROR),
               mask_rule + ", close frames included"),
        d.case("1-length-top-bit", "1", "5.2", "64-bit length with the most significant bit set",
               lambda: (d.frame(BINARY, b"12345", declared=(1 << 63) | 5),), d.fails(PROTOCOL_ERROR),
               "5.2: the most significant bit of a 64-bit length MUST be 0; such a header is malformed"),
        d.case("1-length-16-for-5", "1", "5.2", "5-byte text frame whose length is written in 16 bits",
               d.then_close(d.frame(TEXT, b"short", length_bytes=2)),
               d.info("5.2 says the minimal number of bytes MUST be used for the length, but not what the "
                    "receiver does with a longer form: echoed or failed, both are recorded", text("short")),
               "5.2: the minimal number of bytes MUST be used to encode the length"),
        d.case("1-length-64-for-200", "1", "5.2", "200-byte binary frame whose length is written in 64 bits",
               d.then_close(d.frame(BINARY, pattern(200, 2), length_bytes=8)),
               d.info("5.2 says the minimal length form MUST be used, not what a receiver does with another",
                    binary(pattern(200, 2))),
               "5.2: the minimal number of bytes MUST be used to encode the length"),
    ]
    return out


# --- 2 pings and pongs (RFC 6455 5.5.2, 5.5.3)

def pings(d: Direction) -> list[Any]:
    p125 = pattern(125, 125)
    ten = tuple(f"ping {i}".encode() for i in range(10))
    return [
        d.case("2-ping-empty", "2", "5.5.2", "ping without payload", d.then_close(d.frame(PING)),
               d.echo(pongs=(b"",)), "5.5.2: a ping MUST be answered by a pong"),
        d.case("2-ping-text", "2", "5.5.2", "ping with a small text payload",
               d.then_close(d.frame(PING, b"Hello, world!")),
               d.echo(pongs=(b"Hello, world!",)), "5.5.3: the pong carries the ping's application data"),
        d.case("2-ping-binary", "2", "5.5.2", "ping with a binary payload (00 FF FE FD FC FB 00 FF)",
               d.then_close(d.frame(PING, bytes.fromhex("00fffefdfcfb00ff"))),
               d.echo(pongs=(bytes.fromhex("00fffefdfcfb00ff"),)),
               "5.5.3: the pong's application data is identical to the ping's, whatever the bytes"),
        d.case("2-ping-125", "2", "5.5.2", "ping with a 125-byte payload", d.then_close(d.frame(PING, p125)),
               d.echo(pongs=(p125,)), "5.5: a control frame may carry up to 125 bytes"),
        d.case("2-ping-126", "2", "5.5", "ping with a 126-byte payload", lambda: (d.frame(PING, b"p" * 126),),
               d.fails(PROTOCOL_ERROR), "5.5: all control frames MUST have a payload length of 125 bytes or less"),
        d.case("2-ping-125-bytewise", "2", "5.5.2", "ping with a 125-byte payload, written byte by byte",
               d.then_close(bytewise(d.frame(PING, p125))), d.echo(pongs=(p125,)),
               "5.5.2: a ping arriving in many reads is still a ping"),
        d.case("2-pong-unsolicited-empty", "2", "5.5.3", "unsolicited pong without payload",
               d.then_close(d.frame(PONG)), d.echo(), "5.5.3: a pong MAY be sent unsolicited; no response is expected"),
        d.case("2-pong-unsolicited", "2", "5.5.3", "unsolicited pong with payload",
               d.then_close(d.frame(PONG, b"unsolicited")), d.echo(),
               "5.5.3: a pong MAY be sent unsolicited; no response is expected"),
        d.case("2-pong-then-ping", "2", "5.5.3", "unsolicited pong, then a ping",
               d.then_close(d.frame(PONG, b"unsolicited"), d.frame(PING, b"then a ping")),
               d.echo(pongs=(b"then a ping",)), "5.5.3: an unsolicited pong is ignored; the ping is answered"),
        d.case("2-ten-pings", "2", "5.5.3", "ten pings in a row, one write each",
               d.then_close(*(d.frame(PING, p) for p in ten)), d.echo(pongs=ten, coalesce=True),
               "5.5.3: every ping is answered (it MAY answer only the latest of pings not yet answered)"),
        d.case("2-ten-pings-chopped", "2", "5.5.3", "ten pings written in chops of 3 bytes",
               d.then_close(Chop(b"".join(d.frame(PING, p) for p in ten), 3)), d.echo(pongs=ten, coalesce=True),
               "5.5.3: every ping is answered (it MAY answer only the latest of pings not yet answered)"),
        d.case("2-ping-after-message", "2", "5.5.2", "a text message, then a ping",
               d.then_close(d.frame(TEXT, b"message"), d.frame(PING, b"after")), d.echo(text("message"), pongs=(b"after",)),
               "5.5.2: a ping between messages is answered as soon as practical"),
    ]


# --- 3 reserved bits (RFC 6455 5.2)

RSV_FRAMES = (("text", TEXT), ("binary", BINARY), ("ping", PING), ("close", CLOSE), ("continuation", CONT))


def _rsv_script(d: Direction, name: str, op: int, rsv: int) -> Callable[[], tuple[Step, ...]]:
    if name == "continuation":
        return lambda: (d.frame(TEXT, b"fragment ", fin=False), d.frame(CONT, b"with rsv", rsv=rsv))
    payload = close_payload(1000) if op == CLOSE else b"reserved bits"
    bad = d.frame(op, payload, rsv=rsv)
    return lambda: (d.frame(TEXT, b"before"), Close(bad) if op == CLOSE else bad, d.frame(PING, b"after"))


def reserved_bits(d: Direction) -> list[Any]:
    out = []
    for rsv in range(1, 8):
        which = [str(i) for i, mask in ((1, 4), (2, 2), (3, 1)) if rsv & mask]
        bits = "+".join(f"RSV{i}" for i in which)
        for name, op in RSV_FRAMES:
            before = () if name == "continuation" else (text("before"),)
            out.append(d.case(
                f"3-rsv{''.join(which)}-{name}", "3", "5.2", f"{name} frame with {bits} set (no extension negotiated)",
                _rsv_script(d, name, op, rsv), d.fails(PROTOCOL_ERROR, messages=before),
                "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"))
    out += [
        d.case("3-rsv1-text-bytewise", "3", "5.2", "text with RSV1 set, written byte by byte",
               lambda: (bytewise(d.frame(TEXT, b"before") + d.frame(TEXT, b"rsv", rsv=4)),),
               d.fails(PROTOCOL_ERROR, messages=(text("before"),)),
               "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
        d.case("3-rsv2-binary-chopped", "3", "5.2", "binary with RSV2 set, written in chops of 2 bytes",
               lambda: (Chop(d.frame(TEXT, b"before") + d.frame(BINARY, b"\x00\x01\x02", rsv=2), 2, 0.001),),
               d.fails(PROTOCOL_ERROR, messages=(text("before"),)),
               "5.2: a nonzero RSV bit that no negotiated extension defines MUST fail the connection"),
    ]
    return out


# --- 4 opcodes (RFC 6455 5.2)

RESERVED_OPCODES = (0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF)


def opcodes(d: Direction) -> list[Any]:
    out = []
    for op in RESERVED_OPCODES:
        kind = "data" if op < 8 else "control"
        rule = (f"5.2: opcodes {'0x3-0x7' if op < 8 else '0xB-0xF'} are reserved for further {kind} frames; "
                "an unknown opcode MUST fail the connection")
        out += [
            d.case(f"4-opcode-{op:x}", "4", "5.2", f"reserved {kind} opcode 0x{op:X}, empty",
                   lambda op=op: (d.frame(op),), d.fails(PROTOCOL_ERROR), rule),  # type: ignore[misc]
            d.case(f"4-opcode-{op:x}-between", "4", "5.2",
                   f"a text message, reserved opcode 0x{op:X} with a payload, then a ping",
                   lambda op=op: (d.frame(TEXT, b"before"), d.frame(op, b"reserved"),  # type: ignore[misc]
                                  d.frame(PING, b"after")),
                   d.fails(PROTOCOL_ERROR, messages=(text("before"),)), rule),
            d.case(f"4-opcode-{op:x}-in-fragments", "4", "5.2",
                   f"reserved opcode 0x{op:X} between the fragments of a text message",
                   lambda op=op: (d.frame(TEXT, b"frag", fin=False), d.frame(op, b"x"),  # type: ignore[misc]
                                  d.frame(CONT, b"ment")), d.fails(PROTOCOL_ERROR), rule),
        ]
    return out


# --- 5 fragmentation (RFC 6455 5.4)

def fragmentation(d: Direction) -> list[Any]:
    ones = bytes(0x61 + i % 26 for i in range(1000))
    return [
        *(d.case(f"5-{name}-fragmented", "5", "5.5", f"{name} in two fragments",
                 lambda op=op: (d.frame(op, b"frag", fin=False), d.frame(CONT, b"mented")),  # type: ignore[misc]
                 d.fails(PROTOCOL_ERROR), "5.5: control frames MUST NOT be fragmented")
          for name, op in (("ping", PING), ("pong", PONG))),
        d.case("5-close-fragmented", "5", "5.5", "close frame in two fragments",
               lambda: (Close(d.frame(CLOSE, close_payload(1000), fin=False)), d.frame(CONT, b"")),
               d.fails(PROTOCOL_ERROR), "5.5: control frames MUST NOT be fragmented"),
        d.case("5-text-2-fragments", "5", "5.4", "text message in two fragments",
               d.then_close(d.split_at(b"fragment1fragment2", [9])), d.echo(text("fragment1fragment2")),
               "5.4: a message may be split into fragments; it is one message"),
        d.case("5-binary-2-fragments", "5", "5.4", "binary message in two fragments",
               d.then_close(d.split_at(pattern(40, 5), [13], BINARY)), d.echo(binary(pattern(40, 5))),
               "5.4: a message may be split into fragments; it is one message"),
        d.case("5-text-2-fragments-bytewise", "5", "5.4", "text in two fragments, written byte by byte",
               d.then_close(bytewise(d.split_at(b"fragment1fragment2", [9]))), d.echo(text("fragment1fragment2")),
               "5.4/5.2: fragments arriving in many reads are still one message"),
        d.case("5-ping-between-fragments", "5", "5.4", "text in two fragments with a ping between them",
               d.then_close(d.frame(TEXT, b"fragment1", fin=False), d.frame(PING, b"between"),
                          d.frame(CONT, b"fragment2")),
               d.echo(text("fragment1fragment2"), pongs=(b"between",)),
               "5.4: control frames MAY be injected in the middle of a fragmented message"),
        d.case("5-ping-between-fragments-bytewise", "5", "5.4",
               "text in two fragments with a ping between, written byte by byte",
               d.then_close(bytewise(d.frame(TEXT, b"fragment1", fin=False) + d.frame(PING, b"between") +
                                   d.frame(CONT, b"fragment2"))),
               d.echo(text("fragment1fragment2"), pongs=(b"between",)),
               "5.4: control frames MAY be injected in the middle of a fragmented message"),
        d.case("5-pings-between-many", "5", "5.4", "text in 10 fragments with a ping after each but the last, "
               "10 ms apart", d.then_close(*(s for i in range(10) for s in (
                   d.frame(TEXT if i == 0 else CONT, f"f{i}".encode(), fin=i == 9),
                   *((d.frame(PING, f"p{i}".encode()), Pause(0.01)) if i < 9 else ())))),
               d.echo(text("".join(f"f{i}" for i in range(10))), pongs=tuple(f"p{i}".encode() for i in range(9))),
               "5.4: control frames MAY be injected between fragments; 5.5.2: each ping answered"),
        d.case("5-continuation-first-nofin", "5", "5.4", "continuation (FIN clear) with nothing to continue, "
               "then a text", lambda: (d.frame(CONT, b"orphan", fin=False), d.frame(TEXT, b"text")),
               d.fails(PROTOCOL_ERROR),
               "5.4: a fragmented message starts with a data opcode; an orphan continuation is a protocol error"),
        d.case("5-continuation-first-fin", "5", "5.4", "continuation (FIN set) with nothing to continue",
               lambda: (d.frame(CONT, b"orphan"), d.frame(TEXT, b"text")), d.fails(PROTOCOL_ERROR),
               "5.4: a continuation with nothing to continue is a protocol error"),
        d.case("5-continuation-first-bytewise", "5", "5.4",
               "continuation with nothing to continue, written byte by byte",
               lambda: (bytewise(d.frame(CONT, b"orphan")),), d.fails(PROTOCOL_ERROR),
               "5.4: a continuation with nothing to continue is a protocol error"),
        d.case("5-continuation-after-message", "5", "5.4", "a whole text, then a continuation",
               lambda: (d.frame(TEXT, b"whole"), d.frame(CONT, b"orphan")),
               d.fails(PROTOCOL_ERROR, messages=(text("whole"),)),
               "5.4: once a message ended (FIN), a continuation has nothing to continue"),
        d.case("5-orphans-then-message-chopped", "5", "5.4",
               "a text in two fragments, a continuation (FIN clear) with nothing to continue, then a text, "
               "written in chops of 1 byte", lambda: (bytewise(d.split_at(b"fragment1fragment2", [9]) +
                                                               d.frame(CONT, b"orphan", fin=False) +
                                                               d.frame(TEXT, b"after")),),
               d.fails(PROTOCOL_ERROR, messages=(text("fragment1fragment2"),)),
               "5.4: a continuation after a finished message has nothing to continue"),
        d.case("5-orphan-nofin-twice", "5", "5.4",
               "twice: a continuation (FIN clear) with nothing to continue, then a text in two fragments",
               lambda: (d.frame(CONT, b"orphan", fin=False), d.split_at(b"fragment1fragment2", [9]),
                        d.frame(CONT, b"orphan", fin=False), d.split_at(b"fragment1fragment2", [9])),
               d.fails(PROTOCOL_ERROR), "5.4: a continuation with nothing to continue is a protocol error"),
        d.case("5-orphan-fin-twice", "5", "5.4",
               "twice: a continuation (FIN set) with nothing to continue, then a text in two fragments",
               lambda: (d.frame(CONT, b"orphan"), d.split_at(b"fragment1fragment2", [9]),
                        d.frame(CONT, b"orphan"), d.split_at(b"fragment1fragment2", [9])),
               d.fails(PROTOCOL_ERROR), "5.4: a continuation with nothing to continue is a protocol error"),
        d.case("5-ping-between-fragments-chopped", "5", "5.4",
               "text in two fragments with a ping between, written in chops of 3 bytes",
               d.then_close(Chop(d.frame(TEXT, b"fragment1", fin=False) + d.frame(PING, b"between") +
                               d.frame(CONT, b"fragment2"), 3)),
               d.echo(text("fragment1fragment2"), pongs=(b"between",)),
               "5.4: control frames MAY be injected in the middle of a fragmented message"),
        d.case("5-text-2-fragments-chopped", "5", "5.4", "text in two fragments, written in chops of 3 bytes",
               d.then_close(Chop(d.split_at(b"fragment1fragment2", [9]), 3)), d.echo(text("fragment1fragment2")),
               "5.4/5.2: fragments arriving in many reads are still one message"),
        *(d.case(f"5-{name}-inside-text", "5", "5.4", f"{what} before a fragmented text ended",
                 lambda op=op: (d.frame(TEXT, b"abc", fin=False), d.frame(op, b"def")),  # type: ignore[misc]
                 d.fails(PROTOCOL_ERROR), "5.4: fragments of one message MUST NOT be interleaved with another data "
                 "message") for name, op, what in (("text", TEXT, "a new text frame"), ("binary", BINARY,
                                                                                        "a binary frame"))),
        d.case("5-text-inside-text-fin", "5", "5.4", "two text frames, both with FIN clear, then a continuation",
               lambda: (d.frame(TEXT, b"one", fin=False), d.frame(TEXT, b"two", fin=False), d.frame(CONT, b"end")),
               d.fails(PROTOCOL_ERROR), "5.4: a second message cannot start inside the first"),
        d.case("5-fragments-1000", "5", "5.4", "a text message in 1,000 one-byte fragments",
               d.then_close(d.split_at(ones, list(range(1, 1000)))), d.echo(text(ones)),
               "5.4: a message may be split into any number of fragments"),
        d.case("5-fragments-empty", "5", "5.4", "a binary message with empty first and last fragments",
               d.then_close(d.split_at(b"ab", [0, 2], BINARY)), d.echo(binary(b"ab")),
               "5.4: fragments may be empty; the message is the concatenation"),
        d.case("5-fragments-all-empty", "5", "5.4", "a text message of three empty fragments",
               d.then_close(d.split_at(b"", [0, 0])), d.echo(text(b"")),
               "5.4: a message of empty fragments is an empty message"),
        d.case("5-close-between-fragments", "5", "5.4", "first fragment of a text, then our close",
               lambda: (d.frame(TEXT, b"unfinished", fin=False), d.close(wait=False)), d.echo(),
               "5.4: control frames (close included) MAY come between fragments; 5.5.1: the close is "
               f"answered; the unfinished message is never {d.handled}"),
    ]
