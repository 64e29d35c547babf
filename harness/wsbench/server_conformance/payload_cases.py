"""The server cases of Autobahn's sections 6, 7, 9 and 10 (UTF-8, closing, limits,
auto-fragmentation), generated from tables where RFC 6455 gives the shape: every UTF-8
sequence of utf8.py, every close code, every size (expectations.py says what each
expectation asks)."""

from __future__ import annotations

from typing import Callable

from ..conformance.frames import BINARY, CLOSE, CONT, PING, TEXT, close_payload
from . import utf8
from .expectations import (HEAVY_REACT_S, INVALID_DATA, PROTOCOL_ERROR, Msg, ServerCase, ascii_text, big_binary,
                           binary, echo, fails, info, mib, pattern, text, then_close)
from .steps import Chop, Close, Pause, bytewise, close, fragments, frame, split_at


# --- 6 UTF-8 (RFC 6455 5.6, 8.1)

def utf8_cases() -> list[ServerCase]:
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
    split = "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"
    for cut in range(1, len(utf8.KOSME)):
        out.append(ServerCase(
            f"6-kosme-split-{cut}", "6", "5.6", f"'κόσμε' in two fragments cut after byte {cut}",
            then_close(split_at(utf8.KOSME, [cut])), echo(text(utf8.KOSME)), split))
    for s in utf8.VALID:  # every other valid sequence, cut in two at every byte position
        for cut in range(1, len(s.data)) if s.data != utf8.KOSME else ():
            out.append(ServerCase(
                f"6-valid-{s.id}-split-{cut}", "6", "5.6", f"valid UTF-8 text in two fragments cut after byte "
                f"{cut}: {s.what}", then_close(split_at(s.data, [cut])), echo(text(s.data)), split))
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
        across = rule + " (validity is a property of the whole message, across fragments)"
        if len(s.data) > 1:
            out.append(ServerCase(
                f"6-invalid-{s.id}-per-byte", "6", "8.1", f"invalid UTF-8 text, one byte per fragment: {s.what}",
                lambda s=s: (split_at(s.data, list(range(1, len(s.data)))),),  # type: ignore[misc]
                fails(INVALID_DATA), across))
        for cut in range(1, len(s.data)) if len(s.data) <= 6 else ():  # a sequence cut in two at every byte
            out.append(ServerCase(
                f"6-invalid-{s.id}-split-{cut}", "6", "8.1", f"invalid UTF-8 text in two fragments cut after byte "
                f"{cut}: {s.what}", lambda s=s, cut=cut: (split_at(s.data, [cut]),),  # type: ignore[misc]
                fails(INVALID_DATA), across))
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


def closing() -> list[ServerCase]:
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
                   lambda: (Close(split_at(b"fragment1fragment2", [9]) + close().data, wait=False),),
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
                              f"close frame with valid code {code}",
                              lambda code=code: (close(code),),  # type: ignore[misc]
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


def limits() -> list[ServerCase]:
    out = []
    refuse = ("; 7.4.1: refusing a message beyond a limit of the server's with 1009 (too big) or 1008 (policy) "
              "is informational")
    for kind, op in (("text", TEXT), ("binary", BINARY)):
        for n in ONE_FRAME_SIZES:
            data = _data(kind, n)
            out.append(ServerCase(
                f"9-{kind}-{mib(n).replace(' ', '').lower()}", "9", "5.2",
                f"{kind} message of {mib(n)} in one frame",
                lambda op=op, data=data: (frame(op, data()), close()),  # type: ignore[misc]
                echo(Msg(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.2: a 64-bit length carries any size; servers/README.md: up to 64 MiB echoed" + refuse,
                react_s=HEAVY_REACT_S, heavy=n >= 1 << 20))
        for size in FRAGMENT_SIZES:
            data = _data(kind, 4 << 20)
            out.append(ServerCase(
                f"9-{kind}-4mib-fragments-{mib(size).replace(' ', '').lower()}", "9", "5.4",
                f"{kind} message of 4 MiB in fragments of {mib(size)}",
                lambda op=op, data=data, size=size: (fragments(op, data(), size), close()),  # type: ignore[misc]
                echo(Msg(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.4: fragments of any size and number make one message" + refuse,
                react_s=HEAVY_REACT_S, heavy=True))
        for size in CHOP_SIZES:
            data = _data(kind, 1 << 20)
            out.append(ServerCase(
                f"9-{kind}-1mib-chops-{size}", "9", "5.2", f"{kind} message of 1 MiB in one frame, written in "
                f"chops of {size} bytes",
                lambda op=op, data=data, size=size: (Chop(frame(op, data()), size),  # type: ignore[misc]
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

def auto_fragmentation() -> list[ServerCase]:
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
