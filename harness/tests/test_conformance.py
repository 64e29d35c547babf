"""wsbench conformance: the judge on known observations, the peer against trivial clients,
and the real thing (every case strict for quickjs; every client completes)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wsbench.conformance import cases, judge as J
from wsbench.conformance.frames import CLOSE, PONG, TEXT, ClientFrame, accept_for, close_payload
from wsbench.conformance.peer import Observation, Peer
from wsbench.model import read_json
from testkit.raw_ws import masked_close, raw_client
from wsbench_runs import ROOT, interrupt, observe_catalog, started, wsbench
from wsbench.model.schema import SCHEMA_VERSION

BUILT = (ROOT / "build/prefix/bin/qjs").exists() and (ROOT / "build/quickjs-websocket/lws.so").exists()
needs_build = pytest.mark.skipif(not BUILT, reason="qjs or quickjs-websocket not built (make setup)")


# --- the case table

def test_the_table_covers_the_issue() -> None:
    ids = [c.id for c in cases.CASES]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)
    for c in cases.CASES:
        assert c.section and c.title and c.why and c.expect.describe()
        assert c.expect.verdict in ("fail", "deliver", "reject")
        if c.expect.verdict == "fail":
            assert c.expect.codes
    groups = {c.group for c in cases.CASES}
    assert {"framing", "control", "fragmentation", "utf8", "closing", "handshake", "size"} <= groups
    bad_codes = {int(i.rsplit("-", 1)[1]) for i in ids if i.startswith("close-code-")
                 and cases.BY_ID[i].expect.verdict == "fail"}
    assert {0, 999, 1004, 1005, 1006, 1015, 1016, 2999} <= bad_codes
    assert len(cases.big_text()) == 16 << 20
    assert cases.big_text().decode("utf-8")  # valid UTF-8 throughout


def test_select_names_unknown_cases() -> None:
    assert [c.id for c in cases.select(["ping-125", "rsv1-text"])] == ["rsv1-text", "ping-125"]
    with pytest.raises(KeyError):
        cases.select(["no-such-case"])


# --- the judge on known observations

def obs(case_id: str, frames: list[tuple[float, ClientFrame]] = (), tcp_end: str | None = "client-eof",
        peer_close_t: float | None = None, steps: list[float] = (0.05,)) -> Observation:
    o = Observation(case_id, connected=True, frames=list(frames), step_t=list(steps), script_done_t=steps[-1],
                    peer_close_t=peer_close_t, tcp_end=tcp_end, tcp_end_t=0.2)
    return o


def close(t: float, code: int | None, masked: bool = True) -> tuple[float, ClientFrame]:
    return t, ClientFrame(True, 0, CLOSE, masked, close_payload(code))


def report(*events: dict[str, Any], timed_out: bool = False) -> dict[str, Any]:
    return {"messages": 0, "events": [{"type": "open"}, *events], "timed_out": timed_out}


def message_event(m: cases.Message) -> dict[str, Any]:
    return {"type": "message", **J.digest(m)}


CLOSED = {"type": "close", "code": 1006, "reason": "", "wasClean": False}


@pytest.mark.parametrize("frames, tcp_end, events, verdict, needle", [
    ([close(0.06, 1007)], "peer", [CLOSED], "strict", "closed 1007"),
    ([], "client-eof", [CLOSED], "non-strict", "without a close frame"),
    ([], "client-reset", [CLOSED], "non-strict", "reset TCP"),
    ([close(0.06, 1002)], "peer", [CLOSED], "fail", "closed with 1002, expected 1007"),
    ([close(0.06, None)], "peer", [CLOSED], "fail", "closed with no code"),
    ([], "peer-gave-up", [], "fail", "no reaction"),
    ([close(0.06, 1007, masked=False)], "peer", [CLOSED], "fail", "unmasked"),
    ([close(0.06, 1007)], "peer", [message_event(cases.text("a"))], "fail", "delivered text of 1 units"),
])
def test_judge_failing_cases(frames: list[Any], tcp_end: str, events: list[dict[str, Any]], verdict: str,
                             needle: str) -> None:
    v = J.judge(cases.BY_ID["utf8-overlong-2"], obs("utf8-overlong-2", frames, tcp_end), report(*events), None)
    assert (v.verdict, needle in v.detail) == (verdict, True), v


def test_judge_fail_fast_and_allowed_messages() -> None:
    case = cases.BY_ID["utf8-fail-fast"]
    early = obs(case.id, [close(0.5, 1007)], "peer", steps=[0.05, 1.05])
    late = obs(case.id, [close(1.06, 1007)], "peer", steps=[0.05, 1.05])
    assert J.judge(case, early, report(CLOSED), None).verdict == "strict"
    v = J.judge(case, late, report(CLOSED), None)
    assert v.verdict == "non-strict" and "only after the message ended" in v.detail
    # opcode-f: the valid message before the bad frame may be delivered, no more
    case = cases.BY_ID["opcode-f"]
    ok = report(message_event(cases.text("valid")), CLOSED)
    assert J.judge(case, obs(case.id, [close(0.06, 1002)], "peer"), ok, None).verdict == "strict"
    twice = report(message_event(cases.text("valid")), message_event(cases.text("valid")), CLOSED)
    assert J.judge(case, obs(case.id, [close(0.06, 1002)], "peer"), twice, None).verdict == "fail"


def test_judge_a_hang_in_the_application_fails() -> None:
    """Right on the wire, but the application never learnt that the connection closed."""
    v = J.judge(cases.BY_ID["rsv1-text"], obs("rsv1-text", [close(0.06, 1002)], "peer"),
                report(timed_out=True), None)
    assert v.verdict == "fail" and "no close event" in v.detail


def delivering(case_id: str, reply: int | None, events: list[dict[str, Any]], pongs: list[bytes] = (),
               reply_t: float = 0.3) -> J.Verdict:
    frames = [(0.1, ClientFrame(True, 0, PONG, True, p)) for p in pongs]
    if reply != "none":
        frames.append(close(reply_t, reply))
    o = obs(case_id, frames, "peer" if reply != "none" else "client-eof", peer_close_t=0.25)
    return J.judge(cases.BY_ID[case_id], o, report(*events, {"type": "close", "code": 1000}), None)


def test_judge_valid_cases() -> None:
    msg = [message_event(cases.text("Hello, world"))]
    assert delivering("ping-between-fragments", 1000, msg, [b"between"]).verdict == "strict"
    v = delivering("ping-between-fragments", 1000, msg, [])
    assert v.verdict == "fail" and "no pong" in v.detail
    v = delivering("ping-between-fragments", 1000, msg, [b"betwee"])
    assert v.verdict == "fail" and "payload differs" in v.detail
    v = delivering("ping-between-fragments", 1000, [message_event(cases.text("Hello, worle"))], [b"between"])
    assert v.verdict == "fail" and "differs in its tail" in v.detail
    v = delivering("ping-between-fragments", 1000, [], [b"between"])
    assert v.verdict == "fail" and "delivered 0 of 1" in v.detail
    v = delivering("close-code-3000", 1000, [])
    assert v.verdict == "non-strict" and "typically echoes" in v.detail
    assert delivering("close-code-3000", 3000, []).verdict == "strict"
    assert delivering("close-empty", None, []).verdict == "strict"
    v = delivering("close-code-1000", 1005, [])
    assert v.verdict == "fail" and "must never be sent" in v.detail
    v = delivering("close-code-1000", "none", [])  # type: ignore[arg-type]
    assert v.verdict == "fail" and "instead of answering" in v.detail
    v = delivering("fragments-empty", 1002, [], reply_t=0.1)  # before our close: failed valid input
    assert v.verdict == "fail" and "valid input" in v.detail


def test_judge_rejecting_and_missing() -> None:
    case = cases.BY_ID["accept-wrong"]
    never = {"messages": 0, "events": [{"type": "error"}, CLOSED], "timed_out": False}
    assert J.judge(case, obs(case.id, [], "client-eof"), never, None).verdict == "strict"
    assert J.judge(case, obs(case.id, [], "client-eof"), report(CLOSED), None).verdict == "fail"
    assert J.judge(case, obs(case.id, [close(0.01, 1002)], "client-eof"), never, None).verdict == "non-strict"
    assert J.judge(case, obs(case.id, [], "peer-gave-up"), never, None).verdict == "fail"
    v = J.judge(case, None, None, "exited with code 3 without a result line")
    assert v.verdict == "fail" and "never connected" in v.detail and "code 3" in v.detail


def test_digest_counts_utf16_units() -> None:
    d = J.digest(cases.text("a😀b"))
    assert d == {"kind": "text", "length": 4, "head": [0x61, 0xD83D, 0xDE00, 0x62],
                 "tail": [0x61, 0xD83D, 0xDE00, 0x62], "sample": [0x61] * 4 + [0xD83D] * 4 + [0xDE00] * 4 + [0x62] * 4}
    assert J.digest(cases.binary(b""))["sample"] == []


# --- the peer against trivial clients

def test_peer_plays_records_and_answers_a_close() -> None:
    case = cases.BY_ID["rsv1-text"]
    with Peer() as peer:
        pending = peer.expect("t1", case)
        s, head = raw_client(peer.url(case, "t1"))
        assert head.startswith(b"HTTP/1.1 101") and accept_for("dGhlIHNhbXBsZSBub25jZQ==").encode() in head
        data = head.split(b"\r\n\r\n", 1)[1]
        while len(data) < 7:
            data += s.recv(4096)
        assert data[:7] == bytes((0x80 | 0x40 | TEXT, 5)) + b"hello"  # RSV1 set
        s.sendall(masked_close(1002))
        answer = s.recv(4096)
        assert answer == bytes((0x80 | CLOSE, 2)) + b"\x03\xea"  # our 1002 echoed
        assert s.recv(4096) == b""  # and the peer closed TCP
        s.close()
        o = pending.wait(5)
    assert o is not None and o.tcp_end == "peer" and [f.close_code() for _, f in o.closes()] == [1002]
    assert J.judge(case, o, None, None).verdict == "strict"


def test_peer_gives_up_on_a_silent_client_and_ignores_unknown_tokens() -> None:
    case = dataclasses.replace(cases.BY_ID["ping-126"], react_s=0.3)
    with Peer() as peer:
        pending = peer.expect("t2", case)
        s, _ = raw_client(peer.url(case, "t2"))
        o = pending.wait(5)
        assert o is not None and o.gave_up and o.frames == []
        s.close()
        s, head = raw_client(peer.url(case, "nobody"))
        assert head.startswith(b"HTTP/1.1 404")
        s.close()
    assert J.judge(case, o, None, None).verdict == "fail"


def test_peer_with_a_library_client() -> None:
    """The websockets library as the client: valid cases delivered and closed cleanly,
    a wrong Sec-WebSocket-Accept refused."""
    from websockets.exceptions import InvalidHandshake
    from websockets.sync.client import connect

    with Peer() as peer:
        case = cases.BY_ID["length-forms"]
        pending = peer.expect("t3", case)
        with connect(peer.url(case, "t3"), compression=None) as ws:
            got = [m for m in ws]
        assert [len(m) for m in got] == [125, 126, 127, 65535, 65536]
        o = pending.wait(5)
        assert o is not None and [f.close_code() for _, f in o.closes()] == [1000]
        case = cases.BY_ID["accept-wrong"]
        pending = peer.expect("t4", case)
        with pytest.raises(InvalidHandshake):
            connect(peer.url(case, "t4"), compression=None)
        o = pending.wait(5)
        assert o is not None and o.frames == [] and o.client_dropped


# --- the command

def one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wsbench: error: ") and needle in lines[0], proc.stderr


def test_bad_names_give_one_line() -> None:
    one_line_error(wsbench("conformance", "-c", "netcat"), "unknown client 'netcat'")
    one_line_error(wsbench("conformance", "--case", "rsv9"), "unknown case 'rsv9'")
    one_line_error(wsbench("conformance", "--jobs", "0"), "--jobs")
    one_line_error(wsbench("conformance", "--case", "tls-truncation"),
                   "case 'tls-truncation' is a TLS-failure case: it runs only with --tls")
    one_line_error(wsbench("conformance", "--tls", "--case", "tls-nothing"), "unknown case 'tls-nothing'")


def test_missing_certificates_are_one_line(tmp_path: Path) -> None:
    """--tls without build/tls (make setup): one line, nothing started."""
    code = ("import sys, pathlib; import wsbench.certificates as t; t.TLS_DIR = pathlib.Path(sys.argv[1]); "
            "from wsbench.cli import main; sys.exit(main(sys.argv[2:]))")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "tls"), "conformance", "--tls", "--case",
                           "rsv1-text", "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    one_line_error(proc, "manifest.json is missing: the TLS certificates are made by make setup")
    assert not (tmp_path / "out").exists()


def test_fake_clients_every_case_gets_a_verdict(tmp_path: Path) -> None:
    catalog = observe_catalog(tmp_path / "rt.toml", {"lib": "ok", "crash": "crash"})
    out = tmp_path / "out"
    chosen = ["rsv1-text", "utf8-split-valid", "close-code-3000", "accept-wrong"]
    proc = wsbench("--catalog", str(catalog), "conformance", "--out", str(out), "-q",
                   *(a for c in chosen for a in ("--case", c)))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    [path] = out.glob("conformance-*.json")
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION and data["complete"] is True
    assert [c["id"] for c in data["conformance"]["cases"]] == chosen
    verdicts = data["conformance"]["verdicts"]
    assert set(verdicts) == {"lib", "crash"}
    assert all(set(v) == set(chosen) for v in verdicts.values())
    assert verdicts["lib"]["utf8-split-valid"]["verdict"] == "strict"
    assert verdicts["lib"]["close-code-3000"]["verdict"] == "strict"
    assert all(v["verdict"] == "fail" and "code 3" in v["detail"] for v in verdicts["crash"].values())
    assert data["environment"]["runtimes"]["python"]["version"].startswith("Python")
    # the table, printed and re-rendered from the file alone
    assert "| `rsv1-text` | 5.2 |" in proc.stdout and "| crash (crash) | 0 | 0 | 4 | 0 |" in proc.stdout
    report = wsbench("report", str(path))
    assert report.returncode == 0 and "## Conformance" in report.stdout
    loaded = read_json(path).conformance
    assert loaded is not None and loaded.to_json() == data["conformance"]


def test_interrupt_leaves_nothing_behind(tmp_path: Path) -> None:
    catalog = observe_catalog(tmp_path / "rt.toml", {"hang": "hang"})
    out = tmp_path / "out"
    proc = started("--catalog", str(catalog), "conformance", "--case", "text-16mib", "--out", str(out),
                   first_line="wsbench conformance:")  # the hanging client is connected after 2 s
    interrupt(proc)
    [path] = out.glob("conformance-*.json")
    assert json.loads(path.read_text())["complete"] is False


# --- the real thing

@needs_build
def test_quickjs_is_strict_on_every_case(tmp_path: Path) -> None:
    """The issue's goal: the optimized QuickJS client is strict on every case."""
    proc = wsbench("conformance", "-c", "quickjs", "--out", str(tmp_path), "-q", timeout=300)
    assert proc.returncode == 0, proc.stderr
    [path] = tmp_path.glob("conformance-*.json")
    verdicts = json.loads(path.read_text())["conformance"]["verdicts"]["quickjs"]
    assert len(verdicts) == len(cases.CASES)
    not_strict = {k: v for k, v in verdicts.items() if v["verdict"] != "strict"}
    assert not_strict == {}


