"""Figures derived from a run for the report: the QuickJS scoreboard, the overall score
per client and per server (geometric mean of factors), the efficiency views (messages
per busy core, per MiB of peak RSS), and what each client can drive against one server
(the load tester's own ceiling).

A client's factor on a workload is taken against the best client *on the same server*
(and a server's against the best server driven by the same client), so that a client
is never blamed for the server it was paired with.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..metrics import METRICS
from ..ranking import bound_side, factor, median_of, rank, values, workload_metric
from ..model import Cell, ProgramRecord, Run
from ..stats import Summary, ratio_of_medians

QUICKJS = "quickjs"
BASELINE = "quickjs-baseline"
JIT_RUNTIMES = ("node20", "node22", "bun", "deno")
NATIVE_RUNTIME = "native"


def twin_pairs(run: Run, suffix: str) -> list[tuple[Cell, Cell]]:
    """Each cell of a server beside its twin's (``NAME`` and ``NAME`` + ``suffix``: the TLS
    and deflate axes) from the same run, same workload and client, both with samples."""
    cells = {c.key: c for c in run.cells}
    out = []
    for cell in run.cells:
        if cell.server.endswith(suffix):
            continue
        twin = cells.get(f"{cell.workload}/{cell.server}{suffix}/{cell.client}")
        if twin is not None and cell.ok_samples and twin.ok_samples:
            out.append((cell, twin))
    return out


def ratio_text(base: Cell, other: Cell, metric: str) -> str:
    """``other``'s median over ``base``'s, with its 95 % bootstrap interval: "1.23 (1.10–1.40)"."""
    r = ratio_of_medians(values(other, metric), values(base, metric))
    return "–" if r is None else f"{r[0]:.2f} ({r[1]:.2f}–{r[2]:.2f})"


def median_text(cell: Cell, metric: str, scale: float = 1.0, digits: int = 2) -> str:
    vs = values(cell, metric)
    return "–" if not vs else f"{statistics.median(vs) * scale:,.{digits}f}"


def checked_clients(run: Run) -> dict[str, ProgramRecord]:
    """The clients that checked their echoes (the unchecked twins of --verify both are
    for measuring what the checks cost, not for ranking)."""
    return {name: rec for name, rec in run.clients.items() if rec.echo_checks}


def reference_server(run: Run) -> str | None:
    """The native server, when the run has one: the scoreboard compares clients on it."""
    natives = [name for name, rec in run.servers.items() if rec.runtime == NATIVE_RUNTIME]
    return natives[0] if natives else None


def advantage(ours: Summary, theirs: Summary, higher_is_better: bool) -> float | None:
    """How many times better ``ours`` is than ``theirs``: above 1 better, below 1 worse."""
    if higher_is_better:
        return ours.median / theirs.median if theirs.median > 0 else None
    return theirs.median / ours.median if ours.median > 0 else None


@dataclass(frozen=True)
class Versus:
    """QuickJS against another client: its advantage and whether the intervals overlap."""

    client: str
    advantage: float
    overlap: bool


@dataclass(frozen=True)
class ScoreLine:
    workload: str
    server: str
    metric: str
    quickjs: Summary
    rank: int
    of: int
    best_jit: Versus | None
    native: Versus | None
    baseline: Versus | None

    @property
    def loses(self) -> bool:
        """Worse than the best JIT client, beyond the overlap of the intervals."""
        return self.best_jit is not None and self.best_jit.advantage < 1 and not self.best_jit.overlap


def scoreboard(run: Run) -> list[ScoreLine]:
    """Per workload, the ``quickjs`` row among the clients on the reference server (on
    every server where the run has no native one); workloads where QuickJS loses to the
    best JIT client first, then by its advantage over that client, smallest first."""
    ref = reference_server(run)
    clients = checked_clients(run)
    lines = []
    for workload in run.workloads:
        metric = workload_metric(run, workload)
        servers = [ref] if ref else list(run.servers)
        for server in servers:
            cells = {c.client: c for c in run.cells if c.workload == workload and c.server == server
                     and c.client in clients}
            line = _score_line(run, workload, server, metric, cells)
            if line is not None:
                lines.append(line)
    return sorted(lines, key=lambda ln: (not ln.loses, ln.best_jit.advantage if ln.best_jit else math.inf))


def _score_line(run: Run, workload: str, server: str, metric: str, cells: dict[str, Cell]) -> ScoreLine | None:
    ours = cells.get(QUICKJS)
    summary = ours.summary(metric) if ours else None
    if summary is None:
        return None
    ranking = rank(list(cells.values()), metric)
    position = next(p for p, c in ranking if c.client == QUICKJS)
    higher = METRICS[metric].higher_is_better

    def versus(names: list[str]) -> Versus | None:
        measured = [(n, s) for n in names if n in cells for s in [cells[n].summary(metric)] if s]
        if not measured:
            return None
        name, best = max(measured, key=lambda ns: ns[1].median if higher else -ns[1].median)
        adv = advantage(summary, best, higher)
        if adv is None:
            return None
        overlap = summary.ci95[0] <= best.ci95[1] and best.ci95[0] <= summary.ci95[1]
        return Versus(name, adv, overlap)

    jit = [n for n in cells if run.clients[n].runtime in JIT_RUNTIMES]
    native = [n for n in cells if run.clients[n].runtime == NATIVE_RUNTIME]
    return ScoreLine(workload, server, metric, summary, position, len(ranking),
                     versus(jit), versus(native), versus([BASELINE]))


@dataclass(frozen=True)
class Score:
    name: str
    geomean: float  # geometric mean of the factors, 1.0 = best everywhere
    groups: int  # how many (workload, partner) tables it was ranked in
    worst: float


def scores(run: Run, side: str) -> list[Score]:
    """Overall score per client (``side="client"``, factors against the best client on the
    same server) or per server (``side="server"``, against the best server driven by the
    same client): the geometric mean of its factors over every workload it ran. Lower is
    better; 1.00 means best in every table."""
    partner = "server" if side == "client" else "client"
    clients = checked_clients(run)
    factors: dict[str, list[float]] = {}
    groups: dict[tuple[str, str], list[Cell]] = {}
    for cell in run.cells:
        if cell.client in clients:
            groups.setdefault((cell.workload, getattr(cell, partner)), []).append(cell)
    for (workload, _), cells in groups.items():
        metric = workload_metric(run, workload)
        higher = METRICS[metric].higher_is_better
        measured = [(c, s) for c in cells for s in [c.summary(metric)] if s]
        if len(measured) < 2:
            continue
        best = max(s.median for _, s in measured) if higher else min(s.median for _, s in measured)
        for cell, s in measured:
            f = factor(s.median, best, higher)
            if f is not None:
                factors.setdefault(getattr(cell, side), []).append(f)
    out = [Score(name, math.exp(statistics.fmean(math.log(f) for f in fs)), len(fs), max(fs))
           for name, fs in factors.items()]
    return sorted(out, key=lambda s: s.geomean)


@dataclass(frozen=True)
class Efficiency:
    cell: Cell
    per_core: float | None  # msgs per CPU-second of client and server together (median)
    per_client_core: float | None  # msgs per CPU-second of the client
    per_mib: float | None  # msgs/s per MiB of the client's peak RSS


def efficiency(run: Run, workload: str) -> list[Efficiency]:
    """Per cell of a throughput workload: messages per busy core (from the CPU-time
    readings: messages over CPU-seconds, i.e. msgs/s if every busy core were one core) and
    msgs/s per MiB of the client's peak RSS; best per-core first."""
    if workload_metric(run, workload) != "msgs_per_s":
        return []
    clients = checked_clients(run)
    out = []
    for cell in run.cells:
        if cell.workload != workload or cell.client not in clients or not cell.ok_samples:
            continue
        both, client, mib = [], [], []
        for s in cell.ok_samples:
            if s.messages and s.client_cpu_s:
                client.append(s.messages / s.client_cpu_s)
                if s.server_cpu_s:
                    both.append(s.messages / (s.client_cpu_s + s.server_cpu_s))
            if s.msgs_per_s and s.client_peak_rss_kib:
                mib.append(s.msgs_per_s / (s.client_peak_rss_kib / 1024))
        out.append(Efficiency(cell, *(statistics.median(xs) if xs else None for xs in (both, client, mib))))
    return sorted(out, key=lambda e: -(e.per_core if e.per_core is not None else -1))


