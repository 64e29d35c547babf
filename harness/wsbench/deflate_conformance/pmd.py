"""permessage-deflate (RFC 7692) on the wire, by hand: the Sec-WebSocket-Extensions header
parsed (RFC 6455 9.1, RFC 7692 5), an answer checked against the offer it answers (RFC
7692 7.1), what the two sides agreed (``Agreement``), and messages compressed (7.2.1: the
flush's 0x00 0x00 0xff 0xff tail removed) and inflated (7.2.2: the tail appended; bounded).
zlib's raw DEFLATE does the work; a window of ``bits`` refuses a distance farther back
than 2^bits, so inflating with the agreed window also checks the sender kept to it."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

NAME = "permessage-deflate"
TAIL = b"\x00\x00\xff\xff"  # 7.2.1: removed by the sender, 7.2.2: appended by the receiver
RSV1 = 4  # the RSV bits as a number (frames.server_frame's rsv): RSV1 is the highest
PARAMS = ("server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits",
          "client_max_window_bits")
FLAGS = PARAMS[:2]
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


@dataclass(frozen=True)
class Extension:
    """One element of a Sec-WebSocket-Extensions list: its name and parameters in order
    (a parameter without a value: None)."""

    name: str
    params: tuple[tuple[str, str | None], ...] = ()

    def get(self, name: str) -> str | None:
        return next((v for k, v in self.params if k == name), None)

    def has(self, name: str) -> bool:
        return any(k == name for k, _ in self.params)


def parse(header: str | None) -> list[Extension] | None:
    """The extensions of a header value (None: no header), or None if it is not the
    RFC 6455 9.1 grammar (a quoted value is unquoted, 7692 7.1's 'quoted-string')."""
    if header is None or not header.strip():
        return []
    out = []
    for element in header.split(","):
        parts = [p.strip() for p in element.split(";")]
        if not _TOKEN.match(parts[0]):
            return None
        params: list[tuple[str, str | None]] = []
        for p in parts[1:]:
            name, sep, value = (x.strip() for x in p.partition("="))
            if not _TOKEN.match(name):
                return None
            if sep and len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            params.append((name, value if sep else None))
        out.append(Extension(parts[0], tuple(params)))
    return out


def _bits(value: str | None) -> int | None:
    """A window-bits value, 8 to 15 written as digits (7.1.2), else None."""
    return int(value) if value is not None and re.fullmatch(r"[1-9][0-9]?", value) and 8 <= int(value) <= 15 \
        else None


def offer_problem(offer: Extension) -> str | None:
    """Why an offer is not a valid permessage-deflate offer (7.1: a server must decline it)."""
    seen: set[str] = set()
    for k, v in offer.params:
        if k not in PARAMS:
            return f"unknown parameter '{k}' (7.1)"
        if k in seen:
            return f"'{k}' twice (7.1)"
        seen.add(k)
        if k in FLAGS and v is not None:
            return f"'{k}' with a value (7.1.1)"
        if k == "server_max_window_bits" and _bits(v) is None:
            return f"server_max_window_bits{'=' + v if v is not None else ' without a value'} (7.1.2.1: 8 to 15)"
        if k == "client_max_window_bits" and v is not None and _bits(v) is None:
            return f"client_max_window_bits={v} (7.1.2.2: none or 8 to 15)"
    return None


def answer_problem(offer: Extension | None, answer: list[Extension]) -> str | None:
    """Why ``answer`` (a server's Sec-WebSocket-Extensions, parsed) is not a valid answer
    to ``offer`` (None: nothing was offered), RFC 7692 7.1; None if it is valid (an empty
    answer, declining, always is)."""
    if not answer:
        return None
    if len(answer) > 1:
        return f"{len(answer)} extensions in the answer (RFC 6455 9.1: one per offer accepted)"
    got = answer[0]
    if offer is None or got.name != offer.name:
        return f"'{got.name}' was not offered (RFC 6455 9.1)"
    problem = offer_problem(got)
    if problem:
        return problem.replace("(7.1", "in the answer (7.1")
    if got.has("client_max_window_bits"):
        if not offer.has("client_max_window_bits"):
            return "client_max_window_bits answered but not offered (7.1.2.2)"
        value = got.get("client_max_window_bits")
        if value is None:
            return "client_max_window_bits without a value in the answer (7.1.2.2)"
        offered = offer.get("client_max_window_bits")
        if offered is not None and int(value) > int(offered):
            return f"client_max_window_bits={value} above the offered {offered} (7.1.2.2)"
    if offer.has("server_no_context_takeover") and not got.has("server_no_context_takeover"):
        return "server_no_context_takeover offered but not in the answer (7.1.1.1: MUST include it)"
    offered_bits = offer.get("server_max_window_bits")
    if offered_bits is not None:
        value = got.get("server_max_window_bits")
        if value is None:
            return f"server_max_window_bits={offered_bits} offered but not in the answer (7.1.2.1)"
        if int(value) > int(offered_bits):
            return f"server_max_window_bits={value} above the offered {offered_bits} (7.1.2.1)"
    return None


@dataclass(frozen=True)
class Agreement:
    """What an accepted permessage-deflate answer binds each side to (7.1)."""

    server_no_context_takeover: bool = False
    client_no_context_takeover: bool = False
    server_max_window_bits: int = 15
    client_max_window_bits: int = 15

    @staticmethod
    def of(answer: Extension) -> "Agreement":
        def bits(name: str) -> int:
            return _bits(answer.get(name)) or 15
        return Agreement(answer.has("server_no_context_takeover"), answer.has("client_no_context_takeover"),
                         bits("server_max_window_bits"), bits("client_max_window_bits"))


def agreement(header: str | None) -> Agreement | None:
    """The agreement of a server's answer, None if it declined (or it is no valid header)."""
    parsed = parse(header)
    if not parsed or parsed[0].name != NAME:
        return None
    return Agreement.of(parsed[0])


class Compressor:
    """The messages one side sends, in order: one DEFLATE stream with context takeover, a
    fresh one per message without (7.1.1)."""

    def __init__(self, bits: int = 15, takeover: bool = True, level: int = 6) -> None:
        self.bits, self.takeover, self.level = bits, takeover, level
        self._z = self._new()

    def _new(self) -> "zlib._Compress":
        return zlib.compressobj(self.level, zlib.DEFLATED, -self.bits)

    def message(self, data: bytes) -> bytes:
        """One message's payload (7.2.1); the empty message is one 0x00 byte (7.2.3.6)."""
        if not self.takeover:
            self._z = self._new()
        out = self._z.compress(data) + self._z.flush(zlib.Z_SYNC_FLUSH)
        out = out[:-4] if out.endswith(TAIL) else out
        return out or b"\x00"


def compress(data: bytes, bits: int = 15) -> bytes:
    """``data`` as one message of a fresh stream."""
    return Compressor(bits, takeover=False).message(data)


def with_bfinal(data: bytes, bits: int = 15) -> bytes:
    """``data`` as one message ending in a block with BFINAL set (7.2.3.4): the whole
    stream, finished, no tail removed."""
    z = zlib.compressobj(6, zlib.DEFLATED, -bits)
    return z.compress(data) + z.flush(zlib.Z_FINISH)


class TooBig(Exception):
    """A message inflates past the limit."""


class Inflater:
    """The messages one side receives: one stream with context takeover, a fresh one per
    message without; ``bits``: the window the sender agreed to (a farther distance fails)."""

    def __init__(self, bits: int = 15, takeover: bool = True) -> None:
        self.bits, self.takeover = bits, takeover
        self._z = zlib.decompressobj(-bits)

    def message(self, payload: bytes, limit: int = 64 << 20) -> bytes:
        """The message inflated; raises zlib.error for data that is not DEFLATE (or reaches
        past the window), TooBig past ``limit`` bytes."""
        if not self.takeover:
            self._z = zlib.decompressobj(-self.bits)
        out = self._z.decompress(payload + TAIL, limit)
        if self._z.unconsumed_tail:
            raise TooBig(f"more than {limit} bytes")
        if self._z.eof:  # a BFINAL block ended the stream (7.2.3.4): the next message starts a new one
            self._z = zlib.decompressobj(-self.bits)
        return out
