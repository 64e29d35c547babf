"""Ranked Markdown tables of a run: one table per workload, best median first.

Rows whose 95 % intervals of the median overlap share a rank, so the table never claims
an order the data cannot support.
"""

from __future__ import annotations

from .results import Cell, Run
from .stats import Summary

CV_WARN = 0.10


def rank(cells: list[Cell]) -> list[tuple[int, Cell]]:
    """Rank cells by median msgs/s, descending, with tie groups by interval overlap."""
    measured = [(c, c.summaries()["msgs_per_s"]) for c in cells]
    ordered = sorted(((c, s) for c, s in measured if s), key=lambda cs: -cs[1].median)
    out: list[tuple[int, Cell]] = []
    group_low = None
    current = 0
    for i, (cell, s) in enumerate(ordered):
        if group_low is None or s.ci95[1] < group_low:
            current = i + 1
            group_low = s.ci95[0]
        else:
            group_low = min(group_low, s.ci95[0])
        out.append((current, cell))
    return out


def render_markdown(run: Run) -> str:
    lines = [f"# wsbench results — {run.created}", ""]
    lines += _environment(run) + [""]
    for workload, spec in run.workloads.items():
        lines += _workload_table(run, workload, spec) + [""]
    lines += _failures(run)
    return "\n".join(lines).rstrip() + "\n"


def _environment(run: Run) -> list[str]:
    env = run.environment
    out = [
        f"- machine: {env.get('cpu_model')}, {env.get('logical_cpus')} logical CPUs, "
        f"kernel {env.get('kernel')}, {env.get('os')}",
        f"- suite: {run.suite or '(ad hoc)'}, {run.repetitions} interleaved repetitions per cell; "
        f"commit {str(env.get('git_commit'))[:12]}{' (dirty)' if env.get('git_dirty') else ''}",
    ]
    versions = "; ".join(f"{name}: {v['version']}" for name, v in env.get("runtimes", {}).items())
    out.append(f"- runtimes: {versions}")
    if not run.complete:
        out.append("- **incomplete run**: interrupted before every cell was measured")
    return out


def _workload_table(run: Run, workload: str, spec: dict) -> list[str]:
    cells = [c for c in run.cells if c.workload == workload]
    head = [f"## {workload} — {spec.get('description', '')}", "",
            "| rank | client | server | msgs/s (median) | 95% CI | vs best | MB/s | client CPU µs/msg "
            "| server CPU µs/msg | client peak RSS MiB | server peak RSS MiB | CV |",
            "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ranked = rank(cells)
    best = ranked[0][1].summaries()["msgs_per_s"].median if ranked else None  # type: ignore[union-attr]
    rows = []
    for position, cell in ranked:
        s = cell.summaries()
        rate = s["msgs_per_s"]
        assert rate is not None
        cv = rate.cv
        flag = " ⚠" if cv is not None and cv > CV_WARN else ""
        note = f" ({len(cell.errors)} of {len(cell.samples)} reps failed)" if cell.errors else ""
        rows.append(
            f"| {position} | {_label(run, 'clients', cell.client)} | {_label(run, 'servers', cell.server)} "
            f"| {rate.median:,.0f}{note} | {rate.ci95[0]:,.0f}–{rate.ci95[1]:,.0f} "
            f"| {rate.median / best:.2f}× | {_num(s['mb_per_s'], 1)} "
            f"| {_num(s['client_cpu_us_per_msg'], 2)} | {_num(s['server_cpu_us_per_msg'], 2)} "
            f"| {_num(s['client_peak_rss_mib'], 1)} | {_num(s['server_peak_rss_mib'], 1)} "
            f"| {_pct(cv)}{flag} |")
    for cell in cells:
        if cell.summaries()["msgs_per_s"] is None:
            why = cell.blocked or (cell.errors[0] if cell.errors else "not measured")
            rows.append(f"| – | {_label(run, 'clients', cell.client)} | {_label(run, 'servers', cell.server)} "
                        f"| failed: {_escape(why)} | | | | | | | | |")
    return head + rows


def _failures(run: Run) -> list[str]:
    problems = [f"- server {n}: {r.error}" for n, r in run.servers.items() if r.error]
    problems += [f"- client {n}: {r.error}" for n, r in run.clients.items() if r.error]
    problems += [f"- {e}" for c in run.cells for e in c.errors]
    if not problems:
        return []
    return ["## Problems", ""] + problems + [""]


def _label(run: Run, kind: str, name: str) -> str:
    table = run.servers if kind == "servers" else run.clients
    return table[name].label if name in table else name


def _num(summary: Summary | None, digits: int) -> str:
    return "–" if summary is None else f"{summary.median:,.{digits}f}"


def _pct(cv: float | None) -> str:
    return "–" if cv is None else f"{cv * 100:.1f}%"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
