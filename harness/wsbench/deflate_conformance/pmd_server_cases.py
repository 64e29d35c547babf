"""The servers' permessage-deflate cases, as data: ``server_conformance``'s ``ServerCase``s
that offer permessage-deflate (``offer``, the upgrade's Sec-WebSocket-Extensions) and
write their frames once the server has answered (``steps_for``: compressed as the answer
allows — the client's window and context takeover —, or plain where the server declined),
masked as a client's. Judged by pmd_server_judge.py with server_conformance's expectations
(``echo``, ``fail``) after the answer is checked against the offer (``valid_offer``: a
valid offer may be accepted or declined, the answer valid for it; an invalid one must be
declined, RFC 7692 5 and 7.1). Each case's ``section`` is its RFC 7692 section."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..conformance.frames import BINARY, CLOSE, CONT, PING, TEXT, close_payload
from ..conformance.script import (HEAVY_REACT_S, INVALID_DATA, PROTOCOL_ERROR, REACT_S, TOO_BIG, Message, Step, ascii_text,
                                  binary, mib, text)
from ..server_conformance.expectations import Expect, ServerCase, echo, fails
from ..server_conformance.steps import Close, frame
from .pmd_client_cases import GROUPS, INVALID_UTF8, LIMITS, MESSAGES, NEGOTIATION, VIOLATIONS, bomb_payload, repetitive
from .pmd import RSV1, Agreement, Compressor, agreement, compress, parse, with_bfinal

DECLINE = "pmd-decline"
SERVER_GROUPS = {NEGOTIATION: "offers to accept", DECLINE: "offers to decline", MESSAGES: GROUPS[MESSAGES],
                 VIOLATIONS: GROUPS[VIOLATIONS], LIMITS: GROUPS[LIMITS]}
OFFER = "permessage-deflate; client_max_window_bits"  # what ws, undici and Bun offer
HEAVY_BYTES = 512 << 10  # echoes of this much or more are played alone, after the others
ECHO_REACT_S = 10.0  # the echo cases' reaction time: a single-threaded server under 4 connections needs more than 2 s

# what a script is made of once the server answered: the agreement (None: declined)
Builder = Callable[[Agreement | None], tuple[Step, ...]]


@dataclass(frozen=True)
class DeflateServerCase(ServerCase):
    script: Builder = field(default=lambda agreed: (), repr=False, compare=False)
    valid_offer: bool = True  # False: a server must decline the offer

    def steps_for(self, answer: str | None) -> tuple[Step, ...]:
        return self.script(agreement(answer))

    def to_json(self) -> dict[str, object]:
        title = self.title if "offer '" in self.title else f"{self.title}; offer '{self.offer}'"
        return {"id": self.id, "section": self.section, "group": f"{self.group} {SERVER_GROUPS[self.group]}",
                "title": title, "expect": self.expect.kind, "strict": self.expect.describe(), "why": self.why}


def close() -> Close:
    return Close(frame(CLOSE, close_payload(1000)))


def compressor(offer: str, agreed: Agreement, bits: int = 15) -> Compressor:
    """How the client compresses under ``agreed``: within the window the answer allows (and
    its own ``bits``), with context takeover unless the answer or the offer gave it up."""
    offered = (parse(offer) or [])[0]
    takeover = not (agreed.client_no_context_takeover or offered.has("client_no_context_takeover"))
    return Compressor(min(bits, agreed.client_max_window_bits), takeover)


def messages_script(offer: str, msgs: list[Message], bits: int = 15, pieces: int = 1) -> Builder:
    """Each message compressed (plain where the server declined), in ``pieces`` frames,
    RSV1 on the first; then our close."""
    def build(agreed: Agreement | None) -> tuple[Step, ...]:
        c = compressor(offer, agreed, bits) if agreed else None
        out = []
        for m in msgs:
            payload, rsv = (c.message(m.data), RSV1) if c else (m.data, 0)
            out.append(_frames(TEXT if m.kind == "text" else BINARY, payload, pieces, rsv))
        return (b"".join(out), close())
    return build


def _frames(opcode: int, payload: bytes, pieces: int, rsv: int, rsv_on_all: bool = False) -> bytes:
    size = max(1, -(-len(payload) // pieces))
    parts = [payload[i:i + size] for i in range(0, len(payload), size)] or [b""]
    return b"".join(frame(opcode if i == 0 else CONT, p, fin=i == len(parts) - 1,
                          rsv=rsv if i == 0 or rsv_on_all else 0) for i, p in enumerate(parts))


def _case(id: str, group: str, section: str, title: str, offer: str, script: Builder, expect: Expect, why: str,
          valid_offer: bool = True, heavy: bool = False, react_s: float | None = None) -> DeflateServerCase:
    if react_s is None:
        react_s = ECHO_REACT_S if expect.kind == "echo" else REACT_S
    return DeflateServerCase(id, group, section, title, lambda: (), expect, why, react_s=react_s, heavy=heavy,
                             offer=offer, script=script, valid_offer=valid_offer)


def negotiation() -> list[DeflateServerCase]:
    hello = [text(ascii_text(2000)), text(ascii_text(2000)[::-1])]
    offers = [
        ("plain", "permessage-deflate", "7", "the extension without parameters"),
        ("server-no-context-takeover", "permessage-deflate; server_no_context_takeover", "7.1.1.1",
         "an answer accepting it MUST include server_no_context_takeover"),
        ("client-no-context-takeover", "permessage-deflate; client_no_context_takeover", "7.1.1.2",
         "the client will not take over context; the server MAY answer with it"),
        ("server-max-window-bits-10", "permessage-deflate; server_max_window_bits=10", "7.1.2.1",
         "an answer accepting it includes server_max_window_bits of 10 or less"),
        ("client-max-window-bits", "permessage-deflate; client_max_window_bits", "7.1.2.2",
         "the server MAY answer client_max_window_bits=8..15; the client keeps to it"),
        ("client-max-window-bits-10", "permessage-deflate; client_max_window_bits=10", "7.1.2.2",
         "the server MAY answer client_max_window_bits of 10 or less"),
        ("all-parameters", "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
         "server_max_window_bits=12; client_max_window_bits=12", "7.1", "all four parameters at once"),
    ]
    return [_case(f"pmd-offer-{name}", NEGOTIATION, section, f"offer '{offer}', then 2 compressed texts of 2000 B",
                  offer, messages_script(offer, hello), echo(*hello),
                  f"{section}: {what}; the answer must be a valid RFC 7692 answer to the offer (or none: the server "
                  "may decline), the echoes compressed as it says")
            for name, offer, section, what in offers]


def declines() -> list[DeflateServerCase]:
    msg = [text("plain")]
    offers = [
        ("unknown-parameter", "permessage-deflate; x_unknown_parameter", "7.1", "a parameter the extension "
         "does not define"),
        ("parameter-twice", "permessage-deflate; client_no_context_takeover; client_no_context_takeover", "7.1",
         "the same parameter twice"),
        ("server-max-window-bits-16", "permessage-deflate; server_max_window_bits=16", "7.1.2.1",
         "server_max_window_bits above 15"),
        ("server-max-window-bits-7", "permessage-deflate; server_max_window_bits=7", "7.1.2.1",
         "server_max_window_bits below 8"),
        ("server-max-window-bits-no-value", "permessage-deflate; server_max_window_bits", "7.1.2.1",
         "server_max_window_bits without a value"),
        ("server-max-window-bits-non-digits", "permessage-deflate; server_max_window_bits=1x", "7.1.2.1",
         "server_max_window_bits not a number"),
        ("client-max-window-bits-16", "permessage-deflate; client_max_window_bits=16", "7.1.2.2",
         "client_max_window_bits above 15"),
        ("flag-with-value", "permessage-deflate; server_no_context_takeover=1", "7.1.1.1",
         "server_no_context_takeover with a value"),
    ]
    return [_case(f"pmd-decline-{name}", DECLINE, section, f"offer '{offer}', then an uncompressed text", offer,
                  messages_script(offer, msg), echo(*msg),
                  f"{section}: an offer with {what} is invalid: the server MUST decline it (7.1: answer without "
                  "permessage-deflate); refusing the upgrade is non-strict", valid_offer=False)
            for name, offer, section, what in offers]


def _msg(kind: str, data: bytes) -> Message:
    return text(data) if kind == "text" else binary(data)


def messages() -> list[DeflateServerCase]:
    out = []
    for kind in ("text", "binary"):
        for n in (16, 1024, 64 << 10, 128 << 10):
            data = ascii_text(n) if kind == "text" else repetitive(n, n)
            for takeover in (True, False):
                offer = OFFER if takeover else f"{OFFER}; server_no_context_takeover; client_no_context_takeover"
                msgs = [_msg(kind, data), _msg(kind, data[::-1]), _msg(kind, data)]
                out.append(_case(
                    f"pmd-echo-{kind}-{mib(n).replace(' ', '').lower()}-x3-{'takeover' if takeover else 'no-takeover'}",
                    MESSAGES, "7.2.2" if takeover else "7.1.1",
                    f"3 compressed {kind.replace('binary', 'binarie')}s of {mib(n)}, "
                    + ("context takeover" if takeover else "no context takeover either way"), offer,
                    messages_script(offer, msgs), echo(*msgs),
                    "7.2.2: each message inflated (with context takeover: continuing the stream) and echoed"
                    if takeover else "7.1.1: without context takeover each message is a stream of its own"))
    data = repetitive(128 << 10, 8)
    eight = [binary(data)] * 8
    out.append(_case("pmd-echo-binary-128kib-x8", MESSAGES, "7.2.2", "8 compressed binaries of 128 KiB (1 MiB)",
                     OFFER, messages_script(OFFER, eight), echo(*eight),
                     "7.2.2: many large compressed messages in a row, echoed whole", heavy=True,
                     react_s=HEAVY_REACT_S))
    for bits in range(9, 16):
        offer = f"permessage-deflate; server_max_window_bits={bits}; client_max_window_bits={bits}"
        data = repetitive(32 << 10, bits)
        out.append(_case(f"pmd-window-bits-{bits}", MESSAGES, "7.1.2", f"both windows {bits} bits, 2 compressed "
                         "binaries of 32 KiB", offer, messages_script(offer, [binary(data)] * 2, bits),
                         echo(binary(data), binary(data)),
                         f"7.1.2: the client compresses within 2^{bits} bytes, the server's echo too (checked by "
                         "inflating with that window); a server may decline the offer"))
    big = ascii_text(64 << 10)
    out += [
        _case("pmd-fragmented-text-64kib-4", MESSAGES, "7.2.3.1", "a compressed 64 KiB text in 4 frames, RSV1 on "
              "the first only", OFFER, messages_script(OFFER, [text(big)], pieces=4), echo(text(big)),
              "7.2.3.1 / 6.1: a compressed message may be fragmented; RSV1 on its first frame only"),
        _case("pmd-fragmented-binary-1kib-bytewise", MESSAGES, "7.2.3.1", "a compressed 1 KiB binary, one "
              "compressed byte per frame", OFFER, messages_script(OFFER, [binary(repetitive(1024, 7))],
                                                                  pieces=10 ** 6),
              echo(binary(repetitive(1024, 7))), "7.2.3.1: the compressed bytes may be cut anywhere"),
        _case("pmd-uncompressed-message", MESSAGES, "6", "an uncompressed text (no RSV1) on a deflate connection",
              OFFER, lambda agreed: (frame(TEXT, b"plain"), close()), echo(text("plain")),
              "6: a message without RSV1 is not compressed, even with permessage-deflate agreed"),
        _case("pmd-bfinal-block", MESSAGES, "7.2.3.4", "a compressed text ending in a BFINAL block", OFFER,
              lambda agreed: (frame(TEXT, with_bfinal(b"final block " * 20) if agreed else b"final block " * 20,
                                    rsv=RSV1 if agreed else 0), close()),
              echo(text(b"final block " * 20)), "7.2.3.4: a message's data may end in a BFINAL block"),
        _case("pmd-empty-message", MESSAGES, "7.2.3.6", "an empty compressed text (0x00), then 'after'", OFFER,
              messages_script(OFFER, [text(""), text("after")]), echo(text(""), text("after")),
              "7.2.3.6: an empty message compresses to the single byte 0x00"),
    ]
    return out


def _bad(opcode: int, payload: bytes, rsv: int = RSV1, then: bytes = b"") -> Builder:
    return lambda agreed: (frame(opcode, payload, rsv=rsv) + then, close())


def violations() -> list[DeflateServerCase]:
    good = compress(ascii_text(4096))
    return [
        _case("pmd-rsv1-continuation", VIOLATIONS, "6", "a compressed text in 2 frames, RSV1 on both", OFFER,
              lambda agreed: (_frames(TEXT, good, 2, RSV1, rsv_on_all=True), close()), fails(PROTOCOL_ERROR),
              "6: RSV1 on a continuation frame is reserved (RFC 6455 5.2: fail the connection, 1002)"),
        _case("pmd-rsv1-ping", VIOLATIONS, "6", "a ping with RSV1", OFFER, _bad(PING, b"ping"),
              fails(PROTOCOL_ERROR), "6: the extension does not apply to control frames (RFC 6455 5.2: 1002)"),
        _case("pmd-rsv1-close", VIOLATIONS, "6", "a close frame with RSV1", OFFER,
              _bad(CLOSE, close_payload(1000)), fails(PROTOCOL_ERROR),
              "6: RSV1 on a close frame is reserved (RFC 6455 5.2: 1002)"),
        _case("pmd-rsv2-text", VIOLATIONS, "6", "a compressed text with RSV1 and RSV2", OFFER,
              _bad(TEXT, compress(b"hello"), RSV1 | 2), fails(PROTOCOL_ERROR),
              "6: permessage-deflate uses RSV1 only; RSV2 stays reserved (RFC 6455 5.2: 1002)"),
        _case("pmd-not-deflate", VIOLATIONS, "7.2.2", "a text with RSV1 whose payload is not DEFLATE data", OFFER,
              _bad(TEXT, b"\xff\xff\xff\xff not deflate"), fails(INVALID_DATA, PROTOCOL_ERROR),
              "7.2.2: data that does not inflate fails the connection (1007 invalid data, or 1002)"),
        _case("pmd-invalid-utf8-inflated", VIOLATIONS, "7.2.2", "a compressed text that inflates to invalid UTF-8",
              OFFER, lambda agreed: (frame(TEXT, compress(INVALID_UTF8) if agreed else INVALID_UTF8,
                                           rsv=RSV1 if agreed else 0), close()), fails(INVALID_DATA),
              "7.2.2 and RFC 6455 8.1: the inflated text must be UTF-8; else 1007"),
    ]


def limits() -> list[DeflateServerCase]:
    return [_case("pmd-bomb", LIMITS, "8", "a compressed binary of about 1 MiB that inflates to 1 GiB of zeros",
                  OFFER, lambda agreed: (frame(BINARY, bomb_payload(), rsv=RSV1), close()), fails(TOO_BIG),
                  "8: an implementation should limit the inflated size (a decompression bomb); past its limit "
                  "it fails the connection with 1009 (message too big), within 30 s", heavy=True,
                  react_s=HEAVY_REACT_S)]


CASES: tuple[DeflateServerCase, ...] = (*negotiation(), *declines(), *messages(), *violations(), *limits())
BY_ID: dict[str, DeflateServerCase] = {c.id: c for c in CASES}
