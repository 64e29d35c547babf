"""What a program checks of RFC 6455, from its conformance verdicts alone: one function
(``checks``) for servers and clients, each side with its own rules (the checks the RFC
asks of it, and the cases, by id, whose invalid input is about each). A check holds when
the program refused every invalid input of its cases that were judged (S or n: the
connection failed, with the right code or by dropping TCP); a case judged F was let
through (echoed, delivered, ignored, or answered with a wrong code). The answer a ranked
table needs to say that a runtime is fast because it checks less (issue 31).

Layering: above the model only (``server_conformance.server_checks``, the run's summaries
and the report read it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol

from .model import CaseRecord, CheckResult

UTF8, MASKING = "utf8", "masking"  # the checks a ranked table marks


@dataclass(frozen=True)
class Rule:
    key: str
    name: str
    pattern: str  # the ids of the cases about it (of those expecting a failed connection)


# per check: its key, its name, the ids of its cases, and the clients' ids where they differ ("": the same;
# both rooms name their cases by Autobahn's sections, from the shapes they share: conformance/). Only
# masking differs: a server must refuse an unmasked frame, a client a masked one (5.1)
CHECKS: tuple[tuple[str, str, str, str], ...] = (
    (UTF8, "UTF-8 (8.1)", r"^6-(invalid|fail-fast|split-invalid|truncated)|^7-close-reason-invalid", ""),
    (MASKING, "masking (5.1)", r"^1-unmasked-", r"^1-masked-"),
    ("rsv", "RSV bits (5.2)", r"^3-rsv", ""),
    ("opcodes", "reserved opcodes (5.2)", r"^4-opcode-", ""),
    ("fragmentation", "fragmentation (5.4, 5.5)", r"^5-", ""),
    ("length-top-bit", "the 64-bit length's top bit (5.2)", r"^1-length-top-bit$", ""),
    ("control-length", "control frames ≤ 125 bytes (5.5)", r"^2-ping-126$|^7-close-reason-124$", ""),
    ("close", "close codes and bodies (7.4)", r"^7-close-code-|^7-close-1-byte$", ""),
)
SERVER_RULES: tuple[Rule, ...] = tuple(Rule(key, name, server) for key, name, server, _ in CHECKS)
CLIENT_RULES: tuple[Rule, ...] = tuple(Rule(key, name, client or server) for key, name, server, client in CHECKS)
RULES = {"server": SERVER_RULES, "client": CLIENT_RULES}


class Judged(Protocol):
    """A verdict of either room (model.Verdict, model.ServerVerdict)."""

    @property
    def verdict(self) -> str: ...


def cases_of(rule: Rule, cases: Iterable[CaseRecord]) -> list[CaseRecord]:
    """The cases of invalid input about ``rule``'s check."""
    return [c for c in cases if c.expect == "fail" and re.search(rule.pattern, c.id)]


def checks(rules: tuple[Rule, ...], cases: list[CaseRecord], verdicts: Mapping[str, Judged]) -> list[CheckResult]:
    """Per rule: how many of its cases were judged for this program (a verdict other than
    n/a), and which it failed."""
    out = []
    for rule in rules:
        judged = [c for c in cases_of(rule, cases) if c.id in verdicts and verdicts[c.id].verdict != "n/a"]
        out.append(CheckResult(rule.key, rule.name, len(judged),
                               [c.id for c in judged if verdicts[c.id].verdict == "fail"]))
    return out
