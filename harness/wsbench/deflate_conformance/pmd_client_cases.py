"""The clients' permessage-deflate cases, as data: ``conformance.cases.Case``s whose peer
(a server) answers the client's offer with the case's ``extensions`` (the 101's
Sec-WebSocket-Extensions; None: it declines) and then plays compressed frames; judged by
pmd_client_judge.py with conformance/judge.py's expectations:

- ``reject`` (negotiation): an answer a client MUST refuse (RFC 7692 5 and 7.1: "the
  client MUST _Fail the WebSocket Connection_"): strict: no ``open``, TCP dropped;
- ``deliver``: the answer is valid, or the messages are (compressed, fragmented, with
  or without context takeover, any window): every message delivered whole (the observe
  kind's digest: type, length, head, tail and samples) and the close answered;
- ``fail``: a frame a client must refuse (RSV1 where it may not be, 7.2.3.1 / RFC 6455
  5.2: 1002; data that is not DEFLATE or text that is not UTF-8 once inflated: 1007); a
  dropped TCP connection is non-strict (RFC 6455 7.1.7);
- the bomb (``pmd-bomb``): 1 GiB of zeros in about 1 MiB: close 1009 (strict), or fail
  otherwise (non-strict), within 30 s, never deliver it.

Each case's ``section`` is its RFC 7692 section."""

from __future__ import annotations

import zlib
from functools import cache
from typing import Callable

from ..conformance.cases import Case, Expect, delivers, fails, closing
from ..conformance.frames import BINARY, CLOSE, CONT, PING, TEXT, close_payload, server_frame
from ..conformance.script import (HEAVY_REACT_S, INVALID_DATA, PROTOCOL_ERROR, TOO_BIG, Message, Step, ascii_text,
                                  binary, mib, pattern, text)
from .pmd import RSV1, Compressor, compress, with_bfinal

NEGOTIATION, MESSAGES, VIOLATIONS, LIMITS = "pmd-negotiation", "pmd-messages", "pmd-violations", "pmd-limits"
GROUPS = {NEGOTIATION: "the server's answer", MESSAGES: "compressed messages",
          VIOLATIONS: "frames to refuse", LIMITS: "the decompression bomb"}
BOMB_BYTES = 1 << 30  # what the bomb inflates to
UNOFFERED = "pmd-answer-client-max-window-bits-unoffered"  # informational where the client offers it
OFFERED = "pmd-answer-client-max-window-bits-10"  # informational where it does not
NEVER = b"never"  # the message after an answer to refuse
INVALID_UTF8 = "κόσμε".encode() + b"\xed\xa0\x80edited"  # a surrogate: never valid UTF-8 (RFC 3629)


def frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0) -> bytes:
    return server_frame(opcode, payload, fin=fin, rsv=rsv)


def deflated(kind: str, payloads: list[bytes]) -> bytes:
    """Compressed messages as frames, one frame each, RSV1 on each."""
    return b"".join(frame(TEXT if kind == "text" else BINARY, p, rsv=RSV1) for p in payloads)


