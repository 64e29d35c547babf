"""Slow consumers in "When peers misbehave" (issue 34, part 1; docs/misbehave.md, "Slow
consumers"): per server and policy (its default, or ``--broadcast-limit BYTES``:
servers/README.md item 16, the sample's ``extra.server_args``) of a ``slow`` workload with
slow subscribers, what the server did with them, read from the wire (each slow
subscriber's ``slow_subscribers`` entry in the loadgen's result: what it got once it read
again, the close frame, how TCP ended): buffered everything, closed them (at how many
bytes, the last message they got due after how many seconds, with which code), dropped
messages; and whether the healthy subscribers were held back meanwhile (they had the last
message late, the publisher's unsent backlog grew: the server read it more slowly, e.g.
lws pausing its publishers, or a server short of CPU); the server's
RSS growth per slow subscriber per second (a least-squares slope of the marks' RSS over
the publishing time, over K, with its 95 % interval), where it stopped growing; the
server's RSS at the last mark (after the drain: whether it gave the memory back); the
healthy subscribers' p50/p99 delivery latency with and without slow subscribers (the
workload of the same shape with none, e.g. ``slow_0``) and what they lost. A sample
stopped by its RSS cap (rsscap.py) says so instead."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from ..doc import Block, Bullets, Details, Grid
from ..model import Cell, Run, Sample
from ..ranking import label
from .cell_state import kind_of, not_run

HEAD = "**Slow consumers: what each server does with a subscriber that stops reading**"
SHAPE = ("connections", "rate", "size", "duration_ms")  # a baseline has these and slow = 0
# two-sided 95 % quantiles of Student's t, by degrees of freedom (then 1.96)
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 12: 2.18,
       15: 2.13, 20: 2.09, 30: 2.04}


@dataclass(frozen=True)
class Slope:
    per_s: float  # MiB per second
    half: float | None  # half the 95 % interval (None: too few points)
    points: int


def slope(points: list[tuple[float, float]]) -> Slope | None:
    """Least squares of y on x, with the slope's 95 % interval (Student's t)."""
    n = len(points)
    if n < 2 or len({x for x, _ in points}) < 2:
        return None
    mx, my = statistics.fmean(x for x, _ in points), statistics.fmean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    if n < 3:
        return Slope(b, None, n)
    residual = sum((y - my - b * (x - mx)) ** 2 for x, y in points)
    df = n - 2
    t = next((T95[d] for d in sorted(T95) if d >= df), 1.96)
    return Slope(b, t * math.sqrt(residual / df / sxx), n)


def _publishing(sample: Sample) -> float:
    return float(sample.extra.get("duration_ms") or 0) / 1000


def _marks(sample: Sample) -> list[tuple[float, float]]:
    """(seconds since GO, server RSS MiB) of every mark with a reading, in time order."""
    marks = (sample.extra.get("marks") or {}).values()
    return sorted((float(m["t_s"]), m["server_rss_kib"] / 1024) for m in marks
                  if isinstance(m.get("t_s"), (int, float)) and isinstance(m.get("server_rss_kib"), int))


def growth(samples: list[Sample]) -> Slope | None:
    """MiB per second per slow subscriber while the publisher published (every repetition's
    marks up to its last message's due time, and half a second's grace, pooled)."""
    k = samples[0].extra.get("slow")
    if not isinstance(k, int) or k < 1:
        return None
    points = [(t, rss) for s in samples for t, rss in _marks(s) if t <= _publishing(s) + 0.5]
    found = slope(points)
    return Slope(found.per_s / k, found.half / k if found.half is not None else None, found.points) if found else None


def plateau(sample: Sample) -> str:
    """Where the server's RSS stopped growing: its largest reading, and the first mark that
    came within 3 % of it."""
    marks = _marks(sample)
    if not marks:
        return "no marks"
    top = max(rss for _, rss in marks)
    first = next(t for t, rss in marks if rss >= 0.97 * top)
    if first >= _publishing(sample) - 0.5:
        return f"{top:,.0f} MiB at {first:.0f} s: growing while the publisher published ({_publishing(sample):g} s)"
    return f"{top:,.0f} MiB from {first:.0f} s on"


def after_drain(sample: Sample) -> str:
    """The server's RSS at the last mark (the slow ones drained by then, or closed) against
    its largest: whether it gave the memory back."""
    marks = _marks(sample)
    if not marks:
        return "–"
    top, (t, last) = max(rss for _, rss in marks), marks[-1]
    return f"{last:,.0f} MiB at {t:.0f} s ({last / top:.0%} of its peak)" if top else "–"


def _same(values: list[Any]) -> Any:
    return values[0] if len(set(map(str, values))) == 1 else None


def _how_tcp_ended(subs: list[dict[str, Any]]) -> str:
    codes = sorted({s.get("close_code") for s in subs}, key=str)
    tcps = sorted({str(s.get("tcp")) for s in subs})
    frame = ("close frame " + ", ".join(str(c) for c in codes)) if None not in codes else \
        "no close frame" if codes == [None] else "close frames " + ", ".join(str(c) for c in codes)
    ends = {"fin": "then FIN", "reset": "then reset", "open": "still open"}
    return f"{frame}, {' / '.join(ends.get(t, t) for t in tcps)}"


def policy_of(sample: Sample) -> str:
    """What the server did with the slow subscribers of one sample, in words."""
    e = sample.extra
    if e.get("stopped"):
        return str(e["stopped"])
    subs: list[dict[str, Any]] = e.get("slow_subscribers") or []
    if not subs:
        return "no slow subscriber"
    wire = statistics.median(float(s.get("wire_bytes") or 0) for s in subs)
    missed = sum(int(s.get("missed_between") or 0) for s in subs)
    closed = [s for s in subs if s.get("tcp") != "open"]
    if closed and len(closed) == len(subs):
        due = statistics.median(float(s.get("last_due_s") or 0) for s in subs)
        state = [s for s in subs if s.get("tcp_state")]
        seen = f"; TCP left ESTABLISHED at {statistics.median(s['tcp_state_s'] for s in state):.1f} s" if state else ""
        return (f"closed them: {wire / 2**20:,.2f} MiB each on the wire (the last message they got was due at "
                f"{due:.2f} s), {_how_tcp_ended(subs)}{seen}")
    if missed:
        return f"dropped messages: {missed:,} missing between those the slow subscribers got"
    left = sum(int(s.get("missing_after") or 0) for s in subs)
    done = e.get("complete_s")
    held = isinstance(done, (int, float)) and done > _publishing(sample) + 0.5
    how = f"buffered for them: {wire / 2**20:,.1f} MiB each, delivered once they read"
    if held:
        how += (f"; the healthy ones were held back: every message only at {done:.1f} s (publishing ended at "
                f"{_publishing(sample):g} s), the publisher's unsent backlog up to "
                f"{int(e.get('publisher_backlog_max') or 0) / 2**20:,.1f} MiB (the server read it more slowly "
                "than it was published)")
    if left:
        how += f"; {left:,} messages not delivered by the end of the drain"
    if closed:
        how += f"; {len(closed)} of {len(subs)} closed ({_how_tcp_ended(closed)})"
    return how


def _policy_name(sample: Sample) -> str:
    args = sample.extra.get("server_args") or []
    return " ".join(args) if args else "default"


def _ms(us: Any) -> str:
    return f"{us / 1000:,.1f}" if isinstance(us, (int, float)) else "–"


def _latency(samples: list[Sample]) -> str:
    got = [s.extra.get("latency_us") or {} for s in samples]
    p50 = [g["p50"] for g in got if isinstance(g.get("p50"), (int, float))]
    p99 = [g["p99"] for g in got if isinstance(g.get("p99"), (int, float))]
    if not p50 or not p99:
        return "–"
    return f"{_ms(statistics.median(p50))} / {_ms(statistics.median(p99))}"


def _losses(samples: list[Sample]) -> str:
    counts = [sum(int(s.extra.get(k) or 0) for s in samples) for k in ("lost", "duplicated", "disordered")]
    if not any(counts):
        return "none"
    first = next((s.extra["first_problem"] for s in samples if s.extra.get("first_problem")), "")
    return f"{counts[0]:,} lost, {counts[1]:,} duplicated, {counts[2]:,} out of order" + (f" ({first})" if first else "")


def _shape(run: Run, workload: str) -> tuple[Any, ...]:
    params = run.workloads.get(workload, {}).get("params") or {}
    return tuple(params.get(k) for k in SHAPE)


def _baseline(run: Run, cell: Cell) -> str:
    """The healthy latency on the same server with no slow subscriber (the workload of the
    same shape and slow = 0)."""
    for other in run.cells:
        params = run.workloads.get(other.workload, {}).get("params") or {}
        if (other.server == cell.server and other.client == cell.client and kind_of(run, other.workload) == "slow"
                and params.get("slow") == 0 and _shape(run, other.workload) == _shape(run, cell.workload)
                and other.ok_samples):
            return _latency(other.ok_samples)
    return "–"


def _growth(samples: list[Sample]) -> str:
    found = growth(samples)
    if found is None:
        return "–"
    return f"{found.per_s:,.1f}" + (f" ± {found.half:,.1f}" if found.half is not None else "")


def _evidence(who: str, policy: str, sample: Sample) -> str:
    subs = sample.extra.get("slow_subscribers") or []
    if not subs:
        return f"{who}, {policy}: {sample.extra.get('stopped') or 'no slow subscriber entry'}"
    numbers = f"{subs[0]['subscriber']}-{subs[-1]['subscriber']}" if len(subs) > 1 else str(subs[0]["subscriber"])
    each: dict[str, int] = {}
    for s in subs:
        key = f"{s['messages']:,} messages ({s['wire_bytes']:,} B on the wire)"
        each[key] = each.get(key, 0) + 1
    got = ", ".join(f"{n} × {key}" for key, n in each.items())
    ended = sorted({str(s.get("ended") or "still open at the end") for s in subs})
    return (f"{who}, {policy}: slow subscribers {numbers} got {got} of {sample.extra.get('sent', 0):,} sent; "
            f"how they ended: {'; '.join(ended)}")


def blocks(run: Run) -> list[Block]:
    grid = Grid(["server", "policy", "workload", "what it did with the slow subscribers",
                 "RSS growth MiB/s per slow subscriber (95 %)", "RSS stops growing at", "RSS at the last mark",
                 "healthy p50 / p99 ms, no slow subscriber", "healthy p50 / p99 ms, with them",
                 "healthy losses"], right={4, 7, 8})
    evidence: list[str] = []
    for cell in run.cells:
        params = run.workloads.get(cell.workload, {}).get("params") or {}
        if kind_of(run, cell.workload) != "slow" or not params.get("slow"):
            continue
        who = label(run, "servers", cell.server)
        why = not_run(cell)
        if why is not None:
            grid.add([who, "–", cell.workload, why], tones={3: "none"})
            continue
        samples = cell.ok_samples
        first = samples[0]
        policy = _same([_policy_name(s) for s in samples]) or _policy_name(first)
        did = [policy_of(s) for s in samples]
        grid.add([who, policy, cell.workload, did[0] if len(set(did)) == 1 else " | ".join(did),
                  _growth([s for s in samples if not s.extra.get("stopped")] or samples), plateau(first),
                  after_drain(first),
                  _baseline(run, cell), _latency([s for s in samples if s.extra.get("latency_us")]),
                  _losses(samples)])
        evidence.append(_evidence(who, policy, first))
    if not evidence and not grid.rows:
        return []
    return [HEAD,
            "Per server and policy (`default`: the server as it is; `--broadcast-limit BYTES`: servers/README.md "
            "item 16), what it did with the subscribers that stopped reading, read from the wire once they read "
            "again; its RSS growth while the publisher published (the marks' slope over K), where it stopped "
            "growing and what it held at the last mark (after the slow ones drained or were closed); the healthy subscribers' delivery latency (against each message's due time) without and "
            "with the slow ones, and what they lost (must be none).",
            grid, Details("The wire, per server and policy (first repetition)", [Bullets(evidence)])]
