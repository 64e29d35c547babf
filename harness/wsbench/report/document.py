"""A run's report as a list of sections, the same for every format: the QuickJS
scoreboard first, the overall scores, one ranked table per workload (with charts in
HTML), what each client can drive against one server, the efficiency views, what the
echo checks cost, the source documents' claims, links to profiles, how to read it all,
and the problems.

A new kind of result (like the conformance table) is one more entry in ``BUILDERS``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from ..conformance import tables as conformance_tables
from ..server_conformance import server_tables as server_conformance_tables
from ..deflate_conformance import pmd_tables as deflate_conformance_tables
from ..doc import Block, Bullets, Grid, Report, Section
from ..gate import findings
from ..metrics import METRICS
from ..profile import views as profile_views
from ..ranking import factor, label
from ..model import Run
from .ranked import check_cost, environment, failures, fmt_factor, notes_section, workload_section
from . import capacity, claims, compression, conformance_grid, deflate_memory, derived, footprint, misbehave, shards as shards_report, tls as tls_report



def build(run: Run, source: Path, with_charts: bool = False) -> Report:
    if run.settings.get("profiled") or (run.startup and not run.cells):
        builders = PROFILED  # `wsbench profile` / `wsbench startup`: nothing to rank
    else:
        builders = BUILDERS if run.workloads else NO_WORKLOADS  # e.g. a `wsbench conformance` run
    sections = [s for builder in builders for s in builder(run, source, with_charts)]
    return Report(f"wsbench results — {run.created}", str(source), environment(run), sections, run=run)


def printed(run: Run) -> Report:
    """What ``wsbench run``, ``conformance`` and ``merge`` print and write beside the run
    file: the run's facts, a ranked table per workload, capacity, conformance (a measured
    run: what each program checks; the case-by-case table is the report's), what the
    checks cost, the problems and the shards."""
    notes = [notes_section()] if run.workloads else []
    tables = (conformance_grid.sections(run, case_by_case=False) if run.workloads
              else [*conformance_tables.sections(run), *server_conformance_tables.sections(run)])
    sections = [*(workload_section(run, w) for w in run.workloads), *capacity.sections(run), *footprint.sections(run), *misbehave.sections(run), *notes, *tables,
                *check_cost(run), *failures(run), *shards_report.sections(run)]
    return Report(f"wsbench results — {run.created}", None, environment(run), sections, run=run)


def printed_profile(run: Run) -> Report:
    """What ``wsbench profile`` and ``wsbench startup`` print and write: the profiles and
    start-up figures, never ranked against timing runs."""
    what = "profile" if run.profiles else "startup"
    return Report(f"wsbench {what} — {run.created}", None, [], profile_views.sections(run.profiles, run.startup),
                  intro=["A profiled run: nothing here is ranked against timing runs; every figure was taken under "
                         "profiling or for start-up only."], run=run)


def _scoreboard(run: Run, source: Path, with_charts: bool) -> list[Section]:
    lines = derived.scoreboard(run)
    ref = derived.reference_server(run)
    grid = Grid(["workload", "server", "QuickJS (median)", "rank among clients", "vs best JIT client",
                 "vs native client", "vs quickjs-baseline", "against the best JIT"], right={2, 3, 4, 5, 6})
    for ln in lines:
        metric = METRICS[ln.metric]
        jit = ln.best_jit
        grid.add([ln.workload, label(run, "servers", ln.server), f"{ln.quickjs.median:,.{metric.digits}f} "
                  f"{metric.header}", f"{ln.rank} of {ln.of}", _versus(run, jit), _versus(run, ln.native),
                  "–" if ln.baseline is None else f"{ln.baseline.advantage:.2f}×",
                  "–" if jit is None else "tie" if jit.overlap else "**loses**" if jit.advantage < 1 else "wins"],
                 {4: _shade(jit), 5: _shade(ln.native), 6: _shade(ln.baseline)})
    where = (f"on the native server ({label(run, 'servers', ref)})" if ref else "on every server of the run")
    intro = (f"The `quickjs` client per workload, {where}, against the best JIT client (Node, Bun, Deno), the "
             "native load generator and its own unoptimized twin. A ratio is how many times better QuickJS is "
             "(below 1: worse); \"tie\" when the 95 % intervals overlap. Workloads where QuickJS loses come "
             "first.")
    if not lines:
        return [Section("QuickJS scoreboard", ["The run has no `quickjs` cell."])]
    return [Section("QuickJS scoreboard", [intro, grid])]


def _versus(run: Run, v: derived.Versus | None) -> str:
    if v is None:
        return "–"
    return f"{v.advantage:.2f}× ({label(run, 'clients', v.client)})"


def _shade(v: derived.Versus | None) -> float | None:
    """A factor for the colour scale: 1 (green) where QuickJS is at least as good."""
    return None if v is None else max(1.0, 1 / v.advantage) if v.advantage > 0 else None


def _scores(run: Run, source: Path, with_charts: bool) -> list[Section]:
    blocks: list[Block] = [
        "The geometric mean of each one's factors (1.00 = best in every table it was in). A client's factor "
        "on a workload is taken against the best client on the same server, a server's against the best "
        "server driven by the same client."]
    for side, kind in (("client", "clients"), ("server", "servers")):
        rows = derived.scores(run, side)
        if not rows:
            continue
        grid = Grid([side, "score (geometric mean of factors)", "tables", "worst factor"], right={1, 2, 3})
        for s in rows:
            grid.add([label(run, kind, s.name), f"{s.geomean:.2f}", str(s.groups), fmt_factor(s.worst)],
                     {1: s.geomean})
        blocks.append(grid)
    return [Section("Overall scores", blocks)] if len(blocks) > 1 else []


def _workloads(run: Run, source: Path, with_charts: bool) -> list[Section]:
    out = []
    for workload in run.workloads:
        section = workload_section(run, workload)
        if with_charts:
            from .visuals import workload_charts  # matplotlib only when charts are drawn

            section.blocks += workload_charts(run, workload)
        out.append(section)
    return out


def _shards(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return shards_report.sections(run)


def _tables(run: Run, title: str, intro: str, table_of: Callable[[Run, str], list[Block]]) -> list[Section]:
    """A section of one table per workload (each under its name; a workload without one
    is left out), or none when no workload has a table."""
    blocks: list[Block] = []
    for workload in run.workloads:
        table = table_of(run, workload)
        if table:
            blocks += [f"**{workload}**", *table]
    return [Section(title, [intro, *blocks])] if blocks else []


EFFICIENCY = ("For embedded readers: messages per busy core (messages over the CPU-seconds both sides spent, and the "
              "client's alone; what the pair would do if each CPU-second were a core of its own) and msgs/s per MiB of "
              "the client's peak RSS. Medians over repetitions, best per-core first; the factor is against that best.")
DRIVE = ("Every client against the same server ({server}, the native reference) on each throughput workload: the rate "
         "it drove, the CPU it spent per message, its CPU share of the measured phase and the server's meanwhile (1.00 "
         "= one core kept busy; medians over repetitions, fastest first). A client whose own CPU is the limit while "
         "the server has cores to spare measures itself, not the server: before a team trusts a load test, it needs "
         "to know the rate its load tester can drive at all. \"bound\" as in the ranked tables (a side at 90 % of a "
         "core or more).")


def _efficiency(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return _tables(run, "Efficiency", EFFICIENCY, _efficiency_table)


def _efficiency_table(run: Run, workload: str) -> list[Block]:
    rows = derived.efficiency(run, workload)
    best = rows[0].per_core if rows else None
    factors = [factor(e.per_core, best, True) if e.per_core and best else None for e in rows]
    return _grid(["client", "server", "msgs per busy core", "factor", "msgs per client core", "msgs/s per client MiB"],
                 {2, 3, 4, 5}, [([label(run, "clients", e.cell.client), label(run, "servers", e.cell.server),
                                  _med(e.per_core), fmt_factor(f), _med(e.per_client_core), _med(e.per_mib)], {3: f})
                                 for e, f in zip(rows, factors)])


def _grid(headers: list[str], right: set[int], rows: list[tuple[list[str], dict[int, float | None]]]) -> list[Block]:
    """A table of ``rows`` (cells, and the factors that colour them), or nothing without rows."""
    if not rows:
        return []
    grid = Grid(headers, right=right)
    for cells, shades in rows:
        grid.add(cells, shades)
    return [grid]


def _drive(run: Run, source: Path, with_charts: bool) -> list[Section]:
    """What each client can drive: the load tester's ceiling against one server."""
    server = derived.reference_server(run)
    return _tables(run, "What each client can drive", DRIVE.format(server=label(run, "servers", server) if server
                                                                   else "–"), _drive_table)


