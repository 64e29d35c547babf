"""The CLI end to end with Python fake servers and clients: bad input, failures, Ctrl-C."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.background import ctrl_c_as_at_a_terminal, kill_group, spawn
from wsbench_runs import ROOT, announced_ports, fake_catalog, interrupt, listening, load_run, tiny_workloads, wsbench


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("wsbench: error: ")
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize("args, needles", [
    (["run", "--runtime", "cobol"], ["unknown runtime 'cobol'"]),
    (["run", "--workload", "bin_5g"], ["unknown workload 'bin_5g'"]),
    (["run", "--suite", "everything"], ["unknown suite 'everything'"]),
    (["run", "--client", "netcat"], ["unknown client 'netcat'"]),
])
def test_unknown_names_give_one_line(args: list[str], needles: list[str]) -> None:
    one_line_error(wsbench(*args), *needles)


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("[workload.x\ntype = 1\n")
    one_line_error(wsbench("--workloads-dir", str(tmp_path), "list"), "broken.toml", "malformed TOML")


def test_failures_are_isolated_named_and_non_zero(tmp_path: Path) -> None:
    catalog = fake_catalog(tmp_path / "rt.toml",
                           servers={"good": [], "silent": ["--behave", "silent"],
                                    "corrupt": ["--behave", "corrupt"]},
                           clients={"ok": {}, "crash": {"FAKE_CLIENT": "crash"},
                                    "garbage": {"FAKE_CLIENT": "garbage"},
                                    "error": {"FAKE_CLIENT": "error"}})
    out = tmp_path / "out"
    proc = wsbench("--catalog", str(catalog), "--workloads-dir", str(tiny_workloads(tmp_path / "w")),
                   "run", "--suite", "t", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    run = load_run(out)
    assert run["complete"] is True
    cells = {(c["server"], c["client"]): c for c in run["cells"]}
    ok = cells[("good", "ok")]
    assert ok["status"] == "ok" and len(ok["samples"]) == 2
    assert all(s["messages"] == 50 for s in ok["samples"])
    assert ok["summary"]["msgs_per_s"]["median"] > 0
    assert ok["summary"]["client_cpu_us_per_msg"]["median"] > 0
    assert ok["summary"]["server_peak_rss_mib"]["median"] > 0
    assert run["servers"]["silent"]["error"].startswith("did not start: printed no readiness line")
    assert "failed verification: binary 11 B: echo differs at byte 10" in run["servers"]["corrupt"]["error"]
    assert cells[("silent", "ok")]["status"] == "blocked"
    assert "exited with code 3 without a JSON result line" in cells[("good", "crash")]["errors"][0]
    assert "client 'crash' vs server 'good' on 'tiny'" in cells[("good", "crash")]["errors"][0]
    assert "last stdout line: 'this is not json'" in cells[("good", "garbage")]["errors"][0]
    assert "cannot connect on purpose" in cells[("good", "error")]["errors"][0]
    assert "| 1 | ok | good |" in proc.stdout
    md = list(out.glob("run-*.md"))
    assert md and "## Problems" in md[0].read_text()
    env = run["environment"]
    assert env["cpu_model"] and env["kernel"] and env["runtimes"]["python"]["version"].startswith("Python 3")


def test_interrupt_keeps_what_was_measured_and_leaves_nothing_behind(tmp_path: Path) -> None:
    catalog = fake_catalog(tmp_path / "rt.toml", servers={"good": []},
                           clients={"ok": {}, "hang": {"FAKE_CLIENT": "hang"}})
    out = tmp_path / "out"
    proc = spawn(
        [sys.executable, "-m", "wsbench", "--catalog", str(catalog), "--workloads-dir",
         str(tiny_workloads(tmp_path / "w", timeout_s=60)), "run", "--suite", "t", "--out", str(out)],
        preexec=ctrl_c_as_at_a_terminal, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        run = None
        while time.monotonic() < deadline:
            files = list(out.glob("run-*.json"))
            if files:
                run = json.loads(files[0].read_text())
                if any(c["samples"] for c in run["cells"]):
                    break
            time.sleep(0.2)
        assert run is not None, "no sample was checkpointed"
        time.sleep(1.0)  # the hanging client is now running
    except BaseException:
        kill_group(proc)
        raise
    stdout, stderr = interrupt(proc)
    run = load_run(out)
    assert run["complete"] is False
    assert any(s["msgs_per_s"] for c in run["cells"] for s in c["samples"])
    assert "incomplete run" in stdout
    ports = announced_ports(stderr)
    assert ports and not any(listening(p) for p in ports)


def test_na_scope_and_rate_sweep(tmp_path: Path) -> None:
    server = [sys.executable, str(ROOT / "harness/tests/fixtures/echo_server.py")]
    client = [sys.executable, str(ROOT / "harness/tests/fixtures/client.py")]
    (tmp_path / "rt.toml").write_text(f"""
