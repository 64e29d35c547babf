"""The deflate axis in a report (runs of ``wsbench run --deflate on|both``): the facts line,
the mark each ranked row carries after its server, so that rows with and without
permessage-deflate are never read as like with like, "What compression costs": each
``NAME/deflate`` cell beside ``NAME``'s from the same interleaved run, and "What context
takeover saves": each compressed cell of a workload offered without context takeover
(``no_context_takeover``) beside the same pair's on the workload of the same parameters
offered as the runtimes ship it.

A row's mark comes from what its samples recorded (deflate.negotiated): the server's
WSBENCH-DEFLATE lines where it tells, else the client's WebSocket ``extensions``."""

from __future__ import annotations

from ..deflate import TWIN, negotiated
from ..doc import Grid, Section
from ..model import Cell, Run
from ..ranking import label
from .derived import median_text, ratio_text, twin_pairs

MARKS = {True: "deflate", False: "no deflate", None: "deflate ?"}


def header(run: Run) -> list[str]:
    """The report's facts line about the deflate axis, or nothing in a run without it."""
    axis = run.settings.get("deflate")
    if not axis:
        return []
    both = "servers with and without it, interleaved" if axis.get("mode") == "both" else "every server with it"
    return [f"permessage-deflate: {both} (NAME/deflate: the runtime's own compression); each row's server is marked "
            "[deflate] when its connections compressed, [no deflate] when not, [deflate ?] when neither side could "
            "tell: only rows with the same mark compare like with like"]


def mark(run: Run, cell: Cell) -> str:
    """`` [deflate]``, `` [no deflate]`` or `` [deflate ?]`` after a row's server in a run
    with the axis; empty otherwise."""
    if not run.settings.get("deflate"):
        return ""
    record = run.servers.get(cell.server)
    if record is None or record.deflate is None:
        return f" [{MARKS[False]}]"  # deflate off: the server refuses every offer (contract item 5)
    told = {negotiated(s.extra.get("server_deflate"), s.extra.get("extensions")) for s in cell.ok_samples}
    return f" [{MARKS[told.pop() if len(told) == 1 else None]}]"


def sections(run: Run) -> list[Section]:
    """"What compression costs", in a run with both sides of the axis, and "What context
    takeover saves", in a run with workloads offered with and without it."""
    return _costs(run) + _takeover(run)


def _costs(run: Run) -> list[Section]:
    pairs = twin_pairs(run, TWIN)
    if not pairs:
        return []
    grid = Grid(["workload", "client", "server", "agreed", "wire B/msg c→s off → on", "on ÷ off",
                 "wire B/msg s→c off → on", "on ÷ off", "msgs/s off → on", "on ÷ off",
                 "client CPU µs/msg off → on", "server CPU µs/msg off → on", "peak RSS MiB client, server off → on"],
                right={4, 5, 6, 7, 8, 9, 10, 11, 12})
    for plain, packed in pairs:
        metric = "msgs_per_s" if run.workloads.get(plain.workload, {}).get("kind") == "echo" else None
        grid.add([plain.workload, label(run, "clients", plain.client), label(run, "servers", plain.server),
                  _agreed(packed) + mark(run, packed),
                  _arrow(plain, packed, "wire_c2s_per_msg", 1), ratio_text(plain, packed, "wire_c2s_per_msg"),
                  _arrow(plain, packed, "wire_s2c_per_msg", 1), ratio_text(plain, packed, "wire_s2c_per_msg"),
                  _arrow(plain, packed, metric, 0) if metric else "–",
                  ratio_text(plain, packed, metric) if metric else "–",
                  _arrow(plain, packed, "client_cpu_us_per_msg", 2), _arrow(plain, packed, "server_cpu_us_per_msg", 2),
                  f"{median_text(plain, 'client_peak_rss_mib', digits=1)}, "
                  f"{median_text(plain, 'server_peak_rss_mib', digits=1)} → "
                  f"{median_text(packed, 'client_peak_rss_mib', digits=1)}, "
                  f"{median_text(packed, 'server_peak_rss_mib', digits=1)}"])
    return [Section("What compression costs", [
        "Each `NAME/deflate` cell beside `NAME`'s from the same interleaved run: the same client, workload and "
        "server runtime, permessage-deflate the only difference (where both sides agreed: the mark after "
        "\"agreed\"). Medians of the repetitions; ratios on ÷ off with their 95 % bootstrap interval. Bytes on "
        "the wire are the TCP payload the server's sockets received (c→s) and sent (s→c) while measured, counted "
        "by the kernel (frame headers and masks included), over the messages of the phase: the compression "
        "ratio measured, not assumed. What the messages hold decides the ratio: say so when quoting it.",
        grid])]


