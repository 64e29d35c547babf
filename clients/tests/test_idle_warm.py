"""The idle kind's --warm (clients/README.md, "idle"; workloads' `warm = true`): once every
connection is open, each sends message 0 of the 1 KiB JSON corpus and takes its echo before
the start barrier, so that the mark WSBENCH-MARK held reads connections after traffic. A
server counting what it received shows exactly one such message per connection before the
mark, with permessage-deflate agreed on every connection, for the shared JavaScript workload
(node22, quickjs) and wsbench-loadgen; without --warm nothing arrives before the mark; a
corrupted warm echo fails the run, naming it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
from flipping_server import Flip, FlippingServer
from idle_protocol import drive_held
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from wsbench.catalog import load_catalog
from wsbench.deflate import with_deflate


ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
N = 20
WARM_SIZE = 1024


class CountingServer:
    """An echo server (websockets, permessage-deflate when offered) in a thread, keeping
    every message each connection sent and the extensions each agreed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.received: dict[int, list[str | bytes]] = {}
        self.extensions: dict[int, str | None] = {}
        self._server = serve(self._echo, "127.0.0.1", 0, max_size=None)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/"

    def _echo(self, ws: ServerConnection) -> None:
        with self.lock:
            me = len(self.received)
            self.received[me] = []
            self.extensions[me] = ws.response.headers.get("Sec-WebSocket-Extensions") if ws.response else None
        try:
            for message in ws:
                with self.lock:
                    self.received[me].append(message)
                ws.send(message)
        except ConnectionClosed:
            pass

    def snapshot(self) -> dict[int, list[str | bytes]]:
        with self.lock:
            return {k: list(v) for k, v in self.received.items()}

    def __enter__(self) -> "CountingServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)


@pytest.fixture(scope="module")
def warm_message() -> str:
    """Message 0 of --text json of 1 KiB, as wsbench-loadgen's ring holds it (clients/tests/
    test_corpus.py checks the JavaScript workload's ring against it byte for byte)."""
    if not LOADGEN.exists():
        pytest.skip("build/bin/wsbench-loadgen not built (make setup)")
    proc = subprocess.run([str(LOADGEN), "--url", "ws://127.0.0.1:1/", "--count", "1", "--type", "text", "--size",
                           str(WARM_SIZE), "--text", "json", "--dump-messages"], capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-500:]
    return proc.stdout[:WARM_SIZE].decode()


def command(client: str, deflate: bool) -> tuple[list[str], dict[str, str]]:
    program = CATALOG.clients[client]
    missing = program.missing()
    if missing:
        pytest.skip(f"{client}: {missing[0]} is missing (make setup)")
    if deflate:
        program = with_deflate(program)
    return list(program.command), dict(program.env)


def held(client: str, url: str, *args: str, deflate: bool = False,
         at_mark: Any = None) -> tuple[int, list[str], dict[str, Any]]:
    """The client's idle run under the harness's protocol (WSBENCH_HOLD=1): GO at the start
    barrier, ``at_mark()`` called at WSBENCH-MARK held before the line that lets it go on;
    its exit code, its lines and its last line as JSON."""
    argv, extra = command(client, deflate)
    code, lines = drive_held([*argv, "--kind", "idle", "--url", url, "--connections", str(N), "--concurrency", "5",
                              "--hold-ms", "50", *args], {**os.environ, **extra}, at_mark=at_mark)
    return code, lines, json.loads(lines[-1]) if lines else {}


@pytest.mark.parametrize("client", ["loadgen", "node22", "quickjs"])
def test_each_connection_echoes_one_compressed_json_message_before_the_mark(client: str, warm_message: str) -> None:
    with CountingServer() as server:
        before: dict[int, list[str | bytes]] = {}
        code, lines, res = held(client, server.url, "--warm", deflate=True,
                                at_mark=lambda: before.update(server.snapshot()))
        after = server.snapshot()
        extensions = dict(server.extensions)
    assert code == 0, res
    assert lines[:2] == ["WSBENCH-START", "WSBENCH-MARK held"]
    assert res["connections"] == res["warmed"] == res["alive"] == N and res["lost"] == 0
    assert len(before) == N and all(msgs == [warm_message] for msgs in before.values()), \
        {k: [len(m) for m in v] for k, v in before.items()}
    assert all(msgs == [warm_message, "wsbench-alive"] for msgs in after.values())  # the alive check after the mark
    assert all(e is not None and e.startswith("permessage-deflate") for e in extensions.values()), extensions


def test_without_warm_nothing_arrives_before_the_mark() -> None:
    with CountingServer() as server:
        before: dict[int, list[str | bytes]] = {}
        code, _, res = held("loadgen", server.url, at_mark=lambda: before.update(server.snapshot()))
    assert code == 0 and res["alive"] == N and "warmed" not in res, res
    assert len(before) == N and not any(before.values())


@pytest.mark.parametrize("client", ["loadgen", "node22"])
def test_a_corrupted_warm_echo_fails_the_run_naming_it(client: str, warm_message: str) -> None:
    with FlippingServer(Flip(offset=100, only=1)) as server:
        code, lines, res = held(client, server.url, "--warm")
    sent = ord(warm_message[100])
    assert code == 1 and "WSBENCH-START" not in lines, lines
    assert re.fullmatch(rf"echo of message 1 on connection \d+ \(warm\) differs at byte 100: "
                        rf"got 0x{sent ^ 1:02x}, sent 0x{sent:02x}", res["error"]), res


@pytest.mark.parametrize("client", ["loadgen", "node22"])
def test_warm_belongs_to_the_idle_kind(client: str) -> None:
    argv, extra = command(client, False)
    proc = subprocess.run([*argv, "--url", "ws://127.0.0.1:9/", "--type", "text", "--size", "10", "--count", "1",
                           "--warm"], cwd=ROOT, env={**os.environ, **extra}, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and json.loads(proc.stdout.splitlines()[-1]) == {
        "error": "--warm does not apply to --kind echo"}
