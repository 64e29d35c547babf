"""The profiles and the start-up figures as document sections (doc.py), and a profiled
cell's breakdown as a document of its own; the report's exporters render them."""

from __future__ import annotations

from typing import Any

from ..doc import Bullets, Grid, Report, Section
from ..model import ProfileCell, Profiles, Startup
from . import breakdown
from .classify import CATEGORIES, DESCRIPTIONS


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:+.1f} %"


def _rate(v: float | None) -> str:
    return "–" if v is None else f"{v:,.0f}"


def cell_sections(entry: ProfileCell, level_title: str | None = None) -> list[Section]:
    """One cell: overhead, then per side the shares, the top self frames and the files."""
    key = f"{entry.workload} / {entry.server} / {entry.client}"
    blocks: list[Any] = []
    unprof = entry.unprofiled.msgs_per_s if entry.unprofiled else None
    prof = entry.profiled.msgs_per_s if entry.profiled else None
    over = entry.overhead
    runs = len(entry.overhead_runs.profiled if entry.overhead_runs else []) or 1
    blocks.append(f"Unprofiled {_rate(unprof)} msgs/s, under perf {_rate(prof)} msgs/s (last runs): profiling "
                  f"overhead {'–' if over is None else f'{100 * over:.1f} %'} of the rate (median of {runs} "
                  f"alternating run{'s' if runs > 1 else ''} each; cpu-clock at {entry.frequency_hz} Hz, "
                  "frame-pointer call graphs).")
    if entry.error:
        blocks.append(f"**Failed:** {entry.error}")
    for side in ("client", "server"):
        data = entry.breakdown.get(side)
        if not data:
            continue
        recorded = (entry.recorded_s or {}).get(side)
        blocks.append(f"**{side}** ({entry.client if side == 'client' else entry.server}): {data.samples} samples"
                      + (f" over {recorded:.2f} s of measured phase" if recorded else ""))
        blocks.append(breakdown.shares_grid(data.shares))
        blocks.append(breakdown.top_grid(data.top))
    files = [f"{name}: `{path}`" for name, path in sorted(entry.files.items())]
    if files:
        blocks.append(Bullets(files))
    if entry.notes:
        blocks.append(Bullets(list(entry.notes)))
    return [Section(level_title or key, blocks)]


def cell_document(entry: ProfileCell) -> Report:
    """A profiled cell's breakdown.md: its section as a document of its own, then what each
    category holds."""
    sections = cell_sections(entry, f"Where the time goes: {entry.workload} / {entry.server} / {entry.client}")
    for section in sections:
        section.level = 1
    sections[-1].blocks += ["Categories (classify.py):", Bullets([f"**{c}**: {DESCRIPTIONS[c]}" for c in CATEGORIES])]
    return Report(None, None, [], sections)


def summary_grid(entries: list[ProfileCell]) -> Grid:
    """One row per profiled cell and side: the shares side by side."""
    grid = Grid(["workload", "server", "client", "side", "samples", *CATEGORIES, "overhead"],
                right=set(range(4, 5 + len(CATEGORIES) + 1)))
    for e in entries:
        for side, data in sorted(e.breakdown.items()):
            grid.add([e.workload, e.server, e.client, side, str(data.samples),
                      *[f"{data.shares.get(c, 0.0):.1f}" for c in CATEGORIES],
                      "–" if e.overhead is None else f"{100 * e.overhead:.1f} %"])
    return grid


def startup_grid(startup: Startup) -> Grid:
    """Clients and servers ranked by mean start-up time."""
    grid = Grid(["rank", "what", "name", "mean ms", "± σ ms", "median ms", "min ms", "max ms", "runs",
                 "peak RSS MiB", "factor"], right={0, 3, 4, 5, 6, 7, 8, 9, 10})
    for kind, times in (("clients", startup.clients), ("servers", startup.servers)):
        rows = sorted(((name, t.figures, t.peak_rss_kib) for name, t in times.items() if t.figures is not None),
                      key=lambda row: row[1].mean_s)
        best = rows[0][1].mean_s if rows else None
        for i, (name, f, rss) in enumerate(rows, 1):
            grid.add([str(i), kind[:-1], name, f"{1000 * f.mean_s:.1f}", f"{1000 * f.stddev_s:.1f}",
                      f"{1000 * f.median_s:.1f}", f"{1000 * f.min_s:.1f}", f"{1000 * f.max_s:.1f}",
                      str(f.runs), "–" if rss is None else f"{rss / 1024:.1f}",
                      f"{f.mean_s / best:.2f}×" if best else "–"])
    return grid


def _overall(entries: list[ProfileCell]) -> str:
    values = sorted(e.overhead for e in entries if e.overhead is not None)
    if not values:
        return ""
    mid = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    return (f" Over the {len(values)} cells: median {100 * mid:.1f} %, from {100 * values[0]:.1f} % to "
            f"{100 * values[-1]:.1f} % (a cell's own run-to-run spread is in these figures too).")


def sections(profiles: Profiles | None, startup: Startup | None) -> list[Section]:
    """The report's sections for a run's ``profiles`` and ``startup`` (either may be None)."""
    out: list[Section] = []
    if startup:
        blocks: list[Any] = [startup.what, startup_grid(startup)]
        failed = [f"{kind[:-1]} {name}: {error}" for kind, name, error in startup.failed()]
        if failed:
            blocks.append(Bullets(failed))
        out.append(Section("Start-up (hyperfine)", blocks))
    if profiles:
        entries = profiles.cells
        out.append(Section("Where the time goes (profiles)", [
            f"Profiles under `{profiles.dir}`. Share of perf samples (%) of the measured phase, by the "
            "self frame's category (harness/wsbench/profile/classify.py); each row sums to 100 %. Overhead: "
            "the drop in msgs/s under profiling (perf attached, profiling build, JIT naming flags)."
            + _overall(entries), summary_grid(entries)]))
        out += [s for e in entries for s in cell_sections(e)]
    return out
