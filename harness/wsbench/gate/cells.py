"""What the deterministic gate counts: the code this project owns, each cell one program
under callgrind with the other side running natively.

- ``qjs``: the QuickJS client (``clients/quickjs.mjs``) against the native ``lws-echo``;
- ``lws-echo``: the native server, driven by ``wsbench-loadgen``;
- ``loadgen``: the native load generator against ``lws-echo``.

The QuickJS client is counted in burst mode (the workload as it is): it is the slow side
under callgrind, reads full buffers, and its count repeats within 0.05 %. The native
programs are counted one message at a time (``--mode pingpong``): in a burst their
count depends on how many messages each wake-up finds (``lws-echo``'s coalescing and
allocator paths, the load generator's event-loop turns), which is timing, not code, and
moved their counts by 2-36 % between identical runs; one at a time they repeat within
0.3 %. ``loadgen/frag4_4k`` still depends on how the server's four frames arrive, so it
is counted and reported but not gated (``gated``).

With ``wsbench gate --base REF`` each cell is counted twice, the counted program taken
from the base's build and from the head's (gate/builds.py), its peer the head's both times.

Each cell has two fixed message counts: ``full`` (``make gate``) and ``quick`` (``make
test``, about a tenth). Counts per message differ a little between the two (a constant
per run is spread over fewer messages), so each profile has its own baseline figures.

``ARMHF_CELLS`` (``wsbench gate --arch armhf``, gate/arches.py): the same QuickJS cells with
the armhf client (``qjs-armhf/<workload>``: ``build/arm/prefix/bin/qjs`` on
``build/arm/root/clients/quickjs.mjs``, which loads the armhf module and checks) counted
under ``qemu-arm`` by the plugin (gate/qemu.py), against the same native ``lws-echo``.

The ``qjs/tls_*`` cells count the QuickJS client over wss:// (its own TLS transport)
against ``lws-echo`` in TLS mode, with the test certificate (build/tls) and the client
trusting the test CA, as the TLS track runs them; OpenSSL's work on the client side is
counted with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import WsbenchError
from ..certificates import load_certs
from ..workloads import Workload, WorkloadSet
from .builds import HEAD, Build

PROFILES = ("full", "quick")
PROGRAMS = ("qjs", "lws-echo", "loadgen")


# The 1 MiB valid UTF-8 text message of lws-echo's ?serve=utf8 (servers/lws/README.md),
# 1,009,740 UTF-16 code units long; the 16 MiB one of text_16m is too slow under valgrind.
TEXT_1M_PATH = "/?serve=utf8&bytes=1048576"
TEXT_1M_LENGTH = 1009740


@dataclass(frozen=True)
class Cell:
    program: str  # which program is counted: qjs, lws-echo or loadgen
    workload: str  # a workload of workloads/*.toml (text_1m: text_16m at 1 MiB)
    counts: tuple[int, int]  # messages in the measured phase: (full, quick)
    warmup: tuple[int, int]  # warm-up messages, not counted: (full, quick)
    mode: str | None = None  # replaces the workload's --mode (pingpong for the native programs)
    gated: bool = True  # False: counted and reported, never a regression (why: ``UNGATED``)
    tls: bool = False  # over wss:// (the qjs client against lws-echo in TLS mode)
    command: tuple[str, ...] = ()  # the client's fixed command line (armhf), else the build's
    env: tuple[tuple[str, str], ...] = ()  # the client's environment added (an ablation's QJSWS_DISABLE)
    suffix: str = ""  # after the workload in the name: a qjs cell in another mode (_pingpong)

    @property
    def name(self) -> str:
        return f"{self.program}/{'tls_' if self.tls else ''}{self.workload}{self.suffix}"

    @property
    def scheme(self) -> str:
        return "wss" if self.tls else "ws"

    def server_args(self) -> tuple[str, ...]:
        """lws-echo's TLS mode (harness/runtimes.toml's tls table for it), or nothing."""
        if not self.tls:
            return ()
        v = load_certs().values("server")
        return ("--tls-cert", v["{cert}"], "--tls-key", v["{key}"])

    def client_env(self) -> dict[str, str]:
        """The cell's own environment, and the client's trust of the test CA (its tls table)."""
        tls = {"QJSWS_CA_FILE": load_certs().values("server")["{ca}"]} if self.tls else {}
        return {**dict(self.env), **tls}

    @property
    def counted_side(self) -> str:
        return "server" if self.program == "lws-echo" else "client"

    def client_command(self, build: Build = HEAD) -> tuple[str, ...]:
        """The client's command line, from ``build`` (the working tree's by default)."""
        if self.command:
            return self.command
        return build.qjs if self.program == "qjs" else build.loadgen

    def count(self, profile: str) -> int:
        return self.counts[PROFILES.index(profile)]

    def warmup_count(self, profile: str) -> int:
        return self.warmup[PROFILES.index(profile)]


ECHO_WORKLOADS = {
    # workload: (full, quick) counts, (full, quick) warm-up
    "text_11": ((20000, 2000), (1000, 200)),
    "bin_32": ((20000, 2000), (1000, 200)),
    "bin_4k": ((5000, 500), (500, 100)),
    "bin_64k": ((500, 50), (50, 10)),
    "frag4_4k": ((5000, 500), (500, 100)),
}

# Why a cell is not gated (its count is not repeatable enough for a 3 % threshold).
UNGATED = {"loadgen/frag4_4k": "its count depends on how the server's four frames of a message arrive "
                               "(3.6 % apart between identical runs)"}

CELLS: tuple[Cell, ...] = tuple(
    [Cell(program, w, counts, warm, None if program == "qjs" else "pingpong", f"{program}/{w}" not in UNGATED)
     for program in PROGRAMS for w, (counts, warm) in ECHO_WORKLOADS.items()]
    + [Cell("qjs", "text_1m", (3, 1), (1, 1)),
       # connection setup: connect, open, close in sequence (the client's "connect" switch)
       Cell("qjs", "handshakes", (1000, 100), (50, 10))]
    # over wss:// (the client's "tls" switch)
    + [Cell("qjs", w, *ECHO_WORKLOADS[w], tls=True) for w in ("text_11", "bin_64k")]
    # full TLS handshakes (no resumption), connect to close in sequence: about 5.9 million
    # instructions each, OpenSSL's 98 % of them (docs/quickjs-websocket.md, "Full TLS
    # handshakes: the library's share")
    + [Cell("qjs", "handshakes", (200, 20), (20, 5), tls=True)]
    # one message in flight (--mode pingpong): every echo a read and a write of its own, so a
    # cost per read or per write (a system call, OpenSSL's per-record work) counts whole here
    # where a burst spreads it over the messages of a read. (Not the latency kind: its
    # histogram's buckets depend on the times measured, and so did its count, 3.9 % apart
    # over three runs of 1,000 round trips.)
    + [Cell("qjs", "bin_32", (5000, 1000), (100, 50), mode="pingpong", tls=tls, suffix="_pingpong")
       for tls in (False, True)])

# Cells the armhf gate leaves out: the full TLS handshakes are OpenSSL's work almost alone
# (bookworm's armhf build, here under qemu-arm -singlestep); not yet counted there, so the
# armhf baseline has no figure for them.
ARMHF_LEFT_OUT = ("qjs/tls_handshakes",)


# The armhf client under qemu-arm (gate/qemu.py): its qjs, and the adapter through
# build/arm/root, whose build/ holds the armhf module and checks (scripts/setup-arm.sh).
ARMHF_QJS = ("build/arm/prefix/bin/qjs", "build/arm/root/clients/quickjs.mjs")
ARMHF_CELLS: tuple[Cell, ...] = tuple(replace(c, program="qjs-armhf", command=ARMHF_QJS)
                                      for c in CELLS if c.program == "qjs" and c.name not in ARMHF_LEFT_OUT)


def select(names: list[str] | None, cells: tuple[Cell, ...] = CELLS) -> list[Cell]:
    """The cells named (``program/workload``, or a program or workload alone), or all."""
    if not names:
        return list(cells)
    chosen = [c for c in cells if any(n in (c.name, c.program, c.workload) for n in names)]
    unknown = [n for n in names if not any(n in (c.name, c.program, c.workload) for c in cells)]
    if unknown:
        raise WsbenchError(f"unknown gate cell '{unknown[0]}' (known: {', '.join(c.name for c in cells)})")
    return chosen


def workload_for(cell: Cell, workloads: WorkloadSet, profile: str) -> tuple[Workload, dict[str, int]]:
    """The workload a cell runs and the parameters that replace the file's (count, warm-up)."""
    if cell.workload == "text_1m":
        base = workloads.workloads.get("text_16m")
        if base is None:
            raise WsbenchError("workload 'text_16m' is missing from workloads/ (the gate's text_1m is built on it)")
        w = replace(base, name="text_1m", path=TEXT_1M_PATH,
                    params={**base.params, "expect_length": TEXT_1M_LENGTH}, timeout_s=600.0)
        return w, {"count": cell.count(profile), "warmup": cell.warmup_count(profile)}
    w = workloads.workloads.get(cell.workload)
    if w is None:
        raise WsbenchError(f"workload '{cell.workload}' is missing from workloads/")
    override = {"count": cell.count(profile), "warmup": cell.warmup_count(profile)}
    if cell.mode:
        override["mode"] = cell.mode
    return replace(w, timeout_s=600.0), override
