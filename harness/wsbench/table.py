"""Ranked Markdown tables of a run: one table per workload, best median first.

Rows whose 95 % intervals of the median overlap share a rank, so the table never claims
an order the data cannot support. Pairs that cannot express a workload are listed as
n/a with the reason; failed cells are listed with the error.
"""

from __future__ import annotations

import statistics
from typing import Any

from .conformance import report as conformance_report
from .metrics import COLUMNS, METRICS, Metric
from .results import Cell, Run
from .stats import Summary, ratio_of_medians

CV_WARN = 0.10
SATURATED = 0.90  # CPU share from which a side counts as having kept its core busy


def rank(cells: list[Cell], metric: str = "msgs_per_s") -> list[tuple[int, Cell]]:
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


def bound_side(cell: Cell) -> str:
    """Which side kept its core busy: "client", "server", "both" or ""."""
    client, server = cell.summary("client_cpu_share"), cell.summary("server_cpu_share")
    c = client is not None and client.median >= SATURATED
    s = server is not None and server.median >= SATURATED
    return "both" if c and s else "client" if c else "server" if s else ""


def render_markdown(run: Run) -> str:
    lines = [f"# wsbench results — {run.created}", ""]
    lines += _environment(run) + [""]
    for workload, spec in run.workloads.items():
        lines += _workload_table(run, workload, spec) + [""]
    if run.workloads:
        lines += _notes() + [""]
    lines += conformance_report.render(run)
    lines += _check_cost(run)
    lines += _failures(run)
    return "\n".join(lines).rstrip() + "\n"


def _environment(run: Run) -> list[str]:
    env = run.environment
    commit = f"commit {str(env.get('git_commit'))[:12]}{' (dirty)' if env.get('git_dirty') else ''}"
    out = [f"- machine: {env.get('cpu_model')}, {env.get('logical_cpus')} logical CPUs, "
           f"kernel {env.get('kernel')}, {env.get('os')}"]
    if run.conformance is not None and not run.workloads:
        section = run.conformance
        out.append(f"- conformance: {len(section.get('cases', []))} cases x {len(section.get('verdicts', {}))} "
                   f"clients, {run.settings.get('jobs', 1)} client processes at a time; {commit}")
    else:
        out.append(f"- suite: {run.suite or '(ad hoc)'}, {run.repetitions} interleaved repetitions per cell; {commit}")
    versions = "; ".join(f"{name}: {v['version']}" for name, v in env.get("runtimes", {}).items())
    out.append(f"- runtimes: {versions}")
    if run.workloads or run.conformance is None:
        out.append("- " + _settings(run))
    if run.settings and run.settings.get("verify") in ("off", False):
        out.append("- **echo contents NOT verified** (`--verify off`): for measuring what the checks cost, "
                   "not for publishing")
    if not run.complete:
        out.append("- **incomplete run**: interrupted before every cell was measured")
    return out


def _settings(run: Run) -> str:
    """How the cells were measured: floor, pinning, load before and after."""
    st, env = run.settings, run.environment
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


def _kind(spec: dict[str, Any]) -> str:
    return "sweep" if spec.get("sweep") else str(spec.get("kind", "echo"))


def _workload_table(run: Run, workload: str, spec: dict[str, Any]) -> list[str]:
    cells = [c for c in run.cells if c.workload == workload]
    metric = METRICS[spec.get("metric", "msgs_per_s")]
    extra = [METRICS[m] for m in COLUMNS[_kind(spec)] if m != metric.name]
    headers = ["rank", "client", "server", f"{metric.header} (median)", "95% CI", "vs best",
               *(m.header for m in extra), "bound", "CV"]
    head = [f"## {workload} — {spec.get('description', '')}", ""]
    if spec.get("sweep"):
        head += [f"Open-loop rates tried, rising: {', '.join(map(str, spec['sweep']['rates']))} msgs/s; "
                 f"a rate passes while p99 ≤ {spec['sweep']['p99_us']:g} µs.", ""]
    head += ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if h in ("client", "server") else "---:" for h in headers) + "|"]
    ranked = rank(cells, metric.name)
    best = ranked[0][1].summary(metric.name).median if ranked else None  # type: ignore[union-attr]
    rows = [_row(run, position, cell, metric, extra, best) for position, cell in ranked]
    blank = " |" * (len(headers) - 4)
    for cell in cells:
        if cell.summary(metric.name) is None:
            why = f"n/a: {cell.na}" if cell.na else "failed: " + (
                cell.blocked or (cell.errors[0] if cell.errors else "no measurement"))
            rows.append(f"| – | {_label(run, 'clients', cell.client)} | {_label(run, 'servers', cell.server)} "
                        f"| {_escape(why)} |{blank}")
    return head + rows


