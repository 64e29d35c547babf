"""Soak drift in "When peers misbehave" (issue 34, part 3; docs/misbehave.md "Soak drift"):
per cell of a ``cycles`` workload, the slope of the server's resident memory per cycle (when
the workload's scope is ``servers``: the reference client drives every server) or of the
client's (scope ``clients``: every client against the reference server), with its 95 %
interval, descriptors per 1,000 cycles and the verdict; per cell of a ``pinghold``
workload, the server's memory slope per held connection per minute. The fits are
soakfit.py's, over every repetition of the cell."""

from __future__ import annotations

from ..doc import Block, Grid
from ..model import Cell, Run
from ..ranking import label
from .. import soakfit
from .cell_state import kind_of, not_run

HEAD = "**Soak drift**"


def _interval(s: soakfit.Slope, digits: int = 0) -> str:
    return f"{s.slope:,.{digits}f} ({s.lo:,.{digits}f} – {s.hi:,.{digits}f})"


def _side(run: Run, cell: Cell) -> str:
    """Whose drift a cycles cell shows: the server's, unless its workload compares clients."""
    return "client" if run.workloads.get(cell.workload, {}).get("scope") == "clients" else "server"


def _cycles(run: Run) -> list[Block]:
    grid = Grid(["workload", "side", "program", "against", "cycles fitted", "B per cycle (95 % interval)",
                 "fds per 1,000 cycles (95 % interval)", "verdict"], right={4, 5, 6})
    for cell in run.cells:
        if kind_of(run, cell.workload) != "cycles":
            continue
        side = _side(run, cell)
        who = label(run, "clients" if side == "client" else "servers", cell.client if side == "client" else cell.server)
        other = label(run, "servers" if side == "client" else "clients", cell.server if side == "client" else cell.client)
        why = not_run(cell)
        if why is not None:
            grid.add([cell.workload, side, who, other, "–", "–", "–", why])
            continue
        rss = soakfit.side_slope(cell.ok_samples, f"{side}_rss_kib", soakfit.CYCLES_MARK, 1024)
        fds = soakfit.side_slope(cell.ok_samples, f"{side}_fds", soakfit.CYCLES_MARK, 1000)
        if rss is None:
            grid.add([cell.workload, side, who, other, "–", "–", "–", "too few readings to fit"])
            continue
        grid.add([cell.workload, side, who, other, f"{rss.x_from:,.0f} – {rss.x_to:,.0f}", _interval(rss),
                  "–" if fds is None else _interval(fds, 2),
                  soakfit.verdict(rss, soakfit.floor_for(rss), late=soakfit.late_slope(
                      cell.ok_samples, f"{side}_rss_kib", soakfit.CYCLES_MARK, 1024))])
    if not grid.rows:
        return []
    return [f"{HEAD}: connect–echo–close cycles in batches; each side's resident memory and open descriptors read "
            "with no connection open after every fiftieth of the batches, the slope fitted per cycle by least "
            f"squares (one intercept per repetition) over the cycles after the first {soakfit.WARMUP_SHARE:.0%} "
            f"of the run (warm-up), with its 95 % interval. \"leaks\" when the interval excludes 0 and the slope is "
            f"above {soakfit.FLOOR_B:.0f} B per cycle (or {soakfit.FLOOR_TOTAL_B // 1024} KiB over the cycles "
            "fitted, when more), over the whole fitted span and over its last half alone; \"grows ..., slowing\" "
            "when only the whole span says so (a garbage-collected heap fills for tens of thousands of cycles "
            "before it levels off: more cycles tell); else \"flat within the noise\".", grid]


def _hold(run: Run) -> list[Block]:
    grid = Grid(["workload", "server", "connections", "held s", "server RSS B per connection per minute "
                 "(95 % interval)", "server fds per minute", "verdict"], right={2, 3, 4, 5})
    for cell in run.cells:
        if kind_of(run, cell.workload) != "pinghold":
            continue
        server = label(run, "servers", cell.server)
        why = not_run(cell)
        if why is not None:
            grid.add([cell.workload, server, "–", "–", "–", "–", why])
            continue
        n = cell.ok_samples[0].extra.get("connections")
        held = cell.ok_samples[0].extra.get("hold_s")
        rss = soakfit.side_slope(cell.ok_samples, "server_rss_kib", soakfit.TIME_MARK, 1024 * 60_000)
        fds = soakfit.side_slope(cell.ok_samples, "server_fds", soakfit.TIME_MARK, 60_000)
        if rss is None or not isinstance(n, int) or n <= 0:
            grid.add([cell.workload, server, "–", "–", "–", "–", "too few readings to fit"])
            continue
        per = soakfit.scaled(rss, 1 / n)
        late = soakfit.late_slope(cell.ok_samples, "server_rss_kib", soakfit.TIME_MARK, 1024 * 60_000 / n)
        minutes = (per.x_to - per.x_from) / 60_000
        floor = soakfit.FLOOR_TOTAL_B / n / minutes if minutes > 0 else 0.0
        grid.add([cell.workload, server, f"{n:,}", f"{held:.1f}" if isinstance(held, (int, float)) else "–",
                  _interval(per), "–" if fds is None else _interval(fds, 2),
                  soakfit.verdict(per, floor, "bytes per connection per minute", late=late,
                                  rising="grows")])
    if not grid.rows:
        return []
    return [f"{HEAD}, held: connections held idle with a ping on each at a fixed interval, the server's resident "
            "memory and descriptors read every mark, the slope against time (after the first "
            f"{soakfit.WARMUP_SHARE:.0%} of the hold) per connection per minute, called as the cycles' (over the "
            "whole fitted span and its last half) but \"grows\" rather than \"leaks\": a bounded hold may end "
            "before a garbage collector's next full collection (Node's server grows for about 14 s here, then "
            "returns it), so a rising slope is the figure, not a verdict. The floor is "
            f"{soakfit.FLOOR_TOTAL_B // 1024} KiB over the hold, spread over its connections and minutes.", grid]


def blocks(run: Run) -> list[Block]:
    """The part's blocks: the cycles table and the hold table (nothing without their cells)."""
    return _cycles(run) + _hold(run)
