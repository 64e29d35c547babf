"""wsbench-loadgen over wss:// (clients/loadgen/README.md, "TLS"): every kind against
lws-echo in TLS mode, full and resumed handshakes, certificate failures, and a peer that
ends or breaks the TLS session under it (testkit.memory_tls.TlsPeer). Certificates: build/tls."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from wsbench.conformance.frames import TEXT, server_frame

from testkit.memory_tls import BlockingTls, TlsPeer
from testkit.wss import CA, ROOT, TLS_DIR, Server, server_tls_command

LOADGEN = ROOT / "build/bin/wsbench-loadgen"
UTF8_16M_LENGTH = 16155838  # servers/lws/README.md

pytestmark = pytest.mark.skipif(not (LOADGEN.exists() and (ROOT / "build/bin/lws-echo").exists()
                                     and CA.exists()),
                                reason="wsbench-loadgen, lws-echo or build/tls missing (make setup)")


@pytest.fixture(scope="module")
def lws() -> Iterator[Server]:
    with Server(server_tls_command("lws")) as server:
        yield server


def loadgen(url: str, *args: str, ca: Path | None = CA, prefix: list[str] | None = None,
            timeout: float = 60) -> tuple[int, dict[str, Any], float]:
    """Exit code, the last stdout line as JSON, and the wall time (for "no hang" checks)."""
    trust = ["--ca", str(ca)] if ca else []
    t0 = time.monotonic()
    proc = subprocess.run([*(prefix or []), str(LOADGEN), "--url", url, *trust, *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, json.loads(lines[-1]) if lines else {}, time.monotonic() - t0


def observe(url: str, timeout_ms: int = 3000, **kw: Any) -> list[dict[str, Any]]:
    code, res, _ = loadgen(url, "--kind", "observe", "--timeout-ms", str(timeout_ms), **kw)
    assert code == 0 and res["timed_out"] is False, res
    return list(res["events"])


def assert_tls_field(tls: dict[str, Any], handshakes: int = 1) -> None:
    assert tls["version"] in ("TLSv1.3", "TLSv1.2"), tls
    assert re.fullmatch(r"TLS_[A-Z0-9_]+", tls["cipher"]), tls
    assert tls["group"] in ("x25519", "secp256r1", "secp384r1", "x448"), tls
    assert tls["library"].startswith("OpenSSL 3."), tls
    assert tls["handshakes"] == handshakes and tls["resumed"] == 0, tls


@pytest.mark.parametrize("args", [
    ["--type", "text", "--size", "11", "--count", "20000"],
    ["--type", "binary", "--size", "70000", "--count", "200", "--mode", "window", "--window", "8"],
    ["--type", "binary", "--size", "16777216", "--count", "2", "--warmup", "0"],
    ["--type", "text", "--text", "mixed", "--size", "1000", "--count", "2000", "--connections", "20"],
    ["--kind", "latency", "--type", "binary", "--size", "32", "--count", "2000"],
    ["--kind", "openloop", "--type", "binary", "--size", "32", "--rate", "2000", "--duration-ms", "300"],
], ids=["text_11", "bin_70k_window", "bin_16m", "mixed_20_conns", "latency", "openloop"])
def test_every_echo_kind_over_wss(lws: Server, args: list[str]) -> None:
    code, res, _ = loadgen(lws.url(), *args)
    assert code == 0, res
    assert res["errors"] == 0 and res["messages"] > 0
    conns = int(args[args.index("--connections") + 1]) if "--connections" in args else 1
    assert_tls_field(res["tls"], handshakes=conns)



def test_a_round_trip_over_wss_changes_no_epoll_interest(lws: Server, tmp_path: Path) -> None:
    """One message in flight: the reply is queued while the echo is read, and the flush
    that follows writes it; writability was set for it there and cleared by the flush, two
    epoll_ctl per round trip (conn.c, tls_on_readable). Now none after the connection's
    set-up. (What a round trip still makes: clients/loadgen/README.md, "TLS".)"""
    if not shutil.which("strace"):
        pytest.skip("strace not installed")
    n = 300
    counts = tmp_path / "strace.txt"
    code, res, _ = loadgen(lws.url(), "--kind", "latency", "--type", "binary", "--size", "32", "--count", str(n),
                           "--warmup", "0", prefix=["strace", "-f", "-qq", "-c", "-e", "trace=epoll_ctl",
                                                    "-o", str(counts)])
    assert code == 0 and res["messages"] == n, res
    calls = [int(l.split()[3]) for l in counts.read_text().splitlines() if l.rstrip().endswith(" epoll_ctl")]
    assert len(calls) == 1 and calls[0] <= 10, counts.read_text()

def test_fragments_and_prepared_messages_over_wss(lws: Server) -> None:
    code, res, _ = loadgen(lws.url("/?fragments=4"), "--type", "binary", "--size", "4096", "--count", "2000")
    assert code == 0 and res["messages"] == 2000, res
    code, res, _ = loadgen(lws.url("/?serve=utf8&bytes=16777216"), "--kind", "request", "--count", "2",
                           "--expect", "text", "--expect-length", str(UTF8_16M_LENGTH))
    assert code == 0 and res["errors"] == 0 and res["messages"] == 2, res
    code, res, _ = loadgen(lws.url("/?serve=badutf8&bytes=16777216"), "--kind", "request", "--count", "1",
                           "--expect", "close")
    assert code == 0 and res["close_code"] == 1007, res


def test_a_ws_url_keeps_its_result_line(lws: Server) -> None:
    with Server(["build/bin/lws-echo", "--port", "0"]) as plain:
        code, res, _ = loadgen(f"ws://127.0.0.1:{plain.port}/", "--type", "text", "--size", "11",
                               "--count", "100", ca=None)
    assert code == 0 and "tls" not in res, res


def test_full_handshakes_resume_nothing(lws: Server) -> None:
    before = len(lws.tls_lines(0))
    code, res, _ = loadgen(lws.url(), "--kind", "handshake", "--count", "30", "--warmup", "0")
    assert code == 0 and res["messages"] == 30 and res["errors"] == 0, res
    assert res["tls"]["handshakes"] == 30 and res["tls"]["resumed"] == 0, res
    lines = lws.tls_lines(before + 30)[before:]
    assert len(lines) == 30 and all(m.group(4) == "no" for m in lines)


def test_resumed_handshakes_resume_every_session_after_the_first(lws: Server) -> None:
    before = len(lws.tls_lines(0))
    code, res, _ = loadgen(lws.url(), "--kind", "handshake", "--count", "30", "--warmup", "0", "--tls-resume")
    assert code == 0 and res["messages"] == 30 and res["errors"] == 0, res
    assert res["tls"]["handshakes"] == 30 and res["tls"]["resumed"] == 29, res
    lines = lws.tls_lines(before + 30)[before:]
    assert [m.group(4) for m in lines].count("yes") == 29  # the server agrees


def test_an_https_url_is_wss(lws: Server) -> None:
    """(README, "--url": it was "--url must start with ws://")"""
    code, res, _ = loadgen("https" + lws.url()[len("wss"):], "--type", "text", "--size", "11", "--count", "100")
    assert code == 0 and res["messages"] == 100, res
    assert_tls_field(res["tls"])


def test_localhost_is_checked_as_a_name(lws: Server) -> None:
    code, res, _ = loadgen(f"wss://localhost:{lws.port}/", "--type", "text", "--size", "11", "--count", "100")
    assert code == 0, res


@pytest.mark.parametrize("cert, reason", [("untrusted", "unable to get local issuer certificate"),
                                          ("wrong-host", "IP address mismatch"),
                                          ("expired", "certificate has expired")])
def test_a_refused_certificate_is_an_error_and_never_opens(cert: str, reason: str) -> None:
    with TlsPeer(TLS_DIR, lambda s: None, cert=cert) as peer:
        code, res, _ = loadgen(peer.url, "--type", "text", "--size", "11", "--count", "10")
        assert code == 1 and res["error"] == f"connect: TLS: certificate verify failed: {reason} (phase connect)"
        events = observe(peer.url)
    assert [e["type"] for e in events] == ["error", "close"], events
    assert "certificate verify failed" in events[0]["message"]
    assert events[1]["code"] == 1006 and events[1]["wasClean"] is False


def test_the_wrong_host_name_is_refused_for_a_name_too() -> None:
    with TlsPeer(TLS_DIR, lambda s: None, cert="wrong-host") as peer:
        code, res, _ = loadgen(f"wss://localhost:{peer.port}/", "--type", "text", "--size", "11", "--count", "1")
    assert code == 1 and "hostname mismatch" in res["error"], res


def test_a_ca_the_server_does_not_use_is_refused(lws: Server) -> None:
    code, res, _ = loadgen(lws.url(), "--type", "text", "--size", "11", "--count", "1",
                           ca=TLS_DIR / "untrusted-ca.pem")
    assert code == 1 and "unable to get local issuer certificate" in res["error"], res


def close_notify(s: BlockingTls, first: bytes = b"") -> None:
    if first:
        s.sendall(first)
    s.close_notify()
    s.linger()  # TCP stays open: loadgen must act on the close_notify itself


def test_close_notify_without_a_websocket_close_is_a_lost_connection() -> None:
    with TlsPeer(TLS_DIR, lambda s: close_notify(s, server_frame(TEXT, b"before"))) as peer:
        events = observe(peer.url, timeout_ms=10000)
    assert [e["type"] for e in events] == ["open", "message", "error", "close"], events
    assert events[2]["message"] == "the server ended the connection without a close frame (TLS close_notify)"
    assert events[3]["code"] == 1006 and events[3]["wasClean"] is False
    assert events[3]["t"] < 2000  # not the 10 s timeout
    with TlsPeer(TLS_DIR, close_notify) as peer:
        code, res, seconds = loadgen(peer.url, "--type", "text", "--size", "11", "--count", "10",
                                     "--timeout-ms", "10000")
    assert code == 1 and re.fullmatch(r"connection closed in phase (connect|warmup) \(code 1006\)", res["error"]), res
    assert seconds < 5


def half_a_message_then(s: BlockingTls, end: str) -> None:
    s.sendall(server_frame(TEXT, b"x" * 1000)[:500])  # half a WebSocket message, in a record of its own
    if end == "close_notify":
        s.close_notify()
        s.linger()
    elif end == "reset":
        records = s.encrypt(server_frame(TEXT, b"y" * 1000))
        s.sock.sendall(records[: len(records) // 2])  # half a TLS record
        time.sleep(0.3)  # read by now: a reset drops whatever the receiver has not read yet
        s.reset()
    else:  # a bare fatal alert record (internal_error): not encrypted, as TLS 1.3 requires
        s.sock.sendall(bytes([21, 3, 3, 0, 2, 2, 80]))
        s.linger()


@pytest.mark.parametrize("end, error", [("close_notify", "the server ended the connection without a close frame"),
                                        ("reset", "recv: TLS: Connection reset by peer"),
                                        ("alert", "recv: TLS: ")])
def test_the_session_ending_in_the_middle_of_a_message(end: str, error: str) -> None:
    with TlsPeer(TLS_DIR, lambda s: half_a_message_then(s, end)) as peer:
        events = observe(peer.url, timeout_ms=10000)
    kinds = [e["type"] for e in events]
    assert kinds == ["open", "error", "close"], events
    assert events[1]["message"].startswith(error), events
    assert events[-1]["code"] == 1006 and events[-1]["wasClean"] is False and events[-1]["t"] < 2000


@pytest.mark.parametrize("args", [[], ["--ca", "/nonexistent/ca.pem"], ["--tls-resume"]])
def test_tls_options_are_checked(args: list[str]) -> None:
    url = "wss://127.0.0.1:1/" if args != ["--tls-resume"] else "ws://127.0.0.1:1/"
    code, res, _ = loadgen(url, "--type", "text", "--size", "1", "--count", "1", *args, ca=None)
    assert code == 1 and res["error"] in ("a wss:// URL needs --ca FILE (the CA to trust)",
                                          "--ca /nonexistent/ca.pem: cannot load it",
                                          "--ca and --tls-resume go with a wss:// URL"), res


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")
def test_tls_is_clean_under_valgrind(lws: Server, tmp_path: Path) -> None:
    runs = [(lws.url(), ["--type", "binary", "--size", "70000", "--count", "40", "--mode", "window",
                         "--window", "4", "--connections", "2"]),
            (lws.url(), ["--kind", "handshake", "--count", "5", "--tls-resume"])]
    with TlsPeer(TLS_DIR, lambda s: half_a_message_then(s, "reset")) as peer:
        runs.append((peer.url, ["--kind", "observe", "--timeout-ms", "5000"]))
        with TlsPeer(TLS_DIR, lambda s: None, cert="expired") as expired:
            runs.append((expired.url, ["--kind", "observe", "--timeout-ms", "5000"]))
            for i, (url, args) in enumerate(runs):
                log = tmp_path / f"vg{i}.log"
                code, res, _ = loadgen(url, *args, timeout=300,
                                       prefix=["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite",
                                               "--error-exitcode=9", f"--log-file={log}"])
                text = log.read_text()
                assert code == 0, (args, res, text[-3000:])
                assert "ERROR SUMMARY: 0 errors" in text, text[-3000:]
                assert re.search(r"definitely lost: 0 bytes|All heap blocks were freed", text), text[-3000:]
