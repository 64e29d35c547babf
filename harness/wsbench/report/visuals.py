"""Which charts a workload gets, and their data: the ranking metric as bars with CI
whiskers, latency percentiles for latency and open-loop workloads, CPU µs per message
and peak RSS of both sides."""

from __future__ import annotations

from ..doc import Chart
from ..metrics import METRICS
from ..ranking import label, median_of, ranked, workload_metric
from ..model import Run
from . import charts
from .derived import BASELINE, JIT_RUNTIMES, NATIVE_RUNTIME, QUICKJS, checked_clients

PERCENTILES = [("p50", "latency_p50_us"), ("p90", "latency_p90_us"), ("p99", "latency_p99_us"),
               ("p99.9", "latency_p999_us"), ("max", "latency_max_us")]
PERCENTILE_KINDS = ("latency", "openloop")


def _group(run: Run, client: str) -> str:
    if client in (QUICKJS, BASELINE):
        return client
    runtime = run.clients[client].runtime if client in run.clients else ""
    return "jit" if runtime in JIT_RUNTIMES else "native" if runtime == NATIVE_RUNTIME else "other"


def workload_charts(run: Run, workload: str) -> list[Chart]:
    metric = METRICS[workload_metric(run, workload)]
    clients = checked_clients(run)
    rows = [r for r in ranked([c for c in run.cells if c.workload == workload], metric.name)
            if r.cell.client in clients]
    if not rows:
        return []
    names = [f"{label(run, 'clients', r.cell.client)} → {label(run, 'servers', r.cell.server)}" for r in rows]
    out = [Chart(charts.bars([charts.Bar(n, r.summary.median, *r.summary.ci95, _group(run, r.cell.client))
                              for n, r in zip(names, rows)], f"{metric.header}, median and 95% CI"),
                 f"{workload}: {metric.header} per pair (red: QuickJS, pink: QuickJS baseline, blue: JIT "
                 "runtimes, grey: native), whiskers: 95 % interval")]
    if run.workloads[workload].get("kind") in PERCENTILE_KINDS:
        series = {n: [median_of(r.cell, m) for _, m in PERCENTILES] for n, r in zip(names, rows)}
        if any(v is not None for vs in series.values() for v in vs):
            out.append(Chart(charts.percentiles(series, [p for p, _ in PERCENTILES], "latency µs"),
                             f"{workload}: latency percentiles per pair (medians over repetitions)"))
    for first, second, unit in (("client_cpu_us_per_msg", "server_cpu_us_per_msg", "CPU µs per message"),
                                ("client_peak_rss_mib", "server_peak_rss_mib", "peak RSS MiB")):
        a = [median_of(r.cell, first) for r in rows]
        b = [median_of(r.cell, second) for r in rows]
        if any(v is not None for v in a + b):
            out.append(Chart(charts.paired(names, a, b, ("client", "server"), unit), f"{workload}: {unit}, "
                             "client and server (medians)"))
    return out


