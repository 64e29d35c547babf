"""``wsbench run --cluster`` (issue 26, docs/scaling.md): one shard per load worker of a Dask
cluster against one target, one start barrier per repetition, the shards merged by the merge
of ``wsbench merge``, the server read on its host. Loopback only: 127.0.0.x addresses stand
for hosts (the local cluster's load workers listen on 127.0.0.2, .3, ...)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from wsbench import histogram
from wsbench.cluster import dask_engine, tasks
from wsbench.errors import WsbenchError

from testkit.background import Background, ctrl_c_as_at_a_terminal, kill_group, spawn
from wsbench_runs import FIXTURES, PY, ROOT, fake_catalog, tiny_workloads, wsbench
from wsbench.model.schema import SCHEMA_VERSION

LWS, LOADGEN = ROOT / "build/bin/lws-echo", ROOT / "build/bin/wsbench-loadgen"


@pytest.fixture
def echo_server() -> Iterator[tuple[int, int]]:
    with Background([PY, str(FIXTURES / "echo_server.py"), "--port", "0"]) as server:
        yield server.proc.pid, server.port


def _ours(*markers: str) -> list[str]:
    """Command lines of live processes that carry one of the markers (what a run left behind)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(m in cmd for m in markers):
            found.append(f"{entry.name}: {cmd[:200]}")
    return found