def fragmented(opcode: int, payload: bytes, pieces: int, rsv_on_all: bool = False) -> bytes:
    """A compressed message cut into ``pieces`` frames, RSV1 on the first only (7.2.3.1:
    on the first frame of the message), or on every one with ``rsv_on_all``."""
    size = max(1, -(-len(payload) // pieces))
    parts = [payload[i:i + size] for i in range(0, len(payload), size)] or [b""]
    return b"".join(frame(opcode if i == 0 else CONT, p, fin=i == len(parts) - 1,
                          rsv=RSV1 if i == 0 or rsv_on_all else 0) for i, p in enumerate(parts))


def script(*steps: Step) -> Callable[[], tuple[Step, ...]]:
    return lambda: (*steps, closing())


def _messages(kind: str, data: list[bytes]) -> tuple[Message, ...]:
    return tuple(text(d) if kind == "text" else binary(d) for d in data)


def _case(id: str, group: str, section: str, title: str, build: Callable[[], tuple[Step, ...]], expect: Expect,
          why: str, extensions: str | None = "permessage-deflate", **kw: object) -> Case:
    return Case(id, section, group, title, build, expect, why, extensions=extensions, **kw)  # type: ignore[arg-type]


def stream(kind: str, data: list[bytes], bits: int = 15, takeover: bool = True) -> Callable[[], tuple[Step, ...]]:
    """A script: the messages compressed in order by one sender (a fresh compressor each
    time the script is built), then the peer's close."""
    def build() -> tuple[Step, ...]:
        c = Compressor(bits, takeover)
        return deflated(kind, [c.message(d) for d in data]), closing()
    return build


def _hello(bits: int = 15, takeover: bool = True) -> Callable[[], tuple[Step, ...]]:
    return stream("text", [ascii_text(300), ascii_text(300)[::-1]], bits, takeover)


def negotiation() -> list[Case]:
    """Valid answers (the client must accept them and inflate accordingly) and answers a
    client must refuse."""
    hello = delivers(text(ascii_text(300)), text(ascii_text(300)[::-1]))
    valid = [
        ("plain", "permessage-deflate", "7: the extension without parameters", 15, True),
        ("server-no-context-takeover", "permessage-deflate; server_no_context_takeover", "7.1.1.1", 15, False),
        ("client-no-context-takeover", "permessage-deflate; client_no_context_takeover", "7.1.1.2", 15, True),
        ("server-max-window-bits-10", "permessage-deflate; server_max_window_bits=10", "7.1.2.1", 10, True),
        ("client-max-window-bits-10", "permessage-deflate; client_max_window_bits=10", "7.1.2.2", 15, True),
    ]
    out = [_case(f"pmd-answer-{name}", NEGOTIATION, section.split(":")[0], f"answer '{answer}', then 2 compressed "
                 "texts", _hello(bits, takeover), hello,
                 f"{section}: a valid answer to the offer; the client compresses and inflates as it says"
                 + (" (valid only where the client offered client_max_window_bits: else it must refuse it, and "
                    "the case is informational)" if name.startswith("client-max") else ""), extensions=answer)
           for name, answer, section, bits, takeover in valid]
    never = (frame(TEXT, compress(NEVER), rsv=RSV1), closing())  # a client that wrongly opened answers the close
    invalid = [
        ("unknown-parameter", "permessage-deflate; x_unknown_parameter", "7.1",
         "an answer with a parameter not defined for the extension"),
        ("parameter-twice", "permessage-deflate; server_no_context_takeover; server_no_context_takeover", "7.1",
         "an answer with the same parameter twice"),
        ("server-max-window-bits-16", "permessage-deflate; server_max_window_bits=16", "7.1.2.1",
         "server_max_window_bits above 15"),
        ("server-max-window-bits-7", "permessage-deflate; server_max_window_bits=7", "7.1.2.1",
         "server_max_window_bits below 8"),
        ("server-max-window-bits-no-value", "permessage-deflate; server_max_window_bits", "7.1.2.1",
         "server_max_window_bits without its value"),
        ("server-max-window-bits-non-digits", "permessage-deflate; server_max_window_bits=1x", "7.1.2.1",
         "server_max_window_bits not a number"),
        ("flag-with-value", "permessage-deflate; server_no_context_takeover=1", "7.1.1.1",
         "server_no_context_takeover with a value"),
        ("client-max-window-bits-unoffered", "permessage-deflate; client_max_window_bits=15", "7.1.2.2",
         "client_max_window_bits, which the client did not offer (informational if it did)"),
        ("extension-not-offered", "x-webkit-deflate-frame", "5",
         "an extension the client did not offer"),
        ("twice", "permessage-deflate, permessage-deflate", "5",
         "permessage-deflate twice (one offer accepted twice)"),
    ]
    out += [_case(f"pmd-answer-{name}", NEGOTIATION, section, f"answer '{answer}'", lambda: never, Expect("reject"),
                  f"{section}: {what}: the client MUST _Fail the WebSocket Connection_; it never opens",
                  extensions=answer, with_101=True)
            for name, answer, section, what in invalid]
    return out


@cache
def repetitive(n: int, seed: int) -> bytes:
    """n bytes of a 3000-byte random block repeated: matches 3000 bytes back (a 4 KiB
    window) and more, which a small window cannot reach."""
    block = pattern(3000, seed)
    return (block * (n // 3000 + 1))[:n]


def messages() -> list[Case]:
    out: list[Case] = []
    for kind in ("text", "binary"):
        for n in (16, 1024, 64 << 10, 128 << 10):
            data = ascii_text(n) if kind == "text" else repetitive(n, n)
            for takeover in (True, False):
                answer = "permessage-deflate" + ("" if takeover else "; server_no_context_takeover")
                out.append(_case(
                    f"pmd-{kind}-{mib(n).replace(' ', '').lower()}-x3-{'takeover' if takeover else 'no-takeover'}",
                    MESSAGES, "7.2.2" if takeover else "7.1.1.1",
                    f"3 compressed {kind.replace('binary', 'binarie')}s of {mib(n)}, "
                    + ("one DEFLATE stream (context takeover)" if takeover else "server_no_context_takeover"),
                    stream(kind, [data, data[::-1], data], 15, takeover),
                    delivers(*_messages(kind, [data, data[::-1], data])),
                    ("7.2.2: with context takeover each message continues the stream of the one before"
                     if takeover else "7.1.1.1: without context takeover each message is a stream of its own"),
                    extensions=answer))
    for bits in range(9, 16):
        data = repetitive(32 << 10, bits)
        out.append(_case(f"pmd-window-bits-{bits}", MESSAGES, "7.1.2.1",
                         f"server_max_window_bits={bits}, 2 binaries of 32 KiB compressed with a {1 << bits}-byte "
                         "window", stream("binary", [data, data], bits),
                         delivers(binary(data), binary(data)),
                         f"7.1.2.1: the server compresses with at most 2^{bits} bytes of window",
                         extensions=f"permessage-deflate; server_max_window_bits={bits}"))
    big = ascii_text(64 << 10)
    out += [
        _case("pmd-fragmented-text-64kib-4", MESSAGES, "7.2.3.1", "a compressed 64 KiB text in 4 frames, RSV1 on "
              "the first only", script(fragmented(TEXT, compress(big), 4)), delivers(text(big)),
              "7.2.3.1 / 6.1: a compressed message may be fragmented; RSV1 is set on its first frame only"),
        _case("pmd-fragmented-binary-1kib-bytewise", MESSAGES, "7.2.3.1", "a compressed 1 KiB binary, one "
              "compressed byte per frame", script(fragmented(BINARY, compress(repetitive(1024, 7)), 10 ** 6)),
              delivers(binary(repetitive(1024, 7))), "7.2.3.1 / 6.1: the compressed bytes may be cut anywhere"),
        _case("pmd-uncompressed-message", MESSAGES, "6", "an uncompressed text (no RSV1) between two compressed "
              "ones", script(deflated("text", [compress(b"one")]) + frame(TEXT, b"two")
                             + deflated("text", [compress(b"three")])),
              delivers(text("one"), text("two"), text("three")),
              "6: a message without RSV1 is not compressed, even on a connection with permessage-deflate",
              extensions="permessage-deflate; server_no_context_takeover"),
        _case("pmd-bfinal-block", MESSAGES, "7.2.3.4", "a compressed text ending in a DEFLATE block with BFINAL set",
              script(frame(TEXT, with_bfinal(b"final block " * 20), rsv=RSV1)), delivers(text(b"final block " * 20)),
              "7.2.3.4: a sender may end a message's data with a BFINAL block; the receiver inflates it alike",
              extensions="permessage-deflate; server_no_context_takeover"),
        _case("pmd-empty-message", MESSAGES, "7.2.3.6", "an empty compressed text (the payload 0x00), then 'after'",
              script(frame(TEXT, b"\x00", rsv=RSV1) + frame(TEXT, compress(b"after"), rsv=RSV1)),
              delivers(text(""), text("after")),
              "7.2.3.6: an empty message compresses to the single byte 0x00",
              extensions="permessage-deflate; server_no_context_takeover"),
    ]
    return out


def violations() -> list[Case]:
    good = compress(ascii_text(4096))
    return [
        _case("pmd-rsv1-continuation", VIOLATIONS, "6", "a compressed text in 2 frames, RSV1 on both",
              script(fragmented(TEXT, good, 2, rsv_on_all=True)), fails(PROTOCOL_ERROR),
              "6: RSV1 is set on the first frame of a compressed message only; on a continuation frame it is "
              "reserved (RFC 6455 5.2: fail the connection, 1002)"),
        _case("pmd-rsv1-ping", VIOLATIONS, "6", "a ping with RSV1", script(frame(PING, b"ping", rsv=RSV1)),
              fails(PROTOCOL_ERROR), "6: the extension does not apply to control frames: RSV1 on a ping is "
              "reserved (RFC 6455 5.2: 1002)"),
        _case("pmd-rsv1-close", VIOLATIONS, "6", "a close frame with RSV1",
              lambda: (frame(CLOSE, close_payload(1000), rsv=RSV1), frame(CLOSE, close_payload(1000))),
              fails(PROTOCOL_ERROR), "6: RSV1 on a close frame is reserved (RFC 6455 5.2: 1002)"),
        _case("pmd-rsv1-not-agreed", VIOLATIONS, "6", "the peer declines the offer, then sends a text with RSV1",
              script(frame(TEXT, compress(b"hello"), rsv=RSV1)), fails(PROTOCOL_ERROR),
              "6: without the extension agreed RSV1 is reserved (RFC 6455 5.2: 1002)", extensions=None),
        _case("pmd-rsv2-text", VIOLATIONS, "6", "a compressed text with RSV1 and RSV2",
              script(frame(TEXT, compress(b"hello"), rsv=RSV1 | 2)), fails(PROTOCOL_ERROR),
              "6: permessage-deflate uses RSV1 only; RSV2 stays reserved (RFC 6455 5.2: 1002)"),
        _case("pmd-rsv3-binary", VIOLATIONS, "6", "a compressed binary with RSV1 and RSV3",
              script(frame(BINARY, compress(b"hello"), rsv=RSV1 | 1)), fails(PROTOCOL_ERROR),
              "6: permessage-deflate uses RSV1 only; RSV3 stays reserved (RFC 6455 5.2: 1002)"),
        _case("pmd-not-deflate", VIOLATIONS, "7.2.2", "a text with RSV1 whose payload is not DEFLATE data",
              script(frame(TEXT, b"\xff\xff\xff\xff not deflate", rsv=RSV1)), fails(INVALID_DATA),
              "7.2.2: data that does not inflate fails the connection (1007, invalid data; RFC 6455 7.4.1)"),
        _case("pmd-invalid-utf8-inflated", VIOLATIONS, "7.2.2", "a compressed text that inflates to invalid UTF-8",
              script(frame(TEXT, compress(INVALID_UTF8), rsv=RSV1)), fails(INVALID_DATA),
              "7.2.2 and RFC 6455 8.1: the inflated text must be UTF-8; else 1007"),
    ]


@cache
def bomb_payload() -> bytes:
    """1 GiB of zeros as one compressed message (about 1 MiB)."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1 << 20)
    parts = [z.compress(chunk) for _ in range(BOMB_BYTES >> 20)]
    out = b"".join(parts) + z.flush(zlib.Z_SYNC_FLUSH)
    return out[:-4]


def limits() -> list[Case]:
    return [_case("pmd-bomb", LIMITS, "8", "a compressed binary of about 1 MiB that inflates to 1 GiB of zeros",
                  lambda: (frame(BINARY, bomb_payload(), rsv=RSV1), closing()),
                  fails(TOO_BIG), "8: an implementation should limit the inflated size (a decompression "
                  "bomb); past its limit it fails the connection with 1009 (message too big, RFC 6455 7.4.1), "
                  "within 30 s", react_s=HEAVY_REACT_S, heavy=True)]


CASES: tuple[Case, ...] = (*negotiation(), *messages(), *violations(), *limits())
BY_ID: dict[str, Case] = {c.id: c for c in CASES}
