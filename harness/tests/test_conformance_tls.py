"""wsbench conformance --tls: the peer behind TLS (how a client's TLS-level end is read),
the TLS-failure set (its faults on the wire, a genuine alert included), its judge, and
the command with Python fixtures (a good client, a broken one that trusts anything, one
without TLS) and with the real loadgen."""

from __future__ import annotations

import json
import socket
import ssl
import struct
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from wsbench import certificates
from wsbench.conformance import cases, judge as J, tls_cases, tls_judge, tls_setup
from wsbench.conformance.frames import CLOSE, TEXT
from wsbench.conformance.peer import Observation, Peer, Pending
from wsbench.model import read_json
from testkit.raw_ws import masked_close, raw_client
from wsbench_runs import ROOT, interrupt, observe_catalog, started, wsbench

HAVE_CERTS = (ROOT / "build/tls/manifest.json").exists()
needs_certs = pytest.mark.skipif(not HAVE_CERTS, reason="build/tls missing (make setup)")
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
FAILURE_IDS = [c.id for c in tls_cases.TLS_CASES]
SCRIPT_BYTES = 8 + 15 + 7  # what 3-rsv1-text plays: a text "before", the RSV1 text, the ping "after"
CERT_IDS = ["tls-untrusted-ca", "tls-wrong-host", "tls-expired"]


# --- the set, as data

def test_the_failure_set() -> None:
    assert FAILURE_IDS == ["tls-untrusted-ca", "tls-wrong-host", "tls-expired", "tls-truncation",
                           "tls-alert-mid-message", "tls-close-notify"]
    for c in tls_cases.TLS_CASES:
        assert c.group == tls_cases.GROUP and c.certificate and c.title and c.why and c.expect.describe()
        assert c.id not in cases.BY_ID
    assert {c.certificate for c in tls_cases.TLS_CASES} == {"server", *certificates.FAILURE_CERTS}
    assert [c.expect.error_required for c in tls_cases.TLS_CASES[3:]] == [True, True, False]
    assert len(tls_cases.select(None, tls=False)) == len(cases.CASES)
    assert len(tls_cases.select(None, tls=True)) == len(cases.CASES) + 6
    assert [c.id for c in tls_cases.select(["tls-expired", "3-rsv1-text"], tls=True)] == ["3-rsv1-text", "tls-expired"]
    with pytest.raises(ValueError):
        tls_cases.select(["tls-expired"], tls=False)
    with pytest.raises(KeyError):
        tls_cases.select(["tls-nothing"], tls=True)


# --- the judge on known observations

OPEN = {"type": "open"}
ERROR = {"type": "error", "message": "TLS: something"}


def close_event(code: int = 1006, clean: bool = False) -> dict[str, Any]:
    return {"type": "close", "code": code, "reason": "", "wasClean": clean}


def tls_judged(case_id: str, events: list[dict[str, Any]], handshake: str = "failed: the client's alert: unknown ca",
               connected: bool = False, fault: str | None = "TCP closed without close_notify") -> J.Verdict:
    o = Observation(case_id, connected=connected, tls_handshake=handshake, fault=fault, fault_t=1.0)
    return tls_judge.judge_tls(tls_cases.TLS_BY_ID[case_id], o, {"events": events}, None)


@pytest.mark.parametrize("events, handshake, connected, verdict, needle", [
    ([ERROR, close_event()], "failed: the client's alert: unknown ca", False, "strict", "never opened; error"),
    ([ERROR, close_event(1015)], "failed: the client closed TCP", False, "non-strict", "1015 instead of 1006"),
    ([close_event()], "failed: the client closed TCP", False, "fail", "no error event"),
    ([ERROR], "failed: the client closed TCP", False, "fail", "no close event"),
    ([ERROR, close_event(0)], "failed: the client closed TCP", False, "fail", "close 0"),
    ([ERROR, close_event(1006, clean=True)], "failed: the client closed TCP", False, "fail", "wasClean"),
    ([close_event(), ERROR], "failed: the client closed TCP", False, "fail", "error event after"),
    ([ERROR, close_event()], "done", False, "fail", "completed the TLS handshake"),
    ([OPEN, close_event(1000, True)], "done", True, "fail", "opened the connection despite"),
])
def test_judge_refusals(events: list[dict[str, Any]], handshake: str, connected: bool, verdict: str,
                        needle: str) -> None:
    v = tls_judged("tls-untrusted-ca", events, handshake, connected)
    assert (v.verdict, needle in v.detail) == (verdict, True), v


MESSAGES = [{"type": "message", **J.digest(m)} for m in tls_cases.MESSAGES]
PARTIAL = {"type": "message", **J.digest(cases.text("the partial message"))}


