"""The ``server_conformance`` section (``wsbench conformance --servers``, schema 10): the
server cases and, per server and case, a ``ServerVerdict``: the verdict, the close
behaviour, and what the server sent back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .conformance import CaseRecord


@dataclass(frozen=True)
class ServerVerdict:
    verdict: str  # strict, non-strict, fail, informational
    detail: str  # one line
    close: str  # the close behaviour: strict, non-strict or fail
    close_detail: str  # one line
    observed: dict[str, Any] | None = field(default=None, compare=False)  # frames, TCP end (replies.py)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "detail": self.detail, "close": self.close,
                "close_detail": self.close_detail, "observed": self.observed}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ServerVerdict:
        return ServerVerdict(d["verdict"], d.get("detail", ""), d.get("close", ""), d.get("close_detail", ""),
                             d.get("observed"))


@dataclass
class ServerConformance:
    cases: list[CaseRecord]  # expect: echo, fail or info; group: "6 UTF-8" (Autobahn's section)
    verdicts: dict[str, dict[str, ServerVerdict]]  # per server, per case id

    def to_json(self) -> dict[str, Any]:
        return {"cases": [c.to_json() for c in self.cases],
                "verdicts": {server: {cid: v.to_json() for cid, v in by_case.items()}
                             for server, by_case in self.verdicts.items()}}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ServerConformance:
        return ServerConformance([CaseRecord.from_json(c) for c in d.get("cases", [])],
                                 {server: {cid: ServerVerdict.from_json(v) for cid, v in by_case.items()}
                                  for server, by_case in d.get("verdicts", {}).items()})
