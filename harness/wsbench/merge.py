"""``wsbench merge``: shards of one plan (``wsbench run --shard I/N``, run at the same time
by several load generators against one server) merged into one run (docs/scaling.md).

Per cell and repetition: messages, bytes, msgs/s, MB/s and client CPU are summed over the
shards (throughput sums while the shards' measured phases overlap), so CPU per message is
the sum of CPU over the sum of messages; the phase is the longest shard's; repetition k of
the merge is the sum of the shards' repetitions k, and repetitions stay the unit of spread.
Latency histograms (``latency_hist``, histogram.py) are added bucket by bucket and the
percentiles taken from the sum, exactly as a client takes its own. The server's CPU and
RSS are left empty (each shard read the server over its own phase, with the others' load
in it) unless the caller has them from the server's host (a cluster run, cluster/).

``wsbench merge`` (files) and ``wsbench run --cluster`` (shards in memory) share
``merge_shards``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from . import histogram
from .errors import WsbenchError
from .model import Cell, Run, Sample

HISTOGRAM_KINDS = ("latency", "openloop")
SUMMED = ("messages", "bytes", "msgs_per_s", "mb_per_s", "errors", "client_cpu_s")
SUMMED_RATES = ("rate", "achieved_rate")  # open loop: the offered and achieved rates add up like msgs/s
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
    """The shard files of ``wsbench merge``, checked to be shards 1..N of one plan."""
    shards = _check_shards(runs)
    return merge_shards([(str(path), run) for path, run in shards], argv)


def merge_shards(shards: Sequence[tuple[str, Run]], argv: list[str]) -> Run:
    """Shards 1..N of one plan, in order, each with a name (its file, or its host), merged."""
    for where, run in shards:
        _check_mergeable(where, run)
    first = shards[0][1]
    cells = []
    by_key = [{c.key: c for c in run.cells} for _, run in shards]
    for cell in first.cells:
        parts = [index[cell.key] for index in by_key]
        merged = Cell(cell.workload, cell.server, cell.client,
                      blocked=next((p.blocked for p in parts if p.blocked), None), na=cell.na)
        if not merged.blocked and not merged.na:
            merged.samples = [_merge_rep(rep, parts, f"{cell.key} repetition {rep}")
                              for rep in range(1, first.repetitions + 1)
                              if all(any(s.rep == rep for s in p.samples) for p in parts)]
        cells.append(merged)
    servers = {k: replace(v, readings=SERVER_READINGS) for k, v in first.servers.items()}
    environment = dict(first.environment)
    environment["shards"] = [{"file": where, "created": run.created, "finished": run.finished,
                              "shard": run.settings.get("shard"), "load_average": run.environment.get("load_average"),
                              "git_commit": run.environment.get("git_commit"), "worker": run.environment.get("worker")}
                             for where, run in shards]
    settings = {**first.settings, "shard": None, "merged_shards": len(shards)}
    return Run(created=first.created, command=argv, suite=first.suite, repetitions=first.repetitions,
               environment=environment, workloads=first.workloads, servers=servers, clients=first.clients,
               cells=cells, finished=max((r.finished or "") for _, r in shards) or None,
               complete=all(r.complete for _, r in shards), settings=settings)


def _check_mergeable(where: str, run: Run) -> None:
    """Rate sweeps do not merge (each shard would pick its own highest rate); latency and
    open-loop results merge through their histograms, which files before schema 8 lack."""
    for name, spec in run.workloads.items():
        if spec.get("sweep"):
            raise WsbenchError(f"{where}: workload '{name}' is a rate sweep: each shard chose its own highest "
                               "rate, and those do not add up; merge the sweep's rates as open-loop workloads")
    kinds = {name: spec.get("kind") for name, spec in run.workloads.items()}
    for cell in run.cells:
        if kinds.get(cell.workload) not in HISTOGRAM_KINDS:
            continue
        for s in cell.ok_samples:
            if not isinstance(s.extra.get(histogram.KEY), dict):
                raise WsbenchError(f"{where}: {cell.key} repetition {s.rep} has percentiles but no histogram "
                                   f"({histogram.KEY}): percentiles do not merge; measure it again with this "
                                   "wsbench, whose clients report their histograms")

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


def _merge_rep(rep: int, parts: list[Cell], where: str) -> Sample:
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
        elif key in SUMMED_RATES and all(isinstance(v, (int, float)) for v in values):
            extra[key] = sum(values)  # type: ignore[arg-type]
    hists = [s.extra.get(histogram.KEY) for s in samples]
    if all(isinstance(h, dict) for h in hists):
        total = histogram.add([histogram.Histogram.from_json(h, f"{where}, shard {i}")
                               for i, h in enumerate(hists, 1)], where)
        extra[histogram.KEY] = total.to_json()
        extra["latency_us"] = total.summary()
        extra["shards_latency_us"] = [s.extra.get("latency_us") for s in samples]
    out.extra = extra
    out.reading_errors = [f"shard {i}: {e}" for i, s in enumerate(samples, 1) for e in s.reading_errors]
    return out
