"""The cycles kind (clients/README.md; docs/misbehave.md "Soak drift"): connect–echo–close
cycles in batches, the marks cycles-0 ... cycles-N under the harness's protocol, from the
load generator and the shared JavaScript workload; a corrupted echo fails the run naming
it; pinghold is the load generator's alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from flipping_server import Flip, FlippingServer
from idle_protocol import drive_held

from wsbench.catalog import load_catalog
from wsbench.server import RunningServer

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def command(client: str) -> tuple[list[str], dict[str, str]]:
    program = CATALOG.clients[client]
    missing = program.missing()
    if missing:
        pytest.skip(f"{client}: {missing[0]} is missing (make setup)")
    return list(program.command), {**os.environ, **program.env}


@pytest.mark.parametrize("client", ["loadgen", "node22", "quickjs"])
def test_cycles_mark_every_fifth_of_the_batches(client: str, lws: RunningServer) -> None:
    argv, env = command(client)
    code, lines = drive_held([*argv, "--kind", "cycles", "--url", lws.url(), "--count", "230", "--connections",
                              "20", "--type", "binary", "--size", "40", "--marks", "4"], env)
    assert code == 0, lines
    res = json.loads(lines[-1])
    # 12 batches (the last of 10), a mark after every third and the last
    assert lines[:-1] == ["WSBENCH-START", "WSBENCH-MARK cycles-0", "WSBENCH-MARK cycles-60",
                          "WSBENCH-MARK cycles-120", "WSBENCH-MARK cycles-180", "WSBENCH-MARK cycles-230"], lines
    assert res["cycles"] == res["messages"] == 230 and res["batch"] == 20 and res["marks"] == 5
    assert res["bytes"] == 230 * 40 and res["cycles_per_s"] > 0


@pytest.mark.parametrize("client", ["loadgen", "node22"])
def test_a_corrupted_echo_fails_the_run_naming_it(client: str) -> None:
    argv, env = command(client)
    with FlippingServer(Flip(offset=3, only=1)) as server:
        code, lines = drive_held([*argv, "--kind", "cycles", "--url", server.url, "--count", "10",
                                  "--connections", "5", "--type", "text", "--size", "16"], env)
    assert code == 1, lines
    assert re.fullmatch(r"echo on connection \d+ differs at byte 3.*", json.loads(lines[-1])["error"]), lines


def test_pinghold_is_the_load_generators_alone(lws: RunningServer) -> None:
    argv, env = command("node22")
    proc = subprocess.run([*argv, "--kind", "pinghold", "--url", lws.url(), "--connections", "2", "--hold-ms", "10",
                           "--ping-ms", "5", "--mark-ms", "5"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 3 and "unsupported: kind pinghold" in proc.stdout, proc.stdout
    argv, env = command("loadgen")
    code, lines = drive_held([*argv, "--kind", "pinghold", "--url", lws.url(), "--connections", "10", "--hold-ms",
                              "300", "--ping-ms", "50", "--mark-ms", "100"], env)
    assert code == 0, lines
    marks = [line for line in lines if line.startswith("WSBENCH-MARK ")]
    assert marks[0] == "WSBENCH-MARK t-0" and len(marks) == 4, marks
    res = json.loads(lines[-1])
    assert res["connections"] == 10 and res["pings"] == res["pongs"] >= 50 and res["marks"] == 4
