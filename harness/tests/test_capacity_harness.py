"""Capacity in the harness (docs/capacity.md): the fit of memory against connections held,
the client's mid-phase mark (WSBENCH-MARK), a server of its own per idle sample, a limit
that stops a client named in one line, the ramp, and the report's Capacity section."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wsbench.errors import WsbenchError
from wsbench.measure import stopped_at
from wsbench.metrics import METRICS
from wsbench.report.capacity import fit, memory_fits, sections
from wsbench.doc import Grid
from wsbench.report import printed
from wsbench.report.markdown import table
from wsbench.model import Cell, Run, Sample, read_json
from wsbench.workloads import load_workloads

from wsbench_runs import FIXTURES, load_run, wsbench

PY = sys.executable


def idle_sample(rep: int, n: int, server_kib: float, client_kib: float, before: float = 5000.0) -> Sample:
    return Sample(rep=rep, messages=n, seconds=2.0, extra={
        "connections": n, "opens_per_s": 1000.0, "server_rss_before_kib": before,
        "marks": {"held": {"t_s": 2.0, "server_cpu_s": 0.02, "client_cpu_s": 0.01,
                           "server_rss_kib": server_kib, "client_rss_kib": client_kib}}})


def synthetic_run() -> Run:
    """Idle cells of two sizes: the server 'leaky' costs 64 KiB per connection, 'lean' 2;
    the client 'fat' 30 KiB per connection against the reference server 'lean'."""
    def cell(workload: str, server: str, client: str, n: int, kib: float, ckib: float) -> Cell:
        c = Cell(workload, server, client)
        c.samples = [idle_sample(r, n, 5000 + kib * n + r, 9000 + ckib * n - r) for r in (1, 2)]
        return c

    cells = []
    for workload, n in (("idle_100", 100), ("idle_400", 400)):
        cells += [cell(workload, "leaky", "gen", n, 64, 1), cell(workload, "lean", "gen", n, 2, 1),
                  cell(workload, "lean", "fat", n, 2, 30)]
    spec = {"kind": "idle", "params": {"connections": 100}, "description": "idle"}
    return Run(created="now", command=["wsbench"], suite=None, repetitions=2, environment={
        "limits": {"rlimit_nofile": {"soft": 20000, "hard": 20000}, "ip_local_port_range": "32768 60999",
                   "somaxconn": "4096", "tcp_mem": "1 2 3", "fs_nr_open": "1048576", "fs_file_max": "9"}},
               workloads={"idle_100": spec, "idle_400": {**spec, "params": {"connections": 400}}},
               servers={}, clients={}, cells=cells, settings={})


def test_the_fit_is_least_squares() -> None:
    slope, intercept, r2 = fit([(100, 1100.0), (200, 2100.0), (400, 4100.0)])  # type: ignore[misc]
    assert slope == pytest.approx(10.0) and intercept == pytest.approx(100.0) and r2 == pytest.approx(1.0)
    assert fit([(100, 1.0), (100, 2.0), (100, 3.0)]) is None  # one number of connections
    assert fit([(100, 1.0), (200, 2.0)]) is None  # too few points


def test_memory_per_connection_tells_a_leak_from_a_lean_server() -> None:
    fits = {(f.side, f.name): f for f in memory_fits(synthetic_run())}
    assert fits[("server", "leaky")].slope_kib == pytest.approx(64, abs=0.01)
    assert fits[("server", "lean")].slope_kib == pytest.approx(2, abs=0.01)
    assert fits[("client", "fat")].slope_kib == pytest.approx(30, abs=0.01)
    assert fits[("server", "leaky")].slope_kib > 10 * fits[("server", "lean")].slope_kib
    assert fits[("server", "lean")].intercept_mib == pytest.approx(5000 / 1024, abs=0.01)


def test_the_capacity_section_renders() -> None:
    text = "\n".join(line for s in sections(synthetic_run()) for b in s.blocks
                     for line in (table(b) if isinstance(b, Grid) else [str(b)]))
    assert "Memory per connection" in text and "| server | leaky | 64.00 |" in text
    assert "RLIMIT_NOFILE (harness" in text and "32768 60999" in text
    assert "## Capacity" in printed(synthetic_run())


def test_idle_metrics() -> None:
    s = idle_sample(1, 100, 5000 + 200, 9000)
    assert METRICS["server_kib_per_conn"].get(s) == pytest.approx(2.0)
    assert METRICS["idle_server_cpu_share"].get(s) == pytest.approx(0.01)
    assert METRICS["server_rss_held_mib"].get(s) == pytest.approx(5200 / 1024)


def test_a_limit_is_one_line_naming_the_side_it_ran_into() -> None:
    workloads = load_workloads()
    idle = workloads.workloads["idle_10000"]
    extra = {"connections": 19990, "limit": "connect(): Connection reset by peer",
             "limits": {"server_nofile": [20000, 20000], "client_nofile": [20000, 20000]}}
    assert stopped_at(idle, None, extra, "lws") == ("stopped at N = 19,990: connect(): Connection reset by peer "
                                                      "(the file-descriptor limit of the lws process is 20,000)")
    assert stopped_at(idle, None, {"connections": 5, "limit": "x"}, "lws") == "stopped at N = 5: x"
    assert stopped_at(idle, None, {"connections": 5}, "lws") is None


def test_capacity_workloads_parse(tmp_path: Path) -> None:
    w = load_workloads()
    assert w.workloads["idle_max"].params["connections"] == "max" and w.workloads["idle_max"].fresh_server
    ramp = w.workloads["fanout_ramp"]
    assert ramp.ramp is not None and ramp.metric == "max_connections" and ramp.ramp.p95_ms == 250
    assert "idle_1000" in w.suites["capacity"].workloads
    (tmp_path / "w.toml").write_text(textwrap.dedent("""
        [workload.bad]
        description = "a ramp on an echo"
        type = "text"
        size = 1
        count = 1
        ramp = { connections = [1, 2], p95_ms = 1 }
    """))
    with pytest.raises(WsbenchError, match="only a fanout workload can ramp its connections"):
        load_workloads(tmp_path)


PY_RUNTIME = f"""
[runtimes.python]
label = "Python"
version = ["{PY}", "--version"]
"""


def idle_run(tmp_path: Path, programs: str, sizes: tuple[int, ...], hold_ms: int, reps: int,
             extra: str = "") -> tuple[subprocess.CompletedProcess[str], Path]:
    """`wsbench run` of one idle workload per size (idle_N: N connections held hold_ms, a
    fresh server per sample) with the catalog PY_RUNTIME + ``programs``; (the process, --out)."""
    catalog = tmp_path / "rt.toml"
    catalog.write_text(PY_RUNTIME + textwrap.dedent(programs))
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "w.toml").write_text("".join(textwrap.dedent(f"""
        [workload.idle_{n}]
        description = "{n} idle connections"
        kind = "idle"
        connections = {n}
        hold_ms = {hold_ms}
        fresh_server = true
        timeout_s = 60
    """) + extra for n in sizes))
    out = tmp_path / "out"
    names = [a for n in sizes for a in ("-w", f"idle_{n}")]
    done = wsbench("--catalog", str(catalog), "--workloads-dir", str(tmp_path / "w"), "run", *names,
                   "-n", str(reps), "--out", str(out), "-q", timeout=300)
    return done, out


def fake_run(tmp_path: Path, env: dict[str, str]) -> dict:
    argv_server = [PY, str(FIXTURES / "echo_server.py")]
    argv_client = [PY, str(FIXTURES / "client.py")]
    env_line = "{" + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + "}"
    done, out = idle_run(tmp_path, f"""
        [servers.py]
        runtime = "python"
        label = "py"
        command = {json.dumps(argv_server)}
        ready_timeout_s = 5

        [clients.fake]
        runtime = "python"
        label = "fake"
        command = {json.dumps(argv_client)}
        env = {env_line}
    """, (5,), 200, 2)
    return {"done": done, "run": load_run(out)}


def test_marks_limits_and_a_fresh_server_per_sample(tmp_path: Path) -> None:
    got = fake_run(tmp_path, {})
    assert got["done"].returncode == 0, got["done"].stderr
    run = got["run"]
    [cell] = run["cells"]
    pids = set()
    for s in cell["samples"]:
        held = s["extra"]["marks"]["held"]
        assert held["t_s"] >= 0.2 and held["server_rss_kib"] > 0 and held["client_rss_kib"] > 0
        assert s["extra"]["limits"]["server_nofile"][0] == s["extra"]["limits"]["server_nofile"][1]
        assert s["extra"]["server_rss_before_kib"] > 0 and s["extra"]["alive"] == 5
        pids.add(s["server_peak_rss_kib"] is not None)
    assert (tmp_path / "out" / "logs").is_dir()
    fresh = list((tmp_path / "out" / "logs").glob("*/fresh/server-py.log"))
    assert fresh, "every idle sample runs on a server started for it"
    assert run["environment"]["limits"]["rlimit_nofile"]["hard"] > 0


def test_a_client_stopped_by_a_limit_fails_its_cell_in_one_line(tmp_path: Path) -> None:
    got = fake_run(tmp_path, {"FAKE_LIMIT": "3"})
    assert got["done"].returncode == 1
    [cell] = got["run"]["cells"]
    assert cell["status"] == "failed"
    assert "stopped at N = 3: socket(): Too many open files (after 3 connections)" in cell["errors"][0]
    assert "Traceback" not in got["done"].stderr


def test_a_leaky_server_costs_more_per_connection_in_a_real_run(tmp_path: Path) -> None:
    """The real thing end to end: wsbench-loadgen holds 40, 100 and 160 idle connections on the
    test-only server as it behaves well and as it leaks 512 KiB per connection (touched, so
    resident); the report's fit shows the leak, far above the well-behaved server."""
    loadgen = Path(__file__).resolve().parents[2] / "build" / "bin" / "wsbench-loadgen"
    if not loadgen.exists():
        pytest.skip("build/bin/wsbench-loadgen not built (make setup)")
    server = [PY, str(FIXTURES / "capacity_server.py")]
    done, out = idle_run(tmp_path, f"""
        [runtimes.native]
        label = "native"
        version = ["{loadgen}", "--version"]

        [servers.well]
        runtime = "python"
        label = "well"
        command = {json.dumps([*server, "--behave", "well"])}

        [servers.leaky]
        runtime = "python"
        label = "leaky"
        command = {json.dumps([*server, "--behave", "leaky", "--leak-kib", "512"])}

        [clients.loadgen]
        runtime = "native"
        label = "loadgen"
        command = ["{loadgen}"]
        kinds = ["idle"]
    """, (40, 100, 160), 300, 1, extra="concurrency = 20\n")
    assert done.returncode == 0, done.stderr[-2000:]
    fits = {f.name: f for f in memory_fits(read_json(next(out.glob("run-*.json")))) if f.side == "server"}
    assert set(fits) == {"well", "leaky"}, fits
    assert fits["leaky"].slope_kib - fits["well"].slope_kib == pytest.approx(512, rel=0.25), fits
    assert fits["leaky"].slope_kib > 5 * max(fits["well"].slope_kib, 1), fits