def takeover_pairs(run: Run) -> list[tuple[Cell, Cell]]:
    """Each compressed cell (a ``NAME/deflate`` server) of a workload offered as the runtimes
    ship it beside the same pair's on a workload with ``no_context_takeover`` and otherwise
    the same kind and parameters, both with samples."""
    def shape(name: str) -> tuple[str, str] | None:
        w = run.workloads.get(name, {})
        return (str(w.get("kind")), repr(sorted(w.get("params", {}).items()))) if w else None

    base_of = {shape(name): name for name, w in run.workloads.items() if not w.get("no_context_takeover")}
    cells = {c.key: c for c in run.cells}
    out = []
    for cell in run.cells:
        w = run.workloads.get(cell.workload, {})
        base = base_of.get(shape(cell.workload)) if w.get("no_context_takeover") else None
        plain = cells.get(f"{base}/{cell.server}/{cell.client}") if base and cell.server.endswith(TWIN) else None
        if plain is not None and plain.ok_samples and cell.ok_samples:
            out.append((plain, cell))
    return out


def _takeover(run: Run) -> list[Section]:
    pairs = takeover_pairs(run)
    if not pairs:
        return []
    grid = Grid(["workload", "client", "server", "agreed as shipped", "agreed without", "wire B/msg c→s kept → none",
                 "none ÷ kept", "wire B/msg s→c kept → none", "none ÷ kept", "msgs/s kept → none", "none ÷ kept",
                 "client CPU µs/msg kept → none", "server CPU µs/msg kept → none"],
                right={5, 6, 7, 8, 9, 10, 11, 12})
    for kept, none in pairs:
        grid.add([kept.workload, label(run, "clients", kept.client), label(run, "servers", kept.server),
                  _agreed(kept) + mark(run, kept), _agreed(none) + mark(run, none),
                  _arrow(kept, none, "wire_c2s_per_msg", 1), ratio_text(kept, none, "wire_c2s_per_msg"),
                  _arrow(kept, none, "wire_s2c_per_msg", 1), ratio_text(kept, none, "wire_s2c_per_msg"),
                  _arrow(kept, none, "msgs_per_s", 0), ratio_text(kept, none, "msgs_per_s"),
                  _arrow(kept, none, "client_cpu_us_per_msg", 2), _arrow(kept, none, "server_cpu_us_per_msg", 2)])
    return [Section("What context takeover saves", [
        "Each compressed cell of a workload offered as the runtimes ship it (\"kept\": context takeover where both "
        "sides agreed it) beside the same pair on the workload of the same messages whose clients offer "
        "`server_no_context_takeover; client_no_context_takeover` (\"none\": every message compressed alone), "
        "from the same interleaved run. What each side agreed is in its column: a server may drop context takeover "
        "on its own (Bun.serve's shared compressor answers `server_no_context_takeover` to every offer), so a pair "
        "whose two columns agree the same measured nothing of it. Medians of the repetitions; ratios none ÷ kept "
        "with their 95 % bootstrap interval. Clients that cannot make the offer (Bun's, Node 22's) have no row.",
        grid])]


def _agreed(cell: Cell) -> str:
    """What the server answered (its WSBENCH-DEFLATE line), else what the client says it agreed."""
    for s in cell.ok_samples:
        told = s.extra.get("server_deflate")
        if isinstance(told, dict) and told.get("response") not in (None, "none"):
            return str(told["response"])
        if s.extra.get("extensions"):
            return str(s.extra["extensions"])
    return "nothing"


def _arrow(plain: Cell, packed: Cell, metric: str, digits: int) -> str:
    return f"{median_text(plain, metric, digits=digits)} → {median_text(packed, metric, digits=digits)}"
