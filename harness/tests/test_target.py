"""``wsbench run --target``: servers started outside the harness, verified the same way,
refused when they fail it, with server CPU and RSS n/a (external) unless a PID is given."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from wsbench.errors import WsbenchError
from wsbench.target import ExternalServer, non_loopback, parse_url
from wsbench.catalog import Program

from testkit.background import Background
from wsbench_runs import FIXTURES, ROOT, fake_catalog, load_run, tiny_workloads, wsbench


@pytest.fixture
def outside_server(request: pytest.FixtureRequest) -> Iterator[tuple[int, int]]:
    """A contract echo server started by the test, not by the harness: (pid, port)."""
    behave = getattr(request, "param", "well")
    with Background([sys.executable, str(FIXTURES / "echo_server.py"), "--port", "0", "--behave", behave]) as server:
        yield server.proc.pid, server.port


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {}})
    return wsbench("--catalog", str(catalog), "--workloads-dir", str(tiny_workloads(tmp_path / "w", count=20)),
                   "run", "--suite", "t", "-n", "1", "--out", str(tmp_path / "out"), *args)


def test_a_target_is_verified_and_measured_with_server_readings_external(
        tmp_path: Path, outside_server: tuple[int, int]) -> None:
    _, port = outside_server
    docker = {"docker": {"cpusets": {"servers": "1", "clients": "0"}, "readings": "by test",
                         "images": {"s": {"image": "wsbench/s:local", "id": "sha256:" + "ab" * 32}},
                         "server_runtimes": {"s": {"runtime": "node20", "version": "v20.20.2"}}}}
    (tmp_path / "env.json").write_text(json.dumps(docker))
    proc = _run(tmp_path, "--target", f"ws://127.0.0.1:{port}/", "--environment-from", str(tmp_path / "env.json"))
    assert proc.returncode == 0, proc.stderr
    assert "echo verified (8 checks)" in proc.stderr
    assert ("servers on CPUs 1, clients in the runner on CPUs 0; images: s abababababab; server runtimes in "
            "their containers: s v20.20.2; server CPU and RSS: by test") in proc.stdout
    run = load_run(tmp_path / "out")
    record = run["servers"]["target"]
    assert record["target"] == f"ws://127.0.0.1:{port}/" and record["readings"] == "n/a (external)"
    assert record["status"] == "ok" and len(record["checks"]) == 8
    [cell] = run["cells"]
    assert cell["status"] == "ok" and cell["samples"][0]["messages"] == 20
    sample = cell["samples"][0]
    assert sample["server_cpu_s"] is None and sample["server_peak_rss_kib"] is None
    assert sample["reading_errors"] == [] and sample["client_cpu_s"] > 0
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| 1 |"))
    assert row.count("n/a (external)") >= 2, row
    assert run["environment"]["runtimes"]["external"]["version"].startswith("unknown")
    assert run["environment"]["docker"] == docker["docker"]
    bad = _run(tmp_path, "--target", f"ws://127.0.0.1:{port}/", "--environment-from", str(tmp_path / "nope.json"))
    assert bad.returncode == 2 and "nope.json: file not found" in bad.stderr


def test_a_target_pid_reads_the_server_like_a_started_one(tmp_path: Path, outside_server: tuple[int, int]) -> None:
    pid, port = outside_server
    proc = _run(tmp_path, "--target", f"s=ws://localhost:{port}/", "--target-pid", f"s={pid}")
    assert proc.returncode == 0, proc.stderr
    run = load_run(tmp_path / "out")
    assert run["servers"]["s"]["readings"].startswith(f"/proc/{pid} ")
    sample = run["cells"][0]["samples"][0]
    assert sample["server_cpu_s"] > 0 and sample["server_peak_rss_kib"] > 0


@pytest.mark.parametrize("outside_server", ["corrupt"], indirect=True)
def test_a_target_that_fails_verification_is_refused(tmp_path: Path, outside_server: tuple[int, int]) -> None:
    _, port = outside_server
    proc = _run(tmp_path, "--target", f"ws://127.0.0.1:{port}/")
    assert proc.returncode == 1
    assert f"wsbench: target ws://127.0.0.1:{port}/ failed verification: binary 11 B: echo differs at byte 10; " \
           "refused" in proc.stderr
    run = load_run(tmp_path / "out")
    [cell] = run["cells"]
    assert cell["status"] == "blocked" and cell["samples"] == []


@pytest.mark.parametrize("url, needle", [
    ("ws://192.0.2.1:80/", "192.0.2.1 is an address outside loopback"),
    ("wss://127.0.0.1:443/", "only ws:// URLs"),
    ("ws://127.0.0.1/", "name the host and the port"),
])
def test_bad_or_remote_targets_are_refused_in_one_line(tmp_path: Path, url: str, needle: str) -> None:
    proc = _run(tmp_path, "--target", url)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert needle in proc.stderr and proc.stderr.startswith("wsbench: error: ")
    if "outside loopback" in needle:
        assert "--allow-remote" in proc.stderr


def test_allow_remote_lifts_only_the_loopback_rule() -> None:
    assert parse_url("ws://192.0.2.1:80/x?y=1", allow_remote=True).path == "/x?y=1"
    with pytest.raises(WsbenchError, match="only ws://"):
        parse_url("http://127.0.0.1:80/", allow_remote=True)
    assert non_loopback("localhost", 80) is None and non_loopback("::1", 80) is None
    assert non_loopback("127.0.0.2", 80) is None


def test_a_workload_query_joins_the_targets_path() -> None:
    program = Program("t", "server", "external", "t", ("ws://127.0.0.1:9/echo?a=1",))
    server = ExternalServer(program, Path("/nonexistent"))
    assert server.url("/") == "ws://127.0.0.1:9/echo?a=1"
    assert server.url("/?fragments=2") == "ws://127.0.0.1:9/echo?a=1&fragments=2"
    assert server.pid is None and server.alive() and server.stop() is None


def test_two_shards_run_at_once_against_one_target_merge_into_summed_throughput(
        tmp_path: Path, outside_server: tuple[int, int]) -> None:
    _, port = outside_server
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {}})
    workloads = tiny_workloads(tmp_path / "w", count=200)
    procs_ = [subprocess.Popen([sys.executable, "-m", "wsbench", "--catalog", str(catalog), "--workloads-dir",
                                str(workloads), "run", "--suite", "t", "-n", "2", "--target", f"ws://127.0.0.1:{port}/",
                                "--shard", f"{i}/2", "--out", str(tmp_path / f"shard{i}")],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for i in (1, 2)]
    for p in procs_:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    files = [next((tmp_path / f"shard{i}").glob("run-*.json")) for i in (1, 2)]
    shards = [json.loads(f.read_text()) for f in files]
    assert [s["settings"]["shard"] for s in shards] == [[1, 2], [2, 2]]
    merged_path = tmp_path / "merged.json"
    proc = wsbench("merge", str(files[1]), str(files[0]), "-o", str(merged_path))
    assert proc.returncode == 0, proc.stderr
    merged = json.loads(merged_path.read_text())
    assert merged["settings"]["merged_shards"] == 2 and len(merged["environment"]["shards"]) == 2
    [cell] = merged["cells"]
    assert [s["rep"] for s in cell["samples"]] == [1, 2]
    for rep, sample in enumerate(cell["samples"], 1):
        parts = [next(x for x in s["cells"][0]["samples"] if x["rep"] == rep) for s in shards]
        assert sample["messages"] == sum(p["messages"] for p in parts) == 400
        assert sample["msgs_per_s"] == pytest.approx(sum(p["msgs_per_s"] for p in parts))
        assert sample["seconds"] == max(p["seconds"] for p in parts)
        assert sample["server_cpu_s"] is None
    assert merged["servers"]["target"]["readings"].startswith("n/a (merged shards")
    assert (tmp_path / "merged.md").read_text().count("| 1 |") == 1

    one = wsbench("merge", str(files[0]), "-o", str(tmp_path / "x.json"))
    assert one.returncode == 2 and "at least two shards" in one.stderr
    twice = wsbench("merge", str(files[0]), str(files[0]), "-o", str(tmp_path / "x.json"))
    assert twice.returncode == 2 and "shard 1/2 is also" in twice.stderr
    for i, shard in enumerate(shards):  # latency results of a wsbench before histograms: refused, never guessed
        shard["workloads"]["tiny"]["kind"] = "latency"
        (tmp_path / f"lat{i}.json").write_text(json.dumps(shard))
    lat = wsbench("merge", str(tmp_path / "lat0.json"), str(tmp_path / "lat1.json"), "-o", str(tmp_path / "x.json"))
    assert lat.returncode == 2 and "has percentiles but no histogram" in lat.stderr, lat.stderr


def test_target_specs_split_name_and_url_at_the_right_equals_sign() -> None:
    from wsbench.target import parse_spec
    assert parse_spec("ws://h:1/?a=b") == ("target", "ws://h:1/?a=b")
    assert parse_spec("wsx=ws://h:1/") == ("wsx", "ws://h:1/")
    assert parse_spec("lws=ws://h:1/?q=1") == ("lws", "ws://h:1/?q=1")