[reference]
server = "frag"
client = "ok"
[runtimes.python]
label = "Python"
version = ["{sys.executable}", "--version"]
[servers.frag]
runtime = "python"
label = "fragmenting"
command = {json.dumps(server)}
features = ["fragments"]
[servers.plain]
runtime = "python"
label = "plain"
command = {json.dumps(server)}
[clients.ok]
runtime = "python"
label = "ok"
command = {json.dumps(client)}
[clients.echoonly]
runtime = "python"
label = "echo only"
command = {json.dumps(client)}
kinds = ["echo"]
notes = {{ openloop = "has no open-loop mode" }}
""")
    wdir = tmp_path / "w"
    wdir.mkdir()
    (wdir / "w.toml").write_text("""
[workload.frag2]
description = "needs fragments"
type = "binary"
size = 10
count = 20
mode = "pingpong"
path = "/?fragments=2"
server_features = ["fragments"]
[workload.sweep]
description = "rate sweep"
kind = "openloop"
type = "binary"
size = 10
rate = 1
duration_ms = 100
sweep = { rates = [1000, 5000, 20000, 40000], p99_us = 1000 }
[workload.only_ok]
description = "scoped to the reference client"
type = "text"
size = 5
count = 10
mode = "pingpong"
scope = "servers"
[suite.s]
description = "s"
workloads = ["frag2", "sweep", "only_ok"]
repetitions = 1
""")
    out = tmp_path / "out"
    proc = wsbench("--catalog", str(tmp_path / "rt.toml"), "--workloads-dir", str(wdir),
                   "run", "--suite", "s", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    run = load_run(out)
    cells = {(c["workload"], c["server"], c["client"]): c for c in run["cells"]}
    assert cells[("frag2", "plain", "ok")]["status"] == "n/a"
    assert cells[("frag2", "plain", "ok")]["na"] == "server plain lacks 'fragments'"
    assert cells[("frag2", "frag", "ok")]["status"] == "ok"
    assert cells[("sweep", "frag", "echoonly")]["na"] == "client echoonly has no open-loop mode"
    swept = cells[("sweep", "frag", "ok")]["samples"][0]
    assert swept["extra"]["max_rate"] == 5000  # p99 = rate/10 µs passes up to 5000 msgs/s
    assert [s["rate"] for s in swept["extra"]["steps"]] == [1000, 5000, 20000]
    assert ("only_ok", "frag", "echoonly") not in cells and ("only_ok", "frag", "ok") in cells
    assert "n/a: server plain lacks 'fragments'" in proc.stdout
    assert "max msgs/s with p99 in limit" in proc.stdout


def test_scopes_that_exclude_every_pair_are_one_line_errors() -> None:
    proc = wsbench("run", "--suite", "standard", "-w", "decode_ascii_10", "-s", "bun", "-c", "bun")
    one_line_error(proc, "no server/client pair is left")
