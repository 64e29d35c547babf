"""``wsbench merge``: shards of one plan (``wsbench run --shard I/N``, run at the same time
by several load generators against one server) merged into one run (docs/scaling.md).

Every figure of a repetition declares how shards combine (``RULES``, ``EXTRA_RULES``):

- ``sum``: messages, bytes, msgs/s, MB/s, client CPU and the kinds' own counts and rates
  (throughput sums while the shards' measured phases overlap), so CPU per message is the
  sum of CPU over the sum of messages;
- ``max``: the phase (the longest shard's), the exit code, a client's peak RSS;
- ``histogram``: latency histograms (``latency_hist``, histogram.py), added bucket by
  bucket, the percentiles taken from the sum exactly as a client takes its own;
- ``same``: identities (a close code, the TLS version and library, ws' add-on): every
  shard must report the same, or the merge fails naming the figure;
- ``join``: how each shard's client CPU was read, the set of them;
- ``shard only``: figures that do not add (a median per client, a mark's readings): left
  out of the merge, each shard's file keeps its own;
- ``unread``: the server's CPU and RSS (each shard read the server over its own phase,
  with the others' load in it), unless the caller has them from the server's host (a
  cluster run, cluster/).

A figure without a rule is left out of the merge, and the merged repetition says so in
its ``reading_errors``: nothing is added because it happens to be a number. Repetition k
of the merge is made of the shards' repetitions k, and repetitions stay the unit of
spread: a repetition that some shards have and others lack fails the merge, naming the
shard. ``UNSHARDED`` names the kinds whose ranking figure
does not merge; ``wsbench run --shard`` and ``--cluster`` refuse them before measuring.

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
SERVER_READINGS = "n/a (merged shards: each shard read the server over its own phase)"

SUM, MAX, HISTOGRAM, SAME, JOIN, SHARD_ONLY, UNREAD = "sum", "max", "histogram", "same", "join", "shard only", "unread"

# A sample's own figures.
RULES = {"messages": SUM, "bytes": SUM, "msgs_per_s": SUM, "mb_per_s": SUM, "errors": SUM, "client_cpu_s": SUM,
         "client_cpu_method": JOIN, "seconds": MAX, "wall_s": MAX, "client_peak_rss_kib": MAX, "exit_code": MAX,
         "server_cpu_s": UNREAD, "server_peak_rss_kib": UNREAD, "barrier_s": SHARD_ONLY}
# The figures of a sample's ``extra``: the kinds' own (clients/README.md) and the harness's.
EXTRA_RULES = {
    "rounds": SUM, "checked": SUM, "compared": SUM,  # echo, buffered
    "rate": SUM, "achieved_rate": SUM, "sent": SUM, "send_lag_us": SHARD_ONLY,  # open loop: rates add like msgs/s
    "latency_hist": HISTOGRAM, "latency_us": HISTOGRAM,  # latency, open loop: percentiles of the summed histogram
    "getter_calls_per_s": SUM, "pending_bytes": SAME, "drain_ms": SHARD_ONLY,  # buffered (drain: a median)
    "delivery_ms": SHARD_ONLY, "close_code": SAME, "close_reason": SAME, "error_event": SAME,  # request
    "error_message": SAME,
    "handshakes_per_s": SUM,  # handshake
    "connections": SUM, "opens_per_s": SUM, "alive": SUM, "lost": SUM, "open_s": MAX, "hold_s": MAX,  # idle
    "concurrency": SAME, "limit": SHARD_ONLY, "lost_first": SHARD_ONLY,
    "tls": SAME, "ws": SAME,  # what the client's stack is (tls: its handshake counts add, TLS_COUNTS)
    "marks": SHARD_ONLY, "limits": SHARD_ONLY, "stopped": SHARD_ONLY,  # the harness's, per client process
    "server_rss_before_kib": UNREAD, "server_tls": UNREAD,  # the server, read by each shard over its own phase
}
TLS_COUNTS = ("handshakes", "resumed")  # loadgen's counts in its ``tls``: summed, the rest must be the same

# Kinds whose ranking figure does not merge: --shard and --cluster refuse them.
UNSHARDED = {
    "request": "its delivery time is a median per client, and medians do not add",
    "idle": "its figures are per process (connections held against the server's memory at a mark of one client)",
    "fanout": "it has one publisher per run: shards would each publish, and their subscribers' figures do not add",
    "observe": "it is conformance, not a load",
}


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
                              if _every_shard_has(rep, parts, [where for where, _ in shards], cell.key)]
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


def _every_shard_has(rep: int, parts: list[Cell], wheres: list[str], key: str) -> bool:
    """Whether repetition ``rep`` of the cell is in every shard (False: in none yet); a
    repetition some shards have and others lack fails the merge."""
    have = [any(s.rep == rep for s in p.samples) for p in parts]
    if all(have):
        return True
    if any(have):
        lacking = [f"shard {i} ({where})" for i, (where, has) in enumerate(zip(wheres, have), 1) if not has]
        raise WsbenchError(f"{', '.join(lacking)} has no repetition {rep} of {key}, which the other shards have: "
                           "not merged (a shard that stopped early is not a shard of the whole run)")
    return False


def refuse_unsharded(workloads: Sequence[Any], how: str) -> None:
    """``--shard`` and ``--cluster`` measure only kinds whose figures merge (UNSHARDED)."""
    for w in workloads:
        why = UNSHARDED.get(w.kind)
        if why:
            raise WsbenchError(f"workload '{w.name}' is a {w.kind} workload: {why}; {how} does not run it "
                               "(measure it on one host)")


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
    for key, rule in RULES.items():
        if rule in (SUM, MAX, JOIN):
            setattr(out, key, _combine(rule, key, [getattr(s, key) for s in samples], where))
    extra: dict[str, Any] = {"shards_msgs_per_s": [s.msgs_per_s for s in samples]}
    unruled: list[str] = []
    for key in dict.fromkeys(k for s in samples for k in s.extra):
        extra_rule = EXTRA_RULES.get(key)
        if extra_rule is None:
            unruled.append(key)
        elif extra_rule in (SUM, MAX, SAME):
            value = _combine(extra_rule, key, [s.extra.get(key) for s in samples], where)
            if value is not None:
                extra[key] = value
    hists = [s.extra.get(histogram.KEY) for s in samples]
    if all(isinstance(h, dict) for h in hists):
        total = histogram.add([histogram.Histogram.from_json(h, f"{where}, shard {i}")
                               for i, h in enumerate(hists, 1)], where)
        extra[histogram.KEY] = total.to_json()
        extra["latency_us"] = total.summary()
        extra["shards_latency_us"] = [s.extra.get("latency_us") for s in samples]
    out.extra = extra
    out.reading_errors = [f"shard {i}: {e}" for i, s in enumerate(samples, 1) for e in s.reading_errors]
    out.reading_errors += [f"{key}: no merge rule (harness/wsbench/merge.py, EXTRA_RULES): left out rather than "
                           "added blindly; each shard's file has it" for key in unruled]
    return out


def _combine(rule: str, key: str, values: list[Any], where: str) -> Any:
    """One figure of the merged repetition from the shards' (None where one lacks it and
    it does not merge without it)."""
    if rule == JOIN:
        return "+".join(sorted({v or "?" for v in values}))
    if rule == SAME:
        return _same_tls(values, where) if key == "tls" else _same(key, values, where)
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if rule == MAX:
        return max(numbers) if numbers else None
    return sum(numbers) if len(numbers) == len(values) else None


def _same(key: str, values: list[Any], where: str) -> Any:
    if any(v != values[0] for v in values):
        raise WsbenchError(f"{where}: the shards disagree on {key} ({', '.join(map(repr, values))}): it must be "
                           "the same in every shard; not merged")
    return values[0]


def _same_tls(values: list[Any], where: str) -> Any:
    """What each shard's client negotiated: the same in every shard, but for the handshake
    counts (loadgen's), which add."""
    if not all(isinstance(v, dict) for v in values):
        return _same("tls", values, where)
    _same("tls", [{k: x for k, x in v.items() if k not in TLS_COUNTS} for v in values], where)
    out = dict(values[0])
    for k in TLS_COUNTS:
        if k in out:
            out[k] = _combine(SUM, k, [v.get(k) for v in values], where)
    return out
