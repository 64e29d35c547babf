"""Reconnect storms and peers that vanish in "When peers misbehave" (issue 34, parts 4 and
5; docs/misbehave.md).

Storms (the ``storm`` kind): per server and N, how long until every connection was back
(its upgrade done and one echo checked) after all N were closed at once, half of them
when, the reconnections that failed by reason, the server's CPU over the storm (its marks
``before`` to ``storm``), its peak RSS in the storm (VmHWM between those marks: measure.py
resets it at every mark) and its RSS after a settle against before.

Vanishing peers (samples with ``extra.vanish``, vanish.py): per server, whether it freed
the connection of a peer gone without FIN or RST, and after how long, or "not freed
within" the bound; what it sent towards the vanished peer (segments dropped by the
namespace's firewall: pings, a close, keep-alive probes) and whether its socket had TCP
keep-alive on; beside it the runtime's documented default keep-alive and what the
server script sets.
"""

from __future__ import annotations

import statistics
from typing import Any

from ..doc import Block, Bullets, Details, Grid
from ..model import Cell, Run, Sample
from ..ranking import label
from .cell_state import kind_of, not_run

HEAD_STORM = "**Reconnect storms: every connection closed at once and reopened**"
HEAD_VANISH = "**Peers that vanish: does the server notice a client gone without FIN or RST**"
REASONS = ("refused", "reset", "closed", "bad_upgrade", "other", "timed_out")
# the kernel's TcpExt counters over the storm (the loadgen's result; the whole namespace's)
KERNEL = (("listen_overflows", "accept-queue overflows (ListenOverflows: a SYN or a handshake's last ACK dropped "
           "with the accept queue full, sent again later; each retry counted)"),
          ("syn_cookies", "SYN cookies (the SYN queue full)"))
# RSS after the settle counts as back at its level before within this much (either bound)
RETURN_MIB, RETURN_SHARE = 2.0, 0.05

# What each server's runtime does by default with an idle WebSocket, from its documentation
# (or its source), and what our server script sets (servers/*): the wire shows the latter.
DEFAULT_KEEPALIVE = {
    "lws": "libwebsockets 4.3.5: a validity ping after 300 s without traffic, hang-up at 310 s "
           "(lib/core/context.c default_retry); servers/lws sets no retry policy: the default",
    "node-ws": "ws: no heartbeat (its README's example pings and terminates in application code); Node's "
               "http server leaves SO_KEEPALIVE off (keepAlive: false); servers/node-ws adds none",
    "node-ws-native": "as node-ws (the same server script, ws with its native add-ons)",
    "bun": "Bun.serve: idleTimeout 120 s with sendPings true (a ping before the timeout, closed without a "
           "pong); servers/bun sets idleTimeout 0 and sendPings false",
    "deno": "Deno.upgradeWebSocket: idleTimeout 30 s (pings, closed without a pong); servers/deno sets "
            "idleTimeout 0",
}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _num(value: float | None, digits: int = 2, unit: str = "") -> str:
    return "–" if value is None else f"{value:,.{digits}f}{unit}"


