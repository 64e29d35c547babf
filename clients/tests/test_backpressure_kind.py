"""The backpressure kind (clients/workload/backpressure.js) through the harness
(measure.py's socket readings at the marks, backpressure.py's verdict), against lws-echo
reading nothing for 1.5 s (?stall=1500): a client whose bufferedAmount reads 0 while
megabytes wait (a test-only adapter, liar_node22.mjs: Node 22's WebSocket with the getter
lying) is named under-reports; the real Node 20 + ws client is named truthful, and both
recover with every echo in order."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from wsbench import measure
from wsbench.catalog import Program, load_catalog
from wsbench.model import Settings
from wsbench.server import RunningServer
from wsbench.workloads import load_workloads

CATALOG = load_catalog()
# 8 MiB of 64 KiB messages: about twice what the two kernel queues hold on loopback
WORKLOAD = replace(load_workloads().workloads["back_64k"], path="/?stall=1500",
                   params={"type": "binary", "size": 65536, "total_bytes": 8 << 20, "send_ms": 500,
                           "settle_ms": 200})


def _run(client: Program, lws: RunningServer, tmp_path: Path) -> dict:  # type: ignore[type-arg]
    missing = client.missing()
    if missing:
        pytest.skip(f"{missing[0]} missing (make setup)")
    (tmp_path / "logs").mkdir()
    sample = measure.run_client(client, lws, WORKLOAD, 1, tmp_path / "logs", Settings(min_seconds=0))
    assert sample.ok, sample.error
    verdict = sample.extra["backpressure"]
    assert verdict["stalled"], verdict  # the server read nothing before the mark
    assert verdict["recovered"] and sample.extra["checked"] == sample.messages == 128, verdict
    assert verdict["queues_still"], verdict  # the kernel's queues had stopped growing
    assert verdict["kernel_held_bytes"] > 1 << 20 and verdict["unwritten_bytes"] > 1 << 20, verdict
    return verdict


def test_a_client_whose_buffered_amount_reads_0_while_bytes_wait_is_named_untruthful(lws, tmp_path) -> None:  # type: ignore[no-untyped-def]
    node22 = CATALOG.clients["node22"]
    liar = replace(node22, name="liar", label="Node 22 WebSocket, bufferedAmount always 0",
                   command=(node22.command[0], "clients/tests/liar_node22.mjs"))
    verdict = _run(liar, lws, tmp_path)
    assert verdict["buffered_at_mark"] == 0
    assert verdict["verdict"] == "under-reports", verdict


def test_the_ws_client_is_named_truthful(lws, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _run(CATALOG.clients["node-ws"], lws, tmp_path)
    assert verdict["verdict"] == "truthful", verdict
    assert abs(verdict["error_bytes"]) <= verdict["tolerance_bytes"]
    assert verdict["send"] == "accepted every message" and not verdict["bounded"]
