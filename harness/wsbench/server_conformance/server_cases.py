"""The server cases, as data (``CASES``): Autobahn|Testsuite's sections 1-7, 9 and 10,
each case with its RFC 6455 section, from the case shapes both directions share
(conformance/framing_cases.py and payload_cases.py, written from RFC 6455 and Autobahn's
public case descriptions, facts only) with the tester playing a client (``AS_CLIENT``);
what a case is and what each expectation asks: expectations.py. Here: the table, the
quick subset (``QUICK``, every section represented), choosing cases, and the cases by
section."""

from __future__ import annotations

from ..conformance.framing_cases import (RESERVED_OPCODES, RSV_FRAMES, fragmentation, framing, opcodes, pings,
                                         reserved_bits)
from ..conformance.payload_cases import (IANA_CODES, INVALID_CODES, UNDEFINED_CODES, VALID_CODES, auto_fragmentation,
                                         closing, limits, utf8_cases)
from ..conformance.script import Direction, ascii_text, chosen_ids, gathered, pattern
from .expectations import GROUPS, LIMIT_CODES, Expect, Msg, ServerCase, echo, fails, info

__all__ = ["AS_CLIENT", "BY_ID", "CASES", "Expect", "GROUPS", "IANA_CODES", "INVALID_CODES", "LIMIT_CODES", "Msg",
           "QUICK", "RESERVED_OPCODES", "RSV_FRAMES", "ServerCase", "UNDEFINED_CODES", "VALID_CODES", "ascii_text",
           "by_group", "pattern", "select"]

# the tester plays a client: its frames masked; valid input is echoed
AS_CLIENT = Direction(masked=True, case=ServerCase, echo=echo, fails=fails, info=info, receiver="server",
                      handled="echoed")
CASES: tuple[ServerCase, ...] = gathered(*(table(AS_CLIENT) for table in (
    framing, pings, reserved_bits, opcodes, fragmentation, utf8_cases, closing, limits, auto_fragmentation)))
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
    """The cases named (ids or shell patterns: ``6-invalid-*``, ``7-close-code-*``), and the
    quick subset with ``quick``; all when neither. Raises KeyError with a name that matches
    no case."""
    wanted = chosen_ids(list(BY_ID), QUICK, ids, quick)
    return [c for c in CASES if c.id in wanted]


def by_group(chosen: list[ServerCase] | tuple[ServerCase, ...] = CASES) -> dict[str, list[ServerCase]]:
    """The cases by group, in GROUPS' order."""
    return {g: [c for c in chosen if c.group == g] for g in GROUPS if any(c.group == g for c in chosen)}
