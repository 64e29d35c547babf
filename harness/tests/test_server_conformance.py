"""wsbench conformance --servers: the case table, the judge on synthetic observations, a
test-only lax server that the table must fail wherever the RFC asks a server to check, and
the quick subset against the real catalog servers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from wsbench.conformance.frames import BINARY, CLOSE, PONG, TEXT, ClientFrame, close_payload
from wsbench.conformance import utf8
from wsbench.server_conformance import server_cases as C
from wsbench.server_conformance.replies import CLIENT_CLOSED, GAVE_UP, SERVER_EOF, SERVER_RESET, ServerObservation
from wsbench.server_conformance.server_judge import judge
from wsbench_runs import FIXTURES, PY, ROOT, lax_server_entry, wsbench

SERVERS = ("node-ws", "node-ws-native", "bun", "deno", "lws")


# --- the case table

def test_the_table_covers_every_section_at_depth() -> None:
    ids = [c.id for c in C.CASES]
    assert len(ids) >= 300 and len(set(ids)) == len(ids)
    assert set(C.by_group()) == set(C.GROUPS) == {"1", "2", "3", "4", "5", "6", "7", "9", "10"}
    for c in C.CASES:
        assert c.id.startswith(f"{c.group}-") and c.title and c.expect.describe()
        assert re.match(r"^\d+(\.\d+)*[/:]", c.why), c.id  # the description starts with its RFC section
        assert c.expect.kind in ("echo", "fail", "info")
        if c.expect.kind == "fail":
            assert set(c.expect.codes) <= {1002, 1007}
    codes = {int(i.rsplit("-", 1)[1]) for i in ids if re.fullmatch(r"7-close-code-\d+", i)}
    assert set(C.VALID_CODES) | set(C.INVALID_CODES) | set(C.IANA_CODES) | set(C.UNDEFINED_CODES) == codes
    rsv = [c for c in C.CASES if c.id.startswith("3-rsv")]
    assert len(rsv) >= 7 * len(C.RSV_FRAMES)
    assert all(f"4-opcode-{op:x}" in C.BY_ID for op in C.RESERVED_OPCODES)
    assert all(f"6-kosme-split-{i}" in C.BY_ID for i in range(1, len(utf8.KOSME)))


def test_the_utf8_tables_are_what_they_say() -> None:
    for s in utf8.VALID:
        s.data.decode("utf-8")
    for s in utf8.INVALID:
        with pytest.raises(UnicodeDecodeError):
            s.data.decode("utf-8")
    assert len(utf8.INVALID) >= 50 and len({s.id for s in utf8.INVALID}) == len(utf8.INVALID)


def test_the_quick_subset_has_every_section() -> None:
    quick = C.select(None, quick=True)
    assert {c.group for c in quick} == set(C.GROUPS) and not any(c.heavy for c in quick)
    with pytest.raises(KeyError):
        C.select(["no-such-case"])
    with pytest.raises(KeyError):
        C.select(["8-*"])
    codes = C.select(["7-close-code-*", "1-text-0"])
    assert {c.id for c in codes} == {f"7-close-code-{n}" for n in (*C.VALID_CODES, *C.IANA_CODES, *C.INVALID_CODES,
                                                                    *C.UNDEFINED_CODES, "only")} | {"1-text-0"}
    assert [c.id for c in C.select(["1-text-0", "1-text-0"])] == ["1-text-0"]


def test_every_case_builds_its_script() -> None:
    """Every case's steps can be built (the megabytes included): the client builds them only
    when it plays the case."""
    for case in C.CASES:
        assert case.steps(), case.id


def test_a_close_frame_goes_out_as_a_close_step() -> None:
    """The client knows when it started the closing handshake only from a Close step: a
    close frame in plain bytes may only follow one (a second close, 7-close-twice)."""
    from wsbench.conformance.frames import split_frame
    from wsbench.server_conformance.steps import Chop, Close

    for case in C.CASES:
        if case.heavy or case.group == "9" or case.id == "1-length-top-bit":
            continue
        closed, data = False, b""  # the bytes written so far that are not a whole frame yet
        for step in case.steps():
            if isinstance(step, Close):
                closed, data = True, b""
            elif isinstance(step, (bytes, Chop)):
                data += step if isinstance(step, bytes) else step.data
                while data and (got := split_frame(data)):
                    assert got[0].opcode != CLOSE or closed, case.id
                    data = data[got[1]:]


def test_every_frame_a_case_writes_is_masked_unless_it_says_otherwise() -> None:
    from wsbench.conformance.frames import split_frame
    from wsbench.server_conformance.steps import Chop, Close

    for case in C.CASES:
        if case.heavy or case.group == "9" or case.id in ("1-length-top-bit",):
            continue
        data = b"".join(s if isinstance(s, bytes) else s.data for s in case.steps()
                        if isinstance(s, (bytes, Chop, Close)))
        while data:
            got = split_frame(data)
            assert got is not None, case.id
            f, n = got
            assert f.masked or "unmasked" in case.id, case.id
            data = data[n:]


# --- the judge on synthetic observations

def frame(opcode: int, payload: bytes = b"", fin: bool = True, rsv: int = 0, masked: bool = False) -> ClientFrame:
    return ClientFrame(fin, rsv, opcode, masked, payload)


def closing(code: int | None) -> ClientFrame:
    return frame(CLOSE, close_payload(code))


def seen(case_id: str, *frames: tuple[float, ClientFrame], tcp_end: str = SERVER_EOF, our_close: float | None = None,
         steps: tuple[float, ...] = (0.0,), done: float | None = 0.0, answered: bool = False) -> ServerObservation:
    return ServerObservation(case_id, frames=list(frames), step_t=list(steps), script_done_t=done,
                             our_close_t=our_close, tcp_end=tcp_end, tcp_end_t=0.5, answered=answered)


@pytest.mark.parametrize("case_id, obs, verdict, close, needle", [
    ("3-rsv1-text", seen("x", (0.01, frame(TEXT, b"before")), (0.02, closing(1002)), our_close=0.03),
     "strict", "strict", "closed 1002"),
    ("3-rsv1-text", seen("x", (0.02, closing(1002)), our_close=0.03, tcp_end=CLIENT_CLOSED),
     "strict", "non-strict", "the client did"),
    ("3-rsv1-text", seen("x", (0.02, closing(1002)), our_close=0.03, tcp_end=SERVER_RESET),
     "strict", "non-strict", "reset"),
    ("3-rsv1-text", seen("x"), "non-strict", "fail", "without a close frame"),
    ("3-rsv1-text", seen("x", tcp_end=GAVE_UP), "fail", "fail", "no reaction"),
    ("3-rsv1-text", seen("x", (0.02, closing(1000)), our_close=0.03), "fail", "strict", "expected 1002"),
    ("6-invalid-byte-ff", seen("x", (0.01, frame(TEXT, b"\xff")), (0.02, closing(1007))), "fail", "strict",
     "echoed text of 1 bytes"),
    ("6-invalid-byte-ff", seen("x", (0.02, closing(1002))), "fail", "strict", "expected 1007"),
    ("6-fail-fast-first", seen("x", (0.6, closing(1007)), steps=(0.0, 0.5)), "non-strict", "strict",
     "only once the message had ended"),
    ("6-fail-fast-first", seen("x", (0.01, closing(1007)), steps=(0.0,), done=None), "strict", "strict",
     "closed 1007"),
    ("1-text-125", seen("x", (0.01, frame(TEXT, C.ascii_text(125))), (0.03, closing(1000)), our_close=0.02),
     "strict", "strict", "answered the close with 1000"),
    ("1-text-125", seen("x", (0.01, frame(TEXT, C.ascii_text(100), fin=False)),
                        (0.01, frame(0, C.ascii_text(125)[100:])), (0.03, closing(1000)), our_close=0.02),
     "strict", "strict", "in 2 frames"),
    ("1-text-125", seen("x", (0.01, frame(TEXT, C.ascii_text(124) + b"!")), (0.03, closing(1000)), our_close=0.02),
     "fail", "strict", "changed from byte 124"),
    ("1-text-125", seen("x", (0.01, frame(BINARY, C.ascii_text(125))), (0.03, closing(1000)), our_close=0.02),
     "fail", "strict", "came back as binary"),
    ("1-text-125", seen("x", (0.01, frame(TEXT, C.ascii_text(125), masked=True)), (0.03, closing(1000)),
                        our_close=0.02), "fail", "strict", "MUST NOT mask"),
    ("1-text-125", seen("x", (0.01, frame(TEXT, C.ascii_text(125))), (0.02, closing(1000)),
                        (0.03, frame(TEXT, b"late")), our_close=0.015), "fail", "strict", "after its close frame"),
    ("1-text-125", seen("x", (0.01, frame(TEXT, C.ascii_text(125))), our_close=0.02, tcp_end=GAVE_UP),
     "fail", "fail", "no answer to the close"),
    ("1-text-125", seen("x", (0.01, closing(1002))), "fail", "strict", "failed the connection on valid input"),
    ("9-text-4mib-fragments-64b", seen("x", (0.02, closing(1008)), our_close=0.02, answered=True, done=None),
     "informational", "strict", "refused the message with 1008 (policy violation"),
    ("1-text-65535", seen("x", (0.02, closing(1009)), our_close=0.02, answered=True, done=None),
     "fail", "strict", "failed the connection on valid input: closed 1009"),
    ("7-close-code-3000", seen("x", (0.03, closing(1000)), our_close=0.02), "non-strict", "strict",
     "not 3000"),
    ("7-close-code-3000", seen("x", (0.03, closing(3000)), our_close=0.02), "strict", "strict", "with 3000"),
    ("7-close-code-3000", seen("x", (0.03, closing(1005)), our_close=0.02), "fail", "strict", "must never be sent"),
    ("2-ping-125", seen("x", (0.03, closing(1000)), our_close=0.02), "fail", "strict", "0 pongs for 1 ping"),
    ("2-ping-125", seen("x", (0.01, frame(PONG, b"x")), (0.03, closing(1000)), our_close=0.02), "fail", "strict",
     "differs"),
    ("2-ten-pings", seen("x", (0.01, frame(PONG, b"ping 3")), (0.01, frame(PONG, b"ping 9")), (0.03, closing(1000)),
                         our_close=0.02), "non-strict", "strict", "5.5.3 MAY"),
    ("7-close-code-5000", seen("x", (0.03, closing(1002)), our_close=0.02), "informational", "strict",
     "answered the close with 1002"),
    ("7-close-code-5000", seen("x", our_close=0.02, tcp_end=GAVE_UP), "fail", "fail", "no reaction"),
    ("9-binary-16mib", seen("x", (0.03, closing(1009))), "informational", "strict", "1009"),
])
def test_judge(case_id: str, obs: ServerObservation, verdict: str, close: str, needle: str) -> None:
    v = judge(C.BY_ID[case_id], obs)
    assert (v.verdict, v.close) == (verdict, close), v
    assert needle in v.detail + " " + v.close_detail
    assert v.observed is not None and "frames" in v.observed


def test_a_failed_upgrade_fails_both_verdicts() -> None:
    v = judge(C.BY_ID["1-text-125"], ServerObservation("x", handshake="answered the upgrade with 'HTTP/1.1 404'"))
    assert (v.verdict, v.close) == ("fail", "fail") and "404" in v.detail


def test_what_a_server_checks_follows_from_its_verdicts() -> None:
    from wsbench.model import CaseRecord, ServerVerdict
    from wsbench.server_conformance.server_checks import server_checks

    records = [CaseRecord.from_json(c.to_json()) for c in C.CASES]
    verdicts = {c.id: ServerVerdict("strict" if c.expect.kind == "fail" else "strict", "", "strict", "")
                for c in C.CASES}
    verdicts["1-unmasked-text"] = ServerVerdict("fail", "echoed", "fail", "")
    verdicts["6-invalid-byte-ff"] = ServerVerdict("non-strict", "dropped TCP", "fail", "")
    checks = {c.name: c for c in server_checks(records, verdicts)}
    assert checks["masking (5.1)"].let_through == ["1-unmasked-text"] and not checks["masking (5.1)"].holds
    assert checks["UTF-8 (8.1)"].holds and checks["UTF-8 (8.1)"].cases >= 100
    assert all(c.cases for c in checks.values())


# --- the command against a lax server and the real ones

def lax_catalog(tmp_path: Path, *extra: str) -> Path:
    path = tmp_path / "runtimes.toml"
    path.write_text("\n".join([*lax_server_entry(*extra), "[clients.unused]", 'runtime = "python"',
                               'label = "unused"', f"command = {json.dumps([PY, str(FIXTURES / 'client.py')])}", ""]))
    return path


def run_file(out: Path) -> dict[str, Any]:
    files = sorted(out.glob("server-conformance-*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def test_a_lax_server_fails_every_check_the_rfc_asks_of_a_server(tmp_path: Path) -> None:
    """Every case that asks the server to fail the connection is F for a server that checks
    nothing; the valid input it echoes is S: the table tells a checking server from one
    that skips the checks."""
    failing = [c.id for c in C.CASES if c.expect.kind == "fail"]
    valid = ["1-text-125", "1-header-bytewise-64-bit", "2-ping-125", "5-ping-between-fragments",
             "6-valid-kosme-per-byte", "7-close-code-3000", "9-text-64kib", "10-text-65536-64-fragments"]
    args = [f"--case={i}" for i in failing + valid]
    done = wsbench("--catalog", str(lax_catalog(tmp_path)), "conformance", "--servers", "-s", "lax", "-j", "64",
                   "--out", str(tmp_path / "out"), "-q", *args, timeout=180)
    assert done.returncode == 0, done.stderr
    verdicts = run_file(tmp_path / "out")["server_conformance"]["verdicts"]["lax"]
    assert len(verdicts) == len(failing) + len(valid)
    wrong = {i: verdicts[i]["detail"] for i in failing if verdicts[i]["verdict"] != "fail"}
    assert not wrong
    assert {i: verdicts[i]["verdict"] for i in valid} == {i: "strict" for i in valid}
    assert "echoed text of 1 bytes, which it must not" in verdicts["6-invalid-byte-ff"]["detail"]
    assert "RSV bits" in verdicts["3-rsv1-text"]["detail"]
    assert "| `6-invalid-byte-ff` | 8.1 |" in done.stdout and "| lax | `3-rsv1-text` | F |" in done.stdout
    assert "| UTF-8 (8.1) | **no**: F on " in done.stdout and "| masking (5.1) | **no**: F on 4 of 4 |" in done.stdout


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    for args, needle in ((["--servers", "--case", "nope"], "unknown server case 'nope'"),
                         (["--servers", "-s", "nope"], "unknown server 'nope'"),
                         (["-s", "lws"], "add --servers"),
                         (["--servers", "-c", "bun"], "not clients with -c"),
                         (["--servers", "--target", "lax=http://127.0.0.1:1/"], "only ws:// URLs"),
                         (["--servers", "--target", "ws://10.1.2.3:9000/"], "outside loopback"),
                         (["--servers", "--tls", "--target", "ws://127.0.0.1:9/"], "drop --tls or --target")):
        done = wsbench("conformance", *args, "--out", str(tmp_path))
        assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_list_names_the_server_cases_by_section() -> None:
    done = wsbench("list")
    assert "server conformance cases" in done.stdout and "  6 UTF-8 (" in done.stdout
    assert "    7-close-code-1005" in done.stdout


BUILT = all((ROOT / p).exists() for p in ("build/bin/lws-echo", "node_modules/node20/bin/node",
                                          "node_modules/@oven/bun-linux-x64/bin/bun",
                                          "node_modules/@deno/linux-x64-glibc/deno"))


@pytest.mark.skipif(not BUILT, reason="the catalog servers are not built (make setup)")
def test_the_quick_subset_against_every_catalog_server(tmp_path: Path) -> None:
    done = wsbench("conformance", "--servers", "--quick", "--out", str(tmp_path), "-q", timeout=170)
    assert done.returncode == 0, done.stderr
    run = run_file(tmp_path)
    section = run["server_conformance"]
    quick = {c.id for c in C.select(None, quick=True)}
    assert {c["id"] for c in section["cases"]} == quick and run["complete"]
    assert list(section["verdicts"]) == list(SERVERS)
    for server in SERVERS:
        got = section["verdicts"][server]
        assert set(got) == quick
        for cid in ("1-text-125", "5-ping-between-fragments", "7-close-code-1000", "10-text-65536-64-fragments"):
            assert got[cid]["verdict"] == "strict", (server, cid, got[cid]["detail"])
    ws = section["verdicts"]["node-ws"]
    assert all(ws[c.id]["verdict"] == "strict" for c in C.select(None, quick=True)
               if c.expect.kind == "fail" and not c.expect.before_end)
    assert "## Server conformance" in done.stdout


@pytest.mark.skipif(not BUILT or not (ROOT / "build/tls/manifest.json").exists(),
                    reason="the catalog servers or the TLS certificates are not built (make setup)")
def test_over_tls_the_servers_twins_get_the_same_table(tmp_path: Path) -> None:
    cases = ["1-text-125", "3-rsv1-text", "6-invalid-byte-ff", "6-kosme-split-3", "7-close-code-3000",
             "9-binary-1000-messages"]
    done = wsbench("conformance", "--servers", "--tls", "-s", "node-ws", "-s", "lws", "--out", str(tmp_path), "-q",
                   *(f"--case={c}" for c in cases), timeout=120)
    assert done.returncode == 0, done.stderr
    run = run_file(tmp_path)
    assert run["settings"]["tls"]["mode"] == "on" and run["servers"]["lws/wss"]["tls"]["certificate"] == "server"
    got = run["server_conformance"]["verdicts"]
    assert list(got) == ["node-ws/wss", "lws/wss"]
    for server in got:
        for cid in ("1-text-125", "6-kosme-split-3", "7-close-code-3000", "9-binary-1000-messages"):
            assert got[server][cid]["verdict"] == "strict", (server, cid, got[server][cid]["detail"])
    assert got["node-ws/wss"]["6-invalid-byte-ff"]["verdict"] == "strict"
    assert "## Server conformance — RFC 6455, raw-byte client over TLS" in done.stdout


def test_a_target_no_one_here_wrote_gets_the_same_table(tmp_path: Path) -> None:
    """Python ``websockets``' echo server (the harness tests' fixture), started outside
    wsbench and named with --target: the quick subset, with its URL recorded."""
    from testkit.background import Background

    with Background([PY, FIXTURES / "echo_server.py", "--port", "0"]) as peer:
        url = f"ws://127.0.0.1:{peer.port}/"
        done = wsbench("conformance", "--servers", "--target", f"py-websockets={url}", "--quick",
                       "--out", str(tmp_path), "-q", timeout=120)
    assert done.returncode == 0, done.stderr
    run = run_file(tmp_path)
    assert list(run["servers"]) == ["py-websockets"] and run["servers"]["py-websockets"]["target"] == url
    got = run["server_conformance"]["verdicts"]["py-websockets"]
    assert set(got) == {c.id for c in C.select(None, quick=True)}
    for cid in ("1-text-125", "6-invalid-byte-ff", "3-rsv1-text", "7-close-code-1005", "7-close-code-3000"):
        assert got[cid]["verdict"] == "strict", (cid, got[cid]["detail"])
    assert "| py-websockets (py-websockets @ 127.0.0.1:" in done.stdout


def test_ctrl_c_stops_the_server_it_started(tmp_path: Path) -> None:
    """Ctrl-C mid-table: exit 130, no traceback, the run file left incomplete, and the
    server (in a process group of its own) gone: its port refuses connections."""
    import socket

    from wsbench_runs import interrupt, started

    proc = started("--catalog", str(lax_catalog(tmp_path)), "conformance", "--servers", "-s", "lax", "-j", "2",
                   "--out", str(tmp_path / "out"), first_line="wsbench conformance --servers:")
    _, stderr = interrupt(proc)
    port = int(re.search(r"ready on port (\d+)", stderr).group(1))  # type: ignore[union-attr]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert run_file(tmp_path / "out")["complete"] is False


def test_a_server_that_crashes_is_failed_and_started_again(tmp_path: Path) -> None:
    """The lax server exits on reserved opcode 0xB: that case fails naming the exit, the
    server's record fails, and the cases after it run against the server started again."""
    cases = ["1-text-125", "4-opcode-b", "1-text-126", "2-ping-125"]
    done = wsbench("--catalog", str(lax_catalog(tmp_path, "--die-on", "b")), "conformance", "--servers", "-s", "lax",
                   "-j", "1", "--out", str(tmp_path / "out"), "-q", *(f"--case={c}" for c in cases), timeout=120)
    assert done.returncode == 1, done.stderr
    run = run_file(tmp_path / "out")
    got = run["server_conformance"]["verdicts"]["lax"]
    assert got["4-opcode-b"]["verdict"] == "fail" and "exited with code 3" in got["4-opcode-b"]["detail"]
    assert [got[c]["verdict"] for c in ("1-text-125", "1-text-126", "2-ping-125")] == ["strict"] * 3
    assert "exited with code 3 (noticed after case '4-opcode-b')" in run["servers"]["lax"]["error"]
    assert "**Server `lax`**: the server exited with code 3 (noticed after case '4-opcode-b')" in done.stdout
