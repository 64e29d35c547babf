"""UTF-8 sequences as data, by the categories of Markus Kuhn's UTF-8 decoder stress test
(the categories Autobahn|Testsuite's section 6 plays; written here from RFC 3629 and
RFC 6455 5.6/8.1, facts only). Each entry: an id, what it is, its bytes. ``VALID`` must
be echoed whole; every ``INVALID`` one fails the connection with 1007 (RFC 6455 8.1)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sequence:
    id: str
    what: str
    data: bytes


def _h(hexes: str) -> bytes:
    return bytes.fromhex(hexes)


KOSME = "κόσμε".encode()  # Kuhn's first sample: Greek, 2- and 3-byte characters

VALID: tuple[Sequence, ...] = (
    Sequence("kosme", "'κόσμε' (2- and 3-byte characters)", KOSME),
    Sequence("hello-mixed", "'Hello-µ@ßöäüàá-UTF-8!!'", "Hello-µ@ßöäüàá-UTF-8!!".encode()),
    Sequence("one-to-four", "1- to 4-byte characters 'a é € 😀 𝄞 z'", "a é € 😀 𝄞 z".encode()),
    Sequence("first-1", "first 1-byte sequence U+0000", _h("00")),
    Sequence("first-2", "first 2-byte sequence U+0080", _h("c280")),
    Sequence("first-3", "first 3-byte sequence U+0800", _h("e0a080")),
    Sequence("first-4", "first 4-byte sequence U+10000", _h("f0908080")),
    Sequence("last-1", "last 1-byte sequence U+007F", _h("7f")),
    Sequence("last-2", "last 2-byte sequence U+07FF", _h("dfbf")),
    Sequence("last-3", "last 3-byte sequence U+FFFF", _h("efbfbf")),
    Sequence("last-4", "last 4-byte sequence U+10FFFF", _h("f48fbfbf")),
    Sequence("before-surrogates", "U+D7FF, the last before the surrogates", _h("ed9fbf")),
    Sequence("after-surrogates", "U+E000, the first after the surrogates", _h("ee8080")),
    Sequence("replacement", "U+FFFD, the replacement character", _h("efbfbd")),
    Sequence("nonchar-fffe", "noncharacter U+FFFE (valid UTF-8)", _h("efbfbe")),
    Sequence("nonchar-fdd0", "noncharacter U+FDD0 (valid UTF-8)", _h("efb790")),
    Sequence("nonchar-1ffff", "noncharacter U+1FFFF (valid UTF-8)", _h("f09fbfbf")),
    Sequence("nonchar-10fffe", "noncharacter U+10FFFE (valid UTF-8)", _h("f48fbfbe")),
)

_MISSING_LAST = ("c0", "e080", "f08080", "f8808080", "fc80808080", "df", "efbf", "f7bfbf", "fbbfbfbf",
                 "fdbfbfbfbf")

INVALID: tuple[Sequence, ...] = (
    # beyond U+10FFFF, and the 5- and 6-byte forms RFC 3629 removed
    Sequence("above-max", "U+110000, above the last code point (F4 90 80 80)", _h("f4908080")),
    Sequence("last-4-old", "U+1FFFFF in the old 4-byte form (F7 BF BF BF)", _h("f7bfbfbf")),
    Sequence("first-5", "first 5-byte sequence (F8 88 80 80 80)", _h("f888808080")),
    Sequence("first-6", "first 6-byte sequence (FC 84 80 80 80 80)", _h("fc8480808080")),
    Sequence("last-5", "last 5-byte sequence (FB BF BF BF BF)", _h("fbbfbfbfbf")),
    Sequence("last-6", "last 6-byte sequence (FD BF BF BF BF BF)", _h("fdbfbfbfbfbf")),
    # unexpected continuation bytes
    Sequence("cont-80", "a lone continuation byte 80", _h("80")),
    Sequence("cont-bf", "a lone continuation byte BF", _h("bf")),
    Sequence("cont-2", "two continuation bytes (80 BF)", _h("80bf")),
    Sequence("cont-3", "three continuation bytes (80 BF 80)", _h("80bf80")),
    Sequence("cont-all", "all 64 continuation bytes 80-BF", bytes(range(0x80, 0xC0))),
    # lonely start characters
    Sequence("lonely-2", "the 32 2-byte starts C0-DF, each followed by a space",
             b"".join(bytes((b, 0x20)) for b in range(0xC0, 0xE0))),
    Sequence("lonely-3", "the 16 3-byte starts E0-EF, each followed by a space",
             b"".join(bytes((b, 0x20)) for b in range(0xE0, 0xF0))),
    Sequence("lonely-4", "the 8 4-byte starts F0-F7, each followed by a space",
             b"".join(bytes((b, 0x20)) for b in range(0xF0, 0xF8))),
    Sequence("lonely-5", "the 4 5-byte starts F8-FB, each followed by a space",
             b"".join(bytes((b, 0x20)) for b in range(0xF8, 0xFC))),
    Sequence("lonely-6", "the 2 6-byte starts FC-FD, each followed by a space", _h("fc20fd20")),
    # sequences with the last continuation byte missing, alone and concatenated
    *(Sequence(f"missing-last-{h}", f"sequence missing its last byte ({h.upper()})", _h(h)) for h in _MISSING_LAST),
    Sequence("missing-last-all", "the ten sequences missing their last byte, concatenated",
             b"".join(_h(h) for h in _MISSING_LAST)),
    # impossible bytes
    Sequence("byte-fe", "byte FE", _h("fe")),
    Sequence("byte-ff", "byte FF", _h("ff")),
    Sequence("bytes-fefeffff", "bytes FE FE FF FF", _h("fefeffff")),
    # overlong forms of '/', the largest overlong forms, overlong NUL
    Sequence("overlong-slash-2", "'/' overlong in 2 bytes (C0 AF)", _h("c0af")),
    Sequence("overlong-slash-3", "'/' overlong in 3 bytes (E0 80 AF)", _h("e080af")),
    Sequence("overlong-slash-4", "'/' overlong in 4 bytes (F0 80 80 AF)", _h("f08080af")),
    Sequence("overlong-slash-5", "'/' overlong in 5 bytes (F8 80 80 80 AF)", _h("f8808080af")),
    Sequence("overlong-slash-6", "'/' overlong in 6 bytes (FC 80 80 80 80 AF)", _h("fc80808080af")),
    Sequence("overlong-max-2", "largest overlong 2-byte form U+007F (C1 BF)", _h("c1bf")),
    Sequence("overlong-max-3", "largest overlong 3-byte form U+07FF (E0 9F BF)", _h("e09fbf")),
    Sequence("overlong-max-4", "largest overlong 4-byte form U+FFFF (F0 8F BF BF)", _h("f08fbfbf")),
    Sequence("overlong-nul-2", "NUL overlong in 2 bytes (C0 80)", _h("c080")),
    Sequence("overlong-nul-3", "NUL overlong in 3 bytes (E0 80 80)", _h("e08080")),
    Sequence("overlong-nul-4", "NUL overlong in 4 bytes (F0 80 80 80)", _h("f0808080")),
    # UTF-16 surrogates, single and paired
    *(Sequence(f"surrogate-{h[2:]}", f"single UTF-16 surrogate ({h.upper()})", _h(h))
      for h in ("eda080", "edadbf", "edae80", "edafbf", "edb080", "edbe80", "edbfbf")),
    *(Sequence(f"surrogate-pair-{a[2:]}-{b[2:]}", f"paired UTF-16 surrogates ({(a + b).upper()})", _h(a + b))
      for a in ("eda080", "edadbf", "edae80", "edafbf") for b in ("edb080", "edbfbf")),
    # valid text, then an invalid sequence
    Sequence("kosme-then-surrogate", "'κόσμε', a surrogate, then '-edited'", KOSME + _h("eda080") + b"-edited"),
)
