"""What both gates answer: a verdict per checked figure, and the exit code of the whole.

Exit codes: 0 nothing regressed (improvements are reported, worth ``--update``); 1 a
confirmed regression; 2 the gate could not run (one line saying why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EXIT_PASS = 0
EXIT_REGRESSION = 1
EXIT_CANNOT_RUN = 2


@dataclass(frozen=True)
class Finding:
    gate: str  # "deterministic" or "wall"
    cell: str
    metric: str
    baseline: float
    value: float
    verdict: str  # "regression", "improvement", "same"
    detail: str = ""  # p value, re-measure, ...

    @property
    def change(self) -> float:
        return (self.value - self.baseline) / self.baseline if self.baseline else 0.0

    def line(self) -> str:
        extra = f"; {self.detail}" if self.detail else ""
        return (f"{self.verdict.upper() if self.verdict != 'same' else 'same'}: {self.gate} {self.cell} "
                f"{self.metric}: baseline {_num(self.baseline)} -> {_num(self.value)} ({self.change:+.2%}){extra}")

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "cell": self.cell, "metric": self.metric, "baseline": self.baseline,
                "value": self.value, "change": round(self.change, 6), "verdict": self.verdict,
                "detail": self.detail}


def _num(x: float) -> str:
    return f"{x:,.1f}" if abs(x) >= 100 else f"{x:.4f}"


@dataclass
class Outcome:
    """One gate's answer: its findings, or why it could not run."""

    gate: str
    findings: list[Finding]
    cannot_run: str | None = None

    @property
    def exit_code(self) -> int:
        if any(f.verdict == "regression" for f in self.findings):
            return EXIT_REGRESSION
        return EXIT_CANNOT_RUN if self.cannot_run else EXIT_PASS

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "exit_code": self.exit_code, "cannot_run": self.cannot_run,
                "findings": [f.to_json() for f in self.findings]}


def combined_exit(outcomes: list[Outcome]) -> int:
    codes = {o.exit_code for o in outcomes}
    if EXIT_REGRESSION in codes:
        return EXIT_REGRESSION
    return EXIT_CANNOT_RUN if EXIT_CANNOT_RUN in codes else EXIT_PASS


def render(outcomes: list[Outcome]) -> list[str]:
    """The report: regressions first, then improvements, then one summary line per gate."""
    lines = []
    for o in outcomes:
        for f in sorted(o.findings, key=lambda f: ({"regression": 0, "improvement": 1}.get(f.verdict, 2),
                                                    -abs(f.change))):
            if f.verdict != "same":
                lines.append(f.line() + (" (worth `wsbench gate --update`)" if f.verdict == "improvement" else ""))
    for o in outcomes:
        n = len(o.findings)
        reg = sum(f.verdict == "regression" for f in o.findings)
        imp = sum(f.verdict == "improvement" for f in o.findings)
        if o.cannot_run:
            lines.append(f"{o.gate} gate: could not run: {o.cannot_run}")
        else:
            lines.append(f"{o.gate} gate: {reg} regressed, {imp} improved, {n - reg - imp} unchanged "
                         f"of {n} checked")
    return lines
