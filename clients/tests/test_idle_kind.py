"""The shared workload's idle kind (clients/workload/idle.js) against lws-echo: N
connections held, the mark WSBENCH-MARK held with the harness's line in between, an echo
on each; a failure while opening is the one-line `limit`; kind fanout is the load
generator's (exit 3 here)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from wsbench.catalog import load_catalog
from wsbench.procs import raise_fd_limit

from testkit.wss import Server

from idle_protocol import drive_held

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
SERVER = ROOT / "build/bin/lws-echo"


@pytest.fixture(scope="module")
def lws() -> Iterator[int]:
    if not SERVER.exists():
        pytest.skip("build/bin/lws-echo not built (make setup)")
    with Server([str(SERVER), "--port", "0"]) as srv:
        yield srv.port


def command(client: str) -> tuple[list[str], dict[str, str]]:
    program = CATALOG.clients[client]
    missing = program.missing()
    if missing:
        pytest.skip(f"{client}: {missing[0]} is missing (make setup)")
    return list(program.command), dict(program.env)


def held_run(client: str, *args: str, mark_line: str | None = "readings taken\n") -> tuple[int, list[str]]:
    """With WSBENCH_HOLD=1: GO at the start barrier, `mark_line` at the mark (None: end of
    file there), end of file after the result."""
    argv, extra = command(client)
    return drive_held([*argv, *args], {**os.environ, **extra}, mark_line=mark_line)


@pytest.mark.parametrize("client", ["node22", "quickjs"])
def test_idle_holds_n_connections_and_each_echoes(lws: int, client: str) -> None:
    code, lines = held_run(client, "--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "100",
                           "--concurrency", "20", "--hold-ms", "300")
    assert lines[:2] == ["WSBENCH-START", "WSBENCH-MARK held"], lines
    res: dict[str, Any] = json.loads(lines[-1])
    assert code == 0, res
    assert res["connections"] == res["alive"] == res["messages"] == 100 and res["lost"] == 0
    assert 0.29 <= res["hold_s"] < 2 and res["open_s"] > 0 and "limit" not in res  # qjs timers: whole ms
    assert res["opens_per_s"] == pytest.approx(100 / res["open_s"], rel=1e-6)


def test_end_of_file_at_the_mark_fails_the_run(lws: int) -> None:
    code, lines = held_run("node22", "--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "3",
                           "--hold-ms", "10", mark_line=None)
    assert code == 1 and json.loads(lines[-1]) == {"error": "mark held: stdin closed at WSBENCH-MARK held"}


def test_a_refused_connection_while_opening_is_the_limit() -> None:
    """Nothing listens on port 9 of loopback: the first connection fails, nothing opened."""
    argv, extra = command("node22")
    proc = subprocess.run([*argv, "--kind", "idle", "--url", "ws://127.0.0.1:9/", "--connections", "max",
                           "--hold-ms", "10"], cwd=ROOT, env={**os.environ, **extra}, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    res = json.loads(proc.stdout.splitlines()[-1])
    assert proc.returncode == 1
    assert re.fullmatch(r"no connection opened: connection 1 (failed during the handshake|was closed by the "
                        r"server during the handshake).*", res["error"]), res


def test_quickjs_holds_more_connections_than_its_old_fd_table(lws: int) -> None:
    """The module's fd tables (the module's loop.h, LOOP_FD_MAX) once stopped it at
    4,089 connections ("too many open sockets"); 5,000 are held and each echoes."""
    import resource
    raise_fd_limit()  # the children (lws-echo already started, qjs) inherit this process's
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 5200:
        pytest.skip("RLIMIT_NOFILE below 5,200 here")
    code, lines = held_run("quickjs", "--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "5000",
                           "--concurrency", "200", "--hold-ms", "100")
    res: dict[str, Any] = json.loads(lines[-1])
    assert code == 0, res
    assert res["connections"] == res["alive"] == res["messages"] == 5000 and res["lost"] == 0 and "limit" not in res


@pytest.mark.parametrize("args, what", [(["--kind", "fanout", "--connections", "2"], "kind fanout (wsbench-loadgen only)"),
                                        (["--kind", "idle", "--connections", "2", "--hold-ms", "1", "--ping-ms", "100"],
                                         "--ping-ms (the WebSocket API sends no pings)")])
@pytest.mark.parametrize("client", ["node22", "quickjs"])
def test_what_the_websocket_api_cannot_do_is_unsupported(args: list[str], what: str, client: str) -> None:
    argv, extra = command(client)
    proc = subprocess.run([*argv, "--url", "ws://127.0.0.1:9/broadcast", *args], cwd=ROOT,
                          env={**os.environ, **extra}, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 3 and json.loads(proc.stdout) == {"error": f"unsupported: {what}"}
