"""Slow consumers in the harness (docs/misbehave.md, "Slow consumers"): a test-only server
that buffers a slow subscriber without bound is seen growing at the marks and is stopped by
the RSS cap with its one-line reason (a measured outcome, not a failure); one started with
--broadcast-limit (a workload's server_args) closes the slow subscribers with 1008; the
report's part tells both; the workload keys that need a server of their own say so."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from wsbench.doc import Bullets, Details, Grid
from wsbench.errors import WsbenchError
from wsbench.model import Cell, Run, Sample, read_json
from wsbench.report.markdown import table
from wsbench.report.misbehave_slow import blocks, growth, policy_of, slope
from wsbench.rsscap import cap_words
from wsbench.workloads import load_workloads

from wsbench_runs import FIXTURES, wsbench

PY = sys.executable
LOADGEN = Path(__file__).resolve().parents[2] / "build" / "bin" / "wsbench-loadgen"


def text_of(run: Run) -> str:
    out: list[str] = []
    for b in blocks(run):
        if isinstance(b, Grid):
            out += table(b)
        elif isinstance(b, Details):
            out += [item for inner in b.blocks if isinstance(inner, Bullets) for item in inner.items]
        else:
            out.append(str(b))
    return "\n".join(out)


@pytest.mark.skipif(not LOADGEN.exists(), reason="build/bin/wsbench-loadgen not built (make setup)")
def test_an_unbounded_server_grows_until_the_cap_stops_it_and_a_limited_one_closes(tmp_path: Path) -> None:
    server = [PY, str(FIXTURES / "slow_server.py")]
    catalog = tmp_path / "rt.toml"
    catalog.write_text(textwrap.dedent(f"""
        [runtimes.python]
        label = "Python"
        version = ["{PY}", "--version"]

        [runtimes.native]
        label = "native"
        version = ["{LOADGEN}", "--version"]

        [servers.py]
        runtime = "python"
        label = "py"
        command = {json.dumps(server)}
        features = ["broadcast", "broadcast-limit"]

        [clients.loadgen]
        runtime = "native"
        label = "loadgen"
        command = ["{LOADGEN}"]
        kinds = ["slow"]
        features = ["slow"]
    """))
    common = """
        kind = "slow"
        path = "/broadcast"
        connections = 4
        slow = 2
        rate = 1000
        server_features = ["broadcast"]
        client_features = ["slow"]
        fresh_server = true
        timeout_s = 60
    """
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "w.toml").write_text(textwrap.dedent(f"""
        [workload.capped]
        description = "2 of 4 not reading, 32 KiB at 1,000/s for 20 s, capped at 200 MiB"
        size = 32768
        duration_ms = 20000
        server_rss_cap_mib = 200
    """ + common + """
        [workload.limited]
        description = "2 of 4 not reading, 16 KiB at 1,000/s for 1 s, the server limited to 1 MiB"
        size = 16384
        duration_ms = 1000
        server_args = ["--behave", "limited", "--broadcast-limit", "1048576"]
    """ + common))
    out = tmp_path / "out"
    done = wsbench("--catalog", str(catalog), "--workloads-dir", str(tmp_path / "w"), "run", "-w", "capped",
                   "-w", "limited", "-n", "1", "--out", str(out), "-q", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    run = read_json(next(out.glob("run-*.json")))
    cells = {c.workload: c for c in run.cells}

    [capped] = cells["capped"].samples
    assert capped.ok, capped.error
    assert re.fullmatch(r"stopped: server RSS passed 200 MiB after \d+\.\d s", capped.extra["stopped"])
    assert capped.extra["rss_cap"]["side"] == "server" and capped.extra["rss_cap"]["rss_kib"] > 200 * 1024
    series = [m["server_rss_kib"] for m in sorted(capped.extra["marks"].values(), key=lambda m: m["t_s"])]
    assert len(series) >= 2 and series == sorted(series) and series[-1] > series[0] + 32 * 1024, series
    assert capped.extra["rss_cap"]["after_s"] < 20, "stopped long before the publisher would have ended"
    assert "Traceback" not in done.stderr

    [limited] = cells["limited"].samples
    assert limited.ok, limited.error
    assert limited.extra["server_args"] == ["--behave", "limited", "--broadcast-limit", "1048576"]
    assert limited.extra["lost"] == 0 and limited.extra["delivered"] == 2 * 1000
    for sub in limited.extra["slow_subscribers"]:
        assert sub["close_code"] == 1008 and sub["tcp"] == "fin" and sub["messages"] < 1000, sub

    text = text_of(run)
    assert "stopped: server RSS passed 200 MiB after" in text
    assert "closed them:" in text and "close frame 1008, then FIN" in text
    assert "--behave limited --broadcast-limit 1048576" in text


def slow_sample(rss_mib: list[float], subs: list[dict], **extra: object) -> Sample:
    marks = {f"t{i + 1}": {"t_s": i + 1.0, "server_rss_kib": int(v * 1024)} for i, v in enumerate(rss_mib)}
    return Sample(rep=1, messages=10, seconds=1.0, extra={
        "marks": marks, "slow": len(subs), "duration_ms": 4000, "sent": 4000, "complete_s": 4.0,
        "latency_us": {"p50": 200.0, "p99": 900.0}, "slow_subscribers": subs,
        "lost": 0, "duplicated": 0, "disordered": 0, **extra})


def sub(**kw: object) -> dict:
    base = {"subscriber": 3, "messages": 4000, "wire_bytes": 4000 * 16388, "missed_between": 0, "gaps": 0,
            "missing_after": 0, "last_due_s": 3.999, "close_code": None, "tcp": "open", "tcp_state": None,
            "tcp_state_s": None, "ended": None}
    return {**base, **kw}


def test_the_policy_is_read_from_the_wire() -> None:
    assert policy_of(slow_sample([10], [sub(), sub()])).startswith("buffered for them: 62.5 MiB each")
    closed = policy_of(slow_sample([10], [sub(messages=122, wire_bytes=1999336, tcp="fin", close_code=1008,
                                              last_due_s=0.121, ended="closed by the server (code 1008)")]))
    assert closed == ("closed them: 1.91 MiB each on the wire (the last message they got was due at 0.12 s), "
                      "close frame 1008, then FIN")
    assert policy_of(slow_sample([10], [sub(missed_between=7, gaps=2)])) == \
        "dropped messages: 7 missing between those the slow subscribers got"
    held = policy_of(slow_sample([10], [sub()], complete_s=9.5, publisher_backlog_max=8 << 20))
    assert held.startswith("buffered for them: 62.5 MiB each, delivered once they read; the healthy ones were held "
                           "back: every message only at 9.5 s (publishing ended at 4 s), the publisher's unsent "
                           "backlog up to 8.0 MiB")
    assert policy_of(slow_sample([10], [sub()], stopped="stopped: server RSS passed 2 GiB after 3.1 s")) == \
        "stopped: server RSS passed 2 GiB after 3.1 s"


def test_growth_per_slow_subscriber_is_the_marks_slope_over_k() -> None:
    found = growth([slow_sample([100, 180, 260, 340, 340, 340], [sub(), sub(), sub(), sub()])])
    assert found is not None and found.per_s == pytest.approx(20.0) and found.half == pytest.approx(0.0, abs=1e-9)
    noisy = slope([(1, 1.0), (2, 2.5), (3, 2.9), (4, 4.2)])
    assert noisy is not None and noisy.half is not None and noisy.half > 0 and 0.9 < noisy.per_s < 1.2
    assert slope([(1, 1.0)]) is None


def test_losses_and_a_baseline_show_in_the_part() -> None:
    base = Cell("slow_0", "srv", "loadgen")
    base.samples = [slow_sample([10, 10], [], slow=0)]
    with_slow = Cell("slow_2", "srv", "loadgen")
    with_slow.samples = [slow_sample([10, 20, 30, 40], [sub(), sub()], lost=3,
                                     first_problem="message 9 never reached subscriber 2")]
    shape = {"connections": 4, "rate": 1000, "size": 16384, "duration_ms": 4000}
    run = Run(created="now", command=["wsbench"], suite=None, repetitions=1, environment={},
              workloads={"slow_0": {"kind": "slow", "params": {**shape, "slow": 0}},
                         "slow_2": {"kind": "slow", "params": {**shape, "slow": 2}}},
              servers={}, clients={}, cells=[base, with_slow], settings={})
    text = text_of(run)
    assert "| srv | default | slow_2 |" in text
    assert "3 lost, 0 duplicated, 0 out of order (message 9 never reached subscriber 2)" in text
    assert "| 5.0 ± 0.0 |" in text  # 10 MiB/s over 2 slow subscribers
    assert text.count("0.2 / 0.9") == 2  # without and with: the baseline found by shape


def test_server_args_and_a_cap_need_a_server_of_their_own(tmp_path: Path) -> None:
    for key in ('server_args = ["--broadcast-limit", "1"]', "server_rss_cap_mib = 100"):
        (tmp_path / "w.toml").write_text(textwrap.dedent(f"""
            [workload.bad]
            description = "x"
            kind = "slow"
            connections = 2
            slow = 1
            rate = 1
            duration_ms = 1
            size = 16
            {key}
        """))
        name = key.split(" ")[0]
        with pytest.raises(WsbenchError, match=f"workload 'bad': {name} needs fresh_server = true"):
            load_workloads(tmp_path)
    assert cap_words(2048) == "2 GiB" and cap_words(150) == "150 MiB"
    slow_4 = load_workloads().workloads["slow_4_limited"]
    assert slow_4.server_args == ("--broadcast-limit", "4194304") and slow_4.server_rss_cap_mib == 2048
