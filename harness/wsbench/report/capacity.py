"""Capacity in a report (the `idle` and `fanout` workloads, the `capacity` suite): what
each held connection costs in memory, fitted over several numbers of connections of one
run; how fast connections open; what a server does while they sit idle; how fast it fans
a message out, with delivery latency; the ramp's largest number of subscribers; and the
limits of the machine that applied.

Memory per connection is the slope of resident memory against the number of connections
held, a least-squares line over every repetition of every `idle` workload of the run
(each on a server started for it alone, so its memory holds nothing of earlier cells),
with its intercept (the process's memory with none) and R². A server's is read with the
reference client driving it; a client's against the reference server (and its twin
``NAME/deflate``). Each fit is of one kind of connection: a program's points are grouped
by whether its connections compressed (a ``NAME/deflate`` server, or a client's cells
against one) and whether each had carried a message before the mark (``warm``), so that
idle and warm, plain and compressed connections are never one line.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from ..deflate import TWIN
from ..doc import Block, Chart, Grid, Section
from ..ranking import label, median_of
from ..model import Cell, Run
from .cell_state import kind_of

MIN_POINTS = 3  # of at least two different numbers of connections


@dataclass(frozen=True)
class Fit:
    name: str  # the server or the client
    side: str  # "server" or "client"
    points: list[tuple[int, float]]  # (connections held, RSS KiB)
    slope_kib: float  # per connection
    intercept_mib: float
    r2: float
    compressed: bool = False  # permessage-deflate: a NAME/deflate server, or a client against one
    warm: bool = False  # each connection sent a message and took its echo before the mark (warm = true)

    @property
    def program(self) -> str:
        """The program without its deflate twin's suffix (``lws`` for ``lws/deflate``)."""
        return base_name(self.name)

    @property
    def held_as(self) -> str:
        """What its connections were at the mark: "idle" or "after traffic", with or without deflate."""
        return f"{'after traffic' if self.warm else 'idle'}, {'deflate' if self.compressed else 'no deflate'}"

    @property
    def conns_per_mib(self) -> float | None:
        return 1024 / self.slope_kib if self.slope_kib > 0 else None


def fit(points: list[tuple[int, float]]) -> tuple[float, float, float] | None:
    """Least squares y = a + b·x: (b, a, R²); None for fewer than MIN_POINTS points or a
    single x."""
    if len(points) < MIN_POINTS or len({x for x, _ in points}) < 2:
        return None
    xs, ys = [float(x) for x, _ in points], [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys))
    return slope, intercept, 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0


def base_name(server: str) -> str:
    """A server's name without the deflate axis' suffix."""
    return server[:-len(TWIN)] if server.endswith(TWIN) else server


def compressed(run: Run, server: str) -> bool:
    """Whether ``server`` is a deflate twin (permessage-deflate on: NAME/deflate)."""
    record = run.servers.get(server)
    return server.endswith(TWIN) or (record is not None and record.deflate is not None)


def warm(run: Run, workload: str) -> bool:
    """Whether an idle workload's connections carried a message before the mark (``warm``)."""
    return bool(run.workloads.get(workload, {}).get("params", {}).get("warm"))


def held_points(cells: list[Cell], key: str) -> list[tuple[int, float]]:
    """(connections held, the reading ``key`` at the mark ``held``) of every sample that ended well."""
    out = []
    for cell in cells:
        for s in cell.ok_samples:
            held = ((s.extra.get("marks") or {}).get("held") or {}).get(key)
            n = s.extra.get("connections")
            if isinstance(held, (int, float)) and isinstance(n, int) and n > 0:
                out.append((n, float(held)))
    return out


def memory_fits(run: Run) -> list[Fit]:
    """Per server (driven by the reference client) and per client (against the reference
    server or its deflate twin), the fit of RSS against connections held over the run's idle
    cells, one per kind of connection: compressed or not, warm or not."""
    ref_server = run.settings.get("reference_server") or _reference(run, "server")
    ref_client = run.settings.get("reference_client") or _reference(run, "client")
    groups: dict[tuple[str, str, bool, bool], list[Cell]] = {}
    for c in run.cells:
        if kind_of(run, c.workload) != "idle":
            continue
        how = (compressed(run, c.server), warm(run, c.workload))
        if c.client == ref_client:
            groups.setdefault(("server", c.server, *how), []).append(c)
        if ref_server is not None and base_name(c.server) == base_name(ref_server):
            groups.setdefault(("client", c.client, *how), []).append(c)
    out = []
    for (side, name, packed, warmed), cells in sorted(groups.items()):
        points = held_points(cells, f"{side}_rss_kib")
        line = fit(points)
        if line is not None:
            slope, intercept, r2 = line
            out.append(Fit(name, side, sorted(points), slope, intercept / 1024, r2, packed, warmed))
    return out


