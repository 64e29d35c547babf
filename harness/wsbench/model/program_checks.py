"""A program's conformance summary in a run (``wsbench run``, schema 11): per check RFC 6455
asks of it (UTF-8, masking, RSV bits, ...), how many cases of invalid input tested it and
which it let through, and where the summary came from: a ``wsbench conformance`` results
file of the same program versions, the quick subset played at verify time, or none."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FROM_FILE, QUICK, NONE = "file", "quick", "none"  # where a summary came from
SOURCES = (FROM_FILE, QUICK, NONE)


@dataclass(frozen=True)
class CheckResult:
    """One check of one program: ``cases`` of invalid input about it were judged, and it
    failed (F: echoed, delivered, ignored, or a wrong code) those in ``let_through``."""

    key: str  # utf8, masking, rsv, ... (rfc_checks.py)
    name: str  # "UTF-8 (8.1)"
    cases: int
    let_through: list[str] = field(default_factory=list)  # case ids

    @property
    def checked(self) -> bool:
        return self.cases > 0

    @property
    def holds(self) -> bool:
        return self.cases > 0 and not self.let_through

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "cases": self.cases, "let_through": list(self.let_through)}

    @staticmethod
    def from_json(d: dict[str, Any]) -> CheckResult:
        return CheckResult(str(d["key"]), str(d.get("name", d["key"])), int(d.get("cases", 0)),
                           [str(i) for i in d.get("let_through", [])])


@dataclass(frozen=True)
class ConformanceSummary:
    """What one server or client of a run checks, and where that is known from."""

    source: str  # file, quick or none (SOURCES)
    note: str  # one line: the file and its time, the subset played, or why it was not checked
    checks: list[CheckResult] = field(default_factory=list)
    file: str | None = None  # source "file": the conformance results file
    created: str | None = None  # source "file": when that conformance run began

    def check(self, key: str) -> CheckResult | None:
        """The check ``key`` if it was tested (None: not checked)."""
        return next((c for c in self.checks if c.key == key and c.checked), None)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "note": self.note, "file": self.file, "created": self.created,
                "checks": [c.to_json() for c in self.checks]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ConformanceSummary:
        source = str(d.get("source", NONE))
        if source not in SOURCES:
            raise ValueError(f"conformance source '{source}' is none of {', '.join(SOURCES)}")
        return ConformanceSummary(source, str(d.get("note", "")), [CheckResult.from_json(c) for c in d.get("checks", [])],
                                  d.get("file"), d.get("created"))
