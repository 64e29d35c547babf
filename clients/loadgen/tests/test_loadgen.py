"""wsbench-loadgen against the native echo server: every kind, the contract, no leaks.

Run with the repository's venv: .venv/bin/python -m pytest clients/loadgen/tests
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from held import HOLD, held

from testkit.background import Background

ROOT = Path(__file__).resolve().parents[3]
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
SERVER = ROOT / "build/bin/lws-echo"
UTF8_16M_LENGTH = 16155838  # UTF-16 length of lws-echo's 16 MiB 'utf8' message (servers/lws/README.md)

pytestmark = pytest.mark.skipif(not (LOADGEN.exists() and SERVER.exists()),
                                reason="build/bin/wsbench-loadgen or lws-echo not built (make setup)")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with Background([SERVER, "--port", "0"]) as server:
        yield f"ws://127.0.0.1:{server.port}/"


def loadgen(*args: str, prefix: list[str] | None = None, timeout: float = 120) -> tuple[int, list[str], dict[str, Any]]:
    proc = subprocess.run([*(prefix or []), str(LOADGEN), *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, lines, json.loads(lines[-1]) if lines else {}


def test_echo_burst_counts_every_message(url: str) -> None:
    code, lines, res = loadgen("--url", url, "--type", "text", "--size", "11", "--count", "20000")
    assert code == 0 and lines[0] == "WSBENCH-START"
    assert res["messages"] == 20000 and res["bytes"] == 220000 and res["errors"] == 0
    assert res["msgs_per_s"] == pytest.approx(res["messages"] / res["seconds"], rel=1e-6)


@pytest.mark.parametrize("extra", [["--text", "mixed", "--type", "text", "--size", "1000"],
                                   ["--type", "binary", "--size", "70000", "--mode", "window", "--window", "8"],
                                   ["--type", "binary", "--size", "64", "--connections", "200"]])
def test_echo_variants(url: str, extra: list[str]) -> None:
    code, _, res = loadgen("--url", url, "--count", "2000", *extra)
    assert code == 0, res
    assert res["messages"] == 2000 and res["errors"] == 0


def test_fragmented_echoes_are_reassembled(url: str) -> None:
    code, _, res = loadgen("--url", url + "?fragments=4", "--type", "binary", "--size", "4096",
                           "--count", "1000")
    assert code == 0 and res["messages"] == 1000 and res["errors"] == 0


def test_latency_histogram(url: str) -> None:
    code, _, res = loadgen("--kind", "latency", "--url", url, "--type", "binary", "--size", "32",
                           "--count", "2000")
    assert code == 0, res
    lat = res["latency_us"]
    assert lat["count"] == 2000
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    # the histogram itself rides along (sparse), and the harness, which merges such histograms,
    # takes exactly the percentiles the load generator took from it
    from wsbench.histogram import Histogram
    hist = Histogram.from_json(res["latency_hist"])
    assert (hist.unit_ns, hist.sub_bits, hist.integer_values, hist.count) == (1, 7, True, 2000)
    assert hist.summary() == lat


EMPTY_HISTOGRAM_DRIVER = r"""
#include <stdio.h>
#include "histogram.h"
int main(void)
{
	struct histogram h;
	char out[512];

	hist_init(&h);
	hist_format_us(&h, false, out, sizeof(out));
	printf("{\"n\": 0%s}\n", out);
	hist_format_us(&h, true, out, sizeof(out));
	printf("{\"n\": 0%s}\n", out);
	hist_record(&h, 1500);
	hist_record(&h, 2500);
	hist_format_us(&h, true, out, sizeof(out));
	printf("{\"n\": 2%s}\n", out);
	hist_free(&h);
	return 0;
}
"""


def test_an_empty_histogram_has_no_percentiles(tmp_path: Path) -> None:
    """Never a measured 0: every figure of an empty histogram is null, as the harness's
    (histogram.py) is; a filled one is unchanged."""
    src = ROOT / "clients" / "loadgen"
    (tmp_path / "h.c").write_text(EMPTY_HISTOGRAM_DRIVER)
    subprocess.run(["cc", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", f"-I{src}", str(tmp_path / "h.c"),
                    str(src / "histogram.c"), str(src / "util.c"), "-o", str(tmp_path / "h"), "-lm"], check=True)
    lines = subprocess.run([str(tmp_path / "h")], capture_output=True, text=True, check=True).stdout.splitlines()
    empty, empty95, filled = (json.loads(line)["latency_us"] for line in lines)
    assert empty == {"count": 0, "min": None, "mean": None, "p50": None, "p90": None, "p99": None, "p999": None,
                     "max": None}
    assert empty95 == {**empty, "p95": None} and list(empty95)[5] == "p95"
    assert filled["count"] == 2 and filled["min"] == 1.5 and filled["max"] == 2.5 and filled["p95"] == 2.5
    from wsbench.histogram import Histogram
    assert Histogram(1, 7, True).summary() == empty


def test_openloop_keeps_its_rate(url: str) -> None:
    code, _, res = loadgen("--kind", "openloop", "--url", url, "--type", "binary", "--size", "32",
                           "--rate", "2000", "--duration-ms", "500")
    assert code == 0, res
    assert res["rate"] == 2000 and res["sent"] == pytest.approx(1000, abs=2)
    assert res["messages"] == res["sent"] and res["latency_us"]["count"] == res["sent"]
    from wsbench.histogram import Histogram
    assert Histogram.from_json(res["latency_hist"]).summary() == res["latency_us"]


def test_handshakes(url: str) -> None:
    code, _, res = loadgen("--kind", "handshake", "--url", url, "--count", "50")
    assert code == 0 and res["messages"] == 50 and res["handshakes_per_s"] > 0


def test_valid_16mib_text_is_delivered_and_invalid_is_rejected(url: str) -> None:
    code, _, res = loadgen("--kind", "request", "--url", url + "?serve=utf8&bytes=16777216",
                           "--count", "2", "--expect", "text", "--expect-length", str(UTF8_16M_LENGTH))
    assert code == 0 and res["errors"] == 0 and res["messages"] == 2 and res["delivery_ms"] > 0
    code, _, res = loadgen("--kind", "request", "--url", url + "?serve=badutf8&bytes=16777216",
                           "--count", "1", "--expect", "close", "--expect-length", "0")
    assert code == 0 and res["close_code"] == 1007


@pytest.mark.parametrize("args", [["--kind", "buffered", "--size", "10", "--count", "10", "--polls", "10"],
                                  ["--type", "binary", "--size", "10", "--count", "10", "--transfer"]])
def test_unsupported_is_exit_3_with_one_error_line(url: str, args: list[str]) -> None:
    code, lines, res = loadgen("--url", url, *args)
    assert code == 3 and len(lines) == 1 and res["error"].startswith("unsupported: ")


def test_min_ms_repeats_whole_rounds_and_every_echo_is_checked(url: str) -> None:
    code, _, res = loadgen("--url", url, "--type", "binary", "--size", "100000", "--count", "20",
                           "--min-ms", "300")
    assert code == 0, res
    assert res["seconds"] >= 0.3 and res["rounds"] > 1
    assert res["messages"] == res["checked"] == 20 * res["rounds"]
    assert res["compared"] >= res["rounds"]  # at least the last echo of every round


def test_the_start_barrier_holds_the_clock_until_go(url: str) -> None:
    args = ["--url", url, "--type", "text", "--size", "11", "--count", "1000"]
    with held(args) as proc:
        assert proc.stdout.readline().strip() == "WSBENCH-START"
        time.sleep(0.5)  # the readings take time: the clock must not be running meanwhile
        go = time.monotonic()
        proc.stdin.write("GO\n")
        proc.stdin.flush()
        res = json.loads(proc.stdout.readline())
        # the measured phase lies between GO and the result line (had the clock run from
        # WSBENCH-START, it would also hold the 0.5 s before GO); no bound on its speed
        assert res["messages"] == 1000 and 0 < res["seconds"] <= time.monotonic() - go
        assert proc.poll() is None  # held until stdin ends
    closed = subprocess.run([str(LOADGEN), *args], input="", capture_output=True, text=True, env=HOLD, timeout=30)
    assert closed.returncode == 1
    assert json.loads(closed.stdout.splitlines()[-1])["error"] == "start barrier: stdin closed before GO"


def test_refused_connection_is_an_error_line() -> None:
    code, lines, res = loadgen("--url", "ws://127.0.0.1:1/", "--type", "text", "--size", "1", "--count", "1")
    assert code == 1 and "error" in res


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")
def test_no_leaks_under_valgrind(url: str, tmp_path: Path) -> None:
    for args in (["--type", "text", "--size", "100", "--count", "3000", "--connections", "4"],
                 ["--type", "binary", "--size", "70000", "--count", "40", "--mode", "window", "--window", "4"],
                 ["--kind", "openloop", "--type", "text", "--size", "32", "--rate", "2000", "--duration-ms", "200"],
                 ["--kind", "handshake", "--count", "50"]):
        log = tmp_path / "vg.log"
        code, _, res = loadgen("--url", url, *args, timeout=300,
                               prefix=["valgrind", "--leak-check=full", "--error-exitcode=9",
                                       f"--log-file={log}"])
        text = log.read_text()
        assert code == 0, text[-3000:]
        assert "ERROR SUMMARY: 0 errors" in text
        assert re.search(r"definitely lost: 0 bytes|All heap blocks were freed", text), text[-3000:]


# --- the observe kind, against the conformance peer (harness/wsbench/conformance)

@pytest.fixture(scope="module")
def peer() -> Iterator[Any]:
    from wsbench.conformance.peer import Peer

    with Peer() as p:
        yield p


def slow_ping() -> Any:
    """A ping, a 200 ms pause, then the peer's close (longer than a 100 ms --timeout-ms)."""
    from wsbench.conformance.cases import BY_ID, Pause, closing

    case = BY_ID["2-ping-125"]
    ping = case.steps()[0]
    return dataclasses.replace(case, id="slow-ping", build=lambda: (ping, Pause(0.2), closing(wait=False)))