def _reference(run: Run, side: str) -> str | None:
    """The reference program as the run's cells show it: the server (with its deflate twin,
    as one) or client that takes part in the most idle cells (the scoped suite pairs
    everything with it)."""
    idle = [c for c in run.cells if kind_of(run, c.workload) == "idle"]
    names = [base_name(c.server) if side == "server" else c.client for c in idle]
    return max(sorted(set(names)), key=names.count) if names else None


def sections(run: Run, with_charts: bool = False) -> list[Section]:
    kinds = {w.get("kind") for w in run.workloads.values()}
    if not kinds & {"idle", "fanout"}:
        return []
    blocks: list[Block] = []
    fits = memory_fits(run)
    if fits:
        mixed = any(f.compressed or f.warm for f in fits)  # a column for what the connections were
        grid = Grid(["side", "program", *(["connections at the mark"] if mixed else []), "KiB per connection (slope)",
                     "connections per MiB", "base MiB (intercept)", "R²", "points", "connections held"],
                    right={i + (1 if mixed else 0) for i in (2, 3, 4, 5, 6)})
        for f in sorted(fits, key=lambda f: (f.side, f.warm, f.compressed, f.slope_kib)):
            ns = [n for n, _ in f.points]
            grid.add([f.side, _program(run, f), *([f.held_as] if mixed else []), f"{f.slope_kib:,.2f}",
                      "–" if f.conns_per_mib is None else f"{f.conns_per_mib:,.0f}", f"{f.intercept_mib:,.1f}",
                      f"{f.r2:.4f}", str(len(f.points)), f"{min(ns):,} – {max(ns):,}"])
        blocks += ["**Memory per connection**: the slope of resident memory against connections held (least "
                   "squares over every idle cell and repetition; servers driven by the reference client, each on "
                   "a server started for the sample; clients against the reference server)."
                   + (" One fit per kind of connection: idle (no message before the mark) or after traffic "
                      "(`warm`: one message and its echo on each before the hold), with permessage-deflate "
                      "(a `NAME/deflate` server, or a client against one) or without." if mixed else ""), grid]
        if with_charts:
            from . import charts

            series = {f"{f.side}: {_program(run, f)}" + (f" ({f.held_as})" if mixed else ""):
                      [(float(n), kib / 1024) for n, kib in f.points] for f in fits}
            blocks.append(Chart(charts.scatter_lines(series, "connections held", "RSS MiB"),
                                "resident memory against connections held, each repetition a point"))
    blocks += _open_and_idle(run)
    blocks += _fanout(run)
    blocks += _ramp(run)
    blocks += _limits(run)
    return [Section("Capacity", blocks)] if blocks else []


def _program(run: Run, f: Fit) -> str:
    """A fit's program as the report names it (a client by its own label, whatever server)."""
    return label(run, "servers" if f.side == "server" else "clients", f.name)


def _open_and_idle(run: Run) -> list[Block]:
    grid = Grid(["workload", "client", "server", "connections held", "opens/s", "server CPU share idle",
                 "client CPU share idle", "server KiB/conn (before → held)", "stopped"], right={3, 4, 5, 6, 7})
    for cell in run.cells:
        if kind_of(run, cell.workload) != "idle" or not cell.samples:
            continue
        stopped = next((s.extra.get("stopped") for s in cell.samples if s.extra.get("stopped")), None)
        grid.add([cell.workload, label(run, "clients", cell.client), label(run, "servers", cell.server),
                  _med(cell, "connections", 0), _med(cell, "opens_per_s", 0), _med(cell, "idle_server_cpu_share", 3),
                  _med(cell, "idle_client_cpu_share", 3), _med(cell, "server_kib_per_conn", 2), stopped or "–"])
    if not grid.rows:
        return []
    return ["**Opening and holding**: connections held, how fast they opened (at the workload's concurrency), "
            "each side's CPU share while they sat idle, and the server's memory per connection measured "
            "directly (RSS held − RSS before the client started, over the connections).", grid]


