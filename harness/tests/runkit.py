"""Synthetic runs for the report and compare tests: cells with chosen values per repetition."""

from __future__ import annotations

from typing import Any

from wsbench.model import Cell, ProgramRecord, Run, Sample

RUNTIMES = {"quickjs": "quickjs", "deno": "deno", "bun": "bun", "node22": "node22", "node-ws": "node20",
            "loadgen": "native", "lws": "native", "k6": "k6"}
EXTRA = {"latency_p99_us": "latency_us", "getter_calls_per_s": "getter_calls_per_s",
         "delivery_ms": "delivery_ms", "handshakes_per_s": "handshakes_per_s"}


def sample(rep: int, value: float, metric: str) -> Sample:
    """One repetition whose ``metric`` is ``value`` (msgs/s cells also get CPU and RSS readings)."""
    s = Sample(rep=rep, messages=10_000, bytes=10_000, seconds=1.0, msgs_per_s=10_000.0, mb_per_s=0.01, errors=0,
               client_cpu_s=0.5, server_cpu_s=0.25, client_peak_rss_kib=10_240, server_peak_rss_kib=20_480)
    if metric == "msgs_per_s":
        s.msgs_per_s, s.seconds = value, 10_000 / value
    elif metric == "latency_p99_us":
        s.extra["latency_us"] = {"p50": value / 2, "p90": value * 0.8, "p99": value, "p999": value * 1.2,
                                 "max": value * 2}
    else:
        s.extra[EXTRA[metric]] = value
    return s


def program(name: str) -> ProgramRecord:
    runtime = RUNTIMES.get(name) or RUNTIMES.get(name.split("-")[0], "other")
    return ProgramRecord(name, f"{name} label", runtime, [name])


def run_of(values: dict[tuple[str, str, str], list[float]],
           workloads: dict[str, dict[str, Any]] | None = None) -> Run:
    """A run holding a cell per (workload, server, client) with one repetition per value;
    workloads default to echo throughput (msgs/s)."""
    specs = {w: {"description": w, "kind": "echo", "metric": "msgs_per_s"} for w, _, _ in values}
    specs.update(workloads or {})
    cells = []
    for (workload, server, client), vs in values.items():
        cell = Cell(workload, server, client)
        cell.samples = [sample(i + 1, v, specs[workload]["metric"]) for i, v in enumerate(vs)]
        cells.append(cell)
    return Run(created="2026-01-01T00:00:00+00:00", command=["wsbench"], suite="synthetic",
               repetitions=max(len(v) for v in values.values()),
               environment={"cpu_model": "cpu", "logical_cpus": 2, "kernel": "k", "os": "os", "runtimes": {}},
               workloads=specs,
               servers={s: program(s) for _, s, _ in values}, clients={c: program(c) for _, _, c in values},
               cells=cells, complete=True, settings={"min_seconds": 1.0, "verify": "on", "pinning": None})
