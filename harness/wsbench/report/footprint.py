"""Footprint in a report (``wsbench footprint``, the suite ``footprint``): per architecture
the QuickJS client's files as built and stripped, the shared objects its process maps and
where they come from, its resident memory at start-up, and its memory per held connection
over ws:// and wss:// (the slope of resident memory against connections held, as the
capacity fit, report/capacity.py; for a client under qemu-user the slope of its guest's own
pages, beside the whole process's). Shown when the run has a footprint section or is a run
of the footprint suite."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..doc import Block, Grid, Section
from ..footprint_measure import ARCHES
from ..model import Cell, Run
from ..ranking import label
from .capacity import fit, held_points
from .cell_state import kind_of
from .tls import TWIN as TLS_TWIN


def _kib(n: float | None, digits: int = 1) -> str:
    return "–" if n is None else f"{n / 1024:,.{digits}f}"


def _median(values: list[int] | None) -> float | None:
    return statistics.median(values) if values else None


def arch_of(client: str) -> str | None:
    return next((a for a, spec in ARCHES.items() if spec.client == client), None)


@dataclass(frozen=True)
class ConnFit:
    client: str
    scheme: str  # ws or wss
    figure: str  # "guest" (the guest's own pages, under qemu-user) or "process" (the whole process's RSS)
    slope_kib: float
    r2: float
    points: list[tuple[int, float]]


def connection_fits(run: Run) -> list[ConnFit]:
    """Per footprint client, per scheme, the slope of its memory at the mark against
    connections held over the run's idle cells against lws-echo (and its TLS twin): the
    whole process's RSS, and for a client under qemu-user its guest's own pages too."""
    clients = [spec.client for spec in ARCHES.values()]
    out = []
    for client in clients:
        for scheme in ("ws", "wss"):
            cells = [c for c in run.cells if c.client == client and _idle(run, c) and _scheme(c) == scheme]
            for figure, key in (("guest", "client_guest_rss_kib"), ("process", "client_rss_kib")):
                points = held_points(cells, key)
                line = fit(points)
                if line is not None:
                    out.append(ConnFit(client, scheme, figure, line[0], line[2], sorted(points)))
    return out


def _idle(run: Run, cell: Cell) -> bool:
    return kind_of(run, cell.workload) == "idle"


def _scheme(cell: Cell) -> str:
    return "wss" if cell.server.endswith(TLS_TWIN) else "ws"


def sections(run: Run) -> list[Section]:
    if run.footprint is None and run.suite != "footprint":
        return []
    blocks: list[Block] = []
    if run.footprint is not None:
        blocks += _files(run) + _mapped(run) + _startup(run)
    blocks += _per_connection(run)
    return [Section("Footprint", blocks)] if blocks else []


def _arches(run: Run) -> list[str]:
    return list(run.footprint.arches) if run.footprint else []


def _files(run: Run) -> list[Block]:
    assert run.footprint is not None
    arches = [a for a in _arches(run) if run.footprint.arches[a].files]
    notes = [f"{a}: {f.error}" for a, f in run.footprint.arches.items() if f.error]
    if not arches:
        return [f"**Footprint**: nothing measured ({'; '.join(notes)})."] if notes else []
    roles = list(dict.fromkeys(f.role for a in arches for f in run.footprint.arches[a].files))
    grid = Grid(["file", *(f"{a} {what}" for a in arches for what in ("KiB", "stripped KiB"))],
                right=set(range(1, 1 + 2 * len(arches))))
    totals: dict[str, float] = {}
    for role in roles:
        row = [role]
        for a in arches:
            f = next((f for f in run.footprint.arches[a].files if f.role == role), None)
            row += [_kib(f.bytes if f else None), _kib(f.stripped_bytes if f else None)]
            if f:
                totals[a] = totals.get(a, 0) + (f.stripped_bytes if f.stripped_bytes is not None else f.bytes)
        grid.add(row)
    grid.add(["**together, stripped** (websocket.js as it is)",
              *(x for a in arches for x in ("", f"**{_kib(totals.get(a))}**"))])
    strips = "; ".join(f"{a}: {run.footprint.arches[a].strip}" for a in arches)
    text = ("**Files**: the client as built and a copy stripped by the architecture's own strip (" + strips +
            "); KiB are 1,024 bytes. The module is lws.so and websocket.js; qjs the QuickJS interpreter; "
            "libwebsockets' shared object is what the module needs at run time besides the system's libraries "
            "(below).")
    return [text + (f" Not measured: {'; '.join(notes)}." if notes else ""), grid]


def _mapped(run: Run) -> list[Block]:
    assert run.footprint is not None
    grid = Grid(["arch", "file mapped at start-up", "KiB", "from"], right={2})
    for a in _arches(run):
        for m in run.footprint.arches[a].mapped:
            origin = {"built here": "built by make setup" + ("-arm" if a == "armhf" else ""),
                      "sysroot": "Debian armhf package in build/arm/sysroot",
                      "system": "the system's"}.get(m.origin, m.origin)
            grid.add([a, f"`{m.path}`", _kib(m.bytes), origin + (f" ({m.package})" if m.package else "")])
    if not grid.rows:
        return []
    return ["**Shared objects**: every file the client's process maps once loaded (under qemu-user, its guest's "
            "mappings only), its size as installed and where it comes from: OpenSSL and zlib are shared libraries "
            "of Debian's packages (the system's on x86-64; bookworm's armhf packages unpacked into the sysroot on "
            "armhf), not linked into the module.", grid]


def _startup(run: Run) -> list[Block]:
    assert run.footprint is not None
    grid = Grid(["arch", "client", "RSS at start-up, KiB", "of which the emulator's, KiB", "the client's own, KiB",
                 "runs"], right={2, 3, 4, 5})
    for a in _arches(run):
        f = run.footprint.arches[a]
        rss, guest = _median(f.startup_rss_kib), _median(f.startup_guest_rss_kib)
        if rss is None:
            continue
        own = guest if guest is not None else rss
        grid.add([a, label(run, "clients", f.client), f"{rss:,.0f}",
                  "–" if guest is None else f"{rss - guest:,.0f}", f"**{own:,.0f}**", str(len(f.startup_rss_kib))])
    if not grid.rows:
        return []
    return ["**Start-up**: the client loaded and idle, before any connection (its catalog command with no "
            "arguments and WSBENCH_HOLD=1: qjs, the module, the adapter's checks and the shared workload loaded, it "
            "reports the missing --url and waits at its end barrier); VmRSS read there, the median of the runs. "
            "Under qemu-user the client's own figure is the resident pages of its guest's address space; the rest "
            "of the process is QEMU's (its code and libraries, heap and translation cache). RSS counts the pages "
            "of shared libraries the process touched (libc, OpenSSL) as well as its own.", grid]


def _per_connection(run: Run) -> list[Block]:
    fits = connection_fits(run)
    if not fits:
        return []
    grid = Grid(["arch", "client", "scheme", "KiB per connection", "R²", "whole process KiB per connection",
                 "points", "connections held"], right={3, 4, 5, 6})
    for client in dict.fromkeys(f.client for f in fits):
        for scheme in ("ws", "wss"):
            mine = {f.figure: f for f in fits if f.client == client and f.scheme == scheme}
            own = mine.get("guest") or mine.get("process")
            if own is None:
                continue
            whole = mine.get("process")
            ns = [n for n, _ in own.points]
            grid.add([arch_of(client) or "–", label(run, "clients", client), f"{scheme}://",
                      f"**{own.slope_kib:,.2f}**", f"{own.r2:.4f}",
                      "–" if "guest" not in mine or whole is None else f"{whole.slope_kib:,.2f}",
                      str(len(own.points)), f"{min(ns):,} – {max(ns):,}"])
    return ["**Memory per held connection**: the slope of the client's resident memory at the mark against "
            "connections held (least squares over every idle cell and repetition against lws-echo, a server started "
            "for each sample). Under qemu-user the slope of the guest's own pages, and beside it the whole "
            "process's (the emulator's share per connection is their difference).", grid]