@pytest.mark.parametrize("case_id, events, verdict, needle", [
    ("tls-truncation", [OPEN, *MESSAGES, ERROR, close_event()], "strict", "delivered 3 of 3 messages, none after"),
    ("tls-truncation", [OPEN, *MESSAGES, close_event()], "fail", "without an error event (the fault is a TLS error)"),
    ("tls-close-notify", [OPEN, *MESSAGES, close_event()], "non-strict", "RFC 6455 7.2.1"),
    ("tls-close-notify", [OPEN, *MESSAGES, ERROR, close_event()], "strict", "none after"),
    ("tls-alert-mid-message", [OPEN, *MESSAGES[:2], ERROR, close_event()], "fail", "delivered 2 of 3"),
    ("tls-alert-mid-message", [OPEN, *MESSAGES, PARTIAL, ERROR, close_event()], "fail", "after the fault"),
    ("tls-alert-mid-message", [OPEN, *MESSAGES, ERROR, close_event(1000, True)], "fail", "wasClean"),
    ("tls-alert-mid-message", [OPEN, *MESSAGES, ERROR], "fail", "no close event"),
    ("tls-alert-mid-message", [*MESSAGES, ERROR, close_event()], "fail", "never opened"),
])
def test_judge_faults(case_id: str, events: list[dict[str, Any]], verdict: str, needle: str) -> None:
    v = tls_judged(case_id, events, "done", connected=True)
    assert (v.verdict, needle in v.detail) == (verdict, True), v


def test_judge_without_a_connection_or_a_fault() -> None:
    v = tls_judge.judge_tls(tls_cases.TLS_BY_ID["tls-expired"], None, None, "exited with code 3")
    assert v.verdict == "fail" and "never connected" in v.detail and "code 3" in v.detail
    v = tls_judged("tls-truncation", [OPEN, *MESSAGES, ERROR, close_event()], "done", connected=True, fault=None)
    assert v.verdict == "fail" and "could not play the fault" in v.detail


# --- the peer behind TLS, with a Python ssl client

@pytest.fixture(scope="module")
def peer() -> Iterator[Peer]:
    if not HAVE_CERTS:
        pytest.skip("build/tls missing (make setup)")
    plan = tls_setup.plan(list(tls_cases.TLS_CASES))
    with Peer(plan.contexts) as p:
        yield p


def client_ctx() -> ssl.SSLContext:
    return certificates.client_context(certificates.load_certs())


def play(peer: Peer, case_id: str, token: str, ragged_eofs: bool = True) -> tuple[Pending, ssl.SSLSocket, bytes]:
    case = (tls_cases.TLS_BY_ID | cases.BY_ID)[case_id]
    pending = peer.expect(token, case)
    assert pending.url.startswith("wss://127.0.0.1:")
    s, head = raw_client(pending.url, context=client_ctx(), ragged_eofs=ragged_eofs)
    assert head.startswith(b"HTTP/1.1 101"), head
    assert isinstance(s, ssl.SSLSocket)
    return pending, s, head.split(b"\r\n\r\n", 1)[1]


def end_by(s: ssl.SSLSocket, how: str) -> None:
    if how == "close_notify":
        try:
            s.unwrap()  # ours goes out; waiting for the peer's ends in its abort
        except ssl.SSLError:
            pass
        s.close()
    elif how == "fin":
        s.close()  # Python sends no close_notify on close()
    else:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()


@needs_certs
@pytest.mark.parametrize("how, tcp_end, tls_end", [
    ("close_notify", "client-eof", "close_notify"),
    ("fin", "client-eof", "TCP closed without close_notify"),
    ("reset", "client-reset", None),
])
def test_the_peer_over_tls_reads_how_the_client_ended(peer: Peer, how: str, tcp_end: str,
                                                      tls_end: str | None) -> None:
    pending, s, data = play(peer, "3-rsv1-text", f"end-{how}")
    while len(data) < SCRIPT_BYTES:  # all of it: unread bytes would make the close a reset
        data += s.recv(4096)
    assert data[8:23] == bytes((0x80 | 0x40 | TEXT, 13)) + b"reserved bits"  # played over TLS as over TCP
    end_by(s, how)
    o = pending.wait(5)
    assert o is not None and o.tls_handshake == "done" and (o.tcp_end, o.tls_end) == (tcp_end, tls_end), o
    v = J.judge(cases.BY_ID["3-rsv1-text"], o, None, None)
    assert v.verdict == "non-strict" and "without a close frame" in v.detail