def _mark(sample: Sample, name: str, key: str) -> float | None:
    value = ((sample.extra.get("marks") or {}).get(name) or {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def _between(sample: Sample, key: str, first: str = "before", last: str = "storm") -> float | None:
    a, b = _mark(sample, first, key), _mark(sample, last, key)
    return b - a if a is not None and b is not None else None


def _failures(samples: list[Sample]) -> str:
    """The reconnections not back, by reason, over the repetitions (e.g. "0", "12 refused")."""
    counts = {r: sum(int(s.extra.get(r) or 0) for s in samples) for r in REASONS}
    parts = [f"{n:,} {r.replace('_', ' ')}" for r, n in counts.items() if n]
    return ", ".join(parts) if parts else "0"


def _returned(before: float | None, after: float | None) -> tuple[str, str | None]:
    """RSS after the settle against before the storm, in MiB, and its verdict's tone."""
    if before is None or after is None:
        return "–", None
    delta = after - before
    text = f"{before:,.1f} → {after:,.1f} ({delta:+,.1f})"
    back = delta <= max(RETURN_MIB, RETURN_SHARE * before)
    return (f"{text}: back" if back else f"{text}: kept"), ("ok" if back else "non-strict")


def _storm_row(grid: Grid, run: Run, cell: Cell, evidence: list[str]) -> None:
    who = label(run, "servers", cell.server)
    n = (run.workloads.get(cell.workload, {}).get("params") or {}).get("connections")
    why = not_run(cell)
    if why is not None:
        grid.add([who, f"{n:,}" if isinstance(n, int) else "?", why], tones={2: "none" if cell.na else "failed"})
        return
    samples = cell.ok_samples
    reps = f" ({len(samples)} reps, medians)" if len(samples) > 1 else ""

    def med(get: Any) -> float | None:
        return _median([v for v in (get(s) for s in samples) if v is not None])

    back = med(lambda s: s.extra.get("storm_s"))
    all_back = all(s.extra.get("back") == s.extra.get("connections") for s in samples)
    kib = 1 / 1024
    peak = med(lambda s: _mark(s, "storm", "server_peak_rss_kib"))
    before = med(lambda s: _mark(s, "before", "server_rss_kib"))
    after = med(lambda s: _mark(s, "after", "server_rss_kib"))
    returned, tone = _returned(before * kib if before else None, after * kib if after else None)
    grid.add([who, f"{n:,}{reps}", (_num(back, 2, " s") if all_back else f"not all: {_num(back, 2, ' s')}"),
              _num(med(lambda s: s.extra.get("back_p50_s")), 2, " s"), _failures(samples),
              _num(med(lambda s: _between(s, "server_cpu_s")), 2, " s"),
              _num(peak * kib if peak else None, 1), returned],
             tones={2: "ok" if all_back else "failed", **({7: tone} if tone else {})})
    first = samples[0].extra
    named = [f"{r}: {first[f'first_{r}']}" for r in REASONS if first.get(f"first_{r}")]
    kernel = [f"{first[k]:,} {what}" for k, what in KERNEL if isinstance(first.get(k), int)]
    evidence.append(f"{who}, N = {n:,}: opened in {_num(first.get('open_s'), 2, ' s')}; closes all done at "
                    f"{_num(first.get('closed_s'), 2, ' s')}, all back at {_num(first.get('storm_s'), 2, ' s')} "
                    f"(p99 {_num(first.get('back_p99_s'), 2, ' s')})"
                    + (f"; the kernel over the storm: {', '.join(kernel)}" if kernel else "")
                    + (f"; first failures: {'; '.join(named)}" if named else ""))


def _storms(run: Run) -> list[Block]:
    grid = Grid(["server", "N", "all back in", "half back in", "not back (reason)", "server CPU in the storm",
                 "server peak RSS in the storm MiB", "server RSS MiB before → after settle"], right={2, 3, 5, 6})
    evidence: list[str] = []
    cells = [c for c in run.cells if kind_of(run, c.workload) == "storm"]
    for cell in sorted(cells, key=lambda c: (c.server, (run.workloads[c.workload].get("params") or {})
                                              .get("connections") or 0)):
        _storm_row(grid, run, cell, evidence)
    if not grid.rows:
        return []
    return [HEAD_STORM,
            "N connections open and echoed once, then the client closes all of them at once (a close frame "
            "1000 each) and reopens each as soon as its close completed, with no cap on handshakes in flight; a "
            "connection is back once upgraded and its echo checked. A reconnection that fails is not retried: it "
            "is counted by reason. CPU and peak RSS are the server's between the marks before and storm; its RSS "
            f"is back when after the settle it is within {RETURN_MIB:g} MiB or {RETURN_SHARE:.0%} of before.",
            grid, Details("The storms' timelines (first repetition)", [Bullets(evidence)])]


def _idle_handling(cell: Cell) -> str:
    """How the server ran: its runtime's own idle defaults (--idle-defaults, servers/README.md
    item 18) or what our script sets (the benchmarks' setting)."""
    if any("--idle-defaults" in (s.extra.get("server_args") or []) for s in cell.samples):
        return "the runtime's defaults (--idle-defaults)"
    return "as benchmarked (the script's settings)"


def _vanish_row(grid: Grid, run: Run, cell: Cell) -> None:
    who = label(run, "servers", cell.server)
    default = DEFAULT_KEEPALIVE.get(cell.server.split("/")[0], "–")
    ran = _idle_handling(cell)
    why = not_run(cell)
    if why is not None:
        grid.add([who, ran, why, "", "", default], tones={2: "none" if cell.na else "failed"})
        return
    found = [s.extra["vanish"] for s in cell.ok_samples if "end_state" in (s.extra.get("vanish") or {})]
    if not found:
        grid.add([who, ran, "no reading", "", "", default], tones={2: "failed"})
        return
    freed = [f["freed_s"] for f in found if isinstance(f.get("freed_s"), (int, float))]
    bound = found[0].get("bound_s")
    if len(freed) == len(found):
        verdict, tone = f"freed after {_num(_median(freed), 1, ' s')}", "ok"
    elif freed:
        verdict, tone = f"freed in {len(freed)} of {len(found)} (median {_num(_median(freed), 1, ' s')})", "non-strict"
    else:
        verdict, tone = f"not freed within {bound:g} s", "failed"
    sent = sorted({int(f.get("segments_from_server") or 0) for f in found})
    wire = ("nothing (no ping, no probe)" if sent == [0] else
            f"{sent[0]}–{sent[-1]} segments" if len(sent) > 1 else f"{sent[0]} segments")
    end = found[0]
    wire += f"; socket then {end.get('end_state')}"
    if end.get("end_unacked_bytes"):
        wire += f", {end['end_unacked_bytes']} B unacknowledged"
    keepalive = "on" if any(f.get("keepalive") for f in found) else "off"
    grid.add([who, ran, verdict, wire, keepalive, default], tones={2: tone})


def _vanished(run: Run) -> list[Block]:
    grid = Grid(["server", "idle handling", "a vanished peer's connection", "sent towards it (from the wire)",
                 "TCP keep-alive on its socket", "its runtime's default keep-alive (docs) and what the script sets"])
    for cell in run.cells:
        if any("vanish" in s.extra for s in cell.samples):  # vanish.py records its bound first, even on failure
            _vanish_row(grid, run, cell)
    if not grid.rows:
        return []
    return [HEAD_VANISH,
            "One connection, echoed once; then every segment of it is dropped both ways inside a network namespace "
            "of the cell's own (no FIN, no RST: the client is alive but unreachable), and the harness watches the "
            "server's descriptors until it lets go of that socket, up to a bound. What the server sent towards the "
            "vanished peer is counted by the namespace's firewall (each retransmission counted).",
            grid]


def blocks(run: Run) -> list[Block]:
    return _storms(run) + _vanished(run)
