"""wsbench-loadgen's storm kind (clients/loadgen/README.md; docs/misbehave.md, "Reconnect
storms"): N connections closed at once and reopened, every one back with its echo checked,
and reconnections that fail counted by their reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from held import answer, held

from testkit.background import Background

ROOT = Path(__file__).resolve().parents[3]
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
SERVER = ROOT / "build/bin/lws-echo"
REFUSING = Path(__file__).with_name("storm_server.py")
REASONS = ("refused", "reset", "closed", "bad_upgrade", "other", "timed_out")

pytestmark = pytest.mark.skipif(not (LOADGEN.exists() and SERVER.exists()),
                                reason="build/bin/wsbench-loadgen or lws-echo not built (make setup)")


@pytest.fixture(scope="module")
def lws() -> Iterator[int]:
    with Background([str(SERVER), "--port", "0"]) as srv:
        yield srv.port


def storm(url: str, *args: str) -> tuple[int, list[str], dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "WSBENCH_HOLD"}
    proc = subprocess.run([str(LOADGEN), "--kind", "storm", "--url", url, *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines, json.loads(lines[-1]) if lines else {}


def test_every_connection_is_back_with_its_echo(lws: int) -> None:
    code, lines, res = storm(f"ws://127.0.0.1:{lws}/", "--connections", "200", "--concurrency", "50",
                             "--sources", "2", "--settle-ms", "100")
    assert code == 0, res
    assert lines[:4] == ["WSBENCH-START", "WSBENCH-MARK before", "WSBENCH-MARK storm", "WSBENCH-MARK after"]
    assert res["connections"] == res["back"] == res["messages"] == 200
    assert res["failed"] == sum(res[r] for r in REASONS) == 0
    assert res["bytes"] == 200 * len("wsbench-storm")
    assert 0 < res["closed_s"] <= res["storm_s"] == pytest.approx(res["seconds"], abs=1e-5)
    assert 0 < res["back_p50_s"] <= res["back_p99_s"] <= res["storm_s"]
    assert res["settle_s"] == 0.1 and res["sources"] == 2


def test_it_waits_at_each_mark(lws: int) -> None:
    args = ["--kind", "storm", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "20", "--settle-ms", "0"]
    with held(args) as proc:
        answer(proc, "WSBENCH-START", "GO\n")
        for name in ("before", "storm", "after"):
            answer(proc, f"WSBENCH-MARK {name}", "readings taken\n")
        assert json.loads(proc.stdout.readline())["back"] == 20


def test_refused_reconnections_are_counted_and_named() -> None:
    with Background([sys.executable, str(REFUSING), "--port", "0", "--listen-for", "30"]) as srv:
        code, _, res = storm(f"ws://127.0.0.1:{srv.port}/", "--connections", "30", "--settle-ms", "0")
    assert code == 0, res
    assert res["back"] == res["messages"] == 0
    assert res["failed"] == res["refused"] == 30
    assert sum(res[r] for r in REASONS) == 30
    assert "Connection refused" in res["first_refused"] and res["first_refused"].startswith("connection ")


def test_it_needs_its_connections() -> None:
    code, _, res = storm("ws://127.0.0.1:9/")
    assert code == 1 and res["error"].startswith("missing --connections")
