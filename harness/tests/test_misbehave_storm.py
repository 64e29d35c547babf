"""The report's storms and vanishing peers (report/misbehave_storm.py) on a synthetic run:
all back or not, failures by reason, CPU and peak between the marks, RSS after against
before; freed after Y s or not within the bound, what was sent, the default keep-alive;
nothing without such cells; and the part is in the section."""

from __future__ import annotations

from wsbench.doc import Grid
from wsbench.model import Cell, Run, Sample
from wsbench.report import misbehave
from wsbench.report.misbehave_storm import blocks


def storm_sample(back: int, n: int, before_kib: int, peak_kib: int, after_kib: int, **failed: int) -> Sample:
    marks = {"before": {"t_s": 0.0, "server_cpu_s": 0.5, "server_rss_kib": before_kib, "server_peak_rss_kib": 1},
             "storm": {"t_s": 3.0, "server_cpu_s": 2.0, "server_rss_kib": peak_kib - 10, "server_peak_rss_kib": peak_kib},
             "after": {"t_s": 5.0, "server_cpu_s": 2.1, "server_rss_kib": after_kib, "server_peak_rss_kib": after_kib}}
    return Sample(rep=1, messages=back, seconds=2.5, extra={
        "connections": n, "back": back, "failed": n - back, "storm_s": 2.5, "back_p50_s": 1.25, "back_p99_s": 2.4,
        "open_s": 1.0, "closed_s": 0.5, "listen_overflows": 4242, "syn_cookies": 0, **{r: 0 for r in ("refused", "reset", "closed", "bad_upgrade", "other",
                                                          "timed_out")}, **failed,
        **({"first_refused": "connection 7: connect: Connection refused"} if failed.get("refused") else {}),
        "marks": marks})


def vanish_sample(freed: float | None, sent: int) -> Sample:
    return Sample(rep=1, seconds=freed or 20.0, extra={"vanish": {
        "bound_s": 20.0, "freed_s": freed, "peer_port": 40000, "keepalive": False, "segments_from_server": sent,
        "segments_from_peer": 0, "end_state": "FIN_WAIT1" if freed else "ESTABLISHED",
        "end_unacked_bytes": 33 if freed else 0, "end_retransmits": 2 if freed else 0}})


def run() -> Run:
    cells = []
    for server, sample in (("lws", storm_sample(1000, 1000, 10240, 20480, 10240)),
                           ("bun", storm_sample(990, 1000, 10240, 30720, 40960, refused=10))):
        c = Cell("storm_1000", server, "loadgen")
        c.samples = [sample]
        cells.append(c)
    for server, sample in (("deno", vanish_sample(31.5, 4)), ("lws", vanish_sample(None, 0))):
        c = Cell("vanish_20s", server, "loadgen")
        c.samples = [sample]
        cells.append(c)
    defaults = Cell("vanish_defaults_35s", "deno", "loadgen")
    defaults.samples = [vanish_sample(30.0, 8)]
    defaults.samples[0].extra["server_args"] = ["--idle-defaults"]
    cells.append(defaults)
    failed = Cell("vanish_20s", "node-ws", "loadgen")
    failed.samples = [Sample(rep=1, error="x: needs root", extra={"vanish": {"bound_s": 20.0}})]
    cells.append(failed)
    return Run(created="now", command=["wsbench"], suite=None, repetitions=1, environment={},
               workloads={"storm_1000": {"kind": "storm", "params": {"connections": 1000}},
                          "vanish_20s": {"kind": "idle", "params": {"connections": 1}}},
               servers={}, clients={}, cells=cells, settings={})


def grids(found: list) -> list[Grid]:  # type: ignore[type-arg]
    return [b for b in found if isinstance(b, Grid)]


def test_storm_rows() -> None:
    storm = grids(blocks(run()))[0]
    rows = {r[0]: r for r in storm.rows}
    assert rows["lws"][1:5] == ["1,000", "2.50 s", "1.25 s", "0"]
    assert rows["lws"][5] == "1.50 s" and rows["lws"][6] == "20.0"  # CPU before → storm; the peak in between
    assert rows["lws"][7] == "10.0 → 10.0 (+0.0): back"
    assert rows["bun"][2] == "not all: 2.50 s" and rows["bun"][4] == "10 refused"
    assert rows["bun"][7] == "10.0 → 40.0 (+30.0): kept"
    timelines = [b for b in blocks(run()) if not isinstance(b, (str, Grid))][0].blocks[0].items
    assert "the kernel over the storm: 4,242 accept-queue overflows" in timelines[0]
    assert "first failures: refused: connection 7: connect: Connection refused" in timelines[0]  # bun sorts first


def test_vanish_rows() -> None:
    vanish = grids(blocks(run()))[1]
    rows = {(r[0], r[1].startswith("the runtime's")): r for r in vanish.rows}
    deno = rows[("deno", False)]
    assert deno[1] == "as benchmarked (the script's settings)"
    assert deno[2] == "freed after 31.5 s" and deno[3].startswith("4 segments; socket then FIN_WAIT1")
    assert rows[("lws", False)][2] == "not freed within 20 s" and rows[("lws", False)][3].startswith("nothing")
    assert rows[("node-ws", False)][2] == "failed: x: needs root"
    assert "idleTimeout 30 s" in deno[5] and "300 s" in rows[("lws", False)][5]
    # the same server run with its runtime's idle defaults (servers/README.md item 18) is a row of its own
    assert rows[("deno", True)][1:3] == ["the runtime's defaults (--idle-defaults)", "freed after 30.0 s"]


def test_nothing_without_such_cells_and_registered() -> None:
    empty = run()
    empty.cells = []
    assert blocks(empty) == []
    assert blocks in misbehave.PARTS
    assert any("Reconnect storms" in str(b) for b in misbehave.sections(run())[0].blocks)
