"""``wsbench merge``: shards of one plan (``wsbench run --shard I/N``, run at the same time
by several load generators against one server) merged into one run (docs/scaling.md).

Per cell and repetition: messages, bytes, msgs/s, MB/s and client CPU are summed over the
shards (throughput sums while the shards' measured phases overlap); the phase is the
longest shard's; the server's CPU and RSS are left empty (each shard read the server over
its own phase, with the others' load in it). Latency and open-loop workloads are refused:
their results carry percentiles, and percentiles do not merge (histograms would).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from .errors import WsbenchError
from .results import Cell, Run, Sample

UNMERGEABLE_KINDS = ("latency", "openloop")
SUMMED = ("messages", "bytes", "msgs_per_s", "mb_per_s", "errors", "client_cpu_s")
SERVER_READINGS = "n/a (merged shards: each shard read the server over its own phase)"


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` with 1 <= I <= N."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise WsbenchError(f"--shard '{text}': write I/N, e.g. 1/2") from None
    if not 1 <= i <= n <= 1000:
        raise WsbenchError(f"--shard '{text}': need 1 <= I <= N <= 1000")
    return i, n


def merge(runs: Sequence[tuple[Path, Run]], argv: list[str]) -> Run:
    for path, run in runs:
        for name, spec in run.workloads.items():
            if spec.get("kind") in UNMERGEABLE_KINDS or spec.get("sweep"):
                raise WsbenchError(f"{path}: workload '{name}' ({spec.get('kind')}): its results are percentiles, "
                                   "which do not merge (the clients would have to report their histograms); merge "
                                   "throughput workloads only")
    shards = _check_shards(runs)
    first = shards[0][1]
    cells = []
    by_key = [{c.key: c for c in run.cells} for _, run in shards]
    for cell in first.cells:
        parts = [index[cell.key] for index in by_key]
        merged = Cell(cell.workload, cell.server, cell.client,
                      blocked=next((p.blocked for p in parts if p.blocked), None), na=cell.na)
        if not merged.blocked and not merged.na:
            merged.samples = [_merge_rep(rep, parts) for rep in range(1, first.repetitions + 1)
                              if all(any(s.rep == rep for s in p.samples) for p in parts)]
        cells.append(merged)
    servers = {k: replace(v, readings=SERVER_READINGS) for k, v in first.servers.items()}
    environment = dict(first.environment)
    environment["shards"] = [{"file": str(path), "created": run.created, "finished": run.finished,
                              "shard": run.settings.get("shard"), "load_average": run.environment.get("load_average"),
                              "git_commit": run.environment.get("git_commit")} for path, run in shards]
    settings = {**first.settings, "shard": None, "merged_shards": len(shards)}
    return Run(created=first.created, command=argv, suite=first.suite, repetitions=first.repetitions,
               environment=environment, workloads=first.workloads, servers=servers, clients=first.clients,
               cells=cells, finished=max((r.finished or "") for _, r in shards) or None,
               complete=all(r.complete for _, r in shards), settings=settings)


def _check_shards(runs: Sequence[tuple[Path, Run]]) -> list[tuple[Path, Run]]:
    if len(runs) < 2:
        raise WsbenchError("wsbench merge needs the files of at least two shards")
    numbered: dict[int, tuple[Path, Run]] = {}
    total = None
    for path, run in runs:
        shard = run.settings.get("shard")
        if not shard:
            raise WsbenchError(f"{path}: not a shard (run it with wsbench run --shard I/N)")
        i, n = shard
        if total is not None and n != total:
            raise WsbenchError(f"{path}: shard {i}/{n}, but another file is a shard of {total}")
        total = n
        if i in numbered:
            raise WsbenchError(f"{path}: shard {i}/{n} is also {numbered[i][0]}")
        numbered[i] = (path, run)
    assert total is not None
    missing = [i for i in range(1, total + 1) if i not in numbered]
    if missing:
        raise WsbenchError(f"shards {', '.join(f'{i}/{total}' for i in missing)} are missing")
    ordered = [numbered[i] for i in range(1, total + 1)]
    first_path, first = ordered[0]
    for path, run in ordered[1:]:
        for what, a, b in (("workloads", first.workloads, run.workloads),
                           ("servers", sorted(first.servers), sorted(run.servers)),
                           ("clients", sorted(first.clients), sorted(run.clients)),
                           ("repetitions", first.repetitions, run.repetitions),
                           ("floor", first.settings.get("min_seconds"), run.settings.get("min_seconds")),
                           ("cells", sorted(c.key for c in first.cells), sorted(c.key for c in run.cells))):
            if a != b:
                raise WsbenchError(f"{path}: its {what} differ from {first_path}'s ({b} vs {a}): not shards of "
                                   "one plan")
    return ordered


def _merge_rep(rep: int, parts: list[Cell]) -> Sample:
    samples = [next(s for s in p.samples if s.rep == rep) for p in parts]
    failed = [f"shard {i}: {s.error}" for i, s in enumerate(samples, 1) if s.error]
    if failed:
        return Sample(rep=rep, error="; ".join(failed))
    out = Sample(rep=rep)
    for key in SUMMED:
        values = [getattr(s, key) for s in samples]
        setattr(out, key, sum(values) if all(v is not None for v in values) else None)
    out.client_cpu_method = "+".join(sorted({s.client_cpu_method or "?" for s in samples}))
    out.seconds = max(s.seconds or 0.0 for s in samples)
    out.wall_s = max(s.wall_s or 0.0 for s in samples)
    rss = [s.client_peak_rss_kib for s in samples if s.client_peak_rss_kib is not None]
    out.client_peak_rss_kib = max(rss) if rss else None  # per client process: the largest shard's
    out.exit_code = max((s.exit_code or 0) for s in samples)
    extra: dict[str, Any] = {"shards_msgs_per_s": [s.msgs_per_s for s in samples]}
    for key in samples[0].extra:
        values = [s.extra.get(key) for s in samples]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            extra[key] = sum(values)  # type: ignore[arg-type]
    out.extra = extra
    out.reading_errors = [f"shard {i}: {e}" for i, s in enumerate(samples, 1) for e in s.reading_errors]
    return out
