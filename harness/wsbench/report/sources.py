"""The source documents' published figures, as data, and how their methods differ from ours.

Figures are quoted from ../shared/seeds/ (see its README); nothing here is measured.
report/claims.py puts them beside the matching cells of a run.
"""

from __future__ import annotations

from dataclasses import dataclass

SEEDS = "../shared/seeds"

# --- 003: Deno WebSocket perf research (client and server echo throughput, msgs/s) ---

DENO_DOC = f"{SEEDS}/003_af8c9401a7d3347b.txt"
# Clients against the Deno reference server.
DENO_CLIENTS: dict[str, dict[str, int]] = {
    "text_11": {"deno": 111_128, "node22": 81_646, "node23": 66_595, "bun": 153_162},
    "bin_32": {"deno": 101_448, "node22": 70_825, "node23": 97_242, "bun": 110_911},
    "bin_4k": {"deno": 48_887, "node22": 11_238, "node23": 11_892, "bun": 39_576},
    "bin_64k": {"deno": 6_927, "node22": 1_067, "node23": 1_071, "bun": 3_138},
}
# The Deno client against the Deno and the Bun server.
DENO_SERVERS: dict[str, dict[str, int]] = {
    "text_11": {"deno": 111_128, "bun": 136_218},
    "bin_32": {"deno": 101_448, "bun": 123_858},
    "bin_4k": {"deno": 48_887, "bun": 63_068},
    "bin_64k": {"deno": 6_927, "bun": 7_368},
}
DENO_METHOD = [
    "Their figures come from one machine of theirs (CPU and runtime versions are not in the document); "
    "ours from this run's machine and versions (above). Compare the ratios between runtimes, not the rates.",
    "Their client was one benchmark script run by each runtime; ours is one shared workload with a small "
    "adapter per runtime, and every echo is checked (sequence, type, length, bytes).",
    "Ours: bursts of the workload's size repeated for at least the run's floor, interleaved repetitions, "
    "medians with 95 % intervals; client and server share this machine's cores. Their repetition scheme "
    "is not stated.",
    "Node 23 is in their table but not in wsbench; Node 20 + ws is in ours but not in theirs.",
]

# --- 000: quickjs-websocket OPTIMIZATIONS.md (ARMv7 router, before/after ops/s) ---

QJS_DOC = f"{SEEDS}/000_3d3ece768f418697.txt"
ABLATIONS_COMMAND = "make bench SUITE=ablations  (= .venv/bin/wsbench run --suite ablations)"
# the claims' instruction counts on both architectures (the armhf column needs make setup-arm)
COUNT_COMMAND = ".venv/bin/wsbench count --claims --arch x86-64 --arch armhf [--run ABLATIONS.json]"


@dataclass(frozen=True)
class Claim:
    """A claimed improvement and how wsbench measures it: ``ours`` against ``theirs`` on
    the first of ``workloads`` the run has, ranked by ``metric``, on the native server."""

    number: str  # the optimization's number in the document ("1", ..., "1-10" for all)
    switch: str  # QJSWS_DISABLE name, "all" for the baseline
    claim: str  # the published figure, quoted
    ratio: float | None  # the claimed after/before ratio (low end of a range); None: no ratio
    workloads: tuple[str, ...] = ()
    metric: str = "msgs_per_s"
    ours: str = "quickjs"
    theirs: str = ""  # the client without the optimization
    unmeasurable: str | None = None  # why no verdict is possible here, if so
    note: str = ""  # how our measurement differs


def _off(switch: str) -> str:
    return f"quickjs-no-{switch}"