def _gone(*markers: str, within: float = 10.0) -> list[str]:
    deadline = time.monotonic() + within
    while (left := _ours(*markers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _listeners(pid: int) -> list[str]:
    """The addresses ``pid`` listens on (TCP, IPv4 and IPv6)."""
    inodes = {os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir() if os.readlink(f).startswith("socket:")}
    out = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f"socket:[{f[9]}]" in inodes:
                out.append(str(tasks._address(f[1].split(":")[0])))
    return out


def test_a_local_cluster_listens_on_loopback_addresses_only_and_stops_with_nothing_left(tmp_path: Path) -> None:
    engine = dask_engine.connect("local:2", tmp_path / "logs", "127.0.0.1")
    try:
        assert [(w.name, w.host) for w in engine.workers] == [("load-1", "127.0.0.2"), ("load-2", "127.0.0.3"),
                                                              ("server-host", "127.0.0.1")]
        server, load = dask_engine.roles(engine.workers, "127.0.0.1", None)
        assert server is not None and server.name == "server-host" and [w.name for w in load] == ["load-1", "load-2"]
        assert dask_engine.roles(engine.workers, "localhost", "load-2")[0].name == "load-2"  # type: ignore[union-attr]
        with pytest.raises(WsbenchError, match="--server-worker nope: no worker has that name"):
            dask_engine.roles(engine.workers, "127.0.0.1", "nope")
        pids = [p.pid for p in engine.started]
        addresses = [a for pid in pids for a in _listeners(pid)]
        assert addresses and all(a.startswith("127.") for a in addresses), addresses  # dashboards too
        offsets = engine.clock_offsets(tries=2)
        assert all(abs(o["offset_s"]) <= o["uncertainty_s"] + 0.05 for o in offsets.values())  # one machine
    finally:
        engine.close()
    assert _gone(str(tmp_path)) == []


def test_the_server_is_found_by_its_listening_port_on_its_host(echo_server: tuple[int, int]) -> None:
    pid, port = echo_server
    assert tasks.listening_pids("127.0.0.1", port) == [pid]
    found = tasks.probe_server_host("127.0.0.1", port, None)
    assert found["pids"] == [pid] and "listening on port" in found["how"]
    assert "no process of this host" in tasks.probe_server_host("127.0.0.1", 1, None)["error"]
    readings = tasks.ServerReadings([pid])
    readings.start()
    out = readings.end()
    assert out["server_cpu_s"] is not None and out["server_peak_rss_kib"] > 0 and out["reading_errors"] == []


@pytest.mark.skipif(not (LWS.exists() and LOADGEN.exists()), reason="lws-echo or wsbench-loadgen not built (make setup)")
def test_loadgen_on_three_local_shards_against_lws_echo_gives_one_merged_run_that_report_reads(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with Background([LWS, "--port", "0"]) as server:
        port = server.port
        proc = wsbench("run", "--cluster", "local:3", "-w", "text_11", "-w", "latency_32", "-c", "loadgen",
                       "--target", f"lws=ws://127.0.0.1:{port}/", "-n", "1", "--min-seconds", "0.1", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        [path] = out.glob("run-*.json")
        run = json.loads(path.read_text())
        shards = [json.loads(p.read_text()) for p in sorted(out.glob("shards-*/shard-*.json"))]
    assert run["schema_version"] == SCHEMA_VERSION and run["settings"]["merged_shards"] == 3 and len(shards) == 3
    cluster = run["settings"]["cluster"]
    assert [w["host"] for w in cluster["load_workers"]] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    assert cluster["server_worker"]["host"] == "127.0.0.1" and cluster["server_pids"] == [server.proc.pid]
    assert run["servers"]["lws"]["readings"].startswith("on its host by worker server-host")
    for cell in run["cells"]:
        [sample] = cell["samples"]
        parts = [next(c for c in s["cells"] if c["workload"] == cell["workload"])["samples"][0] for s in shards]
        assert sample["error"] is None, sample["error"]
        assert sample["messages"] == sum(p["messages"] for p in parts)
        assert sample["msgs_per_s"] == pytest.approx(sum(p["msgs_per_s"] for p in parts))
        assert sample["server_cpu_s"] > 0 and sample["server_peak_rss_kib"] > 0  # read on the server's host
        assert all(p["server_cpu_s"] is None for p in parts)  # a shard cannot read the server
        assert 0 <= sample["extra"]["start_skew_s"] < 5 and len(sample["extra"]["barrier"]["go_after_first_s"]) == 3
        if cell["workload"] == "latency_32":
            union = histogram.add([histogram.Histogram.from_json(p["extra"]["latency_hist"]) for p in parts])
            assert sample["extra"]["latency_us"] == union.summary() and union.count == 30000
    md = path.with_suffix(".md").read_text()
    assert "## Shards: the merged run beside each shard" in md and "shard 3 @ 127.0.0.4" in md
    assert "start skew" in proc.stdout and "server CPU and RSS read libwebsockets (C)" in md
    report = wsbench("report", str(path))
    assert report.returncode == 0 and "Shards: the merged run beside each shard" in report.stdout, report.stderr
    again = wsbench("merge", *map(str, sorted(out.glob("shards-*/shard-*.json"))), "-o", str(tmp_path / "m.json"))
    assert again.returncode == 0, again.stderr  # wsbench merge and the cluster run share one merge
    remerged = json.loads((tmp_path / "m.json").read_text())
    for a, b in zip(run["cells"], remerged["cells"]):
        assert a["samples"][0]["msgs_per_s"] == b["samples"][0]["msgs_per_s"]
        assert a["samples"][0]["extra"].get("latency_us") == b["samples"][0]["extra"].get("latency_us")
    assert _gone(str(tmp_path), f"--url ws://127.0.0.1:{port}/") == []


def test_a_shard_that_never_reaches_the_barrier_fails_the_run_naming_its_host(
        tmp_path: Path, echo_server: tuple[int, int]) -> None:
    _, port = echo_server
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {"FAKE_CLIENT": "never-ready:2"}})
    out = tmp_path / "out"
    began = time.monotonic()
    proc = wsbench("--catalog", str(catalog), "--workloads-dir", str(tiny_workloads(tmp_path / "w", count=20)),
                   "run", "--suite", "t", "-n", "2", "--cluster", "local:2", "--cluster-timeout", "3",
                   "--target", f"ws://127.0.0.1:{port}/", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"wsbench: error: cluster run stopped at tiny/target/c repetition 1: shard 2 \(worker load-2 "
                        r"on host 127\.0\.0\.3 \(tcp://127\.0\.0\.3:\d+\)\) was not ready within 3 s; the start barrier "
                        r"was not released, nothing of that repetition was merged", last), last
    assert "Traceback" not in proc.stderr and time.monotonic() - began < 60
    run = json.loads(next(out.glob("run-*.json")).read_text())
    [sample] = run["cells"][0]["samples"]  # the run stopped there: repetition 2 never ran
    assert sample["error"].startswith("shard 1: worker load-1 on host 127.0.0.2")
    assert "shard 2: worker load-2 on host 127.0.0.3 (tcp://127.0.0.3:" in sample["error"]
    assert "not ready within 3 s at the start barrier" in sample["error"] and sample["messages"] is None
    assert not run["complete"] and "was not ready" in run["settings"]["cluster"]["failure"]
    assert _gone(str(tmp_path), f"--url ws://127.0.0.1:{port}/") == []  # the hanging client, the workers, the scheduler


def test_ctrl_c_during_a_cluster_run_stops_the_cluster_and_every_client(
        tmp_path: Path, echo_server: tuple[int, int]) -> None:
    _, port = echo_server
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {"FAKE_CLIENT": "hang"}})
    out = tmp_path / "out"
    proc = spawn([PY, "-m", "wsbench", "--catalog", str(catalog), "--workloads-dir",
                  str(tiny_workloads(tmp_path / "w", count=20)), "run", "--suite", "t", "-n", "1",
                  "--cluster", "local:2", "--target", f"ws://127.0.0.1:{port}/", "--out", str(out)],
                 preexec=ctrl_c_as_at_a_terminal, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_ours(f"--url ws://127.0.0.1:{port}/")) < 2:  # both shards' clients are running
            time.sleep(0.2)
        assert len(_ours(f"--url ws://127.0.0.1:{port}/")) == 2
        time.sleep(0.5)
        proc.send_signal(2)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            kill_group(proc)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1].startswith("wsbench: interrupted")
    assert _gone(str(tmp_path), f"--url ws://127.0.0.1:{port}/") == []


