"""The deterministic gate: instructions per message of every cell (``cells``), counted
under callgrind (``callgrind``), against the baseline's figures for the same profile.

A cell regresses when its count rises by more than ``RISE`` (3 %); a fall of more than
``FALL`` (3 %) is reported as an improvement worth ``--update``. Same code on the same
machine agrees within 0.5 % (README, "The regression gate"), so 3 % is never noise.
Counts from another machine (``machine.mismatch``) are not compared: the gate cannot run.

With ``--base REF`` the figures to beat are not the baseline file's but the base build's,
counted in the same job, cell by cell just before the head's (``measure_pair``,
``judge_pair``): the same machine by construction, the same thresholds. A cell the head's
program fails while the base's runs it is a failure of the change (verdict ``failed``,
exit 1); a cell the base cannot run is not compared (exit 2 unless something regressed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..errors import WsbenchError
from ..model import CellCount, DeterministicBaseline
from ..workloads import WorkloadSet
from . import machine
from .builds import Build
from .callgrind import Count, Counter, run_cell
from .cells import Cell
from .verdict import Finding, Outcome

RISE = 0.03
FALL = 0.03
METRIC = "instructions/message"


def measure(cells: list[Cell], workloads: WorkloadSet, profile: str, work_dir: Path,
            note: Callable[[str], None], counter: Counter | None = None) -> dict[str, Count]:
    """Each cell counted by ``counter`` (callgrind by default; gate/arches.py picks it)."""
    out = {}
    for i, cell in enumerate(cells, 1):
        count = run_cell(cell, workloads, profile, work_dir, counter=counter)
        note(f"gate: [{i}/{len(cells)}] {cell.name} ({profile}): {count.per_message:,.1f} instructions/message "
             f"({count.instructions:,} over {count.messages:,} messages)")
        out[cell.name] = count
    return out


def measure_pair(cells: list[Cell], workloads: WorkloadSet, profile: str, work_dir: Path, base: Build,
                 head: Build, note: Callable[[str], None]) -> tuple[dict[str, Count | str], dict[str, Count | str]]:
    """Each cell counted for the base, then for the head (the counted program from each side,
    the peer the head's); per side a Count, or the one-line reason the cell failed."""
    sides: tuple[dict[str, Count | str], dict[str, Count | str]] = ({}, {})
    for i, cell in enumerate(cells, 1):
        for build, out in zip((base, head), sides):
            try:
                count: Count | str = run_cell(cell, workloads, profile, work_dir / build.side, build, head)
            except WsbenchError as exc:
                count = str(exc)
            out[cell.name] = count
            what = (f"{count.per_message:,.1f} instructions/message ({count.instructions:,} over {count.messages:,} "
                    f"messages)" if isinstance(count, Count) else f"failed: {count}")
            note(f"gate: [{i}/{len(cells)}] {cell.name} ({profile}, {build.label}): {what}")
    return sides


def judge_pair(base: dict[str, Count | str], head: dict[str, Count | str], profile: str,
               ungated: dict[str, str] | None = None) -> Outcome:
    """The head's counts against the base's, with the baseline's thresholds."""
    findings, not_compared = [], []
    for name, new in head.items():
        old = base.get(name)
        if not isinstance(old, Count):
            not_compared.append(f"{name} ({old})" if old else name)
            continue
        if isinstance(new, str):
            findings.append(Finding("deterministic", name, METRIC, round(old.per_message, 1), 0.0, "failed",
                                    f"the head's program failed the cell the base's ran: {new}"))
            continue
        findings.append(_finding(name, old.per_message, new, profile, ungated))
    problem = (f"the base could not run {len(not_compared)} cell(s), not compared: " + "; ".join(not_compared)
               if not_compared else None)
    return Outcome("deterministic", findings, problem)


def _finding(name: str, old: float, count: Count, profile: str, ungated: dict[str, str] | None) -> Finding:
    change = (count.per_message - old) / old
    verdict = "regression" if change > RISE else "improvement" if change < -FALL else "same"
    detail = f"{count.messages:,} messages ({profile})"
    if ungated and name in ungated:
        verdict, detail = "same", f"{detail}; not gated: {ungated[name]}"
    return Finding("deterministic", name, METRIC, round(old, 1), round(count.per_message, 1), verdict, detail)


def judge(counts: dict[str, Count], baseline: DeterministicBaseline | None, profile: str,
          here: dict[str, Any], ungated: dict[str, str] | None = None,
          keys: tuple[str, ...] = machine.KEYS) -> Outcome:
    """Counts against the baseline's ``deterministic`` section (None: no baseline); ``keys``:
    the machine facts that must match (the architecture's)."""
    if baseline is None:
        return Outcome("deterministic", [], "the baseline has no deterministic counts (run: wsbench gate --update)")
    why = machine.mismatch(baseline.machine, here, keys)
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
        findings.append(_finding(name, float(base.per_message), count, profile, ungated))
    problem = None
    if missing:
        problem = f"the baseline has no {profile} count for {', '.join(missing)} (run: wsbench gate --update)"
    return Outcome("deterministic", findings, problem)


def section(counts: dict[str, Count], profile: str, previous: DeterministicBaseline | None,
            here: dict[str, Any], keys: tuple[str, ...] = machine.KEYS) -> DeterministicBaseline:
    """The baseline's deterministic section with this profile's counts replaced; the other
    profile's are kept only when they were taken on this same machine (``keys``)."""
    kept: dict[str, dict[str, CellCount]] = {}
    if previous and not machine.mismatch(previous.machine, here, keys):
        kept = dict(previous.counts)
    if not counts:
        raise WsbenchError("no deterministic count to store")
    merged = {**(kept.get(profile) or {}), **{name: c.record() for name, c in counts.items()}}
    return DeterministicBaseline(here, RISE, FALL, {**kept, profile: dict(sorted(merged.items()))})
