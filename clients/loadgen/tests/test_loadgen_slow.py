"""wsbench-loadgen --kind slow (clients/loadgen/README.md; docs/misbehave.md, "Slow
consumers"): subscribers that stop reading and what the server did with them, read from
the wire; a message lost to a healthy subscriber is reported in the result line, not a
crash; what it cannot measure is one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.wss import Server

ROOT = Path(__file__).resolve().parents[3]
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
SERVER = ROOT / "build/bin/lws-echo"
FIXTURE = ROOT / "harness/tests/fixtures/capacity_server.py"

pytestmark = pytest.mark.skipif(not (LOADGEN.exists() and SERVER.exists()),
                                reason="build/bin/wsbench-loadgen or lws-echo not built (make setup)")


def slow(url: str, *args: str) -> tuple[int, list[str], dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "WSBENCH_HOLD"}
    proc = subprocess.run([str(LOADGEN), "--kind", "slow", "--url", url, *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines, json.loads(lines[-1]) if lines else {}


def test_a_limit_closes_the_slow_subscriber_and_the_healthy_ones_get_everything() -> None:
    """lws-echo --broadcast-limit 1 MiB: the subscriber that stopped reading is closed (lws
    cannot write its close frame to a socket that takes nothing: a FIN after what the kernel
    held), the others get all 1,500 messages in order."""
    with Server([str(SERVER), "--port", "0", "--broadcast-limit", "1048576"]) as srv:
        code, lines, res = slow(f"ws://127.0.0.1:{srv.port}/broadcast", "--connections", "4", "--slow", "1",
                                "--rate", "1000", "--duration-ms", "1500", "--size", "16384")
    assert code == 0, res
    assert lines[0] == "WSBENCH-START" and "WSBENCH-MARK t1" in lines
    assert res["sent"] == 1500 and res["healthy"] == 3 and res["delivered"] == res["expected"] == 4500
    assert res["lost"] == res["duplicated"] == res["disordered"] == 0 and res["latency_us"]["count"] == 4500
    [gone] = res["slow_subscribers"]
    assert gone["subscriber"] == 4 and gone["tcp"] == "fin" and gone["close_code"] is None
    assert 0 < gone["messages"] < 1500 and gone["missing_after"] == 1500 - gone["last"]
    assert gone["wire_bytes"] == gone["messages"] * (16384 + 4) and gone["gaps"] == 0
    assert gone["ended"] == "the server ended the connection without a close frame (TCP FIN)"


def test_a_lost_message_is_reported_for_a_healthy_subscriber_and_a_gap_for_a_slow_one() -> None:
    """The test-only server skips message 3 for subscriber 2 (healthy) and message 5 for
    subscriber 4 (slow; subscribers join in order with --concurrency 1)."""
    with Server([sys.executable, str(FIXTURE), "--port", "0", "--behave", "dropping", "--drop-message", "3",
                 "--drop-subscriber", "2"]) as srv:
        code, _, res = slow(f"ws://127.0.0.1:{srv.port}/broadcast", "--connections", "4", "--slow", "1",
                            "--rate", "200", "--duration-ms", "100", "--concurrency", "1")
    assert code == 0, res
    assert res["lost"] == 1 and res["delivered"] == 3 * 20 - 1
    assert res["first_problem"] == "message 3 never reached subscriber 2 (it received message 4 next)"
    with Server([sys.executable, str(FIXTURE), "--port", "0", "--behave", "dropping", "--drop-message", "5",
                 "--drop-subscriber", "4"]) as srv:
        code, _, res = slow(f"ws://127.0.0.1:{srv.port}/broadcast", "--connections", "4", "--slow", "1",
                            "--rate", "200", "--duration-ms", "100", "--concurrency", "1")
    assert code == 0 and res["lost"] == 0, res
    [got] = res["slow_subscribers"]
    assert (got["messages"], got["gaps"], got["missed_between"], got["tcp"]) == (19, 1, 1, "open")


@pytest.mark.parametrize("args, error", [
    (["--url", "ws://127.0.0.1:9/", "--connections", "2", "--slow", "1", "--rate", "10", "--duration-ms", "10"],
     "--kind slow needs a /broadcast URL (servers/README.md), not /"),
    (["--url", "ws://127.0.0.1:9/broadcast", "--connections", "2", "--slow", "2", "--rate", "10",
      "--duration-ms", "10"], "--slow 2 must leave at least the publisher healthy (--connections 2)"),
    (["--url", "ws://127.0.0.1:9/broadcast", "--connections", "2", "--rate", "10", "--duration-ms", "10"],
     None),
])
def test_slow_refuses_what_it_cannot_measure(args: list[str], error: str | None) -> None:
    code, _, res = slow(args[1], *args[2:])
    assert code == 1
    if error is None:
        assert res["error"].startswith("missing --slow; usage: ")
    else:
        assert res == {"error": error}
