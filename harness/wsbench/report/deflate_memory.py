"""Memory per connection with permessage-deflate in a report (issue 32; the suite
``deflate_memory``): per program, the capacity fits (capacity.memory_fits) of its
connections without deflate and with it, idle (no message before the mark) and after
traffic (``warm``: one message and its echo on each connection before the hold), side by
side, each with its R². Most stacks create their zlib streams at the first compressed
message, so "deflate, idle" shows what agreeing costs and "deflate, after traffic" what
compressing does; "no deflate, after traffic" beside it separates what any first message
costs (buffers) from what zlib keeps.

A row needs a fit without deflate and at least one with it, from the same run; a run with
none has no section."""

from __future__ import annotations

from ..doc import Grid, Section
from ..model import Run
from ..ranking import label
from .capacity import Fit, memory_fits

# (compressed, warm) of each column, in order
COLUMNS = ((False, False, "no deflate, idle"), (False, True, "no deflate, after traffic"),
           (True, False, "deflate, idle"), (True, True, "deflate, after traffic"))


def rows(run: Run) -> list[tuple[str, str, dict[tuple[bool, bool], Fit]]]:
    """(side, program, its fits by (compressed, warm)) for every program with a fit without
    deflate and one with it; servers first, then clients, each by name."""
    table: dict[tuple[str, str], dict[tuple[bool, bool], Fit]] = {}
    for f in memory_fits(run):
        table.setdefault((f.side, f.program), {})[(f.compressed, f.warm)] = f
    out = []
    for (side, program), fits in sorted(table.items(), key=lambda kv: (kv[0][0] != "server", kv[0][1])):
        if any(not packed for packed, _ in fits) and any(packed for packed, _ in fits):
            out.append((side, program, fits))
    return out


def sections(run: Run) -> list[Section]:
    """"Memory per connection with compression", in a run with the data; nothing otherwise."""
    found = rows(run)
    if not found:
        return []
    grid = Grid(["side", "program", *(f"{title}: KiB/conn (R²)" for _, _, title in COLUMNS), "connections held"],
                right={2, 3, 4, 5})
    for side, program, fits in found:
        held = [n for f in fits.values() for n, _ in f.points]
        grid.add([side, label(run, "servers" if side == "server" else "clients", program),
                  *(_cell(fits.get((packed, warmed))) for packed, warmed, _ in COLUMNS),
                  f"{min(held):,} – {max(held):,}"])
    return [Section("Memory per connection with compression", [
        "Each program's memory per connection (the slope of resident memory against connections held, from the "
        "capacity fits of this run: servers driven by the reference client, clients against the reference server "
        "and its `NAME/deflate` twin), without permessage-deflate and with it, idle (no message before the mark) "
        "and after traffic (`warm`: one 1 KiB JSON message and its echo on every connection before the hold). "
        "Most stacks create their zlib streams at the first compressed message: \"deflate, idle\" is what agreeing "
        "costs, \"deflate, after traffic\" less \"no deflate, after traffic\" what the streams keep. R² of each "
        "fit in brackets; – where the run has no fit (too few points, or the cells failed or were n/a).",
        grid])]


def _cell(f: Fit | None) -> str:
    return "–" if f is None else f"{f.slope_kib:,.2f} ({f.r2:.3f})"