def test_a_cluster_the_user_runs_is_reached_by_its_address_and_the_server_worker_can_be_named(
        tmp_path: Path, echo_server: tuple[int, int]) -> None:
    pid, port = echo_server
    engine = dask_engine.connect("local:2", tmp_path / "theirs", None)  # no worker on the server's host
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {}})
    workloads = tiny_workloads(tmp_path / "w", count=20)
    try:
        common = ["--catalog", str(catalog), "--workloads-dir", str(workloads), "run", "--suite", "t", "-n", "1",
                  "--cluster", engine.address, "--target", f"ws://127.0.0.1:{port}/"]
        proc = wsbench(*common, "--out", str(tmp_path / "a"))
        assert proc.returncode == 0, proc.stderr
        run = json.loads(next((tmp_path / "a").glob("run-*.json")).read_text())
        assert run["settings"]["merged_shards"] == 2 and run["settings"]["cluster"]["server_worker"] is None
        assert run["servers"]["target"]["readings"].startswith("n/a (external): no worker of the cluster runs on")
        [sample] = run["cells"][0]["samples"]
        assert sample["server_cpu_s"] is None and sample["messages"] == 40 and "start_skew_s" in sample["extra"]
        named = wsbench(*common, "--server-worker", "load-2", "--target-pid", str(pid), "--out", str(tmp_path / "b"))
        assert named.returncode == 0, named.stderr
        run = json.loads(next((tmp_path / "b").glob("run-*.json")).read_text())
        assert run["settings"]["merged_shards"] == 1 and run["settings"]["cluster"]["server_pids"] == [pid]
        assert f"--target-pid {pid}" in run["servers"]["target"]["readings"]
        assert run["cells"][0]["samples"][0]["server_cpu_s"] > 0
        wrong = wsbench(*common, "--target-pid", "1", "--out", str(tmp_path / "c"))
        assert wrong.returncode == 2 and "no worker runs there" in wrong.stderr, wrong.stderr
    finally:
        engine.close()
    assert _gone(str(tmp_path), f"--url ws://127.0.0.1:{port}/") == []


def test_what_a_cluster_run_cannot_do_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wsbench.cli import main

    target = ["--target", "ws://127.0.0.1:9/"]
    for args, message in ((["--cluster", "local:1", "-w", "text_11"], "give exactly one --target"),
                          (["--cluster", "local:1", *target, "--shard", "1/2"], "--cluster and --shard exclude"),
                          (["--cluster", "local:1", *target, "-w", "openloop_sweep_32"], "is a rate sweep"),
                          (["--cluster", "somewhere", *target, "-w", "text_11"], "give a Dask scheduler's address"),
                          (["--server-worker", "x", "-w", "text_11"], "--server-worker goes with --cluster")):
        assert main(["run", *args, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())  # refused before anything started or was written