# every kind of expectation, and the cases where runtimes differ
SUBSET = ["rsv1-text", "masked-text", "length-top-bit", "ping-125", "fragments-1000", "utf8-split-invalid",
          "close-1-byte", "close-code-1015", "close-code-3000", "close-reason-invalid", "accept-wrong"]


@needs_build
def test_every_client_completes_and_every_case_has_a_verdict(tmp_path: Path) -> None:
    """Other runtimes' verdicts are findings (README.md), not asserted: only that each
    default client ran every case to a verdict."""
    proc = wsbench("conformance", "--out", str(tmp_path), "-q", *(a for c in SUBSET for a in ("--case", c)),
                   timeout=600)
    assert proc.returncode == 0, proc.stderr
    [path] = tmp_path.glob("conformance-*.json")
    data = json.loads(path.read_text())
    verdicts = data["conformance"]["verdicts"]
    assert set(verdicts) == {"node-ws", "node-ws-native", "node22", "bun", "deno", "quickjs", "quickjs-baseline",
                             "loadgen"}  # k6 is not a default client (clients/tests/test_k6.py names it)
    for client, got in verdicts.items():
        assert set(got) == set(SUBSET), client
        assert all(v["verdict"] in ("strict", "non-strict", "fail") and v["detail"] for v in got.values()), client
