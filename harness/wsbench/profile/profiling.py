"""Profiling: which cells, profiling them one after the other, start-up times,
and the one results file (schema 4: ``profiles``, ``startup``) they go into.

A profiled run is marked ``settings.profiled`` and holds no cells: nothing in it is ranked,
and it never shares a run with timing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from .. import newrun
from ..catalog import Catalog, Program
from ..errors import WsbenchError
from ..paths import relative
from ..model import Profiles, Run, Settings, Startup, StartupTime, write_json
from ..server import start_server
from ..workloads import Workload, WorkloadSet
from . import hyperfine, tools
from .cell import CellPlan, profile_cell

MATRIX_WORKLOADS = ("text_11", "bin_64k")
DEFAULT_MIN_SECONDS = 2.0  # the measured phase of a profiled pass


def sides_for(choice: str, server: Program, client: Program, catalog: Catalog) -> tuple[str, ...]:
    """``auto``: the side that is not the reference (both when both are, client when neither)."""
    if choice == "both":
        return ("client", "server")
    if choice in ("client", "server"):
        return (choice,)
    ref_server = server.catalog_name == catalog.reference_server
    ref_client = client.catalog_name == catalog.reference_client
    if ref_server and ref_client:
        return ("client", "server")
    if ref_client:
        return ("server",)
    return ("client",)


def matrix(catalog: Catalog, workloads: list[Workload], clients: list[Program], servers: list[Program],
           side: str) -> list[CellPlan]:
    """Every client against the reference server, and every server driven by the reference
    client (``make profile``)."""
    ref_server = catalog.servers.get(catalog.reference_server or "")
    ref_client = catalog.clients.get(catalog.reference_client or "")
    if ref_server is None or ref_client is None:
        raise WsbenchError("the catalog names no reference server and client ([reference] in runtimes.toml)")
    plans = []
    for w in workloads:
        pairs = [(ref_server, c) for c in clients] + [(s, ref_client) for s in servers if s.name != ref_server.name]
        for s, c in pairs:
            if (s.cannot(w.kind, w.server_features) or c.cannot(w.kind, w.client_features)
                    or (s.secure and not c.secure)):
                continue
            plans.append(CellPlan(w, s, c, sides_for(side, s, c, catalog)))
    return plans


def plans(catalog: Catalog, workloads: WorkloadSet, names: list[str] | None, client_names: list[str] | None,
          server_names: list[str] | None, side: str, whole_matrix: bool
          ) -> tuple[list[CellPlan], list[Program], list[Program]]:
    """The cells ``wsbench profile`` was asked for (one cell per workload, server and
    client named, or ``matrix``), with the clients and servers selected."""
    names = names or (list(MATRIX_WORKLOADS) if whole_matrix else None)
    if not names:
        raise WsbenchError("name the cell: -w WORKLOAD -c CLIENT -s SERVER (or --matrix)")
    _, chosen = workloads.select(None, names)
    if not whole_matrix and (not client_names or not server_names):
        raise WsbenchError("name the cell: -w WORKLOAD -c CLIENT -s SERVER (or --matrix)")
    clients = catalog.select("client", client_names, None)
    servers = catalog.select("server", server_names, None)
    if whole_matrix:
        out = matrix(catalog, chosen, clients, servers, side)
    else:
        out = []
        for w in chosen:
            for s in servers:
                for c in clients:
                    why = (s.cannot(w.kind, w.server_features) or c.cannot(w.kind, w.client_features)
                           or (c.cannot_tls() if s.secure and not c.secure else None))
                    if why:
                        raise WsbenchError(f"{w.name}/{s.name}/{c.name} cannot be run: {why}")
                    out.append(CellPlan(w, s, c, sides_for(side, s, c, catalog)))
    if not out:
        raise WsbenchError("no cell to profile")
    return out, clients, servers


def startup_programs(catalog: Catalog, client_names: list[str] | None,
                     server_names: list[str] | None) -> tuple[list[Program], list[Program]]:
    """The clients and servers ``wsbench startup`` times: those named, every default one
    when neither side is named, and none of a side when only the other is named."""
    clients = catalog.select("client", client_names, None)
    servers = catalog.select("server", server_names, None)
    if client_names and not server_names:
        servers = []
    if server_names and not client_names:
        clients = []
    return clients, servers


def new_run(catalog: Catalog, plans: list[CellPlan], clients: list[Program], servers: list[Program],
            argv: list[str], settings: dict[str, Any]) -> Run:
    server_set = {pl.server.name: pl.server for pl in plans} | {s.name: s for s in servers}
    client_set = {pl.client.name: pl.client for pl in plans} | {c.name: c for c in clients}
    return newrun.new_run(catalog, argv, server_set.values(), client_set.values(), {"profiled": True, **settings},
                        workloads=[pl.workload for pl in plans])


def profile_all(run: Run, plans: list[CellPlan], out_root: Path, settings: Settings, frequency: int,
                note: Callable[[str], None], results: Path, overhead_runs: int = 1) -> None:
    """Profile every planned cell, writing the run file ``results`` after each."""
    perf = tools.require(*tools.PROFILE_TOOLS)["perf"]
    run.profiles = Profiles(relative(out_root))
    for i, plan in enumerate(plans, 1):
        note(f"[{i}/{len(plans)}] profiling {plan.key} ({' and '.join(plan.sides)})")
        entry = profile_cell(plan, out_root, settings, perf, frequency, note, overhead_runs)
        run.profiles.cells.append(entry)
        if entry.error:
            note(f"! {plan.key}: {entry.error}")
        else:
            over = entry.overhead
            for side, data in entry.breakdown.items():
                top = data.top[0].frame if data.top else "–"
                note(f"  {side}: {data.samples} samples, top self frame {top}; "
                     f"overhead {'–' if over is None else format(100 * over, '.1f') + ' %'}")
        write_json(run, results, summaries=False)


def startup_all(run: Run, catalog: Catalog, clients: list[Program], servers: list[Program], warmup: int,
                runs: int, out_dir: Path, note: Callable[[str], None], results: Path) -> None:
    """Time the start-up of every client and server, writing the run file ``results``
    after each."""
    tool = tools.find("hyperfine")
    out_dir.mkdir(parents=True, exist_ok=True)
    ref = catalog.servers.get(catalog.reference_server or "")
    if ref is None:
        raise WsbenchError("the catalog names no reference server ([reference] in runtimes.toml)")
    times = run.startup = Startup(hyperfine.WHAT.format(warmup=warmup, runs=runs),
                                  hyperfine.hyperfine_version(tool, out_dir), warmup, runs, relative(out_dir))
    if clients:
        live = start_server(ref, out_dir / "logs")
        try:
            for c in clients:
                if _timed(times.clients, c, note, lambda p: hyperfine.time_client(tool, p, live, warmup, runs,
                                                                                 out_dir)):
                    write_json(run, results, summaries=False)
        finally:
            live.stop()
    for s in servers:
        if _timed(times.servers, s, note, lambda p: hyperfine.time_server(tool, p, warmup, runs, out_dir)):
            write_json(run, results, summaries=False)


def _timed(table: dict[str, StartupTime], program: Program, note: Callable[[str], None],
           time: Callable[[Program], StartupTime]) -> bool:
    """Time ``program`` into ``table``; False (with the error there) when it is not built."""
    missing = program.missing()
    if missing:
        table[program.name] = StartupTime(error=f"{missing[0]} is missing; run: make setup")
        return False
    note(f"start-up: {program.kind} {program.name}")
    table[program.name] = time(program)
    return True