@needs_certs
def test_the_peer_over_tls_answers_a_close_and_ends_with_close_notify(peer: Peer) -> None:
    pending, s, data = play(peer, "3-rsv1-text", "closing")
    while len(data) < SCRIPT_BYTES:  # the script: "before", the RSV1 text, the ping
        data += s.recv(4096)
    s.sendall(masked_close(1002))
    answer = b""
    while len(answer) < 4:
        answer += s.recv(4096)
    assert answer == bytes((0x80 | CLOSE, 2)) + b"\x03\xea"
    assert s.recv(4096) == b""  # the peer's close_notify (Python returns b"" for it)
    o = pending.wait(5)
    assert o is not None and o.tcp_end == "peer"
    assert J.judge(cases.BY_ID["3-rsv1-text"], o, None, None).verdict == "strict"
    s.close()


@needs_certs
def test_a_client_that_fails_the_handshake_of_a_case_is_told_apart(peer: Peer) -> None:
    """Over TLS every case has a listener of its own: a handshake that fails is that
    client's, in that case (here a client that trusts only the system's CAs)."""
    pending = peer.expect("no-trust", cases.BY_ID["3-rsv1-text"])
    with pytest.raises(ssl.SSLCertVerificationError):
        raw_client(pending.url, context=ssl.create_default_context())
    v = J.judge(cases.BY_ID["3-rsv1-text"], pending.wait(5), None, None)
    assert (v.verdict, v.detail) == ("fail", "never connected to the peer: the TLS handshake failed: the client's "
                                             "alert: unknown ca")


def read_to_the_end(s: ssl.SSLSocket) -> tuple[bytes, BaseException | None]:
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except (ssl.SSLError, OSError) as exc:
        return data, exc
    return data, None


def complete_frames(data: bytes) -> int:
    """How many whole frames ``data`` starts with (7- and 16-bit lengths)."""
    n = at = 0
    while at + 2 <= len(data):
        length, head = data[at + 1] & 0x7F, 2
        if length == 126:
            length, head = struct.unpack("!H", data[at + 2:at + 4])[0], 4
        if at + head + length > len(data):
            break
        at, n = at + head + length, n + 1
    return n


@needs_certs
@pytest.mark.parametrize("case_id, error, fault", [
    # the peer's own TLS stack sends a genuine fatal alert, received as one
    ("tls-alert-mid-message", "SSLV3_ALERT_BAD_RECORD_MAC", "a fatal alert from OpenSSL (24 bytes"),
    # no close_notify: Python's ssl reports it once ragged EOFs are not suppressed
    ("tls-truncation", "UNEXPECTED_EOF_WHILE_READING", "TCP closed without close_notify"),
    ("tls-close-notify", None, "close_notify, then TCP closed"),
])
def test_the_faults_on_the_wire(peer: Peer, case_id: str, error: str | None, fault: str) -> None:
    pending, s, data = play(peer, case_id, f"wire-{case_id}", ragged_eofs=False)
    rest, exc = read_to_the_end(s)
    data += rest
    if error is None:
        assert exc is None  # recv gave b"": the peer's close_notify
    else:
        assert isinstance(exc, ssl.SSLError) and exc.reason == error, exc
    assert complete_frames(data) == 4  # three messages and the partial message's first fragment
    assert data.endswith(b"the partial message" + frame_head_of_second_half())
    s.close()
    o = pending.wait(5)
    assert o is not None and o.fault is not None and o.fault.startswith(fault), o


