"""A results file of every schema version still loads (the model, model/): one test
per version on a representative file of it (fixtures/schemas/, README there), checking
what it holds, and for the current version a round trip: loaded and written again, every
file is the same to the byte, and loads equal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wsbench import report
from wsbench.gate import baseline
from wsbench.deflate_conformance.command import printed as deflate_printed
from wsbench.model import (HISTORY, GateBaseline, GateReport, READABLE_VERSIONS, Run, SCHEMA_VERSION, read_json,
                           write_json)
from wsbench.report import printed
from wsbench_runs import FIXTURES, ROOT

SCHEMAS = FIXTURES / "schemas"


def load(name: str, version: int) -> Run:
    path = SCHEMAS / name
    assert json.loads(path.read_text())["schema_version"] == version
    return read_json(path)


def rewritten(run: Run, tmp_path: Path) -> dict:
    """The JSON this wsbench writes for a loaded run."""
    write_json(run, tmp_path / "again.json")
    return json.loads((tmp_path / "again.json").read_text())


def test_every_readable_version_has_a_file() -> None:
    found = {json.loads(p.read_text())["schema_version"] for p in SCHEMAS.glob("*.json")}
    assert found == set(READABLE_VERSIONS) and max(found) == SCHEMA_VERSION


def test_every_version_says_what_it_added() -> None:
    """The history beside the version constant has one entry per readable version."""
    assert sorted(HISTORY) == list(READABLE_VERSIONS)
    assert all(text.strip() for text in HISTORY.values())


def test_version_1_run(tmp_path: Path) -> None:
    run = load("v1-run.json", 1)
    cell = next(c for c in run.cells if c.client == "quickjs")
    assert cell.key == "bin_4k/lws/quickjs" and cell.status == "ok" and len(cell.samples) == 3
    first = cell.samples[0]
    assert first.messages == 10000 and first.msgs_per_s == pytest.approx(224840.7, rel=1e-6)
    assert first.reading_errors == [] and first.barrier_s is None  # fields of version 2
    assert run.settings == {} and run.conformance is None and run.profiles is None and run.gate is None
    summary = cell.summary("msgs_per_s")
    assert summary is not None and summary.n == 3
    assert "schema 1 run: no floor, no barrier" in printed(run)
    assert rewritten(run, tmp_path)["schema_version"] == SCHEMA_VERSION


def test_version_2_run_with_unchecked_twins() -> None:
    run = load("v2-run.json", 2)
    assert run.settings["verify"] == "both" and run.settings["pinning"] == {"client": [0], "server": [1]}
    assert run.clients["quickjs"].echo_checks and not run.clients["quickjs/unchecked"].echo_checks
    checked = next(c for c in run.cells if c.client == "quickjs")
    assert len(checked.samples) == 6 and checked.samples[0].extra["checked"] == checked.samples[0].messages
    assert all(s.barrier_s is not None for s in checked.samples)
    assert run.servers["lws"].target is None and run.servers["lws"].readings is None  # fields of version 6
    assert "## Cost of the echo checks" in printed(run)


def test_version_3_conformance_run() -> None:
    run = load("v3-conformance.json", 3)
    assert run.conformance is not None and run.profiles is None and run.startup is None and run.gate is None
    case = run.conformance.cases[0]
    assert (case.id, case.section, case.expect, case.strict) == ("rsv1-text", "5.2", "fail", "close 1002")
    verdict = run.conformance.verdicts["loadgen"]["rsv1-text"]
    assert verdict.verdict == "strict" and verdict.detail.startswith("closed 1002")
    assert run.settings == {"jobs": 4} and run.servers == {} and run.cells == []
    assert "| `rsv1-text` | 5.2 |" in printed(run)


def test_version_4_profile_run_as_first_written(tmp_path: Path) -> None:
    run = load("v4-profile.json", 4)
    assert run.settings["profiled"] and run.profiles is not None and run.startup is None
    cell = run.profiles.cells[0]
    assert cell.key == "text_11/lws/loadgen" and cell.sides == ["client", "server"] and cell.error is None
    client = cell.breakdown["client"]
    assert client.shares["kernel"] == pytest.approx(57.46, abs=0.01)
    assert sum(client.shares.values()) == pytest.approx(100.0) and client.top[0].samples > 0
    assert cell.overhead_runs is None and cell.unprofiled is not None and cell.unprofiled.extra == {}
    assert cell.profiled is not None and cell.profiled.msgs_per_s and cell.recorded_s
    written = rewritten(run, tmp_path)["profiles"]["cells"][0]
    assert "overhead_runs" not in written and "cpu_prof_pass" not in written  # never written: still absent
    assert "Where the time goes (profiles)" in report.run_report(run, SCHEMAS / "v4-profile.json", "md")


def test_version_4_startup_run(tmp_path: Path) -> None:
    run = load("v4-startup.json", 4)
    assert run.startup is not None and run.profiles is None and not run.startup.failed()
    client, server = run.startup.clients["loadgen"], run.startup.servers["lws"]
    assert client.figures is not None and client.figures.median_s == pytest.approx(0.005283718)
    assert client.figures.runs == 2 and client.peak_rss_kib == 5924 and client.held_run
    assert server.figures is not None and server.figures.median_s == pytest.approx(0.00407961772)
    assert not server.held_run and server.command and server.command.startswith("coproc S")
    written = rewritten(run, tmp_path)["startup"]
    assert written["clients"]["loadgen"]["peak_rss_kib"] == 5924 and "peak_rss_kib" not in written["servers"]["lws"]
    assert "Start-up (hyperfine)" in report.run_report(run, SCHEMAS / "v4-startup.json", "md")


def test_version_5_gate_baseline_and_report() -> None:
    path = SCHEMAS / "v5-gate-baseline.json"
    assert json.loads(path.read_text())["schema_version"] == 5
    base = baseline.load(path)
    assert base is not None and isinstance(base.gate, GateBaseline)
    det, wall = baseline.deterministic(base), baseline.wall(base)
    assert det is not None and wall is not None
    assert det.counts["quick"]["loadgen/text_11"].per_message == 571.8 and det.rise == 0.03
    assert det.machine["cpu_model"] == "AMD EPYC"
    assert len(wall.ratios["text_11/quickjs/msgs_per_s"]) == 5 and wall.spec["reference"] == "node22"
    assert wall.thresholds["min_effect"]["throughput"] == 0.298
    assert [c.client for c in base.cells] == ["node22", "quickjs", "loadgen"]  # the wall run it came from
    report_run = load("v5-gate-report.json", 5)
    assert isinstance(report_run.gate, GateReport) and report_run.gate.exit_code == 0
    finding = report_run.gate.outcomes[0].findings[0]
    assert (finding.gate, finding.cell, finding.verdict, finding.baseline) == (
        "deterministic", "loadgen/text_11", "same", 571.8)
    assert "## Regression gate" in report.run_report(report_run, SCHEMAS / "v5-gate-report.json", "md")


V6 = ["v6-run.json", "v6-conformance.json", "v6-profile.json", "v6-startup.json", "v6-gate-report.json"]
V7 = ["v7-run-tls.json", "v7-conformance.json", "v7-conformance-tls.json", "v7-profile.json", "v7-startup.json",
      "v7-gate-report.json"]
V8 = ["v8-run-cluster.json"]
V9 = ["v9-run.json", *(name.replace("v7-", "v9-") for name in V7)]
V10 = [*(name.replace("v9-", "v10-") for name in V9), "v10-server-conformance.json"]
V11 = [*(name.replace("v10-", "v11-") for name in V10), "v11-run-checked.json"]
V12 = [*(name.replace("v11-", "v12-") for name in V11), "v12-run-deflate.json"]
V13 = [*(name.replace("v12-", "v13-") for name in V12), "v13-run-wire.json"]
V14 = [*(name.replace("v13-", "v14-") for name in V13), "v14-deflate-conformance-clients.json",
       "v14-deflate-conformance-servers.json"]
V15 = [*(name.replace("v14-", "v15-") for name in V14), "v15-run-takeover.json"]
V16 = [*(name.replace("v15-", "v16-") for name in V15), "v16-gate-baseline-armhf.json", "v16-count-claims.json"]


@pytest.mark.parametrize("name", V16)
def test_version_16_round_trip(name: str, tmp_path: Path) -> None:
    path = SCHEMAS / name
    run = read_json(path)
    write_json(run, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == path.read_text()
    assert read_json(tmp_path / "again.json") == run


@pytest.mark.parametrize("name", V7 + V8 + V9 + V10 + V11 + V12 + V13 + V14 + V15)
def test_versions_7_to_15_are_written_again_with_only_what_versions_9_to_16_added(
        name: str, tmp_path: Path) -> None:
    """Version 9 adds the programs' expect, info and barrier, version 10 the
    server_conformance section, version 11 the programs' conformance summary, version 12
    the programs' deflate (null in older files), version 13 only readings a new run takes
    (extra.wire) and an optional key of the deflate record, version 14 the
    deflate_conformance section (null), version 15 a key of the workloads a new run writes
    (no_context_takeover; read as false where absent) and optional keys, version 16 the
    counts and footprint sections (null) and a gate baseline's arches (no baseline here): a file of
    version 7 to 15 written again differs in those and in its version, nothing else."""
    path = SCHEMAS / name
    run = read_json(path)
    want = json.loads(path.read_text())
    for side in ("servers", "clients"):
        for program in want[side].values():
            if want["schema_version"] < 9:
                program.update(expect=None, info=None, barrier=None)
            if want["schema_version"] < 11:
                program.update(conformance=None)
            if want["schema_version"] < 12:
                program.update(deflate=None)
    want["schema_version"] = SCHEMA_VERSION
    want["server_conformance"] = want.get("server_conformance")
    want["deflate_conformance"] = want.get("deflate_conformance")
    want["counts"] = want.get("counts")
    want["footprint"] = want.get("footprint")
    assert rewritten(run, tmp_path) == want
    assert read_json(tmp_path / "again.json") == run


def test_version_8_cluster_run_with_histograms() -> None:
    from wsbench.histogram import KEY, Histogram

    run = load("v8-run-cluster.json", 8)
    cluster = run.settings["cluster"]
    assert run.settings["merged_shards"] == 2 and cluster["local"] and len(cluster["load_workers"]) == 2
    assert cluster["server_worker"]["name"] == "server-host" and cluster["failure"] is None
    assert [e["worker"]["host"] for e in run.environment["shards"]] == ["127.0.0.2", "127.0.0.3"]
    cell = next(c for c in run.cells if c.workload == "latency_32")
    for sample in cell.samples:
        hist = Histogram.from_json(sample.extra[KEY])
        assert hist.count == 400 and hist.summary() == sample.extra["latency_us"]  # two shards of 200
        assert len(sample.extra["shards_latency_us"]) == 2 and sample.extra["start_skew_s"] >= 0
        assert sample.server_cpu_s and sample.server_peak_rss_kib  # read on the server's host
    assert run.servers["lws"].readings.startswith("on its host by worker server-host")
    assert "## Shards: the merged run beside each shard" in printed(run)


@pytest.mark.parametrize("path", [SCHEMAS / name for name in V6] + [ROOT / "baselines" / "gate.json"],
                         ids=[*V6, "baselines/gate.json"])
def test_version_6_loads_and_is_written_as_the_current_version(path: Path, tmp_path: Path) -> None:
    run = read_json(path)
    again = rewritten(run, tmp_path)
    assert again["schema_version"] == SCHEMA_VERSION
    assert all(p["tls"] is None for side in ("servers", "clients") for p in again[side].values())
    assert read_json(tmp_path / "again.json") == run


def test_version_9_run_says_what_each_program_reported_of_itself() -> None:
    """ws with and without bufferutil (the catalog's expectation, the server's WSBENCH-INFO
    line, the client's result line) and k6's HTTP barrier."""
    run = load("v9-run.json", 9)
    native, pure = run.servers["node-ws-native"], run.clients["node-ws"]
    assert native.expect == {"ws.bufferutil": True} and native.info is not None
    assert native.info["ws"]["bufferutil"] is True and native.info["ws"]["mask"] == "bufferutil"
    assert pure.expect == {"ws.bufferutil": False} and pure.barrier == "stdin" and pure.info is None
    assert run.clients["k6"].barrier == "http" and run.clients["k6"].expect is None
    assert run.servers["lws"].expect is None and run.servers["lws"].info is None and run.servers["lws"].barrier is None
    sample = next(c for c in run.cells if c.key == "smoke_text/lws/node-ws-native").samples[0]
    assert sample.extra["ws"]["bufferutil"] is True and sample.extra["ws"]["utf8"] == "buffer.isUtf8"
    k6 = next(c for c in run.cells if c.key == "smoke_text/node-ws-native/k6")
    assert k6.status == "ok" and k6.samples[0].client_cpu_method == "clock"


def test_version_7_tls_run() -> None:
    run = load("v7-run-tls.json", 7)
    assert run.settings["tls"]["mode"] == "both" and run.settings["tls"]["key_type"] == "ECDSA P-256"
    assert run.servers["lws/wss"].tls is not None and run.servers["lws"].tls is None
    secure = next(c for c in run.cells if c.key == "smoke_text/lws/wss/loadgen")
    extra = secure.samples[0].extra
    assert extra["tls"]["version"] == "TLSv1.3" and extra["server_tls"]["connections"] >= 1
    bun = next(c for c in run.cells if c.key == "smoke_text/lws/wss/bun").samples[0].extra
    assert bun["tls"]["cannot_tell"] and bun["server_tls"]["group"]
    text = printed(run)
    assert "TLS: servers over ws:// and wss://" in text


def test_version_7_conformance_over_tls() -> None:
    """The TLS-failure set is version 7's conformance section with another group and two
    more expectations (refuse, fault), and n/a verdicts: both tables render."""
    run = load("v7-conformance-tls.json", 7)
    assert run.settings["tls"]["mode"] == "on" and run.conformance is not None
    groups = {c.id: (c.group, c.expect) for c in run.conformance.cases}
    assert groups["tls-expired"] == ("tls-failure", "refuse") and groups["tls-truncation"] == ("tls-failure", "fault")
    assert run.conformance.verdicts["loadgen"]["tls-alert-mid-message"].verdict == "strict"
    assert {v.verdict for v in run.conformance.verdicts["quickjs"].values()} == {"n/a"}
    text = printed(run)
    assert "over TLS (wss://)" in text and "## TLS failures" in text and "| quickjs | – | n/a |" in text


def test_version_6_content() -> None:
    run = load("v6-run.json", 6)
    cell = next(c for c in run.cells if c.client == "loadgen")
    assert cell.status == "ok" and cell.samples[0].messages and cell.samples[0].client_cpu_method == "clock"
    assert run.servers["lws"].readings and run.settings["shard"] is None
    conf = load("v6-conformance.json", 6).conformance
    assert conf is not None and conf.verdicts["loadgen"]["rsv1-text"].verdict == "strict"
    prof = load("v6-profile.json", 6).profiles
    assert prof is not None and prof.cells[0].overhead_runs is not None
    assert sum(prof.cells[0].breakdown["server"].shares.values()) == pytest.approx(100.0)
    up = load("v6-startup.json", 6).startup
    assert up is not None and up.clients["loadgen"].figures is not None and up.dir
    gate = load("v6-gate-report.json", 6).gate
    assert isinstance(gate, GateReport) and gate.outcomes[0].findings[0].metric == "instructions/message"


def test_a_section_of_the_wrong_shape_is_one_line(tmp_path: Path) -> None:
    data = json.loads((SCHEMAS / "v6-startup.json").read_text())
    data["startup"] = ["not", "an", "object"]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(Exception, match="malformed run file"):
        read_json(tmp_path / "bad.json")


def test_version_10_server_conformance_run() -> None:
    """``wsbench conformance --servers``: the server cases with their Autobahn section and
    RFC section, per server and case the verdict, the close behaviour and what was seen."""
    run = load("v10-server-conformance.json", 10)
    section = run.server_conformance
    assert section is not None and run.conformance is None and run.clients == {} and run.cells == []
    assert set(run.servers) == {"node-ws", "lws"} == set(section.verdicts)
    case = next(c for c in section.cases if c.id == "6-invalid-byte-ff")
    assert (case.group, case.section, case.expect, case.strict) == ("6 UTF-8", "8.1", "fail", "close 1007")
    strict = section.verdicts["node-ws"]["6-invalid-byte-ff"]
    assert (strict.verdict, strict.close) == ("strict", "strict") and strict.detail.startswith("closed 1007")
    assert strict.observed is not None and strict.observed["frames"][0]["close_code"] == 1007
    assert section.verdicts["node-ws"]["7-close-code-5000"].verdict == "informational"
    text = printed(run)
    assert "## Server conformance" in text and "| `6-invalid-byte-ff` | 8.1 |" in text


def test_version_11_run_records_what_each_program_checks() -> None:
    """`wsbench run -w smoke_text -s lws -s node-ws -c loadgen -c node-ws --conformance quick`:
    per program its summary from the quick subset, and the verdicts behind them."""
    run = load("v11-run-checked.json", 11)
    lws, ws = run.servers["lws"].conformance, run.servers["node-ws"].conformance
    assert lws is not None and ws is not None and lws.source == ws.source == "quick"
    assert [c.key for c in lws.checks][:2] == ["utf8", "masking"]
    assert lws.check("utf8").holds and lws.check("masking").let_through == [  # type: ignore[union-attr]
        "1-unmasked-text", "1-unmasked-binary", "1-unmasked-ping", "1-unmasked-close"]
    assert ws.check("masking").holds and ws.check("rsv") is None  # type: ignore[union-attr]
    assert run.server_conformance is not None and set(run.server_conformance.verdicts) == {"lws", "node-ws"}
    assert all(v.observed is None for by_case in run.server_conformance.verdicts.values() for v in by_case.values())
    assert run.conformance is not None and set(run.conformance.verdicts) == {"loadgen", "node-ws"}
    text = printed(run)
    assert "| **server skips masking** [1] |" in text and "| checked, hold |" in text


def test_version_14_deflate_conformance_runs() -> None:
    """``wsbench conformance --deflate`` (-c bun -c deno) and ``--servers --deflate`` (-s bun
    -s deno): the pmd- cases with their RFC 7692 section, the verdicts of the program that
    compresses, n/a with the catalog's reason for the one that cannot."""
    clients = load("v14-deflate-conformance-clients.json", 14)
    section = clients.deflate_conformance
    assert section is not None and section.servers is None and section.clients is not None
    assert clients.conformance is None and clients.settings["deflate"] == {"mode": "on"}
    assert [c.id for c in section.clients.cases] == ["pmd-answer-plain", "pmd-answer-client-max-window-bits-unoffered",
                                                     "pmd-not-deflate"]
    assert section.clients.verdicts["bun"]["pmd-not-deflate"].verdict == "strict"
    assert section.clients.verdicts["bun"]["pmd-answer-client-max-window-bits-unoffered"].verdict == "informational"
    assert {v.verdict for v in section.clients.verdicts["deno"].values()} == {"n/a"}
    assert "## Deflate conformance — clients" in deflate_printed(clients)
    servers = load("v14-deflate-conformance-servers.json", 14)
    section = servers.deflate_conformance
    assert section is not None and section.clients is None and section.servers is not None
    assert set(section.servers.verdicts) == {"bun/deflate", "deno/deflate"}
    plain = section.servers.verdicts["bun/deflate"]["pmd-offer-plain"]
    assert plain.verdict == "strict" and plain.observed is not None
    assert plain.observed["offer"] == "permessage-deflate" and "permessage-deflate" in plain.observed["extensions"]
    assert "## Deflate conformance — servers" in deflate_printed(servers)


def test_version_15_context_takeover_run() -> None:
    """``wsbench run -w deflate_json_16 -w deflate_json_16_nt --deflate on -s lws -c quickjs -c
    loadgen`` (trimmed): the workload offered without context takeover carries
    ``no_context_takeover``, the clients' deflate records how they make that offer, the report
    sets the two workloads' cells side by side; a version 14 run's workloads read as offered
    as the runtimes ship them."""
    run = load("v15-run-takeover.json", 15)
    assert run.workloads["deflate_json_16_nt"]["no_context_takeover"] is True
    assert run.workloads["deflate_json_16"]["no_context_takeover"] is False
    loadgen = run.clients["loadgen"].deflate
    assert loadgen is not None and loadgen["no_takeover"]["args"] == [
        "--deflate-server-no-context-takeover", "--deflate-client-no-context-takeover"]
    nt = next(c for c in run.cells if c.workload == "deflate_json_16_nt" and c.client == "quickjs")
    assert nt.samples[0].extra["extensions"] == \
        "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
    text = report.run_report(run, SCHEMAS / "v15-run-takeover.json", "md")
    saves = text.split("## What context takeover saves", 1)[1]
    assert saves.count("| deflate_json_16 |") == 2
    old = load("v14-run-deflate.json", 14)
    assert all(not w.get("no_context_takeover") for w in old.workloads.values())


def test_version_16_gate_baseline_with_armhf_counts() -> None:
    """baselines/gate.json after ``wsbench gate --arch armhf --only deterministic --update``,
    one cell per architecture kept: x86-64's counts stay in ``deterministic``, armhf's are in
    ``arches.armhf`` with QEMU's facts as their machine; the report shows both."""
    path = SCHEMAS / "v16-gate-baseline-armhf.json"
    run = load("v16-gate-baseline-armhf.json", 16)
    x86, armhf = baseline.deterministic(run), baseline.deterministic(run, "armhf")
    assert x86 is not None and list(x86.counts["full"]) == ["qjs/text_11"] and "cpu_model" in x86.machine
    assert armhf is not None and list(armhf.counts["full"]) == ["qjs-armhf/text_11"]
    assert armhf.machine["qemu"].startswith("qemu-arm version 7.2") and armhf.machine["arm_sysroot"]
    text = report.run_report(run, path, "md")
    assert "## Gate baseline: instruction counts on armhf" in text and "| qjs-armhf/text_11 |" in text


def test_version_16_count_run() -> None:
    """``wsbench count --claims --arch armhf --arch x86-64`` (four cells kept): the counts
    section per architecture, its tool and machine facts; the report's claims table gets an
    instruction column per architecture even without timed cells."""
    path = SCHEMAS / "v16-count-claims.json"
    run = load("v16-count-claims.json", 16)
    assert run.counts is not None and not run.cells and not run.workloads
    armhf, x86 = run.counts.arches["armhf"], run.counts.arches["x86-64"]
    assert armhf.tool == "qemu-arm + wsbench-count.so" and x86.tool == "callgrind" and armhf.profile == "quick"
    assert armhf.per_message("frag2_4k", "lws", "quickjs-no-join") == 39549.8
    assert armhf.cells["frag2_4k/lws/quickjs-no-join"].messages == 500
    assert x86.per_message("text_11", "lws", "quickjs-baseline") and not armhf.failed
    text = report.run_report(run, path, "md")
    claims = text.split("## Claims: the ten quickjs-websocket optimizations (000)", 1)[1]
    assert "instructions/message ratio, armhf (qemu-arm + wsbench-count.so)" in claims
    assert "frag2_4k: " in claims
