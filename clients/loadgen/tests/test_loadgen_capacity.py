"""wsbench-loadgen's capacity kinds (clients/loadgen/README.md): idle (connections held,
pinged, the WSBENCH-MARK line, the alive check) and fanout (/broadcast, every delivery
checked), and the limits met while opening as one line, never a crash."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from held import HOLD, answer, held

from testkit.background import Background
from testkit.wss import Server

ROOT = Path(__file__).resolve().parents[3]
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
SERVER = ROOT / "build/bin/lws-echo"
DEFLATING = ROOT / "build/bin/lws-echo-deflate"  # lws-echo on the libwebsockets build with permessage-deflate
FIXTURE = ROOT / "harness/tests/fixtures/capacity_server.py"

pytestmark = pytest.mark.skipif(not (LOADGEN.exists() and SERVER.exists()),
                                reason="build/bin/wsbench-loadgen or lws-echo not built (make setup)")


def nofile(n: int):  # type: ignore[no-untyped-def]
    """preexec_fn: this many descriptors, soft and hard, for the child alone."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


@pytest.fixture(scope="module")
def lws() -> Iterator[int]:
    with Server([str(SERVER), "--port", "0"]) as srv:
        yield srv.port


def fixture(*args: str) -> Server:
    return Server([sys.executable, str(FIXTURE), "--port", "0", *args])


