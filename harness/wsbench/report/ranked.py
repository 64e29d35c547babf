"""Ranked tables of a run: one table per workload, best median first; the run's facts,
its failures, and what the echo checks cost.

Rows whose 95 % intervals of the median overlap share a rank, so the table never claims
an order the data cannot support. Pairs that cannot express a workload are listed as
n/a with the reason; failed cells are listed with the error.
"""

from __future__ import annotations

import statistics
from typing import Any

from . import check_marks, compression, tls as tls_report
from ..doc import Bullets, Grid, Section
from ..metrics import COLUMNS, METRICS, Metric
from ..ranking import (CV_WARN, SATURATED, RankedRow, bound_note, bound_side, label, median_of, rank, ranked,
                      unmeasured, values, workload_metric)
from ..model import Cell, Run
from ..stats import ratio_of_medians
from ..target import EXTERNAL

__all__ = ["bound_side", "rank"]


def environment(run: Run) -> list[str]:
    """The run's machine, suite, runtimes and settings, one line each."""
    env = run.environment
    commit = f"commit {str(env.get('git_commit'))[:12]}{' (dirty)' if env.get('git_dirty') else ''}"
    out = [f"machine: {env.get('cpu_model')}, {env.get('logical_cpus')} logical CPUs, "
           f"kernel {env.get('kernel')}, {env.get('os')}"]
    if run.conformance is not None and not run.workloads:
        section = run.conformance
        over = " over TLS (wss://)" if run.settings.get("tls") else ""
        out.append(f"conformance: {len(section.cases)} cases x {len(section.verdicts)} "
                   f"clients{over}, {run.settings.get('jobs', 1)} client processes at a time; {commit}")
    else:
        out.append(f"suite: {run.suite or '(ad hoc)'}, {run.repetitions} interleaved repetitions per cell; {commit}")
    versions = "; ".join(f"{name}: {v['version']}" for name, v in env.get("runtimes", {}).items())
    out.append(f"runtimes: {versions}")
    if run.workloads or run.conformance is None:
        out.append(_settings(run))
    if isinstance(env.get("docker"), dict):
        out.append(_containers(env["docker"]))
    out += tls_report.header(run)
    out += compression.header(run)
    if run.settings and run.settings.get("verify") in ("off", False):
        out.append("**echo contents NOT verified** (`--verify off`): for measuring what the checks cost, "
                   "not for publishing")
    if not run.complete:
        out.append("**incomplete run**: interrupted before every cell was measured")
    return out


def _settings(run: Run) -> str:
    """How the cells were measured: floor, pinning, load before and after."""
    st, env = run.settings, run.environment
    if not st and run.gate:
        return "regression gate: instruction counts under callgrind (no clock); no wall-clock run in this file"
    if not st:
        return "measured phases: as long as each workload's count (schema 1 run: no floor, no barrier)"
    pin = st.get("pinning")
    where = (f"client on CPU {','.join(map(str, pin['client']))}, server on CPU {','.join(map(str, pin['server']))}"
             if pin else "not pinned")
    load = env.get("load_average")
    after = env.get("load_average_after")
    loads = f"; load average {load[0]:.2f} before" if load else ""
    loads += f", {after[0]:.2f} after" if after else ""
    return (f"measured phases of at least {st.get('min_seconds', 0):g} s (bursts repeated; latency and "
            f"open-loop workloads keep their own length); {where}{loads}")


def _containers(docker: dict[str, Any]) -> str:
    """make bench-docker: where each side ran, the images, and how the servers were read."""
    sets = docker.get("cpusets") or {}
    images = "; ".join(f"{name} {str(i.get('id', '?')).removeprefix('sha256:')[:12]}"
                       for name, i in (docker.get("images") or {}).items())
    engine = docker.get("engine") or {}
    inside = docker.get("server_runtimes") or {}
    versions = ("; server runtimes in their containers: "
                + ", ".join(f"{name} {v.get('version', '?')}" for name, v in inside.items()) if inside else "")
    return (f"containers (Docker {engine.get('server_version', '?')}, host network): servers on CPUs "
            f"{sets.get('servers', '?')}, clients in the runner on CPUs {sets.get('clients', '?')}; images: {images}"
            f"{versions}; server CPU and RSS: {docker.get('readings', '?')}")