def frame_head_of_second_half() -> bytes:
    second = cases.frame(0x0, b"never delivered, the message does not end", fin=False)
    return second[:len(second) // 2]


@needs_certs
@pytest.mark.parametrize("case_id, why, alert", [
    ("tls-untrusted-ca", "unable to get local issuer certificate", "unknown ca"),
    ("tls-wrong-host", "IP address mismatch", "bad certificate"),
    ("tls-expired", "certificate has expired", "certificate expired"),
])
def test_the_certificates_are_refused_by_a_verifying_client(peer: Peer, case_id: str, why: str, alert: str) -> None:
    pending = peer.expect(f"cert-{case_id}", tls_cases.TLS_BY_ID[case_id])
    with pytest.raises(ssl.SSLCertVerificationError, match=why):
        raw_client(pending.url, context=client_ctx())
    o = pending.wait(5)
    assert o is not None and o.tls_handshake == f"failed: the client's alert: {alert}" and not o.connected


# --- the command, with Python fixtures and with loadgen

def run_conformance(tmp_path: Path, *args: str, timeout: float = 120) -> tuple[dict[str, Any], Path, str]:
    out = tmp_path / "out"
    proc = wsbench(*args, "--tls", "--out", str(out), "-q", timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    [path] = out.glob("conformance-*.json")
    return json.loads(path.read_text()), path, proc.stdout


def case_args(ids: list[str]) -> list[str]:
    return [a for i in ids for a in ("--case", i)]


@needs_certs
def test_fake_clients_over_tls(tmp_path: Path) -> None:
    catalog = observe_catalog(tmp_path / "rt.toml", {"lib": "ok", "trusting": "ok", "plain": "ok"},
                              tls={"lib": "observe_client.py", "trusting": "insecure_observe_client.py"})
    chosen = ["3-rsv1-text", "6-kosme-split-3", *FAILURE_IDS]
    data, path, stdout = run_conformance(tmp_path, "--catalog", str(catalog), "conformance", *case_args(chosen))
    assert data["settings"]["tls"]["mode"] == "on" and data["settings"]["tls"]["file"] == "build/tls/server.pem"
    assert "--ca" in data["clients"]["lib"]["command"] and data["clients"]["plain"]["status"] == "n/a"
    got = {c: {k: v["verdict"] for k, v in by_case.items()} for c, by_case in data["conformance"]["verdicts"].items()}
    # the websockets library over Python's ssl is strict: where ssl takes a TCP end without
    # close_notify for an end (suppress_ragged_eofs), websockets fails the connection
    # itself, the stream having ended inside a frame
    assert got["lib"] == dict.fromkeys(chosen, "strict")
    assert "stream ends after" in data["conformance"]["verdicts"]["lib"]["tls-truncation"]["detail"]
    assert all(got["trusting"][c] == "fail" for c in CERT_IDS)
    detail = data["conformance"]["verdicts"]["trusting"]["tls-expired"]["detail"]
    assert detail == "opened the connection despite the certificate"
    assert set(got["plain"].values()) == {"n/a"}
    assert data["conformance"]["verdicts"]["plain"]["tls-expired"]["detail"] == "a plain test client"
    # both tables, printed and again from the file alone
    for text in (stdout, wsbench("report", str(path)).stdout):
        assert "## Conformance — RFC 6455 sections 4-8, raw-frame peer over TLS (wss://)" in text
        assert "## TLS failures" in text and "| `tls-alert-mid-message` | 8446 6.2 |" in text
        assert "| plain | – | n/a | a plain test client |" in text
        assert "| plain (plain) | 0 | 0 | 0 | 2 | 0 |" in text and "| plain (plain) | 0 | 0 | 0 | 6 | 0 |" in text
    assert read_json(path).conformance is not None


@pytest.fixture(scope="module")
def loadgen_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    if not HAVE_CERTS or not LOADGEN.exists():
        pytest.skip("build/tls or loadgen missing (make setup)")
    chosen = ["3-rsv1-text", "2-ping-125", "6-split-invalid", "7-close-code-3000", "handshake-accept-wrong",
              *FAILURE_IDS]
    data, _, _ = run_conformance(tmp_path_factory.mktemp("loadgen"), "conformance", "-c", "loadgen",
                                 *case_args(chosen))
    return data["conformance"]["verdicts"]["loadgen"]


@pytest.mark.parametrize("case_id", ["3-rsv1-text", "2-ping-125", "6-split-invalid", "7-close-code-3000",
                                     "handshake-accept-wrong", *FAILURE_IDS[:5]])
def test_loadgen_over_tls_is_strict(loadgen_verdicts: dict[str, dict[str, str]], case_id: str) -> None:
    assert loadgen_verdicts[case_id]["verdict"] == "strict", loadgen_verdicts[case_id]


def test_loadgen_fires_error_after_a_close_notify(loadgen_verdicts: dict[str, dict[str, str]]) -> None:
    assert loadgen_verdicts["tls-close-notify"]["verdict"] == "strict", loadgen_verdicts["tls-close-notify"]


def test_a_second_connection_to_a_case_listener_is_not_the_clients(peer: Peer) -> None:
    """A failure case's listener takes its first connection only."""
    pending = peer.expect("second", tls_cases.TLS_BY_ID["tls-expired"])
    port = int(pending.url.split(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        time.sleep(0.2)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).recv(1)
    o = pending.wait(5)
    assert o is not None and o.tls_handshake == "failed: the client closed TCP"


@needs_certs
def test_interrupt_over_tls_leaves_nothing_behind(tmp_path: Path) -> None:
    """Ctrl-C while a client hangs on an open TLS connection: exit 130, the run saved as
    incomplete, the client's process gone, the peer's listeners closed."""
    catalog = observe_catalog(tmp_path / "rt.toml", {"hang": "hang"}, tls={"hang": "observe_client.py"})
    out = tmp_path / "out"
    proc = started("--catalog", str(catalog), "conformance", "--tls", "--case", "tls-truncation", "--out", str(out),
                   first_line="wsbench conformance:")  # the hanging client is connected after 2 s
    mine = "observe_client.py --ca .* --url wss://127.0.0.1:[0-9]*/tls-truncation/hang[.]"
    clients = subprocess.run(["pgrep", "-f", mine], capture_output=True, text=True).stdout.split()
    interrupt(proc)
    [path] = out.glob("conformance-*.json")
    assert json.loads(path.read_text())["complete"] is False
    assert clients and all(not Path(f"/proc/{pid}").exists() for pid in clients)
