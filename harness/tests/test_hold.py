"""The barriers of a client that cannot read stdin (k6): the harness's loopback HTTP
endpoint (hold.py) holds the client at GO until the start readings are taken, and
after its result until the end readings are taken, like stdin does."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from wsbench_runs import fake_catalog, tiny_workloads

from wsbench import measure, procfs
from wsbench.hold import HttpHold
from wsbench.catalog import load_catalog
from wsbench.errors import WsbenchError
from wsbench.model import Settings
from wsbench.server import start_server
from wsbench.workloads import load_workloads


def _get(url: str, out: dict[str, Any]) -> None:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            out["status"], out["body"] = reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        out["status"], out["body"] = exc.code, exc.read().decode()


def _asking(url: str) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}
    thread = threading.Thread(target=_get, args=(url, out), daemon=True)
    thread.start()
    return thread, out


def test_go_is_answered_only_when_the_harness_says_so_and_the_hold_only_at_release() -> None:
    barrier = HttpHold()
    barrier.attach(None)
    try:
        assert barrier.url.startswith("http://127.0.0.1:") and barrier.env["WSBENCH_HOLD"] == "1"
        waiting, out = _asking(barrier.url + "go")
        waiting.join(0.5)
        assert waiting.is_alive() and not out  # held at the start barrier
        assert barrier.go() is None
        waiting.join(5)
        assert out == {"status": 200, "body": "GO"}
        holding, held = _asking(barrier.url + "hold")
        holding.join(0.5)
        assert holding.is_alive() and not held  # held after the result
        barrier.release()
        holding.join(5)
        assert held["status"] == 200 and barrier.asked == ["go", "hold"]
        _get(barrier.url.rsplit("/", 2)[0] + "/not-the-token/go", stranger := {})
        assert stranger["status"] == 404
    finally:
        barrier.close()


def test_a_client_let_go_without_go_is_told_so() -> None:
    barrier = HttpHold()
    barrier.attach(None)
    try:
        waiting, out = _asking(barrier.url + "go")
        waiting.join(0.3)
        barrier.release()
        waiting.join(5)
        assert out["status"] == 409 and "before GO" in out["body"]
        assert barrier.go() == "the barrier was released before GO"
    finally:
        barrier.close()


class Watch:
    """An observer noting the harness's monotonic time at the readings, and whether the
    client was alive at the end readings."""

    def __init__(self) -> None:
        self.pid = 0
        self.started_at = self.ended_at = 0.0
        self.alive_at_end = False

    def spawned(self, pid: int) -> str | None:
        self.pid = pid
        return None

    def started(self) -> str | None:
        import time
        time.sleep(0.3)  # the client must still be waiting when the readings are taken
        self.started_at = time.monotonic()
        return None

    def ended(self) -> str | None:
        import time
        self.alive_at_end = procfs.running(self.pid)
        time.sleep(0.2)
        self.ended_at = time.monotonic()
        return None


def test_the_http_barrier_holds_the_client_until_go_and_until_the_end_readings(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    catalog = load_catalog(fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {"FAKE_CLIENT_TRACE": str(trace)}},
                                        client_lines=('barrier = "http"',)))
    client = catalog.clients["c"]
    assert client.barrier == "http"
    workload = load_workloads(tiny_workloads(tmp_path / "w", count=20)).workloads["tiny"]
    server = start_server(catalog.servers["s"], tmp_path / "logs")
    watch = Watch()
    try:
        sample = measure.run_client(client, server, workload, 1, tmp_path / "logs", Settings(min_seconds=0),
                                    observer=watch)
    finally:
        server.stop()
    assert sample.ok, sample.error
    assert sample.client_cpu_method == "clock" and sample.client_cpu_s and sample.server_cpu_s
    events = dict(line.split() for line in trace.read_text().splitlines())
    assert float(events["go"]) > watch.started_at  # GO came after the start readings
    assert watch.alive_at_end and float(events["released"]) > watch.ended_at  # held through the end readings


def test_barrier_must_be_stdin_or_http(tmp_path: Path) -> None:
    path = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {}}, client_lines=('barrier = "pipe"',))
    with pytest.raises(WsbenchError, match=r"client 'c': barrier must be one of stdin, http"):
        load_catalog(path)