def _kind(spec: dict[str, Any]) -> str:
    return "sweep" if spec.get("sweep") else "ramp" if spec.get("ramp") else str(spec.get("kind", "echo"))


def workload_section(run: Run, workload: str) -> Section:
    """One workload's heading, ranked table and the n/a and failed pairs below it."""
    spec = run.workloads[workload]
    section = Section(f"{workload} — {spec.get('description', '')}")
    if spec.get("sweep"):
        section.blocks.append(f"Open-loop rates tried, rising: {', '.join(map(str, spec['sweep']['rates']))} "
                              f"msgs/s; a rate passes while p99 ≤ {spec['sweep']['p99_us']:g} µs.")
    if spec.get("ramp"):
        section.blocks.append(f"Subscribers tried, rising: {', '.join(f'{n:,}' for n in spec['ramp']['connections'])}; "
                              f"a number passes while p95 delivery latency ≤ {spec['ramp']['p95_ms']:g} ms, "
                              "nothing is lost and no limit of the machine is hit.")
    notes = check_marks.Footnotes()
    section.blocks.append(workload_grid(run, workload, notes))
    if notes.lines:
        section.blocks.append(Bullets(notes.lines))
    return section


def workload_grid(run: Run, workload: str, notes: check_marks.Footnotes | None = None) -> Grid:
    """Ranking metric, interval, factor against the best, the columns the workload's kind
    shows, the bound side and the spread, and in a run with conformance summaries the
    checks its programs skip (footnoted in ``notes``); then the n/a and failed pairs with
    the reason."""
    cells = [c for c in run.cells if c.workload == workload]
    metric = METRICS[workload_metric(run, workload)]
    extra = [METRICS[m] for m in COLUMNS[_kind(run.workloads[workload])] if m != metric.name]
    marked = check_marks.recorded(run)
    headers = ["rank", "client", "server", f"{metric.header} (median)", "95% CI", "factor",
               *(m.header for m in extra), "bound", "CV", *(["checks"] if marked else [])]
    grid = Grid(headers, right={i for i, h in enumerate(headers) if h not in ("client", "server", "checks")})
    notes = notes if notes is not None else check_marks.Footnotes()
    for row in ranked(cells, metric.name):
        cells_ = _row(run, row, metric, extra)
        tones: dict[int, str] = {}
        if marked:
            checks = check_marks.of_cell(run, row.cell)
            cells_.append(notes.mark(run, checks))
            tones[len(cells_) - 1] = check_marks.TONE[checks.status]
        grid.add(cells_, {5: row.factor}, tones)
    for cell, why in unmeasured(cells, metric.name):
        grid.add(["–", label(run, "clients", cell.client), label(run, "servers", cell.server), why])
    return grid


def _row(run: Run, row: RankedRow, metric: Metric, extra: list[Metric]) -> list[str]:
    s, cell, d = row.summary, row.cell, metric.digits
    flag = " ⚠" if s.cv is not None and s.cv > CV_WARN else ""
    note = f" ({len(cell.errors)} of {len(cell.samples)} reps failed)" if cell.errors else ""
    return [str(row.position), label(run, "clients", cell.client),
            label(run, "servers", cell.server) + compression.mark(run, cell), f"{s.median:,.{d}f}{note}",
            f"{s.ci95[0]:,.{d}f}–{s.ci95[1]:,.{d}f}", fmt_factor(row.factor),
            *(_reading(run, cell, m) for m in extra), bound_note(cell) or "–", pct(s.cv) + flag]


def _reading(run: Run, cell: Cell, m: Metric) -> str:
    """A column's median; the server's CPU and RSS of a target wsbench cannot read say so."""
    record = run.servers.get(cell.server)
    if m.name.startswith("server_") and record is not None and record.readings == EXTERNAL:
        return EXTERNAL
    return _num(median_of(cell, m.name), m.digits)


