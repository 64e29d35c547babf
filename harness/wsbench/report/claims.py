"""The source documents' published figures beside the matching cells of a run, as report
sections. A figure whose cells the run does not hold says "not in this run".

Verdicts on the quickjs-websocket claims (000) compare ratios: ours is the median of the
optimized client over the median of the client without the optimization (inverted for
times), with a 95 % bootstrap interval (both sides resampled). With g the claimed gain
(claimed ratio − 1, the low end of a range):

- **confirmed**: the whole interval shows at least half the claimed gain (low end ≥ 1 + g/2);
- **refuted**: the whole interval lies below half the claimed gain (high end < 1 + g/2);
- a claim of no change (±0 %) is confirmed when the interval lies within ±10 %, refuted
  when it lies wholly outside;
- **not measurable here** otherwise (an interval too wide to decide, or a quantity that
  wsbench does not measure), with the reason.
"""

from __future__ import annotations

from ..doc import Bullets, Grid, Section
from ..metrics import METRICS
from ..ranking import label, median_of, values
from ..model import ArchCounts, Cell, Run
from ..stats import ratio_of_medians
from . import sources
from .derived import reference_server

MISSING = "not in this run"
COUNT_SERVER = "lws"  # wsbench count's cells run against the native lws-echo
NO_CHANGE_BAND = 0.10


def sections(run: Run) -> list[Section]:
    return [deno_section(run), quickjs_section(run), chicken_section(run), decode_section(run)]


class _Cells:
    """The run's cells by workload, server and client."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.by_key = {(c.workload, c.server, c.client): c for c in run.cells}

    def median(self, workload: str, server: str | None, client: str, metric: str) -> float | None:
        cell = self.by_key.get((workload, server or "", client))
        return median_of(cell, metric) if cell else None

    def get(self, workload: str, server: str | None, client: str) -> Cell | None:
        return self.by_key.get((workload, server or "", client))


def _rate(v: float | None) -> str:
    return MISSING if v is None else f"{v:,.0f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def deno_section(run: Run) -> Section:
    cells = _Cells(run)
    clients = ("deno", "node22", "bun")
    grid = Grid(["workload", "source", "server", "Deno", "Node 22", "Bun", "Deno / Node 22", "Deno / Bun"],
                right={3, 4, 5, 6, 7})
    for workload, published in sources.DENO_CLIENTS.items():
        grid.add([workload, "published", "Deno", *(f"{published[c]:,}" for c in clients),
                  _ratio(published["deno"], published["node22"]), _ratio(published["deno"], published["bun"])])
        servers = [s for s in run.servers if any(cells.get(workload, s, c) for c in clients)] or ["deno"]
        for server in servers:
            ours = [cells.median(workload, server, c, "msgs_per_s") for c in clients]
            grid.add([workload, "wsbench", label(run, "servers", server), *map(_rate, ours),
                      _ratio(ours[0], ours[1]), _ratio(ours[0], ours[2])])
    server_side = Grid(["workload", "source", "Deno client → Deno server", "→ Bun server",
                        "Bun server / Deno server"], right={2, 3, 4})
    for workload, published in sources.DENO_SERVERS.items():
        server_side.add([workload, "published", f"{published['deno']:,}", f"{published['bun']:,}",
                         _ratio(published["bun"], published["deno"])])
        ours = [cells.median(workload, s, "deno", "msgs_per_s") for s in ("deno", "bun")]
        server_side.add([workload, "wsbench", *map(_rate, ours), _ratio(ours[1], ours[0])])
    return Section("Claims: Deno, Node 22 and Bun echo throughput (003)", [
        f"Published in `{sources.DENO_DOC}`: msgs/s of each client against the Deno server, beside ours "
        "against every server of this run (medians).", grid,
        "Server side: the Deno client against the Deno and the Bun server.", server_side,
        "How the methods differ:", Bullets(sources.DENO_METHOD)])


def verdict(claimed: float | None, interval: tuple[float, float, float] | None,
            unmeasurable: str | None = None) -> tuple[str, str]:
    """(verdict, why) for a claimed ratio against our ratio and its interval."""
    if unmeasurable:
        return "not measurable here", unmeasurable
    if interval is None or claimed is None:
        return MISSING, "the run has no cells for it"
    _, lo, hi = interval
    if claimed == 1.0:
        if 1 - NO_CHANGE_BAND <= lo and hi <= 1 + NO_CHANGE_BAND:
            return "confirmed", f"our interval lies within ±{NO_CHANGE_BAND:.0%}"
        if hi < 1 - NO_CHANGE_BAND or lo > 1 + NO_CHANGE_BAND:
            return "refuted", f"our interval lies outside ±{NO_CHANGE_BAND:.0%}"
        return "not measurable here", "our interval is too wide to decide"
    half = 1 + (claimed - 1) / 2
    if lo >= claimed:
        return "confirmed", f"our whole interval is at or above the claimed {claimed:,.2f}×"
    if lo >= half:
        return "confirmed", f"our whole interval is at least half the claimed gain ({half:.2f}×)"
    if hi < half:
        return "refuted", f"our whole interval is below half the claimed gain ({half:.2f}×)"
    return "not measurable here", f"our interval straddles half the claimed gain ({half:.2f}×): more repetitions"


def measure(run: Run, claim: sources.Claim) -> tuple[str, tuple[float, float, float]] | None:
    """(workload, (ratio, low, high)) of ours over theirs on the first workload of the
    claim that the run holds both cells of, on the native server."""
    cells = _Cells(run)
    server = reference_server(run)
    higher = METRICS[claim.metric].higher_is_better
    for workload in claim.workloads:
        a, b = cells.get(workload, server, claim.ours), cells.get(workload, server, claim.theirs)
        if a is None or b is None:
            continue
        ours, theirs = values(a, claim.metric), values(b, claim.metric)
        r = ratio_of_medians(ours, theirs) if higher else ratio_of_medians(theirs, ours)
        if r is not None:
            return workload, r
    return None


def instruction_ratio(counts: ArchCounts, claim: sources.Claim) -> str:
    """Instructions per message without the optimization over with it (above 1: it saves
    instructions), on the first of the claim's workloads counted for both clients."""
    if not claim.theirs or not claim.workloads:
        return "–"
    for workload in claim.workloads:
        ours = counts.per_message(workload, COUNT_SERVER, claim.ours)
        theirs = counts.per_message(workload, COUNT_SERVER, claim.theirs)
        if ours and theirs:
            return f"{theirs / ours:.2f}× ({workload}: {theirs:,.0f} → {ours:,.0f})"
    return "not counted"