def loadgen(*args: str, prefix: list[str] | None = None, timeout: float = 120,
            preexec=None) -> tuple[int, list[str], dict[str, Any]]:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k != "WSBENCH_HOLD"}
    proc = subprocess.run([*(prefix or []), str(LOADGEN), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL, preexec_fn=preexec)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines, json.loads(lines[-1]) if lines else {}


def test_idle_holds_every_connection_with_pings_and_each_echoes(lws: int) -> None:
    code, lines, res = loadgen("--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "200",
                               "--concurrency", "50", "--hold-ms", "600", "--ping-ms", "200")
    assert code == 0, res
    assert lines[:2] == ["WSBENCH-START", "WSBENCH-MARK held"]
    assert res["connections"] == res["alive"] == res["messages"] == 200 and res["lost"] == 0
    assert res["pings"] == res["pongs"] and 550 <= res["pings"] <= 600  # 3 per connection
    assert 0.6 <= res["hold_s"] < 3 and res["seconds"] == pytest.approx(res["hold_s"], abs=1e-5)
    assert res["open_s"] > 0 and res["opens_per_s"] == pytest.approx(200 / res["open_s"], rel=1e-3)
    assert "limit" not in res


def test_idle_waits_at_the_mark_for_a_line_and_fails_at_end_of_file(lws: int) -> None:
    args = ["--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "20", "--hold-ms", "50"]
    with held(args) as proc:
        answer(proc, "WSBENCH-START", "GO\n")
        answer(proc, "WSBENCH-MARK held", "readings taken\n")  # any line
        assert json.loads(proc.stdout.readline())["alive"] == 20
    ended = subprocess.run([str(LOADGEN), *args], input="GO\n", capture_output=True, text=True, env=HOLD,
                           timeout=30)
    assert ended.returncode == 1
    assert json.loads(ended.stdout.splitlines()[-1]) == {
        "error": "mark held: stdin closed before the harness's line"}


def test_idle_max_stops_at_its_own_descriptor_limit_in_one_line(lws: int) -> None:
    code, _, res = loadgen("--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "max",
                           "--hold-ms", "100", preexec=nofile(150))
    assert code == 0, res
    assert re.fullmatch(r"socket\(\): Too many open files \(RLIMIT_NOFILE 150\) at connection \d+",
                        res["limit"]), res["limit"]
    assert 140 <= res["connections"] == res["alive"] < 150


def test_idle_max_against_a_server_out_of_descriptors_stops_in_one_line() -> None:
    """The fixture's RLIMIT_NOFILE is 200: past it no handshake completes (asyncio cannot
    accept); the opening stops after --stall-ms, and the run goes on with what opened."""
    with fixture("--behave", "fdlimited", "--nofile", "200") as srv:
        code, _, res = loadgen("--kind", "idle", "--url", f"ws://127.0.0.1:{srv.port}/", "--connections", "max",
                               "--hold-ms", "100", "--stall-ms", "1000")
    assert code == 0, res
    assert re.fullmatch(r"no handshake completed for 1\.0 s with \d+ in flight after \d+ opened: "
                        r"the server accepts no more connections", res["limit"]), res["limit"]
    assert 150 < res["connections"] == res["alive"] < 200


def test_lws_at_its_descriptor_limit_closes_new_connections_and_that_is_the_limit() -> None:
    with Background([SERVER, "--port", "0"], preexec=nofile(120)) as server:
        code, _, res = loadgen("--kind", "idle", "--url", f"ws://127.0.0.1:{server.port}/", "--connections", "500",
                               "--hold-ms", "100")
    err = server.stderr()
    assert code == 0, res
    # lws closes it with the request unread: the client sees a reset (or a FIN)
    match = re.fullmatch(r"the server closed connection (\d+) during the handshake"
                         r"( \(recv: Connection reset by peer\))?", res["limit"])
    assert match, res["limit"]
    assert res["connections"] == res["alive"] and 80 < res["connections"] < 120 and 80 < int(match.group(1)) < 200
    assert "lws-echo: closing new connections: descriptor" in err and "RLIMIT_NOFILE 120" in err


def test_idle_from_several_source_addresses(lws: int) -> None:
    code, _, res = loadgen("--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "100",
                           "--hold-ms", "50", "--sources", "4")
    assert code == 0 and res["alive"] == 100 and res["sources"] == 4, res
    code, _, res = loadgen("--kind", "idle", "--url", "ws://0.0.0.0:9/", "--connections", "1",
                           "--hold-ms", "50", "--sources", "2")
    assert code == 1 and res["error"] == "--sources needs a loopback server address (127.x.y.z), not 0.0.0.0"


NETNS_PORTS = """
set -e
ip link set lo up
sysctl -qw net.ipv4.ip_local_port_range="40000 40049"
"$1" --port 0 > "$3" 2>/dev/null &
pid=$!
trap 'kill $pid; wait $pid' EXIT
for i in $(seq 100); do grep -q READY "$3" && break; sleep 0.05; done
port=$(sed -n 's/.*port=//p' "$3")
for k in 1 3; do
    "$2" --kind idle --url ws://127.0.0.1:$port/ --connections max --hold-ms 50 --sources $k | tail -n 1
done
"""


@pytest.mark.skipif(subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0,
                    reason="cannot make a network namespace here (unshare -n)")
def test_idle_max_stops_at_the_ephemeral_ports_of_one_source_address(tmp_path: Path) -> None:
    """In a network namespace of its own with 50 ephemeral ports (one of them the server's):
    49 connections from 127.0.0.1, 147 from three source addresses."""
    proc = subprocess.run(["unshare", "-n", "bash", "-c", NETNS_PORTS, "netns", str(SERVER), str(LOADGEN),
                           str(tmp_path / "server.out")], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    one, three = (json.loads(line) for line in proc.stdout.splitlines())
    assert one["connections"] == one["alive"] == 49 and three["connections"] == three["alive"] == 147
    assert re.fullmatch(r"connect\(\): Cannot assign requested address \(ephemeral ports 40000 40049 of "
                        r"127\.0\.0\.1 → 127\.0\.0\.1:\d+ exhausted; use --sources\) at connection 50",
                        one["limit"]), one["limit"]
    assert re.fullmatch(r"connect\(\): Cannot assign requested address \(ephemeral ports 40000 40049 of "
                        r"127\.0\.0\.1 \.\.\. 127\.0\.0\.3 → 127\.0\.0\.1:\d+ exhausted; use more "
                        r"--sources\) at connection 148", three["limit"]), three["limit"]


def test_fanout_delivers_every_message_to_every_subscriber(lws: int) -> None:
    code, lines, res = loadgen("--kind", "fanout", "--url", f"ws://127.0.0.1:{lws}/broadcast",
                               "--connections", "50", "--rate", "1000", "--count", "200", "--size", "64")
    assert code == 0, res
    assert lines[0] == "WSBENCH-START"
    assert res["delivered"] == res["expected"] == res["messages"] == 10000 and res["lost"] == 0
    assert res["sent"] == 200 and res["subscribers"] == 50 and res["bytes"] == 640000
    lat = res["latency_us"]
    assert lat["count"] == 10000
    assert 0 < lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert res["delivered_per_s"] == pytest.approx(10000 / res["seconds"], rel=1e-3)
    assert res["seconds"] >= 0.199  # 200 messages at 1,000/s


def test_fanout_against_a_dropping_server_fails_naming_the_message_and_the_subscriber() -> None:
    with fixture("--behave", "dropping", "--drop-message", "123", "--drop-subscriber", "17") as srv:
        code, lines, res = loadgen("--kind", "fanout", "--url", f"ws://127.0.0.1:{srv.port}/broadcast",
                                   "--connections", "50", "--rate", "1000", "--count", "200",
                                   "--concurrency", "1")  # subscribers join in order: the fixture's numbers
    assert code == 1 and lines[0] == "WSBENCH-START"
    assert res["error"] == ("message 123 never reached subscriber 17 (it received message 124 next); "
                            "1 of 10,000 deliveries lost")
    assert res["lost"] == 1 and res["delivered"] == 9999 and res["expected"] == 10000


def test_fanout_subscribers_in_a_second_process(lws: int) -> None:
    """--publish off: subscribers only, timed by the due times the messages carry."""
    url = f"ws://127.0.0.1:{lws}/broadcast"
    common = ["--kind", "fanout", "--url", url, "--connections", "10", "--rate", "500", "--count", "100"]
    with held([*common, "--publish", "off"]) as subs:
        answer(subs, "WSBENCH-START", "GO\n")  # its 10 are subscribed by then
        code, _, pub = loadgen(*common)
        res = json.loads(subs.stdout.readline())
    assert code == 0 and pub["delivered"] == 1000 and pub["sent"] == 100, pub
    assert res["delivered"] == res["expected"] == 1000 and res["sent"] == 0 and res["latency_us"]["count"] == 1000


@pytest.mark.parametrize("args, error", [
    (["--url", "ws://127.0.0.1:9/", "--connections", "2", "--rate", "10", "--count", "1"],
     "--kind fanout needs a /broadcast URL (servers/README.md), not /"),
    (["--url", "ws://127.0.0.1:9/broadcast", "--connections", "2", "--rate", "10", "--count", "1",
      "--size", "8"], "--size must be an integer >= 16, got 8"),
])
def test_fanout_refuses_what_it_cannot_measure(args: list[str], error: str) -> None:
    code, _, res = loadgen("--kind", "fanout", *args)
    assert code == 1 and res == {"error": error}


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")
def test_capacity_kinds_clean_under_valgrind(lws: int, tmp_path: Path) -> None:
    """idle (also with --warm over permessage-deflate: lws-echo-deflate agrees it) and fanout."""
    if not DEFLATING.exists():
        pytest.skip("build/bin/lws-echo-deflate not built (make setup)")
    with Server([str(DEFLATING), "--port", "0", "--deflate"]) as deflating:
        for args in (["--kind", "idle", "--url", f"ws://127.0.0.1:{lws}/", "--connections", "50",
                      "--hold-ms", "300", "--ping-ms", "100"],
                     ["--kind", "idle", "--url", f"ws://127.0.0.1:{deflating.port}/", "--connections", "50",
                      "--hold-ms", "300", "--ping-ms", "100", "--warm", "--deflate", "on"],
                     ["--kind", "fanout", "--url", f"ws://127.0.0.1:{lws}/broadcast", "--connections", "20",
                      "--rate", "500", "--count", "100", "--size", "100"]):
            log = tmp_path / "vg.log"
            code, _, res = loadgen(*args, timeout=300, prefix=["valgrind", "--leak-check=full", "--error-exitcode=9",
                                                               f"--log-file={log}"])
            text = log.read_text()
            assert code == 0, (res, text[-3000:])
            assert res.get("warmed", 50) == 50 and ("--deflate" not in args or "extensions" in res), res
            assert "ERROR SUMMARY: 0 errors" in text
            assert re.search(r"definitely lost: 0 bytes|All heap blocks were freed", text), text[-3000:]