def observe(peer: Any, case_id: str, timeout_ms: int = 5000, prefix: list[str] | None = None) -> tuple[int, dict[str, Any], Any]:
    """Run --kind observe on one conformance case (or "slow-ping"): exit code, result, what the peer saw."""
    from wsbench.conformance.cases import BY_ID

    case = slow_ping() if case_id == "slow-ping" else BY_ID[case_id]
    token = f"loadgen-test-{case_id}-{time.monotonic_ns()}"
    pending = peer.expect(token, case)
    code, _, res = loadgen("--kind", "observe", "--url", peer.url(case, token), "--timeout-ms", str(timeout_ms),
                           prefix=prefix, timeout=300)
    return code, res, pending.wait(10)


def types(res: dict[str, Any]) -> list[str]:
    return [e["type"] for e in res["events"]]


def test_observe_reports_messages_as_digests(peer: Any) -> None:
    from wsbench.conformance.cases import BY_ID
    from wsbench.conformance.judge import digest

    code, res, _ = observe(peer, "6-valid-one-to-four")
    assert code == 0 and res["timed_out"] is False, res
    assert types(res) == ["open", "message", "close"], res
    message = {k: res["events"][1][k] for k in ("kind", "length", "head", "tail", "sample")}
    assert message == digest(BY_ID["6-valid-one-to-four"].expect.messages[0])
    assert res["events"][2] == {**res["events"][2], "code": 1000, "wasClean": True}


