"""Ranking a workload's cells: best median first, tie groups from the 95 % intervals,
each row's factor against the best, and the side that kept its core busy.

Shared by the Markdown tables (report/ranked.py), the rest of the report (report/) and the comparison of
runs (compare.py), so that there is one ranking.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from .metrics import METRICS
from .model import Cell, Run
from .stats import Summary

CV_WARN = 0.10
SATURATED = 0.90  # CPU share from which a side counts as having kept its core busy
DEFAULT_METRIC = "msgs_per_s"


def workload_metric(run: Run, workload: str) -> str:
    """The metric a workload's table is ranked by."""
    return str(run.workloads.get(workload, {}).get("metric", DEFAULT_METRIC))


def rank(cells: list[Cell], metric: str = DEFAULT_METRIC) -> list[tuple[int, Cell]]:
    """Rank cells by the median of ``metric``, best first. A row whose 95 % interval
    overlaps the interval of its group's first row shares that row's rank; the first row
    that does not overlap starts a new group (so ties do not chain down the table)."""
    better_high = METRICS[metric].higher_is_better
    measured = [(c, c.summary(metric)) for c in cells]
    ordered = sorted(((c, s) for c, s in measured if s),
                     key=lambda cs: -cs[1].median if better_high else cs[1].median)
    out: list[tuple[int, Cell]] = []
    leader: tuple[float, float] | None = None  # the interval of the current tie group's first row
    current = 0
    for i, (cell, s) in enumerate(ordered):
        lo, hi = s.ci95
        ties = leader is not None and (hi >= leader[0] if better_high else lo <= leader[1])
        if not ties:
            current, leader = i + 1, (lo, hi)
        out.append((current, cell))
    return out


def factor(value: float, best: float, higher_is_better: bool) -> float | None:
    """How many times worse than the best a value is: 1.0 for the best, above 1 for the
    rest, whichever way the metric points (js-framework-benchmark's convention)."""
    if higher_is_better:
        return best / value if value > 0 else None
    return value / best if best > 0 else None


@dataclass(frozen=True)
class RankedRow:
    position: int
    cell: Cell
    summary: Summary
    factor: float | None


def ranked(cells: list[Cell], metric: str) -> list[RankedRow]:
    """``rank`` with each row's summary and its factor against the table's best median."""
    higher = METRICS[metric].higher_is_better
    rows = [(position, cell, cell.summary(metric)) for position, cell in rank(cells, metric)]
    best = rows[0][2].median if rows and rows[0][2] else None
    return [RankedRow(position, cell, s, factor(s.median, best, higher) if best is not None else None)
            for position, cell, s in rows if s is not None]


def unmeasured(cells: list[Cell], metric: str) -> list[tuple[Cell, str]]:
    """The cells without a value of ``metric``, with the reason (n/a or the failure)."""
    out = []
    for cell in cells:
        if cell.summary(metric) is None:
            if cell.na:
                why = f"n/a: {cell.na}"
            elif cell.ok_samples:  # measured, without this figure: e.g. an empty latency histogram
                why = f"n/a: no {METRICS[metric].header} in any repetition (nothing was timed)"
            else:
                why = "failed: " + (cell.blocked or (cell.errors[0] if cell.errors else "no measurement"))
            out.append((cell, why))
    return out


def values(cell: Cell, metric: str) -> list[float]:
    """A cell's value of ``metric`` in each repetition that succeeded."""
    get = METRICS[metric].get
    return [v for v in (get(s) for s in cell.ok_samples) if v is not None]


def median_of(cell: Cell, metric: str) -> float | None:
    """The median of ``metric`` without its bootstrap interval (for columns that show
    only the median: the interval of every column would cost seconds per report)."""
    vs = values(cell, metric)
    return statistics.median(vs) if vs else None


def bound_side(cell: Cell) -> str:
    """Which side kept its core busy: "client", "server", "both" or ""."""
    client, server = median_of(cell, "client_cpu_share"), median_of(cell, "server_cpu_share")
    c = client is not None and client >= SATURATED
    s = server is not None and server >= SATURATED
    return "both" if c and s else "client" if c else "server" if s else ""


def bound_note(cell: Cell) -> str:
    """The bound side with both sides' CPU shares, so that a row bound by its client says by
    how much and what the server did meanwhile: "client: 100 % vs server 35 %" ("" when
    neither side kept its core busy)."""
    side = bound_side(cell)
    if not side:
        return ""
    client, server = median_of(cell, "client_cpu_share"), median_of(cell, "server_cpu_share")
    if side == "both":
        return f"both: client {_pct(client)}, server {_pct(server)}"
    if side == "client":
        return f"client: {_pct(client)} vs server {_pct(server)}"
    return f"server: {_pct(server)} vs client {_pct(client)}"


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"


def label(run: Run, kind: str, name: str) -> str:
    """A server's or client's label as the run recorded it (its name if it has none)."""
    table = run.servers if kind == "servers" else run.clients
    return table[name].label if name in table else name
