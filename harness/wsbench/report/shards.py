"""A merged run beside its shards (``wsbench merge``, ``wsbench run --cluster``): per cell
the merged figure and each shard's, the start skew of the cluster's barrier, and the
server's CPU and RSS as read on its host. Nothing for a run of one host."""

from __future__ import annotations

import statistics
from typing import Any, Callable

from ..doc import Bullets, Grid, Section
from ..model import Cell, Run, Sample

HISTOGRAM_KINDS = ("latency", "openloop")
OVERLAP_WARN = 0.9


def sections(run: Run) -> list[Section]:
    shards = run.settings.get("merged_shards")
    if not shards or not run.cells:
        return []
    cluster = run.settings.get("cluster") or {}
    entries = run.environment.get("shards") or []
    hosts = [str(((e.get("worker") or {}) if isinstance(e, dict) else {}).get("host") or "") for e in entries]
    hosts = (hosts + [""] * shards)[:shards]
    grid = Grid(["workload", "client", "figure (median)", "merged", *[f"shard {i} {('@ ' + h) if h else ''}".strip()
                                                                      for i, h in enumerate(hosts, 1)],
                 "start skew µs (max)", "server CPU µs/msg", "server peak RSS MiB"],
                right=set(range(3, 7 + shards)))
    for cell in run.cells:
        if cell.na or not cell.ok_samples:
            continue
        kind = run.workloads.get(cell.workload, {}).get("kind")
        for figure, merged_get, shard_get in _figures(kind):
            row = [cell.workload, cell.client, figure, _median(cell, merged_get)]
            row += [_median(cell, lambda s, i=i: shard_get(s, i)) for i in range(shards)]
            row += [_median(cell, _skew_us, top=True), _median(cell, _server_cpu_us),
                    _median(cell, lambda s: s.server_peak_rss_kib / 1024 if s.server_peak_rss_kib else None, 1)]
            grid.add(row)
    blocks: list[Any] = [_intro(run, shards, cluster), grid]
    bullets = [b for b in (_skew(run, cluster), _server(run, cluster), _failure(cluster)) if b]
    if bullets:
        blocks.append(Bullets(bullets))
    return [Section("Shards: the merged run beside each shard", blocks)]


Getter = Callable[[Sample], "float | None"]


def _figures(kind: str | None) -> list[tuple[str, Getter, Callable[[Sample, int], "float | None"]]]:
    rate: list[tuple[str, Getter, Callable[[Sample, int], float | None]]] = [
        ("msgs/s", lambda s: s.msgs_per_s, lambda s, i: _at(s.extra.get("shards_msgs_per_s"), i))]
    if kind not in HISTOGRAM_KINDS:
        return rate
    return [(f"{name} µs", lambda s, n=key: _lat(s.extra.get("latency_us"), n),
             lambda s, i, n=key: _lat(_at(s.extra.get("shards_latency_us"), i), n))
            for name, key in (("p50", "p50"), ("p99", "p99"))] + rate


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def _lat(summary: Any, key: str) -> float | None:
    value = summary.get(key) if isinstance(summary, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def _skew_us(s: Sample) -> float | None:
    value = s.extra.get("start_skew_s")
    return value * 1e6 if isinstance(value, (int, float)) else None


def _server_cpu_us(s: Sample) -> float | None:
    return s.server_cpu_s * 1e6 / s.messages if s.server_cpu_s is not None and s.messages else None


def _median(cell: Cell, get: Getter, digits: int = 0, top: bool = False) -> str:
    values = [v for v in (get(s) for s in cell.ok_samples) if v is not None]
    if not values:
        return "–"
    value = max(values) if top else statistics.median(values)
    return f"{value:,.{digits if digits or value >= 100 else 2}f}"


def _intro(run: Run, shards: int, cluster: dict[str, Any]) -> str:
    how = (f"{shards} load hosts driven by {cluster.get('engine')} (`--cluster {cluster.get('address')}`), every "
           "repetition of every cell run by all of them at once behind one start barrier" if cluster else
           f"{shards} shards (`wsbench run --shard I/{shards}`) merged by `wsbench merge`")
    return (f"{how}. Merged: throughputs summed per repetition, latency histograms added bucket by bucket and the "
            "percentiles taken from the sum, client CPU per message = the sum of CPU over the sum of messages; "
            "repetitions stay the unit (medians over them here).")


def _skew(run: Run, cluster: dict[str, Any]) -> str | None:
    skews = [s.extra["start_skew_s"] for c in run.cells for s in c.ok_samples
             if isinstance(s.extra.get("start_skew_s"), (int, float))]
    if not skews:
        return None
    overlaps = [s.extra["barrier"]["phases_overlap"] for c in run.cells for s in c.ok_samples
                if isinstance((s.extra.get("barrier") or {}).get("phases_overlap"), (int, float))]
    clocks = ("all shards on one machine: one clock" if cluster.get("local") else
              "each shard's own wall clock: the hosts' clocks must agree (NTP: about a millisecond on a LAN; "
              "PTP: microseconds); their offsets against the coordinator, measured when the run began, are in "
              "settings.cluster")
    overlap = f"; the measured phases overlap by at least {min(overlaps):.1%} of their union" if overlaps else ""
    if overlaps and min(overlaps) < OVERLAP_WARN:
        overlap += (f" ⚠ below {OVERLAP_WARN:.0%} in {sum(o < OVERLAP_WARN for o in overlaps)} repetitions: their "
                    "summed rates count load that was not on the server at the same time")
    return (f"start skew (the largest difference between two shards' GO, per repetition): median "
            f"{statistics.median(skews) * 1e6:,.0f} µs, at most {max(skews) * 1e6:,.0f} µs over {len(skews)} "
            f"repetitions ({clocks}){overlap}")


def _server(run: Run, cluster: dict[str, Any]) -> str | None:
    parts = [f"{record.label}: {record.readings}" for record in run.servers.values() if record.readings]
    return ("server CPU and RSS read " + "; ".join(parts)) if parts and cluster else None


def _failure(cluster: dict[str, Any]) -> str | None:
    return f"**the run failed**: {cluster['failure']}" if cluster.get("failure") else None
