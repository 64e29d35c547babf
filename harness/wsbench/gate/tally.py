"""``wsbench count``: instructions per message of chosen QuickJS client variants on chosen
workloads, per architecture, counted as the deterministic gate counts its cells (the
architecture's counter: callgrind on x86-64, qemu-arm with the plugin on armhf; only the
measured phase, the warm-up uncounted), into the results file's ``counts`` section
(model/counts.py). Nothing is judged: the figures are for the report (the claims table's
instruction columns).

A ``Target`` is a workload and a catalog client (``quickjs``, ``quickjs-no-join``,
``quickjs-baseline``...) with the environment the catalog gives it (``QJSWS_DISABLE``); each
runs with the architecture's QuickJS command against the native ``lws-echo`` (catalog name
``lws``), so its key is ``workload/lws/client``. Message counts are the gate's quick ones by
message size (``SIZES``), the same on both architectures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import WsbenchError
from ..model import ArchCounts
from ..workloads import WorkloadSet
from .arches import DEFAULT, Arch
from .callgrind import run_cell
from .cells import Cell

SERVER = "lws"  # the catalog's name of the native lws-echo every cell runs against
PROFILE = "quick"

# (counted messages, warm-up) by the workload's message size, as the gate's quick cells
SIZES = ((1024, (2000, 200)), (8192, (500, 100)), (1 << 30, (50, 10)))
HANDSHAKES = (100, 10)


@dataclass(frozen=True)
class Target:
    workload: str
    client: str  # a catalog client
    env: tuple[tuple[str, str], ...] = ()  # what the catalog sets for it

    @property
    def key(self) -> str:
        return f"{self.workload}/{SERVER}/{self.client}"


def counts_for(workloads: WorkloadSet, name: str) -> tuple[int, int]:
    """(counted, warm-up) messages of a workload (WsbenchError if there is no such workload)."""
    w = workloads.workloads.get(name)
    if w is None:
        raise WsbenchError(f"workload '{name}' is missing from workloads/")
    if w.kind == "handshake":
        return HANDSHAKES
    size = int(w.params.get("size") or 0)
    return next(n for limit, n in SIZES if size <= limit)


def cell_of(target: Target, arch: Arch, workloads: WorkloadSet) -> Cell:
    count, warmup = counts_for(workloads, target.workload)
    program = target.client if arch.name == DEFAULT else f"{target.client}@{arch.name}"
    return Cell(program, target.workload, (count, count), (warmup, warmup), command=arch.qjs, env=target.env)


def tally(arch: Arch, targets: list[Target], workloads: WorkloadSet, work_dir: Path,
          note: Callable[[str], None]) -> ArchCounts:
    """Every target counted on ``arch``; a target that fails is recorded with its reason."""
    missing = arch.missing()
    if missing:
        raise WsbenchError(f"cannot count on {arch.name}: {missing}")
    out = ArchCounts(arch.counter.tool, arch.fingerprint(), PROFILE)
    for i, target in enumerate(targets, 1):
        cell = cell_of(target, arch, workloads)
        try:
            count = run_cell(cell, workloads, PROFILE, work_dir / arch.name, counter=arch.counter)
        except WsbenchError as exc:
            out.failed[target.key] = str(exc)
            note(f"count: [{i}/{len(targets)}] {arch.name} {target.key}: failed: {exc}")
            continue
        out.cells[target.key] = count.record()
        note(f"count: [{i}/{len(targets)}] {arch.name} {target.key}: {count.per_message:,.1f} instructions/message "
             f"({count.instructions:,} over {count.messages:,} messages)")
    return out