def claims_grid(run: Run, claims: list[sources.Claim]) -> Grid:
    """One row per claim; with the run's ``counts`` (``wsbench count --claims``), a column of
    instruction ratios per architecture counted."""
    arches = sorted((run.counts.arches if run.counts else {}).items(), key=lambda kv: kv[0] != "x86-64")
    headers = ["#", "switch", "claimed", "claimed ratio", "workload", "ours: msgs/s ratio (95% CI)",
               *(f"instructions/message ratio, {arch} ({counts.tool})" for arch, counts in arches),
               "verdict (msgs/s)", "why", "how ours differs"]
    grid = Grid(headers, right={3, 5, *range(6, 6 + len(arches))})
    for claim in claims:
        found = measure(run, claim)
        workload, r = found if found else (", ".join(claim.workloads) or "–", None)
        result = MISSING if r is None else f"{r[0]:.2f}× ({r[1]:.2f}–{r[2]:.2f})"
        word, why = verdict(claim.ratio, r, claim.unmeasurable)
        if r is None and claim.unmeasurable is None:
            word, why = MISSING, f"needs {claim.ours} and {claim.theirs} on the native server"
        grid.add([claim.number, claim.switch, claim.claim, "–" if claim.ratio is None else f"{claim.ratio:,.2f}×",
                  workload, result, *(instruction_ratio(counts, claim) for _, counts in arches),
                  f"**{word}**", why, claim.note])
    return grid


def quickjs_section(run: Run) -> Section:
    return Section("Claims: the ten quickjs-websocket optimizations (000)", [
        f"Every claimed improvement in `{sources.QJS_DOC}` beside our measured ratio. Single ablations come "
        f"from the `ablations` suite: `{sources.ABLATIONS_COMMAND}`. Ratios above 1 mean the optimization "
        "helps. Verdicts: confirmed when our whole 95 % interval shows at least half the claimed gain, "
        "refuted when it lies wholly below half of it (a claim of no change: within or outside ±10 %), "
        "otherwise not measurable here, with the reason.",
        *_counts_note(run),
        claims_grid(run, sources.SINGLE_CLAIMS),
        "All optimizations together: `quickjs` over `quickjs-baseline` (`QJSWS_DISABLE=all`).",
        claims_grid(run, sources.ALL_CLAIMS),
        "How the methods differ:", Bullets(sources.QJS_METHOD)])


