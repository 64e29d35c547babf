"""The side sections of a run (results.py) as typed records, each with its JSON reading
(``from_json``) and writing (``to_json``):

- ``Conformance`` (``wsbench conformance``, schema 3): the cases and, per client and case,
  a ``Verdict``;
- ``Profiles`` (``wsbench profile``, schema 4): per profiled cell a ``ProfileCell`` (its
  passes, the where-the-time-goes ``SideBreakdown`` per side, files and notes);
- ``Startup`` (``wsbench startup``, schema 4): per client and server a ``StartupTime``;
- ``GateBaseline`` / ``GateReport`` (``wsbench gate``, schema 5): the baseline's
  deterministic counts and wall-clock ratios, or a report's ``Outcome``s and their
  ``Finding``s.

The JSON is the same to the key and its order as these sections have always been
written; keys that a writer sets only on some paths (a profiled cell's passes, a client's
peak RSS) are left out when they were never set, and keys that files of an earlier
version of the same section lack are read as empty. Layering: this module imports
nothing of the harness; results.py reads and writes the run through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXIT_PASS = 0
EXIT_REGRESSION = 1
EXIT_CANNOT_RUN = 2
FAILING = ("regression", "failed")  # the verdicts that fail a gate (exit 1)


# --- conformance ------------------------------------------------------------------------

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


# --- profiles ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TopFrame:
    frame: str
    category: str
    samples: int
    percent: float

    def to_json(self) -> dict[str, Any]:
        return {"frame": self.frame, "category": self.category, "samples": self.samples, "percent": self.percent}

    @staticmethod
    def from_json(d: dict[str, Any]) -> TopFrame:
        return TopFrame(d["frame"], d["category"], d["samples"], d["percent"])


@dataclass
class SideBreakdown:
    """Where one side's time went: perf samples, percent per category, the top self frames."""

    samples: int
    shares: dict[str, float]
    top: list[TopFrame]

    def to_json(self) -> dict[str, Any]:
        return {"samples": self.samples, "shares": self.shares, "top": [t.to_json() for t in self.top]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> SideBreakdown:
        return SideBreakdown(d["samples"], dict(d.get("shares", {})), [TopFrame.from_json(t) for t in d.get("top", [])])


@dataclass
class PassResult:
    """One pass of a profiled cell (unprofiled, under perf, under the runtime's profiler)."""

    msgs_per_s: float | None  # None: the pass failed (error)
    seconds: float | None
    messages: int | None
    client_cpu_s: float | None
    server_cpu_s: float | None
    error: str | None
    extra: dict[str, Any] = field(default_factory=dict)  # the kind's own figures

    def to_json(self) -> dict[str, Any]:
        return {"msgs_per_s": self.msgs_per_s, "seconds": self.seconds, "messages": self.messages,
                "client_cpu_s": self.client_cpu_s, "server_cpu_s": self.server_cpu_s, "error": self.error,
                "extra": self.extra}

    @staticmethod
    def from_json(d: dict[str, Any]) -> PassResult:
        return PassResult(d.get("msgs_per_s"), d.get("seconds"), d.get("messages"), d.get("client_cpu_s"),
                          d.get("server_cpu_s"), d.get("error"), dict(d.get("extra") or {}))


@dataclass
class OverheadRuns:
    """msgs/s of each unprofiled and perf pass, when they alternate (--overhead-runs)."""

    unprofiled: list[float | None] = field(default_factory=list)
    profiled: list[float | None] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"unprofiled": self.unprofiled, "profiled": self.profiled}

    @staticmethod
    def from_json(d: dict[str, Any]) -> OverheadRuns:
        return OverheadRuns(list(d.get("unprofiled") or []), list(d.get("profiled") or []))


PASSES = ("unprofiled", "recorded_s", "profiled", "cpu_prof_pass")  # written when set, in this order