def _row(run: Run, position: int, cell: Cell, metric: Metric, extra: list[Metric], best: float | None) -> str:
    s = cell.summary(metric.name)
    assert s is not None
    cv = s.cv
    flag = " ⚠" if cv is not None and cv > CV_WARN else ""
    note = f" ({len(cell.errors)} of {len(cell.samples)} reps failed)" if cell.errors else ""
    ratio = f"{s.median / best:.2f}×" if best else "–"
    values = [_num(cell.summary(m.name), m.digits) for m in extra]
    return (f"| {position} | {_label(run, 'clients', cell.client)} | {_label(run, 'servers', cell.server)} "
            f"| {s.median:,.{metric.digits}f}{note} | {s.ci95[0]:,.{metric.digits}f}–{s.ci95[1]:,.{metric.digits}f} "
            f"| {ratio} | " + " | ".join(values) + f" | {bound_side(cell) or '–'} | {_pct(cv)}{flag} |")


def _check_cost(run: Run) -> list[str]:
    """With --verify both: what checking the echoes costs each client, from the same run."""
    twins = [(name, f"{name}/unchecked") for name in run.clients if f"{name}/unchecked" in run.clients]
    if not twins:
        return []
    out = ["## Cost of the echo checks", "",
           "Each client beside its unchecked twin (`--verify both`, interleaved in this run): client CPU "
           "per message and throughput, medians, and the change the checks make, with its 95 % bootstrap "
           "interval.", "",
           "| workload | client | server | CPU µs/msg checked | unchecked | CPU change | msgs/s change |",
           "|---|---|---|---:|---:|---:|---:|"]
    cells = {c.key: c for c in run.cells}
    for cell in run.cells:
        if cell.client not in dict(twins):
            continue
        twin = cells.get(f"{cell.workload}/{cell.server}/{cell.client}/unchecked")
        if twin is None:
            continue
        cpu = [_values(c, "client_cpu_us_per_msg") for c in (cell, twin)]
        rate = [_values(c, "msgs_per_s") for c in (cell, twin)]
        if not cpu[0] or not cpu[1]:
            continue
        out.append(f"| {cell.workload} | {_label(run, 'clients', cell.client)} | {_label(run, 'servers', cell.server)} "
                   f"| {statistics.median(cpu[0]):.3f} | {statistics.median(cpu[1]):.3f} "
                   f"| {_change(ratio_of_medians(*cpu))} | {_change(ratio_of_medians(*rate))} |")
    return out + [""]


def _values(cell: Cell, metric: str) -> list[float]:
    get = METRICS[metric].get
    return [v for v in (get(s) for s in cell.ok_samples) if v is not None]


def _change(r: tuple[float, float, float] | None) -> str:
    if r is None:
        return "–"
    point, lo, hi = r
    return f"{point - 1:+.1%} ({lo - 1:+.1%} … {hi - 1:+.1%})"


def _notes() -> list[str]:
    return ["Ratios are the row's median over the best median (below 1 is slower for rates, above 1 is "
            "slower for times). \"bound\" names the side whose CPU share was at least "
            f"{SATURATED:.0%} of a core during the measured phase: a row bound by its client measures "
            "the client, not the server. ⚠ marks a coefficient of variation above "
            f"{CV_WARN:.0%}."]


def _failures(run: Run) -> list[str]:
    problems = [f"- server {n}: {r.error}" for n, r in run.servers.items() if r.error]
    problems += [f"- client {n}: {r.error}" for n, r in run.clients.items() if r.error]
    problems += [f"- {e}" for c in run.cells for e in c.errors]
    missing = [f"- {c.workload}: {_label(run, 'clients', c.client)} vs {_label(run, 'servers', c.server)}, "
               f"rep {s.rep}: {why}"
               for c in run.cells for s in c.samples for why in s.reading_errors]
    warnings = [f"- {c.workload}: {_label(run, 'clients', c.client)} vs {_label(run, 'servers', c.server)}: "
                f"CV {s.cv:.0%}"
                for c in run.cells
                for s in [c.summary(run.workloads[c.workload].get("metric", "msgs_per_s"))]
                if s is not None and s.cv is not None and s.cv > CV_WARN]
    out: list[str] = []
    if problems:
        out += ["## Problems", ""] + problems + [""]
    if missing:
        out += ["## Readings left empty", ""] + missing + [""]
    if warnings:
        out += [f"## Noisy cells (CV above {CV_WARN:.0%})", ""] + warnings + [""]
    return out


def _label(run: Run, kind: str, name: str) -> str:
    table = run.servers if kind == "servers" else run.clients
    return table[name].label if name in table else name


def _num(summary: Summary | None, digits: int) -> str:
    return "–" if summary is None else f"{summary.median:,.{digits}f}"


def _pct(cv: float | None) -> str:
    return "–" if cv is None else f"{cv * 100:.1f}%"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
