"""How trustworthy a run's figures are: the spread of every cell, and whether two runs of
the same matrix agree (``wsbench stability A.json [B.json ...]``).

For each run and metric (the workloads' own ranking metric, and client CPU µs/msg): the
distribution over cells of the coefficient of variation across repetitions — median,
90th percentile, worst, and the share of cells at or under 5 %. For every pair of runs:
over the cells both measured, the share whose medians agree, i.e. whose 95 % intervals
of the median overlap, and the share where each median even lies inside the other run's
interval.

It also separates the drift every cell shares from each cell's own spread: repetitions
are interleaved, so round r of every cell runs within the same few minutes. For each round,
the median over cells of (the cell's value in that round / the cell's mean) is the
round's factor; a machine that slowed down for a while moves every cell of that round
together. Dividing each value by its round's factor and recomputing the CVs shows how much
spread is left that the machine does not explain.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .doc import Block, Grid, Report, Section
from .metrics import METRICS
from .ranking import workload_metric
from .model import Cell, Run

CV_GOAL = 0.05
RANKING = "ranking metric"


@dataclass(frozen=True)
class Spread:
    cells: int
    median_cv: float
    p90_cv: float
    worst_cv: float
    within_goal: float  # share of cells with CV <= CV_GOAL

    def row(self) -> list[str]:
        return [str(self.cells), f"{self.median_cv:.1%}", f"{self.p90_cv:.1%}", f"{self.worst_cv:.1%}",
                f"{self.within_goal:.0%}"]


@dataclass(frozen=True)
class Agreement:
    cells: int
    overlapping: float  # share whose 95 % intervals overlap
    inside: float  # share where each median lies in the other's interval

    def row(self) -> list[str]:
        return [str(self.cells), f"{self.overlapping:.0%}", f"{self.inside:.0%}"]


def metric_of(run: Run, cell: Cell, which: str) -> str:
    return workload_metric(run, cell.workload) if which == RANKING else which


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..1) of a non-empty list."""
    data = sorted(values)
    pos = (len(data) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def spread(run: Run, which: str) -> Spread | None:
    cvs = []
    for cell in run.cells:
        s = cell.summary(metric_of(run, cell, which))
        if s is not None and s.cv is not None:
            cvs.append(s.cv)
    if not cvs:
        return None
    return Spread(len(cvs), statistics.median(cvs), percentile(cvs, 0.9), max(cvs),
                  sum(cv <= CV_GOAL for cv in cvs) / len(cvs))


@dataclass(frozen=True)
class Drift:
    factors: list[float]  # per repetition round, in round order
    median_cv_adjusted: float  # median CV per cell once each round's factor is divided out

    def row(self) -> list[str]:
        spread = max(self.factors) - min(self.factors)
        return [", ".join(f"{f:.3f}" for f in self.factors), f"{spread:.1%}", f"{self.median_cv_adjusted:.1%}"]


def drift(run: Run, which: str) -> Drift | None:
    per_cell: list[tuple[dict[int, float], float]] = []
    for cell in run.cells:
        get = METRICS[metric_of(run, cell, which)].get
        values = {s.rep: v for s in cell.ok_samples for v in [get(s)] if v is not None}
        if len(values) >= 2:
            per_cell.append((values, statistics.fmean(values.values())))
    rounds = sorted({rep for values, _ in per_cell for rep in values})
    if len(rounds) < 2 or not per_cell:
        return None
    factors = {}
    for rep in rounds:
        ratios = [values[rep] / mid for values, mid in per_cell if rep in values and mid]
        factors[rep] = statistics.median(ratios) if ratios else 1.0
    cvs = []
    for values, _ in per_cell:
        adjusted = [v / factors[rep] for rep, v in values.items()]
        mean = statistics.fmean(adjusted)
        if mean:
            cvs.append(statistics.stdev(adjusted) / mean)
    if not cvs:
        return None
    return Drift([factors[r] for r in rounds], statistics.median(cvs))


def agreement(a: Run, b: Run, which: str) -> Agreement | None:
    theirs = {c.key: c for c in b.cells}
    overlap = inside = n = 0
    for cell in a.cells:
        other = theirs.get(cell.key)
        if other is None:
            continue
        x, y = cell.summary(metric_of(a, cell, which)), other.summary(metric_of(b, other, which))
        if x is None or y is None or x.n < 2 or y.n < 2:
            continue
        n += 1
        overlap += x.ci95[0] <= y.ci95[1] and y.ci95[0] <= x.ci95[1]
        inside += y.ci95[0] <= x.median <= y.ci95[1] and x.ci95[0] <= y.median <= x.ci95[1]
    return Agreement(n, overlap / n, inside / n) if n else None


def document(runs: list[tuple[Path, Run]]) -> Report:
    """The spread of every run, the drift its cells share, and whether the runs agree."""
    metrics = [RANKING, "client_cpu_us_per_msg"]
    intro: list[Block] = [f"CV: coefficient of variation across the repetitions of a cell; the goal is {CV_GOAL:.0%}."]
    sections = []
    for which in metrics:
        grid = Grid(["run", "settings", "cells", "median CV", "p90 CV", "worst CV", "cells ≤ 5 %"], right={2, 3, 4, 5, 6})
        for path, run in runs:
            s = spread(run, which)
            grid.add([path.name, _settings(run), *(s.row() if s else ["–"] * 5)])
        sections.append(Section(f"Spread of {_title(which)} per cell", [grid]))
    grid = Grid(["run", "metric", "round factors", "spread", "median CV without the drift"], right={3, 4})
    for path, run in runs:
        for which in metrics:
            d = drift(run, which)
            grid.add([path.name, _title(which), *(d.row() if d else ["–"] * 3)])
    sections.append(Section("Drift shared by every cell", [
        "Per repetition round, the median over cells of the cell's value over its own mean; the spread of those "
        "factors; and the median CV per cell once each round's factor is divided out (what is left is the cells' "
        "own spread).", grid]))
    if len(runs) > 1:
        grid = Grid(["run A", "run B", "metric", "cells", "overlap", "inside"], right={3, 4, 5})
        for i, (pa, a) in enumerate(runs):
            for pb, b in runs[i + 1:]:
                for which in metrics:
                    g = agreement(a, b, which)
                    grid.add([pa.name, pb.name, _title(which), *(g.row() if g else ["–"] * 3)])
        sections.append(Section("Agreement between runs", [
            "Cells measured by both runs; \"overlap\": their 95 % intervals of the median overlap; \"inside\": each "
            "run's median lies inside the other's interval.", grid]))
    return Report("Stability", None, [], sections, intro=intro)


def _title(which: str) -> str:
    return which if which == RANKING else METRICS[which].header


def _settings(run: Run) -> str:
    st = run.settings
    if not st:
        return "schema 1 (no floor)"
    parts = [f"≥ {st.get('min_seconds', 0):g} s", "pinned" if st.get("pinning") else "unpinned",
             f"{run.repetitions} reps"]
    if st.get("verify") in ("off", False):
        parts.append("unverified")
    return ", ".join(parts)
