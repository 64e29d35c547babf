"""The case shapes of Autobahn's sections 6, 7, 9 and 10 (UTF-8, closing, limits,
auto-fragmentation), for both directions (script.Direction), generated from tables where
RFC 6455 gives the shape: every UTF-8 sequence of utf8.py, every close code, every size.
Written from RFC 6455 and Autobahn|Testsuite's public case descriptions (facts only)."""

from __future__ import annotations

from typing import Any, Callable

from . import utf8
from .frames import BINARY, CLOSE, CONT, PING, TEXT, close_payload
from .script import (HEAVY_REACT_S, INVALID_DATA, PROTOCOL_ERROR, Chop, Close, Direction, Message, Pause, ascii_text,
                     big_binary, binary, bytewise, mib, pattern, text)


# --- 6 UTF-8 (RFC 6455 5.6, 8.1)

def utf8_cases(d: Direction) -> list[Any]:
    out = []
    for s in utf8.VALID:
        out.append(d.case(f"6-valid-{s.id}", "6", "5.6", f"valid UTF-8 text: {s.what}",
                          d.then_close(d.frame(TEXT, s.data)), d.echo(text(s.data)),
                          "5.6: any valid UTF-8 (RFC 3629) is a valid text message; noncharacters included"))
        if len(s.data) > 1:
            out.append(d.case(
                f"6-valid-{s.id}-per-byte", "6", "5.6", f"valid UTF-8 text, one byte per fragment: {s.what}",
                d.then_close(d.split_at(s.data, list(range(1, len(s.data))))), d.echo(text(s.data)),
                "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"))
    split = "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"
    for cut in range(1, len(utf8.KOSME)):
        out.append(d.case(
            f"6-kosme-split-{cut}", "6", "5.6", f"'κόσμε' in two fragments cut after byte {cut}",
            d.then_close(d.split_at(utf8.KOSME, [cut])), d.echo(text(utf8.KOSME)), split))
    for s in utf8.VALID:  # every other valid sequence, cut in two at every byte position
        for cut in range(1, len(s.data)) if s.data != utf8.KOSME else ():
            out.append(d.case(
                f"6-valid-{s.id}-split-{cut}", "6", "5.6", f"valid UTF-8 text in two fragments cut after byte "
                f"{cut}: {s.what}", d.then_close(d.split_at(s.data, [cut])), d.echo(text(s.data)), split))
    four = "😀".encode()
    for cut in range(1, 4):
        out.append(d.case(
            f"6-four-byte-split-{cut}", "6", "5.6", f"'😀' (4 bytes) in two fragments cut after byte {cut}",
            d.then_close(d.split_at(b"a" + four + b"z", [cut + 1])), d.echo(text(b"a" + four + b"z")),
            "5.6: only the whole message must be valid UTF-8; a fragment may end inside a character"))
    out.append(d.case("6-empty", "6", "5.6", "empty text message", d.then_close(d.frame(TEXT)),
                      d.echo(text(b"")), "5.6: an empty text message is valid UTF-8"))
    for s in utf8.INVALID:
        rule = "8.1: an endpoint that receives invalid UTF-8 text MUST fail the connection; 7.4.1: with 1007"
        out.append(d.case(f"6-invalid-{s.id}", "6", "8.1", f"invalid UTF-8 text: {s.what}",
                          lambda s=s: (d.frame(TEXT, s.data),), d.fails(INVALID_DATA), rule))  # type: ignore[misc]
        across = rule + " (validity is a property of the whole message, across fragments)"
        if len(s.data) > 1:
            out.append(d.case(
                f"6-invalid-{s.id}-per-byte", "6", "8.1", f"invalid UTF-8 text, one byte per fragment: {s.what}",
                lambda s=s: (d.split_at(s.data, list(range(1, len(s.data)))),),  # type: ignore[misc]
                d.fails(INVALID_DATA), across))
        for cut in range(1, len(s.data)) if len(s.data) <= 6 else ():  # a sequence cut in two at every byte
            out.append(d.case(
                f"6-invalid-{s.id}-split-{cut}", "6", "8.1", f"invalid UTF-8 text in two fragments cut after byte "
                f"{cut}: {s.what}", lambda s=s, cut=cut: (d.split_at(s.data, [cut]),),  # type: ignore[misc]
                d.fails(INVALID_DATA), across))
    fast = "8.1: the connection fails when the invalid byte stream is found, not at the message's end"
    out += [
        d.case("6-fail-fast-first", "6", "8.1", "invalid first fragment (FF), 0.5 s pause, then the last",
               lambda: (d.frame(TEXT, b"ok \xff", fin=False), Pause(0.5), d.frame(CONT, b"end")),
               d.fails(INVALID_DATA, before_end=True), fast),
        d.case("6-fail-fast-middle", "6", "8.1", "valid fragment, then F4 90 80 80 (above U+10FFFF), "
               "0.5 s pause, then the last", lambda: (d.frame(TEXT, utf8.KOSME, fin=False), Pause(0.1),
                                                     d.frame(CONT, b"\xf4\x90\x80\x80", fin=False), Pause(0.5),
                                                     d.frame(CONT, b"-edited")),
               d.fails(INVALID_DATA, before_end=True), fast),
        d.case("6-fail-fast-surrogate", "6", "8.1", "a fragment ending in a surrogate (ED A0 80), 0.5 s pause, "
               "then the last", lambda: (d.frame(TEXT, b"ab\xed\xa0\x80", fin=False), Pause(0.5),
                                         d.frame(CONT, b"cd")),
               d.fails(INVALID_DATA, before_end=True), fast),
        d.case("6-fail-fast-bytewise", "6", "8.1", "invalid text written byte by byte, 0.5 s pause, then "
               "the rest", lambda: (bytewise(d.frame(TEXT, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xed\xa0\x80ab",
                                                   fin=False)), Pause(0.5), d.frame(CONT, b"end")),
               d.fails(INVALID_DATA, before_end=True), fast),
        d.case("6-split-invalid", "6", "8.1", "E2 82 ends fragment 1, fragment 2 starts with '('",
               lambda: (d.frame(TEXT, b"ok \xe2\x82", fin=False), d.frame(CONT, b"(ok")), d.fails(INVALID_DATA),
               "8.1: validity is a property of the whole message, across fragments; 7.4.1: 1007"),
        d.case("6-truncated-at-end", "6", "8.1", "text message ending inside a 3-byte sequence (E2 82)",
               lambda: (d.frame(TEXT, b"abc\xe2\x82"),), d.fails(INVALID_DATA),
               "8.1: a message that ends mid-sequence is not valid UTF-8"),
    ]
    return out