def _drive_table(run: Run, workload: str) -> list[Block]:
    rows = derived.drive(run, workload)
    table = _grid(["client", "msgs/s (median)", "of the fastest", "client CPU µs/msg", "client CPU share",
                   "server CPU share", "bound"], {1, 2, 3, 4, 5},
                  [([label(run, "clients", d.cell.client), f"{d.rate:,.0f}", _share(d.of_best),
                     _num(d.client_us_per_msg, 2), _num(d.client_share, 2), _num(d.server_share, 2), d.bound or "–"],
                    {2: 1 / d.of_best if d.of_best > 0 else None}) for d in rows])
    return [*table, _drive_summary(run, rows)] if rows else []


def _drive_summary(run: Run, rows: list[derived.Drive]) -> str:
    """One line under a workload's table: the slowest client against the fastest, and the server meanwhile."""
    fast, slow = rows[0], rows[-1]
    if fast is slow:
        return f"Only {label(run, 'clients', fast.cell.client)} was measured."
    idle = f", the server at {slow.server_share:.0%} of a core meanwhile" if slow.server_share is not None else ""
    return (f"{label(run, 'clients', slow.cell.client)} drove {_share(slow.of_best)} of the rate of "
            f"{label(run, 'clients', fast.cell.client)} ({fast.rate / slow.rate:,.1f}× fewer msgs/s){idle}.")