@pytest.mark.parametrize("case_id, code", [("6-split-invalid", 1007), ("7-close-reason-invalid-ff", 1007),
                                            ("1-masked-text", 1002), ("7-close-code-1015", 1002)])
def test_observe_fails_the_connection_with_the_code(peer: Any, case_id: str, code: int) -> None:
    """Protocol errors no longer end the run: an error event, our close frame, close."""
    rc, res, obs = observe(peer, case_id)
    assert rc == 0, res
    assert types(res) == ["open", "error", "close"], res
    assert res["events"][2]["code"] == code and res["events"][2]["wasClean"] is False
    assert [f.close_code() for _, f in obs.closes()] == [code]


def test_observe_a_bad_upgrade_or_no_server_is_an_event(peer: Any) -> None:
    rc, res, obs = observe(peer, "handshake-accept-wrong")
    assert rc == 0 and types(res) == ["error", "close"], res
    assert "Sec-WebSocket-Accept" in res["events"][0]["message"] and obs.frames == []
    rc, _, res = loadgen("--kind", "observe", "--url", "ws://127.0.0.1:1/", "--timeout-ms", "2000")
    assert rc == 0 and types(res) == ["error", "close"] and res["events"][1]["code"] == 1006, res


def test_observe_reports_what_it_saw_at_its_timeout(peer: Any) -> None:
    rc, res, obs = observe(peer, "slow-ping", timeout_ms=100)  # the peer pauses 200 ms before its close
    assert rc == 0 and res["timed_out"] is True and types(res) == ["open"], res
    assert [f.close_code() for _, f in obs.closes()] == [1000]  # then it closes cleanly


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")
@pytest.mark.parametrize("case_id, timeout_ms", [("9-text-16mib-utf8-fragments-1kib", 60000), ("5-fragments-1000", 5000),
                                                 ("6-split-invalid", 5000), ("6-valid-one-to-four", 5000),  # decoded to UTF-16: 20 bytes, 13 units
                                                 ("7-close-reason-invalid-ff", 5000), ("1-length-top-bit", 5000),
                                                 ("handshake-accept-wrong", 5000), ("slow-ping", 100)])
def test_observe_no_leaks_under_valgrind(peer: Any, tmp_path: Path, case_id: str, timeout_ms: int) -> None:
    log = tmp_path / "vg.log"
    code, res, _ = observe(peer, case_id, timeout_ms=timeout_ms,
                           prefix=["valgrind", "--leak-check=full", "--error-exitcode=9", f"--log-file={log}"])
    text = log.read_text()
    assert code == 0 and "events" in res, text[-3000:]
    assert "ERROR SUMMARY: 0 errors" in text
    assert re.search(r"definitely lost: 0 bytes|All heap blocks were freed", text), text[-3000:]
