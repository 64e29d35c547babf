"""Rate sweeps (the highest open-loop rate at which p99 latency stays within a limit) and
connection ramps (the most fan-out subscribers a server serves with p95 delivery latency
within a bound)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from .catalog import Program
from .measure import run_client
from .model import Sample, Settings
from .server import ServerHandle
from .workloads import Workload

# A rate counts only if the client actually sent and received close to it.
MIN_ACHIEVED = 0.95


def run_sweep(client: Program, server: ServerHandle, workload: Workload, rep: int,
              log_dir: Path, settings: Settings) -> Sample:
    """Run ``workload`` at each rate of its sweep, rising, until p99 exceeds the limit.

    The sample returned is the run at the highest passing rate (its CPU and memory
    readings), with ``max_rate`` (0 when no rate passed) and every step in ``extra``.
    """
    assert workload.sweep is not None
    limit = workload.sweep.p99_us
    steps: list[dict[str, Any]] = []
    passed: Sample | None = None
    best = 0
    first: Sample | None = None
    for rate in workload.sweep.rates:
        sample = run_client(client, server, workload, rep, log_dir, settings, override={"rate": rate})
        first = first or sample
        p99 = (sample.extra.get("latency_us") or {}).get("p99")
        achieved = sample.extra.get("achieved_rate")
        steps.append({"rate": rate, "p99_us": p99, "achieved_rate": achieved, "error": sample.error})
        if sample.error or p99 is None or p99 > limit or (achieved or 0) < MIN_ACHIEVED * rate:
            break
        passed, best = sample, rate
    base = passed or first
    assert base is not None
    if passed is None and base.error and len(steps) == 1:
        return replace(base, extra={**base.extra, "steps": steps})
    return replace(base, error=None, extra={**base.extra, "max_rate": best, "steps": steps,
                                             "p99_limit_us": limit})


def run_ramp(client: Program, server: ServerHandle, workload: Workload, rep: int,
             log_dir: Path, settings: Settings) -> Sample:
    """Run a fan-out workload with each number of subscribers of its ramp, rising, until
    p95 delivery latency passes the bound, a message is lost or a limit stops it.

    The sample returned is the run at the largest passing number (its readings), with
    ``max_connections`` (0 when none passed), why the ramp stopped, and every step.
    """
    assert workload.ramp is not None
    bound_us = workload.ramp.p95_ms * 1000
    steps: list[dict[str, Any]] = []
    passed: Sample | None = None
    first: Sample | None = None
    best, stopped = 0, "every number of the ramp passed"
    for n in workload.ramp.connections:
        sample = run_client(client, server, workload, rep, log_dir, settings, override={"connections": n})
        first = first or sample
        p95 = (sample.extra.get("latency_us") or {}).get("p95")
        steps.append({"connections": n, "p95_us": p95, "delivered_per_s": sample.extra.get("delivered_per_s"),
                      "lost": sample.extra.get("lost"), "error": sample.error})
        if sample.error:
            stopped = f"at N = {n:,}: {sample.error.split(': ', 1)[-1]}"
            break
        if p95 is None or p95 > bound_us:
            stopped = f"at N = {n:,}: p95 {p95 / 1000 if p95 is not None else float('nan'):,.1f} ms > {workload.ramp.p95_ms:g} ms"
            break
        passed, best = sample, n
    base = passed or first
    assert base is not None
    return replace(base, error=None, extra={**base.extra, "max_connections": best, "ramp_stopped": stopped,
                                             "steps": steps, "p95_bound_ms": workload.ramp.p95_ms})