def _share(x: float) -> str:
    """A share in as many digits as it needs to differ from 0: 25%, 3.5%, 0.27%."""
    return f"{x:.0%}" if x >= 0.095 else f"{x:.1%}" if x >= 0.0095 else f"{x:.2%}"


def _num(v: float | None, digits: int) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _med(v: float | None) -> str:
    return "–" if v is None else f"{v:,.0f}"


def _check_cost(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return check_cost(run)


def _capacity(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return capacity.sections(run, with_charts)


def _footprint(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return footprint.sections(run)


def _tls(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return tls_report.sections(run)


def _compression(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return compression.sections(run) + deflate_memory.sections(run)


def _misbehave(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return misbehave.sections(run)


def _claims(run: Run, source: Path, with_charts: bool) -> list[Section]:
    """A measured run's claims; a run of ``wsbench count`` alone (no workloads) its claims
    of the quickjs-websocket optimizations, the only ones counted."""
    if not run.workloads:
        return [claims.quickjs_section(run)] if run.counts else []
    return claims.sections(run)


def _conformance(run: Run, source: Path, with_charts: bool) -> list[Section]:
    """A conformance run's tables (a measured run's verdicts are in ``_programs_checks``)."""
    return [] if run.workloads else conformance_tables.sections(run)


def _server_conformance(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return [] if run.workloads else server_conformance_tables.sections(run)


def _deflate_conformance(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return [] if run.workloads else deflate_conformance_tables.sections(run)


def _programs_checks(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return conformance_grid.sections(run)


def _gate(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return findings.sections(run.gate, run.environment.get("gate_builds"))


def _links(run: Run, source: Path, with_charts: bool) -> list[Section]:
    """Profiles and start-up of this run, or those in ``profiles/<time>/`` beside ``reports/``."""
    if run.profiles or run.startup:
        return profile_views.sections(run.profiles, run.startup)
    stamp = re.sub(r"^run-", "", source.stem)
    profiles = source.resolve().parent.parent / "profiles" / stamp
    if not profiles.is_dir():
        return [Section("Profiles and start-up", [
            "This run has no profiles and no start-up table (`wsbench profile`, `wsbench startup`: issue 8)."])]
    files = sorted(p for p in profiles.rglob("*") if p.suffix in (".svg", ".md"))
    return [Section("Profiles and start-up", [f"Profiles of this run: `{profiles}`",
                                               Bullets([f"[{p.relative_to(profiles)}]({p.as_uri()})" for p in files])])]


def _notes(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return [notes_section()]


def _failures(run: Run, source: Path, with_charts: bool) -> list[Section]:
    return failures(run)


Builder = Callable[[Run, Path, bool], list[Section]]
BUILDERS: list[Builder] = [_gate, _scoreboard, _scores, _workloads, _shards, _capacity, _footprint, _misbehave, _tls, _compression,
                           _drive, _efficiency,
                           _check_cost, _programs_checks, _conformance, _server_conformance, _deflate_conformance,
                           _claims, _links, _notes, _failures]
NO_WORKLOADS: list[Builder] = [_gate, _conformance, _server_conformance, _deflate_conformance, _claims, _failures]
PROFILED: list[Builder] = [_links]
