"""The readings of one repetition: start barrier, floor, pinning, and no silent failures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from wsbench_runs import FIXTURES, ROOT, fake_catalog, load_run, tiny_workloads, wsbench

from wsbench import measure, procfs
from wsbench.catalog import load_catalog
from wsbench.measure import _Clocks
from wsbench.model import Settings
from wsbench.server import RunningServer, start_server
from wsbench.workloads import load_workloads


def test_clock_readings_that_cannot_be_trusted_fail_the_sample() -> None:
    assert _Clocks(None, 5).start_problem() == "client CPU clock could not be read at the start barrier"
    assert "server CPU clock read 0 ns" in str(_Clocks(5, 0).start_problem())
    assert _Clocks(5, 5).start_problem() is None
    assert "ran backwards" in str(_Clocks(10, 5, 9, 6).client_problem(1.0))
    assert "ran backwards" in str(_Clocks(10, 5, 11, 4).server_problem())
    assert "is zero" in str(_Clocks(10, 5, 10, 6).client_problem(0.5))
    assert _Clocks(10, 5, 11, 6).client_problem(0.5) is None and _Clocks(10, 5, 11, 6).server_problem() is None


@pytest.fixture()
def live(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    catalog = load_catalog(fake_catalog(tmp_path / "rt.toml", {"s": []}, {"ok": {}}))
    server = start_server(catalog.servers["s"], tmp_path / "logs")
    try:
        yield server, tmp_path
    finally:
        server.stop()


def _one(live: tuple[RunningServer, Path], behaviour: str, settings: Settings = Settings(min_seconds=0),
         count: int = 20) -> measure.Sample:
    server, tmp = live
    catalog = load_catalog(fake_catalog(tmp / "rt2.toml", {"s": []}, {"c": {"FAKE_CLIENT": behaviour}}))
    workload = load_workloads(tiny_workloads(tmp / "w", count=count)).workloads["tiny"]
    return measure.run_client(catalog.clients["c"], server, workload, 1, tmp / "logs", settings)


def test_the_client_waits_at_the_start_barrier_until_the_readings_are_taken(live) -> None:  # type: ignore[no-untyped-def]
    sample = _one(live, "ok")
    # the fixture client refuses to go on without GO, so a result means the barrier worked
    assert sample.ok, sample.error
    assert sample.barrier_s is not None and 0 <= sample.barrier_s < 1
    assert sample.client_cpu_s and sample.client_cpu_s > 0 and sample.client_cpu_method == "clock"
    assert sample.server_cpu_s and sample.server_cpu_s > 0


def test_a_result_before_the_start_line_and_a_second_start_line_fail_the_sample(live) -> None:  # type: ignore[no-untyped-def]
    early = _one(live, "early")
    assert early.error and "result line before WSBENCH-START: the readings were never taken" in early.error
    twice = _one(live, "twice")
    assert twice.error and "WSBENCH-START printed twice" in twice.error


def test_a_failed_rss_reset_leaves_the_reading_empty_with_its_reason(live, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(procfs, "reset_peak_rss", lambda pid: f"cannot reset the peak RSS of process {pid} (test)")
    sample = _one(live, "ok")
    assert sample.ok, sample.error
    assert sample.server_peak_rss_kib is None  # never the previous cell's peak
    assert any("server peak RSS: cannot reset" in e for e in sample.reading_errors)
    assert sample.client_peak_rss_kib and sample.client_peak_rss_kib > 0


def test_a_client_that_checks_fewer_echoes_than_it_counts_fails(live) -> None:  # type: ignore[no-untyped-def]
    sample = _one(live, "unchecked")
    assert sample.error and "the client checked 0 of its 20 echoes; every echo must be checked" in sample.error
    unverified = _one(live, "unchecked", Settings(min_seconds=0, verify="off"))
    assert unverified.ok, unverified.error  # --verify off: nothing is expected


def test_min_seconds_repeats_rounds_and_pin_separates_the_cores(tmp_path: Path) -> None:
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {}})
    out = tmp_path / "out"
    proc = wsbench("--catalog", str(catalog), "--workloads-dir", str(tiny_workloads(tmp_path / "w", count=10)),
                   "run", "--suite", "t", "-n", "1", "--min-seconds", "0.3", "--pin", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    run = load_run(out)
    assert run["settings"] == {"min_seconds": 0.3, "verify": "on", "pinning": {"client": [0], "server": [1]},
                               "tls": None, "deflate": None, "shard": None}
    sample = run["cells"][0]["samples"][0]
    assert sample["seconds"] >= 0.3 and sample["extra"]["rounds"] > 1
    assert sample["messages"] == 10 * sample["extra"]["rounds"] == sample["extra"]["checked"]
    assert sample["extra"]["cpus"] == [0]  # the client's own view of its affinity
    assert run["servers"]["s"]["cpus"] == [1]
    assert "client on CPU 0, server on CPU 1" in proc.stdout
    env = run["environment"]
    assert set(env["lockfiles"]) == {"package-lock.json", "requirements.txt"}
    assert len(env["binaries"]) >= 4 and env["cpu_governor"] and isinstance(env["git_dirty"], bool)
    assert len(env["load_average"]) == 3 and len(env["load_average_after"]) == 3
    assert run["command"][1:4] == ["--catalog", str(catalog), "--workloads-dir"]


def test_pin_needs_two_cpus() -> None:
    proc = subprocess.run(["taskset", "-c", "0", sys.executable, "-m", "wsbench", "run", "--suite", "smoke", "--pin"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--pin needs at least 2 CPUs" in proc.stderr


@pytest.mark.parametrize("version", [1, 2])
def test_old_run_files_are_still_read(tmp_path: Path, version: int) -> None:
    from wsbench.model import read_json
    from wsbench.conformance.tables import sections
    run = {"schema": "wsbench-run", "schema_version": version, "created": "x", "command": [], "suite": None,
           "repetitions": 1, "environment": {}, "workloads": {}, "servers": {}, "clients": {},
           "cells": [{"workload": "w", "server": "s", "client": "c",
                      "samples": [{"rep": 1, "messages": 5, "msgs_per_s": 1.0}]}]}
    (tmp_path / "old.json").write_text(json.dumps(run))
    loaded = read_json(tmp_path / "old.json")
    assert loaded.settings == {} and loaded.cells[0].samples[0].reading_errors == []
    assert loaded.conformance is None and sections(loaded) == []
    assert FIXTURES.exists()


def test_verify_both_measures_every_client_beside_its_unchecked_twin(tmp_path: Path) -> None:
    catalog = fake_catalog(tmp_path / "rt.toml", {"s": []}, {"c": {}})
    out = tmp_path / "out"
    proc = wsbench("--catalog", str(catalog), "--workloads-dir", str(tiny_workloads(tmp_path / "w", count=10)),
                   "run", "--suite", "t", "-n", "2", "--verify", "both", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    run = load_run(out)
    assert set(run["clients"]) == {"c", "c/unchecked"} and run["clients"]["c/unchecked"]["echo_checks"] is False
    checked = {c["client"]: c["samples"][0]["extra"]["checked"] for c in run["cells"]}
    assert checked == {"c": 10, "c/unchecked": 0}
    assert "## Cost of the echo checks" in proc.stdout
    assert "| tiny | c | s |" in proc.stdout
