"""The deterministic gate: instructions per message of every cell (``cells``), counted
under callgrind (``callgrind``), against the baseline's figures for the same profile.

A cell regresses when its count rises by more than ``RISE`` (3 %); a fall of more than
``FALL`` (3 %) is reported as an improvement worth ``--update``. Same code on the same
machine agrees within 0.5 % (README, "The regression gate"), so 3 % is never noise.
Counts from another machine (``machine.mismatch``) are not compared: the gate cannot run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..errors import WsbenchError
from ..records import CellCount, DeterministicBaseline
from ..workloads import WorkloadSet
from . import machine
from .callgrind import Count, run_cell
from .cells import Cell
from .verdict import Finding, Outcome

RISE = 0.03
FALL = 0.03
METRIC = "instructions/message"


def measure(cells: list[Cell], workloads: WorkloadSet, profile: str, work_dir: Path,
            note: Callable[[str], None]) -> dict[str, Count]:
    out = {}
    for i, cell in enumerate(cells, 1):
        count = run_cell(cell, workloads, profile, work_dir)
        note(f"gate: [{i}/{len(cells)}] {cell.name} ({profile}): {count.per_message:,.1f} instructions/message "
             f"({count.instructions:,} over {count.messages:,} messages)")
        out[cell.name] = count
    return out


def judge(counts: dict[str, Count], baseline: DeterministicBaseline | None, profile: str,
          here: dict[str, Any], ungated: dict[str, str] | None = None) -> Outcome:
    """Counts against the baseline's ``deterministic`` section (None: no baseline)."""
    if baseline is None:
        return Outcome("deterministic", [], "the baseline has no deterministic counts (run: wsbench gate --update)")
    why = machine.mismatch(baseline.machine, here)
    if why:
        return Outcome("deterministic", [], f"the baseline was taken on another machine, so instruction counts do "
                                            f"not compare: {why}")
    figures = baseline.counts.get(profile) or {}
    findings, missing = [], []
    for name, count in counts.items():
        base = figures.get(name)
        if base is None:
            missing.append(name)
            continue
        old = float(base.per_message)
        change = (count.per_message - old) / old
        verdict = "regression" if change > RISE else "improvement" if change < -FALL else "same"
        detail = f"{count.messages:,} messages ({profile})"
        if ungated and name in ungated:
            verdict, detail = "same", f"{detail}; not gated: {ungated[name]}"
        findings.append(Finding("deterministic", name, METRIC, old, round(count.per_message, 1), verdict, detail))
    problem = None
    if missing:
        problem = f"the baseline has no {profile} count for {', '.join(missing)} (run: wsbench gate --update)"
    return Outcome("deterministic", findings, problem)


def section(counts: dict[str, Count], profile: str, previous: DeterministicBaseline | None,
            here: dict[str, Any]) -> DeterministicBaseline:
    """The baseline's deterministic section with this profile's counts replaced; the other
    profile's are kept only when they were taken on this same machine."""
    kept: dict[str, dict[str, CellCount]] = {}
    if previous and not machine.mismatch(previous.machine, here):
        kept = dict(previous.counts)
    if not counts:
        raise WsbenchError("no deterministic count to store")
    merged = {**(kept.get(profile) or {}), **{name: c.record() for name, c in counts.items()}}
    return DeterministicBaseline(here, RISE, FALL, {**kept, profile: dict(sorted(merged.items()))})
