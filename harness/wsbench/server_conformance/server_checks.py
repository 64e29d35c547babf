"""What each server checks, from its verdicts alone: per check the RFC asks of a server
(UTF-8, masking, RSV bits, opcodes, fragmentation, control-frame lengths, close codes),
whether it refused every invalid input of the cases that test it (S or n: the connection
failed, with the right code or by dropping TCP) or let some through (F). The rules and
the one function for servers and clients are ``rfc_checks``; this is the server side."""

from __future__ import annotations

from ..model import CaseRecord, CheckResult, ServerVerdict
from ..rfc_checks import SERVER_RULES, checks

CHECKS: tuple[tuple[str, str], ...] = tuple((r.name, r.pattern) for r in SERVER_RULES)  # a check, its cases' ids


def server_checks(cases: list[CaseRecord], verdicts: dict[str, ServerVerdict]) -> list[CheckResult]:
    """Per check: how many of its cases (those expecting a failed connection) were played
    against this server, and which it failed."""
    return checks(SERVER_RULES, cases, verdicts)
