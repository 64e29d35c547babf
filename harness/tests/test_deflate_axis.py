"""The deflate axis of ``wsbench run`` (issue 32, deflate.py): the twins NAME/deflate, the
n/a cells of what cannot compress, what each sample records of the negotiation (schema 12),
and the marks of the ranked table; one small run of the JavaScript servers and clients."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wsbench.catalog import load_catalog
from wsbench.deflate import deflate_axis, deflate_summary, negotiated, not_applicable, parse_deflate_line, with_deflate
from wsbench.errors import WsbenchError
from wsbench.model.schema import SCHEMA_VERSION
from wsbench.runner import Request, plan
from wsbench.workloads import load_workloads

from wsbench_runs import load_run, wsbench

CATALOG = load_catalog()


@pytest.mark.parametrize("mode, names", [("off", ["bun"]), ("on", ["bun/deflate"]), ("both", ["bun", "bun/deflate"])])
def test_the_axis(mode: str, names: list[str]) -> None:
    servers, settings = deflate_axis(mode, [CATALOG.servers["bun"]])
    assert [s.name for s in servers] == names
    assert settings == (None if mode == "off" else {"mode": mode})
    if mode == "on":
        assert servers[0].command[-1] == "--deflate" and servers[0].catalog_name == "bun"


def test_what_cannot_compress_is_n_a_with_the_catalog_reason() -> None:
    deno, lws = (with_deflate(CATALOG.servers[n]) for n in ("deno", "lws"))
    assert not_applicable(deno, CATALOG.clients["bun"]) == \
        "server deno has no permessage-deflate: Deno.upgradeWebSocket has no option for it"
    assert not_applicable(lws, CATALOG.clients["bun"]) is None  # lws-echo-deflate
    assert lws.command[:2] == ("build/bin/lws-echo-deflate", "--deflate") and "build/bin/lws-echo-deflate" in lws.requires
    bun = with_deflate(CATALOG.servers["bun"])
    assert "offers no permessage-deflate" in str(not_applicable(bun, CATALOG.clients["deno"]))
    assert not_applicable(bun, CATALOG.clients["node22"]) is None
    assert not_applicable(CATALOG.servers["deno"], CATALOG.clients["deno"]) is None  # deflate off
    ws = with_deflate(CATALOG.clients["node-ws"])
    assert ws.name == "node-ws" and ws.env["WSBENCH_WS_DEFLATE"] == "1"


def test_a_target_cannot_take_the_axis() -> None:
    request = Request(workload=["smoke_text"], target=["t=ws://127.0.0.1:1/"], deflate="on")
    with pytest.raises(WsbenchError, match="--deflate starts servers"):
        plan(request, CATALOG, load_workloads())


def test_lines_and_summaries() -> None:
    ws = parse_deflate_line('WSBENCH-DEFLATE offered="permessage-deflate; client_max_window_bits" '
                            'response="permessage-deflate"')
    bun = parse_deflate_line('WSBENCH-DEFLATE offered="permessage-deflate" response=?')
    none = parse_deflate_line("WSBENCH-DEFLATE offered=none response=none")
    assert parse_deflate_line("WSBENCH-DEFLATE offered=x response=y") is None
    assert deflate_summary([ws, ws]) == {"connections": 2, "negotiated": 2, "response": "permessage-deflate",
                                         "offered": "permessage-deflate; client_max_window_bits"}
    assert deflate_summary([bun])["negotiated"] is None and deflate_summary([none])["negotiated"] == 0
    assert negotiated(deflate_summary([bun]), "permessage-deflate; server_no_context_takeover") is True
    assert negotiated(deflate_summary([bun]), None) is None
    assert negotiated(deflate_summary([none]), None) is False


def test_a_run_with_deflate_both(tmp_path: Path) -> None:
    run = wsbench("run", "--deflate", "both", "-w", "smoke_text", "-s", "node-ws", "-s", "bun", "-s", "deno",
                  "-c", "node-ws", "-c", "bun", "-n", "1", "--min-seconds", "0", "--conformance", "off",
                  "--out", str(tmp_path), "--quiet")
    assert run.returncode == 0, run.stderr
    data = load_run(tmp_path)
    assert data["schema_version"] == SCHEMA_VERSION and data["settings"]["deflate"] == {"mode": "both"}
    cells = {(c["server"], c["client"]): c for c in data["cells"]}
    assert len(cells) == 12
    for server in ("node-ws/deflate", "bun/deflate"):
        for client in ("node-ws", "bun"):
            extra = cells[server, client]["samples"][0]["extra"]
            assert extra["server_deflate"]["connections"] == 1
            assert extra["server_deflate"]["offered"] == "permessage-deflate; client_max_window_bits"
            assert "permessage-deflate" in extra["extensions"]
    assert cells["node-ws/deflate", "bun"]["samples"][0]["extra"]["server_deflate"]["response"] == "permessage-deflate"
    assert cells["bun/deflate", "bun"]["samples"][0]["extra"]["extensions"] == \
        "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
    for server in ("node-ws", "bun", "deno"):
        for client in ("node-ws", "bun"):
            extra = cells[server, client]["samples"][0]["extra"]
            assert "server_deflate" not in extra and "extensions" not in extra
    for client in ("node-ws", "bun"):
        assert cells["deno/deflate", client]["na"] == \
            "server deno has no permessage-deflate: Deno.upgradeWebSocket has no option for it"
    assert data["servers"]["node-ws/deflate"]["deflate"]["defaults"]["threshold_bytes"] == 1024
    assert data["servers"]["deno/deflate"]["deflate"]["cannot"].startswith("has no permessage-deflate")
    assert data["servers"]["node-ws"]["deflate"] is None
    assert data["clients"]["node-ws"]["deflate"]["env"] == {"WSBENCH_WS_DEFLATE": "1"}
    rows = [line for line in run.stdout.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(rows) == 10
    assert sum("+ permessage-deflate [deflate]" in r for r in rows) == 4
    assert sum("[no deflate]" in r for r in rows) == 6
    assert "n/a: server deno has no permessage-deflate" in run.stdout
    assert "permessage-deflate: servers with and without it, interleaved" in run.stdout
    # bytes on the wire, counted on the server's sockets: a 64-byte text is 70 bytes from a client
    # (2 of header, 4 of mask) and 66 from a server, uncompressed; ws compresses both ways with context
    # takeover (its threshold applies only without), Bun's server answers without it
    for server in ("node-ws", "bun"):
        for client in ("node-ws", "bun"):
            wire = cells[server, client]["samples"][0]["extra"]["wire"]
            assert (wire["connections"], wire["c2s_per_msg"], wire["s2c_per_msg"]) == (1, 70.0, 66.0)
    packed = cells["node-ws/deflate", "node-ws"]["samples"][0]["extra"]["wire"]
    assert packed["c2s_per_msg"] < 70 and packed["s2c_per_msg"] < 66
    report = wsbench("report", str(next(tmp_path.glob("run-*.json"))), "--format", "md", "-o", str(tmp_path / "r"))
    assert report.returncode == 0, report.stderr
    costs = (tmp_path / "r" / "results.md").read_text().split("## What compression costs", 1)[1]
    assert "| smoke_text | Node 20 + ws | Node 20 + ws | permessage-deflate [deflate] | 70.0 → " in costs


def test_the_native_clients_k6_and_lws_with_deflate_on(tmp_path: Path) -> None:
    """The QuickJS client and wsbench-loadgen compress in their own framing (wsproto's room),
    k6 when asked (Params.compression), lws through lws-echo-deflate; the deflate switch's
    ablation asks to offer and offers nothing. Measured on the server's sockets: a 64-byte
    text is 70 bytes from a client uncompressed."""
    run = wsbench("run", "--deflate", "on", "-w", "smoke_text", "-w", "smoke_text_nt", "-s", "lws", "-s", "node-ws",
                  "-c", "quickjs", "-c", "loadgen", "-c", "k6", "-c", "quickjs-no-deflate", "-n", "1",
                  "--min-seconds", "0", "--conformance", "off", "--out", str(tmp_path), "--quiet")
    assert run.returncode == 0, run.stderr
    data = load_run(tmp_path)
    cells = {(c["server"], c["client"]): c["samples"][0] for c in data["cells"] if c["workload"] == "smoke_text"}
    assert len(cells) == 8 and all(s["error"] is None for s in cells.values())
    for server in ("lws/deflate", "node-ws/deflate"):
        for client in ("quickjs", "loadgen"):
            extra = cells[server, client]["extra"]
            assert extra["extensions"] == "permessage-deflate"
            assert extra["server_deflate"]["offered"] == "permessage-deflate; client_max_window_bits"
            assert extra["wire"]["c2s_per_msg"] < 70 and extra["wire"]["s2c_per_msg"] < 66
        k6 = cells[server, "k6"]["extra"]["server_deflate"]
        assert k6["offered"] == "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        assert k6["negotiated"] == 1
        off = cells[server, "quickjs-no-deflate"]["extra"]
        assert off["server_deflate"]["offered"] == "none" and off["wire"]["c2s_per_msg"] == 70.0
    assert data["servers"]["lws/deflate"]["deflate"]["command"] == ["build/bin/lws-echo-deflate"]
    assert sum("[no deflate]" in line for line in run.stdout.splitlines() if line.startswith("| ")) == 4
    # offered without context takeover (smoke_text_nt): each client asks for none both ways, and
    # both servers agree; 64 bytes compressed alone (the dynamic Huffman tables each time) take
    # more on the wire than with the window of the messages before
    nt = {(c["server"], c["client"]): c["samples"][0] for c in data["cells"] if c["workload"] == "smoke_text_nt"}
    assert len(nt) == 8 and all(s["error"] is None for s in nt.values())
    for server in ("lws/deflate", "node-ws/deflate"):
        for client in ("quickjs", "loadgen", "k6"):
            told = nt[server, client]["extra"]["server_deflate"]
            assert "server_no_context_takeover; client_no_context_takeover" in told["offered"]
            assert told["negotiated"] == 1
        for client in ("quickjs", "loadgen"):
            assert nt[server, client]["extra"]["extensions"] == \
                "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
            assert nt[server, client]["extra"]["wire"]["c2s_per_msg"] > cells[server, client]["extra"]["wire"]["c2s_per_msg"]
        assert nt[server, "quickjs-no-deflate"]["extra"]["server_deflate"]["offered"] == "none"
    assert data["clients"]["loadgen"]["deflate"]["no_takeover"]["args"] == [
        "--deflate-server-no-context-takeover", "--deflate-client-no-context-takeover"]
    report = wsbench("report", str(next(tmp_path.glob("run-*.json"))), "--format", "md", "-o", str(tmp_path / "r"))
    assert report.returncode == 0, report.stderr
    saves = (tmp_path / "r" / "results.md").read_text().split("## What context takeover saves", 1)[1].split("\n## ")[0]
    rows = [line for line in saves.splitlines() if line.startswith("| smoke_text |")]
    assert len(rows) == 8  # the four compressing clients, two servers (quickjs-no-deflate's cells compress nothing)
    assert all("server_no_context_takeover; client_no_context_takeover [deflate] |" in r for r in rows if "QuickJS +" in r)


def test_a_workload_without_context_takeover_is_n_a_for_clients_that_cannot_offer_it() -> None:
    nt = load_workloads().workloads["smoke_text_nt"]
    lws = with_deflate(CATALOG.servers["lws"])
    assert nt.no_context_takeover and nt.to_json()["no_context_takeover"] is True
    for name in ("bun", "node22"):
        why = not_applicable(lws, CATALOG.clients[name], nt)
        assert why and why.startswith(f"client {name} cannot offer permessage-deflate without context takeover")
        assert not_applicable(lws, CATALOG.clients[name]) is None  # as the runtimes ship it
    for name in ("quickjs", "loadgen", "node-ws", "k6"):
        assert not_applicable(lws, CATALOG.clients[name], nt) is None
    quickjs = with_deflate(CATALOG.clients["quickjs"], nt)
    assert quickjs.env["QJSWS_DEFLATE_NO_TAKEOVER"] == "1"
    assert "QJSWS_DEFLATE_NO_TAKEOVER" not in with_deflate(CATALOG.clients["quickjs"]).env
    assert with_deflate(CATALOG.clients["loadgen"], nt).command[-2:] == (
        "--deflate-server-no-context-takeover", "--deflate-client-no-context-takeover")
    assert not_applicable(CATALOG.servers["lws"], CATALOG.clients["bun"], nt) is None  # deflate off


def test_ws_compresses_a_copy_of_what_it_is_sent(tmp_path: Path) -> None:
    """ws with permessage-deflate reads a binary message's bytes on libuv's thread pool after
    send() returned; the workload stamps one buffer per message (deflate_counting_4k), so
    without the adapter's copy an echo carried a later message's number."""
    run = wsbench("run", "--deflate", "on", "-w", "deflate_counting_4k", "-s", "node-ws", "-c", "node-ws",
                  "-n", "1", "--min-seconds", "0", "--conformance", "off", "--out", str(tmp_path), "--quiet")
    assert run.returncode == 0, run.stderr
    [cell] = load_run(tmp_path)["cells"]
    [sample] = cell["samples"]
    assert sample["error"] is None and sample["extra"]["checked"] == sample["messages"] == 1000
    assert sample["extra"]["wire"]["c2s_per_msg"] < 100  # compressed: 4 KiB of i & 255
