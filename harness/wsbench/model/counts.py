"""The ``counts`` section (``wsbench count``, schema 16): instructions per message of chosen
cells, per architecture, counted as the deterministic gate counts them (callgrind on
x86-64, qemu-arm with wsbench's TCG plugin on armhf), only the measured phase. A cell is
named by its key in a run (``workload/server/client``, the client a catalog name such as
``quickjs-no-join``), so that the report can set its count beside the run's timed cells."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .gate import CellCount


@dataclass
class ArchCounts:
    """One architecture's counts: how they were taken, and per cell key a count or why none."""

    tool: str  # what counted: "callgrind" or "qemu-arm + wsbench-count.so"
    machine: dict[str, Any]  # what the counts depend on (gate/machine.py, gate/qemu.py)
    profile: str  # the gate's message counts: full or quick
    cells: dict[str, CellCount] = field(default_factory=dict)  # "workload/server/client" -> count
    failed: dict[str, str] = field(default_factory=dict)  # cell key -> the one-line reason

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "machine": self.machine, "profile": self.profile,
                "cells": {k: c.to_json() for k, c in self.cells.items()}, "failed": self.failed}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ArchCounts:
        return ArchCounts(str(d["tool"]), dict(d.get("machine") or {}), str(d.get("profile", "")),
                          {k: CellCount.from_json(c) for k, c in (d.get("cells") or {}).items()},
                          {k: str(v) for k, v in (d.get("failed") or {}).items()})

    def per_message(self, workload: str, server: str, client: str) -> float | None:
        count = self.cells.get(f"{workload}/{server}/{client}")
        return float(count.per_message) if count else None


@dataclass
class InstructionCounts:
    """Per architecture (``x86-64``, ``armhf``) its counts."""

    arches: dict[str, ArchCounts]

    def to_json(self) -> dict[str, Any]:
        return {"arches": {a: c.to_json() for a, c in self.arches.items()}}

    @staticmethod
    def from_json(d: dict[str, Any]) -> InstructionCounts:
        return InstructionCounts({a: ArchCounts.from_json(c) for a, c in (d.get("arches") or {}).items()})