@dataclass
class ProfileCell:
    workload: str
    server: str
    client: str
    sides: list[str]
    dir: str
    files: dict[str, str] = field(default_factory=dict)  # what -> path
    breakdown: dict[str, SideBreakdown] = field(default_factory=dict)  # per side
    notes: list[str] = field(default_factory=list)
    frequency_hz: int | None = None
    error: str | None = None
    overhead_runs: OverheadRuns | None = None  # None: a file from before --overhead-runs
    unprofiled: PassResult | None = None
    recorded_s: dict[str, float] | None = None  # per side: how long perf recorded
    profiled: PassResult | None = None
    cpu_prof_pass: PassResult | None = None
    overhead: float | None = None  # the drop in msgs/s under profiling

    @property
    def key(self) -> str:
        return f"{self.workload}/{self.server}/{self.client}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workload": self.workload, "server": self.server, "client": self.client, "sides": self.sides,
            "dir": self.dir, "files": self.files, "breakdown": {s: b.to_json() for s, b in self.breakdown.items()},
            "notes": self.notes, "frequency_hz": self.frequency_hz, "error": self.error}
        if self.overhead_runs is not None:
            out["overhead_runs"] = self.overhead_runs.to_json()
        for name in PASSES:
            value = getattr(self, name)
            if value is not None:
                out[name] = value if isinstance(value, dict) else value.to_json()
        out["overhead"] = self.overhead
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> ProfileCell:
        def result(name: str) -> PassResult | None:
            return PassResult.from_json(d[name]) if d.get(name) is not None else None

        runs = d.get("overhead_runs")
        return ProfileCell(
            d["workload"], d["server"], d["client"], list(d.get("sides", [])), d.get("dir", ""),
            dict(d.get("files", {})), {s: SideBreakdown.from_json(b) for s, b in d.get("breakdown", {}).items()},
            list(d.get("notes", [])), d.get("frequency_hz"), d.get("error"),
            OverheadRuns.from_json(runs) if runs is not None else None, result("unprofiled"),
            dict(d["recorded_s"]) if d.get("recorded_s") is not None else None, result("profiled"),
            result("cpu_prof_pass"), d.get("overhead"))


@dataclass
class Profiles:
    dir: str  # profiles/<time>/
    cells: list[ProfileCell] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"dir": self.dir, "cells": [c.to_json() for c in self.cells]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Profiles:
        return Profiles(d.get("dir", ""), [ProfileCell.from_json(c) for c in d.get("cells", [])])


# --- startup ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Figures:
    """hyperfine's figures of one command, in seconds."""

    mean_s: float
    stddev_s: float
    median_s: float
    min_s: float
    max_s: float
    runs: int

    def to_json(self) -> dict[str, Any]:
        return {"mean_s": self.mean_s, "stddev_s": self.stddev_s, "median_s": self.median_s, "min_s": self.min_s,
                "max_s": self.max_s, "runs": self.runs}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Figures:
        return Figures(d["mean_s"], d["stddev_s"], d["median_s"], d["min_s"], d["max_s"], d["runs"])


@dataclass
class StartupTime:
    """One client's or server's start-up: hyperfine's figures, or why there are none."""

    command: str | None = None  # None: never run (e.g. not built)
    figures: Figures | None = None  # None: see error
    error: str | None = None
    peak_rss_kib: int | None = None
    held_run: bool = False  # a client timed: one more run, held after its result, read peak_rss_kib

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.command is None else {"command": self.command}
        if self.figures is not None:
            out.update(self.figures.to_json())
        out["error"] = self.error
        if self.held_run:
            out["peak_rss_kib"] = self.peak_rss_kib
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> StartupTime:
        return StartupTime(d.get("command"), Figures.from_json(d) if d.get("mean_s") is not None else None,
                           d.get("error"), d.get("peak_rss_kib"), "peak_rss_kib" in d)


@dataclass
class Startup:
    what: str  # what was timed, and how
    tool: str  # hyperfine's version
    warmup: int
    runs: int
    dir: str | None = None
    clients: dict[str, StartupTime] = field(default_factory=dict)
    servers: dict[str, StartupTime] = field(default_factory=dict)

    def failed(self) -> list[tuple[str, str, str]]:
        """(kind, name, error) of every client and server without figures."""
        return [(kind, name, t.error) for kind, times in (("clients", self.clients), ("servers", self.servers))
                for name, t in times.items() if t.error]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"what": self.what, "tool": self.tool, "warmup": self.warmup, "runs": self.runs}
        if self.dir is not None:
            out["dir"] = self.dir
        out["clients"] = {k: v.to_json() for k, v in self.clients.items()}
        out["servers"] = {k: v.to_json() for k, v in self.servers.items()}
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> Startup:
        return Startup(d.get("what", ""), d.get("tool", ""), d.get("warmup", 0), d.get("runs", 0), d.get("dir"),
                       {k: StartupTime.from_json(v) for k, v in (d.get("clients") or {}).items()},
                       {k: StartupTime.from_json(v) for k, v in (d.get("servers") or {}).items()})


# --- gate -------------------------------------------------------------------------------

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
    """``baselines/gate.json``: either gate's figures (None: not taken yet)."""

    deterministic: DeterministicBaseline | None = None
    wall: WallBaseline | None = None
    role = "baseline"

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "deterministic": self.deterministic.to_json() if self.deterministic else None,
                "wall": self.wall.to_json() if self.wall else None}


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
                            WallBaseline.from_json(wall) if isinstance(wall, dict) else None)
    if d.get("role") == "report":
        return GateReport(d.get("baseline", ""), d.get("profile", ""),
                          [Outcome.from_json(o) for o in d.get("outcomes") or []], d.get("exit_code", EXIT_PASS))
    raise ValueError(f"gate section with role {d.get('role')!r} (baseline or report)")