def _fanout(run: Run) -> list[Block]:
    grid = Grid(["workload", "subscribers", "server", "delivered msgs/s", "p50 ms", "p99 ms", "p99.9 ms", "lost",
                 "server CPU share", "bound"], right={1, 3, 4, 5, 6, 7, 8})
    for cell in run.cells:
        spec = run.workloads.get(cell.workload, {})
        if spec.get("kind") != "fanout" or spec.get("ramp") or not cell.samples:
            continue
        n = spec.get("params", {}).get("connections")
        lost = median_of(cell, "lost")
        grid.add([cell.workload, f"{n:,}" if isinstance(n, int) else "–", label(run, "servers", cell.server),
                  _med(cell, "delivered_per_s", 0), _ms(cell, "latency_p50_us"), _ms(cell, "latency_p99_us"),
                  _ms(cell, "latency_p999_us"), "failed" if not cell.ok_samples else f"{lost:,.0f}" if lost is not None
                  else "–", _med(cell, "server_cpu_share", 2), _bound(cell)])
    if not grid.rows:
        return []
    return ["**Fan-out**: N subscribers of /broadcast, one of them publishing at a fixed rate; every delivery "
            "timed from its send (one clock: the load generator's); a lost, duplicated or reordered message "
            "fails the cell, naming the message and the subscriber.", grid]


def _ramp(run: Run) -> list[Block]:
    grid = Grid(["workload", "server", "largest N with p95 in bound", "bound", "stopped"], right={2})
    for cell in run.cells:
        spec = run.workloads.get(cell.workload, {})
        if not spec.get("ramp") or not cell.samples:
            continue
        stopped = next((s.extra.get("ramp_stopped") for s in cell.samples if s.extra.get("ramp_stopped")), "–")
        grid.add([cell.workload, label(run, "servers", cell.server), _med(cell, "max_connections", 0),
                  f"p95 ≤ {spec['ramp']['p95_ms']:g} ms", stopped])
    return ["**Ramp**: subscribers grow until p95 delivery latency passes the bound, a message is lost or a limit "
            "stops it.", grid] if grid.rows else []


def _limits(run: Run) -> list[Block]:
    env = run.environment.get("limits") or {}
    if not env:
        return []
    nofile = env.get("rlimit_nofile") or {}
    rows = [["RLIMIT_NOFILE (harness: soft / hard; every server and client runs with soft = hard)",
             f"{nofile.get('soft')} / {nofile.get('hard')}"],
            ["net.ipv4.ip_local_port_range", str(env.get("ip_local_port_range"))],
            ["net.core.somaxconn", str(env.get("somaxconn"))],
            ["net.ipv4.tcp_mem (pages: low, pressure, high)", str(env.get("tcp_mem"))],
            ["fs.nr_open / fs.file-max", f"{env.get('fs_nr_open')} / {env.get('fs_file_max')}"]]
    seen: dict[str, Any] = {}
    for cell in run.cells:
        for s in cell.samples:
            for side, value in (s.extra.get("limits") or {}).items():
                if value:
                    who = f"{side.split('_')[0]} {cell.server if side.startswith('server') else cell.client}"
                    seen[who] = value
    rows += [[f"RLIMIT_NOFILE of {who} (soft / hard)", f"{v[0]} / {v[1]}"] for who, v in sorted(seen.items())]
    grid = Grid(["limit", "value"])
    for row in rows:
        grid.add(row)
    return ["**The limits that applied**", grid]


def _med(cell: Cell, metric: str, digits: int) -> str:
    v = median_of(cell, metric)
    return "–" if v is None else f"{v:,.{digits}f}"


def _ms(cell: Cell, metric: str) -> str:
    v = median_of(cell, metric)
    return "–" if v is None else f"{v / 1000:,.2f}"


def _bound(cell: Cell) -> str:
    client, server = median_of(cell, "client_cpu_share"), median_of(cell, "server_cpu_share")
    if client is None or server is None:
        return "–"
    return "client" if client >= 0.9 > server else "server" if server >= 0.9 > client else \
        "both" if client >= 0.9 and server >= 0.9 else "–"