# --- 7 closing (RFC 6455 5.5.1, 7)

VALID_CODES = (1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999)
IANA_CODES = (1012, 1013, 1014)  # reserved in RFC 6455's text, registered with IANA since
INVALID_CODES = (0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999)
UNDEFINED_CODES = (5000, 65535)


def closing(d: Direction) -> list[Any]:
    big = pattern(256 << 10, 9)
    out = [
        d.case("7-message-then-close", "7", "5.5.1", "a text message, then our close",
               d.then_close(d.frame(TEXT, b"Hello World!")), d.echo(text("Hello World!")),
               f"5.5.1: the message is {d.handled}, then the close answered"),
        d.case("7-close-twice", "7", "5.5.1", "our close, then a second close",
               lambda: (d.close(), d.frame(CLOSE, close_payload(1000))), d.echo(),
               f"5.5.1: after the close the {d.receiver} answers once; the second close is ignored"),
        d.case("7-ping-after-close", "7", "5.5.1", "our close, then a ping",
               lambda: (d.close(), d.frame(PING, b"after close")), d.echo(),
               "5.5.1: after a close, further data is discarded; no pong is due"),
        d.case("7-message-after-close", "7", "5.5.1", "our close, then a text message",
               lambda: (d.close(), d.frame(TEXT, b"after close")), d.echo(),
               "5.5.1: after sending a close the endpoint MUST NOT send data frames; what follows a close is "
               f"not {d.handled}"),
        d.case("7-close-between-fragments", "7", "5.5.1", "a fragment, our close, then the last fragment",
               lambda: (d.frame(TEXT, b"frag", fin=False), d.close(wait=False), d.frame(CONT, b"ment")), d.echo(),
               f"5.5.1: a close between fragments is answered; the message is never {d.handled}"),
        d.case("7-close-after-256k", "7", "5.5.1", "a 256 KiB binary message, at once our close, then a ping",
               lambda: (d.frame(BINARY, big), d.close(wait=False), d.frame(PING, b"late")),
               d.info("whether a message that arrived just before the close is echoed before the answering "
                      "close: 5.5.1 lets an endpoint finish sending its current message, but does not make it"),
               "5.5.1: after a close no data frame follows; the ping after the close is ignored"),
        d.case("7-message-close-at-once", "7", "5.5.1", "a text in two fragments and our close, in one write",
               lambda: (Close(d.split_at(b"fragment1fragment2", [9]) + d.close().data, wait=False),),
               d.info("whether a message that arrived in the same read as the close is echoed: the server may "
                      "answer the close first"),
               "5.5.1: after a close no data frame follows"),
        d.case("7-close-empty", "7", "5.5.1", "close frame without a body",
               lambda: (d.close(None),), d.echo(close_reply=(None, 1000)),
               "5.5.1: a close without a body is valid (7.1.5: its code is 1005, never sent); the answer "
               "carries no code or 1000"),
        d.case("7-close-1-byte", "7", "5.5.1", "close frame with a 1-byte body",
               lambda: (Close(d.frame(CLOSE, b"\x03")),), d.fails(PROTOCOL_ERROR),
               "5.5.1: a close body MUST start with a 2-byte status code; one byte cannot"),
        d.case("7-close-code-only", "7", "5.5.1", "close 1000 without a reason",
               lambda: (d.close(1000),), d.echo(), "5.5.1: a status code alone is a valid close body"),
        d.case("7-close-reason", "7", "5.5.1", "close 1000 with a UTF-8 reason",
               lambda: (d.close(1000, "Hello World! µ€".encode()),), d.echo(),
               "5.5.1: the reason after the code is UTF-8 for the application"),
        d.case("7-close-reason-123", "7", "5.5", "close 1000 with a 123-byte reason (a 125-byte body)",
               lambda: (d.close(1000, b"*" * 123),), d.echo(), "5.5: a control frame may carry 125 bytes"),
        d.case("7-close-reason-124", "7", "5.5", "close 1000 with a 124-byte reason (a 126-byte body)",
               lambda: (d.close(1000, b"*" * 124),), d.fails(PROTOCOL_ERROR),
               "5.5: all control frames MUST have a payload length of 125 bytes or less"),
    ]
    for name, reason in (("ff", b"\xff\xfe"), ("surrogate", b"a\xed\xa0\x80b"), ("truncated", b"abc\xe2\x82"),
                     ("overlong", b"\xc0\xaf")):
        out.append(d.case(f"7-close-reason-invalid-{name}", "7", "5.5.1",
                          f"close 1000 whose reason is not UTF-8 ({reason.hex(' ').upper()})",
                          lambda reason=reason: (d.close(1000, reason),), d.fails(INVALID_DATA),  # type: ignore[misc]
                          "5.5.1: the reason MUST be UTF-8; 8.1/7.4.1: invalid UTF-8 fails the connection "
                          "with 1007"))
    for code in VALID_CODES:
        out.append(d.case(f"7-close-code-{code}", "7", "7.4.1" if code < 3000 else "7.4.2",
                          f"close frame with valid code {code}",
                          lambda code=code: (d.close(code),),  # type: ignore[misc]
                          d.echo(close_reply=(code,)),
                          "7.4.1/7.4.2: a defined or application code; 5.5.1: the answer typically echoes it"))
    for code in IANA_CODES:
        out.append(d.case(f"7-close-code-{code}", "7", "7.4.2", f"close frame with code {code}",
                          lambda code=code: (d.close(code),), d.info(  # type: ignore[misc]
                              f"RFC 6455 7.4.2 reserves {code} for future use; the IANA registry has since "
                              "assigned it: echoed or refused, both are recorded"),
                          "7.4.2: 1000-2999 are reserved for this protocol and its extensions"))
    for code in INVALID_CODES:
        out.append(d.case(f"7-close-code-{code}", "7", "7.4.1", f"close frame with invalid code {code}",
                          lambda code=code: (d.close(code),), d.fails(PROTOCOL_ERROR),  # type: ignore[misc]
                          "7.4.1/7.4.2: 0-999 are not used, 1004 is reserved, 1005, 1006 and 1015 MUST NOT be "
                          "sent, 1016-2999 are unassigned: a protocol error"))
    for code in UNDEFINED_CODES:
        out.append(d.case(f"7-close-code-{code}", "7", "7.4.2", f"close frame with code {code}",
                          lambda code=code: (d.close(code),),  # type: ignore[misc]
                          d.info("RFC 6455 defines no range above 4999: refused with 1002 or echoed"),
                          "7.4.2: the ranges end at 4999; the RFC says nothing of larger codes"))
    return out