def fmt_factor(f: float | None) -> str:
    return "–" if f is None else f"{f:.2f}×"


def check_cost(run: Run) -> list[Section]:
    """With --verify both: what checking the echoes costs each client, from the same run."""
    twins = [name for name in run.clients if f"{name}/unchecked" in run.clients]
    if not twins:
        return []
    grid = Grid(["workload", "client", "server", "CPU µs/msg checked", "unchecked", "CPU change",
                 "msgs/s change"], right={3, 4, 5, 6})
    cells = {c.key: c for c in run.cells}
    for cell in run.cells:
        twin = cells.get(f"{cell.key}/unchecked") if cell.client in twins else None
        if twin is None:
            continue
        cpu = [values(c, "client_cpu_us_per_msg") for c in (cell, twin)]
        rate = [values(c, "msgs_per_s") for c in (cell, twin)]
        if not cpu[0] or not cpu[1]:
            continue
        grid.add([cell.workload, label(run, "clients", cell.client), label(run, "servers", cell.server),
                  f"{statistics.median(cpu[0]):.3f}", f"{statistics.median(cpu[1]):.3f}",
                  change(ratio_of_medians(*cpu)), change(ratio_of_medians(*rate))])
    return [Section("Cost of the echo checks", [
        "Each client beside its unchecked twin (`--verify both`, interleaved in this run): client CPU "
        "per message and throughput, medians, and the change the checks make, with its 95 % bootstrap "
        "interval.", grid])]


def change(r: tuple[float, float, float] | None) -> str:
    """A ratio and its interval as a signed change: +12.0% (+8.1% … +15.3%)."""
    if r is None:
        return "–"
    point, lo, hi = r
    return f"{point - 1:+.1%} ({lo - 1:+.1%} … {hi - 1:+.1%})"


def notes_section() -> Section:
    return Section("Reading the tables", [
        "The factor is how many times worse than the table's best median a row is (1.00× is the "
        "best; for rates the best over the row, for times the row over the best). \"bound\" names the "
        f"side whose CPU share was at least {SATURATED:.0%} of a core during the measured phase, with both "
        "sides' shares (medians): a row bound by its client measures the client, not the server, and the "
        "server's share says how busy the server was meanwhile (\"What each client can drive\" has every "
        f"client against one server). ⚠ marks a coefficient of variation above {CV_WARN:.0%}. \"checks\" (runs that "
        "record what each program checks of RFC 6455): **server skips UTF-8** or **client skips masking** when the "
        "row's server or client let invalid input through (UTF-8 on text workloads, masking on every workload), "
        "with a footnote naming the cases and where that is known from (a `wsbench conformance` results file, or "
        "the quick subset played at verify time); \"conformance not checked\" when one of them was not tested; "
        "\"checked, hold\" when both were and held: a row marked skips a check the others pay for."])


def failures(run: Run) -> list[Section]:
    def pair(c: Cell) -> str:
        return f"{c.workload}: {label(run, 'clients', c.client)} vs {label(run, 'servers', c.server)}"

    problems = [f"server {n}: {r.error}" for n, r in run.servers.items() if r.error]
    problems += [f"client {n}: {r.error}" for n, r in run.clients.items() if r.error]
    problems += [e for c in run.cells for e in c.errors]
    missing = [f"{pair(c)}, rep {s.rep}: {why}" for c in run.cells for s in c.samples for why in s.reading_errors]
    noisy = [f"{pair(c)}: CV {s.cv:.0%}" for c in run.cells
             for s in [c.summary(workload_metric(run, c.workload))]
             if s is not None and s.cv is not None and s.cv > CV_WARN]
    return [Section(title, [Bullets(items)]) for title, items in (
        ("Problems", problems), ("Readings left empty", missing),
        (f"Noisy cells (CV above {CV_WARN:.0%})", noisy)) if items]


def _num(median: float | None, digits: int) -> str:
    return "–" if median is None else f"{median:,.{digits}f}"


def pct(cv: float | None) -> str:
    return "–" if cv is None else f"{cv * 100:.1f}%"