@dataclass(frozen=True)
class Drive:
    """One client against the reference server on a throughput workload."""

    cell: Cell
    rate: float  # msgs/s, median
    of_best: float  # the rate over the fastest client's on the same server
    client_us_per_msg: float | None  # client CPU per message, median
    client_share: float | None  # client CPU over the measured phase (1.0: one core busy), median
    server_share: float | None  # the server's, meanwhile
    bound: str  # ranking.bound_side: "client", "server", "both" or ""


def drive(run: Run, workload: str) -> list[Drive]:
    """Every checked client against the reference server (the native one, reference_server)
    on a workload ranked by msgs/s: the rate it drove, its CPU per message and share, and
    the server's share meanwhile; fastest first. Empty without such a server or workload."""
    server = reference_server(run)
    if server is None or workload_metric(run, workload) != "msgs_per_s":
        return []
    clients = checked_clients(run)
    rows = [(cell, rate) for cell in run.cells
            if cell.workload == workload and cell.server == server and cell.client in clients
            for rate in [median_of(cell, "msgs_per_s")] if rate]
    if not rows:
        return []
    best = max(rate for _, rate in rows)
    out = [Drive(cell, rate, rate / best, median_of(cell, "client_cpu_us_per_msg"),
                 median_of(cell, "client_cpu_share"), median_of(cell, "server_cpu_share"), bound_side(cell))
           for cell, rate in rows]
    return sorted(out, key=lambda d: -d.rate)