SINGLE_CLAIMS: list[Claim] = [
    Claim("1", "join", "two-buffer join 5,000 → 12,000 ops/s (+140%)", 2.40, ("frag2_4k",), theirs=_off("join"),
          note="theirs times the join function; ours whole 4 KiB messages arriving as 2 frames"),
    Claim("1", "join", "fragmented message receive 3,000 → 6,000 ops/s (+100%)", 2.00, ("frag4_4k",),
          theirs=_off("join"), note="4 KiB messages arriving as 4 frames"),
    Claim("2", "buffered", "bufferedAmount 11,234 → 9,876,543 ops/s (+87,800%, 10 messages pending)", 879.0,
          ("buffered_10x1m",), "getter_calls_per_s", theirs=_off("buffered"),
          note="getter reads per second with 10 × 1 MiB pending"),
    Claim("3", "pool", "small message send (<1 KB) 8,000 → 15,000 ops/s (+88%)", 1.88, ("bin_1k", "bin_32"),
          theirs=_off("pool"), note="echo throughput (send and receive) of 1 KiB binary messages (32 B when the run has no bin_1k)"),
    Claim("3", "pool", "medium message send (8 KB) 6,000 → 9,000 ops/s (+50%)", 1.50, ("bin_8k", "bin_4k"),
          theirs=_off("pool"), note="echo throughput of 8 KiB binary messages (4 KiB when the run has no bin_8k)"),
    Claim("4", "scheduler", "event loop (1000 events) ~450 → ~340 ms (+24%)", 1.24, ("text_11",),
          theirs=_off("scheduler"), note="echo throughput of 11-byte messages, where the event loop dominates"),
    Claim("4", "scheduler", "timer operations -75%", None,
          unmeasurable="wsbench does not count timer calls"),
    Claim("5", "transfer", "large send with {transfer: true} 1,203 → 1,560 ops/s (+30%)", 1.30,
          ("bin_64k_transfer",), theirs=_off("transfer"), note="64 KiB echoes sent with {transfer: true}"),
    Claim("6", "fragbuf", "fragment receive (2): +94% on top of optimization 1", 1.94, ("frag2_4k",),
          theirs=_off("fragbuf")),
    Claim("6", "fragbuf", "fragment receive (4): +50% on top of optimization 1", 1.50, ("frag4_4k",),
          theirs=_off("fragbuf")),
    Claim("7", "strsend", "text send (1 KB) 15,487 → 19,350 ops/s (+25%)", 1.25, ("text_1k",),
          theirs=_off("strsend"), note="1 KiB text echoes"),
    Claim("7", "strsend", "text send (8 KB) 8,834 → 10,180 ops/s (+15%)", 1.15,
          unmeasurable="wsbench has no 8 KiB text workload"),
    Claim("8", "batch", "event loop: +8% on top of optimization 4", 1.08, ("conns_100",), theirs=_off("batch"),
          note="100 connections echoing at once, so many sockets are ready per wakeup"),
    Claim("8", "batch", "JS/C transitions for 10 concurrent events 10 → 1 (-90%)", None,
          unmeasurable="wsbench does not count JS/C transitions"),
    Claim("9", "eventpool", "event handling 5-10% faster", 1.05, ("text_11",), theirs=_off("eventpool"),
          note="echo throughput of 11-byte messages (one event per message)"),
    Claim("9", "eventpool", "event object allocations -100%", None,
          unmeasurable="wsbench does not count allocations"),
    Claim("10", "urlparse", "URL parsing ~500 → ~1,500 ops/s (+200%)", 3.00, ("handshakes",), "handshakes_per_s",
          theirs=_off("urlparse"),
          unmeasurable="we time whole connection lifetimes (TCP connect, upgrade, close), of which parsing the "
                       "URL is a small part; the document itself calls the overall impact minimal"),
]

