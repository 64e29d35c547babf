"""The ``profiles`` section (``wsbench profile``, schema 4): per profiled cell a
``ProfileCell`` (its passes, the where-the-time-goes ``SideBreakdown`` per side, files and
notes). Keys a writer sets only on some paths (a profiled cell's passes) are left out when
they were never set."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
