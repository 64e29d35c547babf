"""The ``gate`` section (``wsbench gate``, schema 5): the baseline's deterministic counts
(per architecture since schema 16) and wall-clock ratios (``GateBaseline``), or a report's ``Outcome``s and their ``Finding``s
(``GateReport``); and the gate's exit codes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


EXIT_PASS = 0
EXIT_REGRESSION = 1
EXIT_CANNOT_RUN = 2
FAILING = ("regression", "failed")  # the verdicts that fail a gate (exit 1)


@dataclass(frozen=True)
class Finding:
    gate: str  # "deterministic" or "wall"
    cell: str
    metric: str
    baseline: float
    value: float
    verdict: str  # "regression", "improvement", "same"; "failed": the head's program failed the cell (--base)
    detail: str = ""  # p value, re-measure, ...

    @property
    def change(self) -> float:
        return (self.value - self.baseline) / self.baseline if self.baseline else 0.0

    def line(self, against: str = "baseline") -> str:
        """One line; ``against``: what the first figure is (the baseline file's, or the base build's)."""
        if self.verdict == "failed":
            return f"FAILED: {self.gate} {self.cell}: {self.detail}"
        extra = f"; {self.detail}" if self.detail else ""
        return (f"{self.verdict.upper() if self.verdict != 'same' else 'same'}: {self.gate} {self.cell} "
                f"{self.metric}: {against} {_num(self.baseline)} -> {_num(self.value)} ({self.change:+.2%}){extra}")

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "cell": self.cell, "metric": self.metric, "baseline": self.baseline,
                "value": self.value, "change": round(self.change, 6), "verdict": self.verdict,
                "detail": self.detail}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Finding:
        return Finding(d["gate"], d["cell"], d["metric"], d["baseline"], d["value"], d["verdict"], d.get("detail", ""))


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
        if any(f.verdict in FAILING for f in self.findings):
            return EXIT_REGRESSION
        return EXIT_CANNOT_RUN if self.cannot_run else EXIT_PASS

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "exit_code": self.exit_code, "cannot_run": self.cannot_run,
                "findings": [f.to_json() for f in self.findings]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Outcome:
        return Outcome(d["gate"], [Finding.from_json(f) for f in d.get("findings") or []], d.get("cannot_run"))


@dataclass(frozen=True)
class CellCount:
    """A cell's instruction count in the baseline (per_message as stored: rounded)."""

    instructions: int
    messages: int
    per_message: float

    def to_json(self) -> dict[str, Any]:
        return {"instructions": self.instructions, "messages": self.messages, "per_message": self.per_message}

    @staticmethod
    def from_json(d: dict[str, Any]) -> CellCount:
        per_message = d["per_message"]
        if not isinstance(per_message, (int, float)):
            raise TypeError(f"per_message {per_message!r} is not a number")
        return CellCount(d.get("instructions", 0), d.get("messages", 0), per_message)


@dataclass
class DeterministicBaseline:
    machine: dict[str, Any]  # the fingerprint the counts were taken on (gate/machine.py)
    rise: float
    fall: float
    counts: dict[str, dict[str, CellCount]]  # per profile (full, quick), per cell

    def to_json(self) -> dict[str, Any]:
        return {"machine": self.machine, "rise": self.rise, "fall": self.fall,
                "counts": {p: {name: c.to_json() for name, c in cells.items()} for p, cells in self.counts.items()}}

    @staticmethod
    def from_json(d: dict[str, Any]) -> DeterministicBaseline:
        return DeterministicBaseline(dict(d.get("machine") or {}), d.get("rise", 0.0), d.get("fall", 0.0),
                                     {p: {name: CellCount.from_json(c) for name, c in (cells or {}).items()}
                                      for p, cells in (d.get("counts") or {}).items()})


@dataclass
class WallBaseline:
    spec: dict[str, Any]  # what the wall gate measures (gate/wall.py: Spec)
    thresholds: dict[str, Any]  # alpha, min_effect and the calibration they came from
    ratios: dict[str, list[float]]  # "workload/client/metric" -> one ratio per repetition

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "thresholds": self.thresholds, "ratios": self.ratios}

    @staticmethod
    def from_json(d: dict[str, Any]) -> WallBaseline:
        return WallBaseline(dict(d["spec"]), dict(d.get("thresholds") or {}),
                            {k: list(v) for k, v in (d.get("ratios") or {}).items()})


@dataclass
class GateBaseline:
    """``baselines/gate.json``: either gate's figures (None: not taken yet); ``deterministic``
    is x86-64's, ``arches`` another architecture's counts by its name (schema 16: ``armhf``,
    counted under qemu-arm, its own machine facts)."""

    deterministic: DeterministicBaseline | None = None
    wall: WallBaseline | None = None
    arches: dict[str, DeterministicBaseline] = field(default_factory=dict)
    role = "baseline"

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "deterministic": self.deterministic.to_json() if self.deterministic else None,
                "wall": self.wall.to_json() if self.wall else None,
                "arches": {a: d.to_json() for a, d in self.arches.items()}}


@dataclass
class GateReport:
    """``reports/gate-<time>.json``: what each gate found, and the exit code."""

    baseline: str  # the baseline file judged against
    profile: str  # full or quick message counts
    outcomes: list[Outcome]
    exit_code: int
    role = "report"

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "baseline": self.baseline, "profile": self.profile,
                "outcomes": [o.to_json() for o in self.outcomes], "exit_code": self.exit_code}


Gate = GateBaseline | GateReport


def gate_from_json(d: dict[str, Any]) -> Gate:
    if d.get("role") == "baseline":
        det, wall = d.get("deterministic"), d.get("wall")
        return GateBaseline(DeterministicBaseline.from_json(det) if isinstance(det, dict) else None,
                            WallBaseline.from_json(wall) if isinstance(wall, dict) else None,
                            {a: DeterministicBaseline.from_json(v) for a, v in (d.get("arches") or {}).items()})
    if d.get("role") == "report":
        return GateReport(d.get("baseline", ""), d.get("profile", ""),
                          [Outcome.from_json(o) for o in d.get("outcomes") or []], d.get("exit_code", EXIT_PASS))
    raise ValueError(f"gate section with role {d.get('role')!r} (baseline or report)")