def _counts_note(run: Run) -> list[str]:
    """What the instruction columns are, when the run has counts."""
    if not run.counts or not run.counts.arches:
        return []
    what = "; ".join(f"{arch}: {c.tool}, {c.machine.get('qemu') or c.machine.get('cpu_model')}"
                     for arch, c in sorted(run.counts.arches.items(), key=lambda kv: kv[0] != "x86-64"))
    return [f"Instruction columns (`{sources.COUNT_COMMAND}`; {what}): instructions per message of the client "
            "without the optimization over the client with it, measured phase only (above 1: the optimization "
            "saves instructions). They are counts, not times: the msgs/s ratio and its verdict are timed on "
            "x86-64; armhf (ARMv7, the seed's architecture) is counted under qemu-arm, whose times mean "
            "nothing for ARM hardware (docs/arm.md). The seed's figures are ops/s on its ARMv7 router."]


def chicken_section(run: Run) -> Section:
    published = Grid(["published (16 MB text message)", "ms"], right={1})
    for what, ms in sources.CHICKEN_FIGURES_MS:
        published.add([what, f"{ms:,.0f}"])
    ours = Grid(["client", "server", "delivery ms (median)", "95% CI", "vs 285 ms", "vs ~380 ms",
                 "invalid byte: close code"], right={2, 3, 4, 5, 6})
    cells = [c for c in run.cells if c.workload == "text_16m"]
    for cell in sorted(cells, key=lambda c: (c.summary("delivery_ms").median if c.summary("delivery_ms")
                                             else float("inf"))):
        s = cell.summary("delivery_ms")
        bad = _Cells(run).get("text_16m_invalid", cell.server, cell.client)
        code = median_of(bad, "close_code") if bad else None
        if s is None:
            ours.add([label(run, "clients", cell.client), label(run, "servers", cell.server),
                      cell.na or "failed"])
            continue
        ours.add([label(run, "clients", cell.client), label(run, "servers", cell.server), f"{s.median:,.1f}",
                  f"{s.ci95[0]:,.1f}–{s.ci95[1]:,.1f}", f"{s.median / 285:.2f}×", f"{s.median / 380:.2f}×",
                  "–" if code is None else f"{code:.0f}"])
    if not cells:
        ours.add([MISSING, "", "", "", "", "", ""])
    return Section("Claims: one 16 MB text message (001)", [
        f"Published in `{sources.CHICKEN_DOC}`:", published,
        "Ours (`text_16m`, and the close code each client sends for `text_16m_invalid`, which must be 1007); "
        "the ratios are our time over theirs (below 1 is faster):", ours,
        "How the methods differ:", Bullets(sources.CHICKEN_METHOD)])


DECODE_SIZES = (10, 100, 200, 300, 1000)


def decode_section(run: Run) -> Section:
    published = Grid(["bytes", "pure JS ops/s", "TextDecoder ops/s", "TextDecoder / JS"], right={0, 1, 2, 3})
    for size, (js, td) in sources.DECODE_FIGURES.items():
        published.add([str(size), f"{js:,}", f"{td:,}", f"{td / js:.2f}×"])
    ours = Grid(["client", "text", *(f"{n} B" for n in DECODE_SIZES), "growth ns/byte"],
                right=set(range(2, 3 + len(DECODE_SIZES))))
    cells = _Cells(run)
    server = reference_server(run)
    found = False
    for client in run.clients:
        for text in ("ascii", "mixed"):
            cost = [cells.median(f"decode_{text}_{n}", server, client, "client_cpu_us_per_msg") for n in DECODE_SIZES]
            if all(c is None for c in cost):
                continue
            found = True
            growth = ((cost[-1] - cost[0]) * 1000 / (DECODE_SIZES[-1] - DECODE_SIZES[0])
                      if cost[0] is not None and cost[-1] is not None else None)
            ours.add([label(run, "clients", client), text,
                      *(MISSING if c is None else f"{c:.2f}" for c in cost),
                      "–" if growth is None else f"{growth:.2f}"])
    if not found:
        ours.add([MISSING])
    return Section("Claims: UTF-8 decode cost by length (004)", [
        f"Published in `{sources.DECODE_DOC}` (Node 12): decode calls per second by string length; "
        f"TextDecoder overtakes the pure-JS decoder near {sources.DECODE_CROSSOVER_BYTES} bytes.", published,
        "Ours (`decode_ascii_*`, `decode_mixed_*` on the native server): client CPU µs per echoed message by "
        "size, and how much each added byte costs from 10 to 1000 bytes:", ours,
        "How the methods differ:", Bullets(sources.DECODE_METHOD)])
