"""The ``conformance`` section (``wsbench conformance``, schema 3): the cases and, per
client and case, a ``Verdict``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CaseRecord:
    """A conformance case as the run records it (conformance/cases.py has the case)."""

    id: str
    section: str  # of RFC 6455
    group: str
    title: str
    expect: str  # fail, deliver or reject; the TLS-failure set: refuse or fault
    strict: str  # what a strict client does
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "section": self.section, "group": self.group, "title": self.title,
                "expect": self.expect, "strict": self.strict, "why": self.why}

    @staticmethod
    def from_json(d: dict[str, Any]) -> CaseRecord:
        return CaseRecord(d["id"], d.get("section", ""), d.get("group", ""), d.get("title", ""),
                          d.get("expect", ""), d.get("strict", ""), d.get("why", ""))


# a verdict of either room as the tables print it (Autobahn's letters)
VERDICT_MARKS = {"strict": "S", "non-strict": "n", "fail": "F", "informational": "I", "n/a": "n/a"}


@dataclass(frozen=True)
class Verdict:
    verdict: str  # strict, non-strict or fail; n/a: the client cannot run the case (over TLS)
    detail: str  # one line (n/a: why)

    def to_json(self) -> dict[str, str]:
        return {"verdict": self.verdict, "detail": self.detail}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Verdict:
        return Verdict(d["verdict"], d.get("detail", ""))


@dataclass
class Conformance:
    cases: list[CaseRecord]
    verdicts: dict[str, dict[str, Verdict]]  # per client, per case id

    def to_json(self) -> dict[str, Any]:
        return {"cases": [c.to_json() for c in self.cases],
                "verdicts": {client: {cid: v.to_json() for cid, v in by_case.items()}
                             for client, by_case in self.verdicts.items()}}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Conformance:
        return Conformance([CaseRecord.from_json(c) for c in d.get("cases", [])],
                           {client: {cid: Verdict.from_json(v) for cid, v in by_case.items()}
                            for client, by_case in d.get("verdicts", {}).items()})
