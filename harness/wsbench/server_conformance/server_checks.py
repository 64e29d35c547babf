"""What each server checks, from its verdicts alone: per check the RFC asks of a server
(UTF-8, masking, RSV bits, opcodes, fragmentation, control-frame lengths, close codes),
whether it refused every invalid input of the cases that test it (S or n: the connection
failed, with the right code or by dropping TCP) or let some through (F). The answer a
ranked table needs to say that a runtime is fast because it checks less (issue 31)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import CaseRecord, ServerVerdict

# a check, and the cases (by id) whose invalid input it is about
CHECKS: tuple[tuple[str, str], ...] = (
    ("UTF-8 (8.1)", r"^6-(invalid|fail-fast|split-invalid|truncated)|^7-close-reason-invalid"),
    ("masking (5.1)", r"^1-unmasked-"),
    ("RSV bits (5.2)", r"^3-rsv"),
    ("reserved opcodes (5.2)", r"^4-opcode-"),
    ("fragmentation (5.4, 5.5)", r"^5-"),
    ("the 64-bit length's top bit (5.2)", r"^1-length-top-bit$"),
    ("control frames ≤ 125 bytes (5.5)", r"^2-ping-126$|^7-close-reason-124$"),
    ("close codes and bodies (7.4)", r"^7-close-code-|^7-close-1-byte$"),
)


@dataclass(frozen=True)
class Check:
    name: str
    cases: int  # the cases of invalid input that test it, played
    let_through: list[str]  # the cases the server failed (F: echoed, ignored or a wrong code; case ids)

    @property
    def holds(self) -> bool:
        return self.cases > 0 and not self.let_through


def server_checks(cases: list[CaseRecord], verdicts: dict[str, ServerVerdict]) -> list[Check]:
    """Per check: how many of its cases (those expecting a failed connection) were played
    against this server, and which it failed."""
    out = []
    for name, pattern in CHECKS:
        chosen = [c for c in cases if c.expect == "fail" and re.search(pattern, c.id) and c.id in verdicts]
        out.append(Check(name, len(chosen), [c.id for c in chosen if verdicts[c.id].verdict == "fail"]))
    return out