ALL_CLAIMS: list[Claim] = [
    Claim("1-10", "all", "small text send (1 KB) 8,234 → 19,350 ops/s (+135%)", 2.35, ("text_1k",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "small binary send (1 KB) 8,234 → 15,487 ops/s (+88%)", 1.88, ("bin_1k",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "medium send (8 KB) 5,891 → 10,180 ops/s (+73%)", 1.73, ("bin_8k",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "large send (64 KB) 1,203 → 1,198 ops/s (±0%)", 1.00, ("bin_64k",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "large send zero-copy 1,203 → 1,560 ops/s (+30%)", 1.30, ("bin_64k_transfer",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "fragmented receive (2) 4,567 → 13,450 ops/s (+194%)", 2.94, ("frag2_4k",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "fragmented receive (4) 3,205 → 8,000 ops/s (+150%)", 2.50, ("frag4_4k",),
          theirs="quickjs-baseline"),
    Claim("1-10", "all", "bufferedAmount 11,234 → 9,876,543 ops/s (+87,800%)", 879.0, ("buffered_10x1m",),
          "getter_calls_per_s", theirs="quickjs-baseline"),
    Claim("1-10", "all", "event loop (1000 events) ~450 → ~305 ms (+32%)", 1.32, ("text_11",),
          theirs="quickjs-baseline"),
]
QJS_METHOD = [
    "Their figures were measured on an ARMv7 router with QuickJS 2020-11-08; ours on this run's machine "
    "with QuickJS 2025-04-26 and our own implementation of each optimization (quickjs-websocket/README.md). "
    "So ratios are compared, never rates.",
    "Their before/after figures are mostly micro-benchmarks of one operation; ours are whole echo workloads "
    "(send, frame, receive, deliver, check), where one operation's gain is diluted by everything else.",
    "A single-ablation ratio is the client with every optimization over the client with all but one "
    "(`QJSWS_DISABLE=<name>`), on the native server: what that one optimization is worth with the others "
    "present. Their per-optimization figures were measured cumulatively, one step after another.",
    "Our client has an eleventh switch, `framing` (its own framing, masking and parsing instead of lws'), "
    "which their document does not have; `quickjs-baseline` turns it off too, so the all-optimizations "
    "ratios include it and can far exceed theirs.",
]

# --- 001: CHICKEN Scheme talk (one 16 MB text message) ---

CHICKEN_DOC = f"{SEEDS}/001_4b8559fb1f229f7d.txt"
CHICKEN_FIGURES_MS: list[tuple[str, float]] = [
    ("CHICKEN Scheme library, first version", 23_000),
    ("after removing copies and garbage", 2_500),
    ("after copying strings whole in the runtime", 1_000),
    ("after unmasking in C", 700),
    ("after a faster UTF-8 validator", 400),
    ("\"most popular implementations\"", 380),
    ("final, with an ASCII fast path", 285),
]
CHICKEN_METHOD = [
    "Theirs: one 16 MB text message processed by a WebSocket library (unmasking and UTF-8 validation were "
    "its hot spots), hardware not stated. Ours: one 16 MiB message (mostly ASCII with 2-, 3- and 4-byte "
    "characters) timed from the client's request to its delivery as a string, over loopback, served by "
    "the native server.",
    "Server-to-client frames are not masked, so unmasking, one of their hot spots, is not in a client's "
    "path at all; validation and decoding are.",
]

# --- 004: MessagePack JS decoder article (UTF-8 decode cost per string length) ---

DECODE_DOC = f"{SEEDS}/004_eedd3abdfc969ad3.txt"
# String length (bytes) -> (pure-JS utf8Decode ops/s, TextDecoder ops/s), Node 12.
DECODE_FIGURES: dict[int, tuple[int, int]] = {
    10: (8_147_700, 693_559),
    100: (860_952, 484_350),
    200: (458_241, 454_980),
    300: (298_996, 403_562),
}
DECODE_CROSSOVER_BYTES = 200
DECODE_METHOD = [
    "Theirs: one decode call per string, in isolation, in Node 12, two decoders side by side (pure JS and "
    "TextDecoder), crossing near 200 bytes.",
    "Ours: whole text echoes of 10 to 1000 bytes, where each runtime decodes with its own built-in path; "
    "there is no second decoder to cross over with. What can be set beside their curve is how each client's "
    "cost per message grows with the message's size (client CPU µs per message, and its growth per byte).",
]