# --- 9 limits (RFC 6455 5.2, 5.4, 7.4.1)

ONE_FRAME_SIZES = (64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20)
FRAGMENT_SIZES = (64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20)
CHOP_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)


def _data(kind: str, n: int) -> Callable[[], bytes]:
    return (lambda: ascii_text(n)) if kind == "text" else (lambda: big_binary(n))


def limits(d: Direction) -> list[Any]:
    out = []
    refuse = (f"; 7.4.1: refusing a message beyond a limit of the {d.receiver}'s with 1009 (too big) or 1008 "
              f"(policy) is {'informational' if d.masked else 'non-strict'}")
    readme = "; servers/README.md: up to 64 MiB echoed" if d.masked else ""
    for kind, op in (("text", TEXT), ("binary", BINARY)):
        for n in ONE_FRAME_SIZES:
            data = _data(kind, n)
            out.append(d.case(
                f"9-{kind}-{mib(n).replace(' ', '').lower()}", "9", "5.2",
                f"{kind} message of {mib(n)} in one frame",
                lambda op=op, data=data: (d.frame(op, data()), d.close()),  # type: ignore[misc]
                d.echo(Message(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.2: a 64-bit length carries any size" + readme + refuse,
                react_s=HEAVY_REACT_S, heavy=n >= 1 << 20))
        for size in FRAGMENT_SIZES:
            data = _data(kind, 4 << 20)
            out.append(d.case(
                f"9-{kind}-4mib-fragments-{mib(size).replace(' ', '').lower()}", "9", "5.4",
                f"{kind} message of 4 MiB in fragments of {mib(size)}",
                lambda op=op, data=data, size=size: (d.fragments(op, data(), size), d.close()),  # type: ignore[misc]
                d.echo(Message(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.4: fragments of any size and number make one message" + refuse,
                react_s=HEAVY_REACT_S, heavy=True))
        for size in CHOP_SIZES:
            data = _data(kind, 1 << 20)
            out.append(d.case(
                f"9-{kind}-1mib-chops-{size}", "9", "5.2", f"{kind} message of 1 MiB in one frame, written in "
                f"chops of {size} bytes",
                lambda op=op, data=data, size=size: (Chop(d.frame(op, data()), size),  # type: ignore[misc]
                                                                       d.close()),
                d.echo(Message(kind, data), too_big_ok=True),  # type: ignore[arg-type]
                "5.2: a frame is a byte stream; how TCP splits it does not change it" + refuse,
                react_s=HEAVY_REACT_S, heavy=True))
        many = tuple(Message(kind, f"message {i:04d}".encode()) for i in range(1000))  # type: ignore[arg-type]
        out.append(d.case(
            f"9-{kind}-1000-messages", "9", "5.4", f"1,000 {kind} messages of 12 bytes in a row",
            lambda op=op, many=many: (b"".join(d.frame(op, m.data) for m in many), d.close()),  # type: ignore[misc]
            d.echo(*many), f"5.4: messages are {d.handled} in the order they came", react_s=HEAVY_REACT_S))
    return out


# --- 10 auto-fragmentation (RFC 6455 5.4)

def auto_fragmentation(d: Direction) -> list[Any]:
    rule = "5.4: an intermediary or endpoint MAY fragment a message as it likes; " + (
        "the echo is judged whole, however the server fragments it" if d.masked else
        "the message is delivered whole, however it was fragmented")
    return [
        d.case("10-text-65536", "10", "5.4", "text message of 65536 bytes in one frame",
               d.then_close(d.frame(TEXT, ascii_text(65536))), d.echo(text(ascii_text(65536))), rule),
        d.case("10-binary-65536", "10", "5.4", "binary message of 65536 bytes in one frame",
               d.then_close(d.frame(BINARY, pattern(65536, 10))), d.echo(binary(pattern(65536, 10))), rule),
        d.case("10-text-65536-64-fragments", "10", "5.4", "text message of 65536 bytes in 64 fragments",
               d.then_close(d.fragments(TEXT, ascii_text(65536), 1024)), d.echo(text(ascii_text(65536))), rule),
        d.case("10-binary-1mib", "10", "5.4", "binary message of 1 MiB in one frame",
               lambda: (d.frame(BINARY, big_binary(1 << 20)), d.close()),
               d.echo(binary(big_binary(1 << 20)), too_big_ok=True), rule, react_s=HEAVY_REACT_S, heavy=True),
    ]
