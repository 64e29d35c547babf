"""One armhf cell counted end to end: the armhf QuickJS client under qemu-arm with the
counting plugin against the native lws-echo (wsbench gate --arch armhf's path, quick
message counts). Needs make setup-arm (skipped without it: make test-arm runs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsbench.gate import arches, qemu
from wsbench.gate.callgrind import run_cell
from wsbench.gate.cells import select
from wsbench.workloads import load_workloads

MISSING = qemu.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"armhf build absent: {MISSING}")


def test_an_armhf_cell_counts_only_its_measured_phase(tmp_path: Path) -> None:
    cell = select(["qjs-armhf/text_11"], arches.ARMHF.cells)[0]
    count = run_cell(cell, load_workloads(), "quick", tmp_path, counter=arches.ARMHF.counter)
    assert count.messages == cell.count("quick") == 2000
    line = (tmp_path / "qjs-armhf-text_11.qemu-count").read_text()
    whole = int(line.split("all=")[1])
    # one phase, closed; start-up, the connection and the 200 warm-up echoes are outside it
    assert "phases=1 open=0" in line and 0 < count.instructions < whole
    assert count.instructions == qemu.parse(line, cell.name)
