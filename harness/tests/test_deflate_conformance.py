"""wsbench conformance --deflate (RFC 7692 permessage-deflate): the case lists of both
sides, the answer's check, both judges on recorded observations (no processes), and one
small play of each side against Bun (client bun, server bun/deflate)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from wsbench.conformance.frames import BINARY, CLOSE, TEXT, ClientFrame, close_payload
from wsbench.conformance.judge import digest
from wsbench.conformance.observation import Observation
from wsbench.conformance.script import text
from wsbench.deflate_conformance import choose, pmd_client_cases as client_cases, pmd_server_cases as server_cases
from wsbench.deflate_conformance.pmd_client_judge import judge as judge_client
from wsbench.deflate_conformance.pmd import (Compressor, Inflater, TooBig, agreement, answer_problem, compress,
                                             parse, with_bfinal)
from wsbench.deflate_conformance.pmd_server_judge import judge as judge_server
from wsbench.server_conformance.expectations import echo
from wsbench.server_conformance.replies import SERVER_EOF, ServerObservation
from wsbench_runs import wsbench

SECTION = re.compile(r"^(\d+(?:\.\d+)*)[ :/]")
OFFER = "permessage-deflate; client_max_window_bits"


# --- the case lists

@pytest.mark.parametrize("table", [client_cases.CASES, server_cases.CASES], ids=["clients", "servers"])
def test_every_case_is_pmd_unique_and_cites_rfc_7692(table: tuple[Any, ...]) -> None:
    ids = [c.id for c in table]
    assert len(ids) == len(set(ids)) and len(ids) >= 45
    for c in table:
        assert c.id.startswith("pmd-") and c.title
        cited = SECTION.match(c.why)
        assert cited, f"{c.id}: its rule starts with no RFC 7692 section: {c.why!r}"
        assert cited.group(1) == c.section, c.id
        assert c.section.split(".")[0] in ("5", "6", "7", "8"), c.id  # RFC 7692's sections with rules
    assert [c.id for c in table if c.heavy] == [i for i in ids if i in ("pmd-bomb", "pmd-echo-binary-128kib-x8")]


def test_the_lists_have_what_issue_32_asks() -> None:
    client, server = client_cases.BY_ID, server_cases.BY_ID
    for name in ("plain", "server-no-context-takeover", "client-no-context-takeover", "server-max-window-bits-10",
                 "client-max-window-bits-10", "unknown-parameter", "parameter-twice", "server-max-window-bits-16",
                 "server-max-window-bits-7", "server-max-window-bits-no-value", "server-max-window-bits-non-digits",
                 "flag-with-value", "client-max-window-bits-unoffered", "extension-not-offered", "twice"):
        assert f"pmd-answer-{name}" in client
    assert all(f"pmd-window-bits-{b}" in client and f"pmd-window-bits-{b}" in server for b in range(9, 16))
    for both in ("pmd-rsv1-continuation", "pmd-rsv1-ping", "pmd-rsv1-close", "pmd-not-deflate",
                 "pmd-invalid-utf8-inflated", "pmd-bomb", "pmd-fragmented-text-64kib-4", "pmd-bfinal-block",
                 "pmd-uncompressed-message"):
        assert both in client and both in server
    assert client["pmd-not-deflate"].expect.codes == (1007,) and client["pmd-bomb"].expect.codes == (1009,)
    assert {c.valid_offer for c in server.values() if c.group == server_cases.DECLINE} == {False}
    assert sum(1 for c in server.values() if not c.valid_offer) >= 8
    assert all(c.offer for c in server.values())


def test_choosing_cases_and_list() -> None:
    assert [c.id for c in choose.clients(["pmd-rsv1-*"])] == ["pmd-rsv1-continuation", "pmd-rsv1-ping",
                                                             "pmd-rsv1-close", "pmd-rsv1-not-agreed"]
    assert not any(c.heavy for c in choose.servers(None, quick=True))
    with pytest.raises(KeyError):
        choose.clients(["pmd-nothing-*"])
    done = wsbench("list")
    assert done.returncode == 0, done.stderr
    part = done.stdout[done.stdout.index("client deflate conformance cases ("):]
    assert "\n  pmd-negotiation (the server's answer) (15 cases)" in part
    assert "server deflate conformance cases (" in part and "\n  pmd-decline (offers to decline) (" in part
    assert re.search(r"\n    pmd-bomb +RFC 7692 8 ", part)


# --- permessage-deflate on the wire

def test_answers_checked_against_their_offer() -> None:
    def problem(offer: str | None, answer: str) -> str | None:
        parsed = parse(answer)
        assert parsed is not None
        return answer_problem(parse(offer)[0] if offer else None, parsed)  # type: ignore[index]

    assert problem(OFFER, "permessage-deflate") is None
    assert problem(OFFER, "permessage-deflate; client_max_window_bits=10") is None
    assert problem(OFFER, "") is None  # declining is always valid
    assert "not offered" in problem("permessage-deflate", "permessage-deflate; client_max_window_bits=15") or ""
    assert "MUST include" in (problem("permessage-deflate; server_no_context_takeover", "permessage-deflate") or "")
    assert "above the offered" in (problem("permessage-deflate; server_max_window_bits=10",
                                           "permessage-deflate; server_max_window_bits=12") or "")
    for bad in ("permessage-deflate; x", "permessage-deflate; server_max_window_bits=16",
                "permessage-deflate; server_max_window_bits", "permessage-deflate; server_no_context_takeover=1",
                "permessage-deflate, permessage-deflate", "x-webkit-deflate-frame"):
        assert problem(OFFER, bad), bad
    assert agreement('permessage-deflate; server_max_window_bits="10"').server_max_window_bits == 10  # type: ignore


def test_messages_round_trip_with_each_window_and_takeover() -> None:
    data = client_cases.repetitive(20000, 3)
    for bits in (9, 12, 15):
        for takeover in (True, False):
            c, i = Compressor(bits, takeover), Inflater(bits, takeover)
            assert [i.message(c.message(d)) for d in (data, data, b"")] == [data, data, b""]
    c = Compressor(15, True)
    c.message(data)
    with pytest.raises(Exception):  # context taken over: a fresh stream cannot inflate it
        Inflater(15, False).message(c.message(data))
    assert Inflater().message(with_bfinal(b"bfinal")) == b"bfinal"
    with pytest.raises(TooBig):
        Inflater().message(compress(bytes(1 << 20)), limit=1 << 16)


# --- the clients' judge, on recorded observations

def observation(case: str, frames: list[tuple[float, ClientFrame]], tcp_end: str = "peer",
                offer: str | None = OFFER, peer_close_t: float | None = 0.1) -> Observation:
    return Observation(case, connected=True, request={"sec-websocket-extensions": offer} if offer else {},
                       frames=frames, step_t=[0.0, 0.1], script_done_t=0.1, peer_close_t=peer_close_t,
                       tcp_end=tcp_end, tcp_end_t=0.2)


def close(t: float, code: int | None) -> tuple[float, ClientFrame]:
    return t, ClientFrame(True, 0, CLOSE, True, close_payload(code))


def events(*messages: bytes, opened: bool = True) -> dict[str, Any]:
    return {"messages": len(messages), "timed_out": False,
            "events": [*([{"type": "open"}] if opened else []),
                       *({"type": "message", **digest(text(m))} for m in messages),
                       {"type": "close", "code": 1000, "reason": "", "wasClean": True}]}


def test_client_judge() -> None:
    case = client_cases.BY_ID
    two = [client_cases.ascii_text(300), client_cases.ascii_text(300)[::-1]]
    v = judge_client(case["pmd-answer-plain"], observation("pmd-answer-plain", [close(0.15, 1000)]), events(*two),
                     None)
    assert v.verdict == "strict", v.detail
    v = judge_client(case["pmd-answer-plain"], observation("pmd-answer-plain", [], offer=None), events(), None)
    assert v.verdict == "fail" and "offered no permessage-deflate" in v.detail
    refused = observation("pmd-answer-twice", [], tcp_end="client-eof", peer_close_t=None)
    assert judge_client(case["pmd-answer-twice"], refused, events(opened=False), None).verdict == "strict"
    opened = judge_client(case["pmd-answer-twice"], observation("pmd-answer-twice", [close(0.15, 1000)]),
                          events(b"never"), None)
    assert opened.verdict == "fail"
    # client_max_window_bits answered unoffered: a client that offered it is informational here
    unoffered = case[client_cases.UNOFFERED]
    v = judge_client(unoffered, observation(unoffered.id, [close(0.15, 1000)]), events(b"never"), None)
    assert v.verdict == "informational" and "strict" in v.detail
    v = judge_client(unoffered, observation(unoffered.id, [], tcp_end="client-eof", offer="permessage-deflate",
                                            peer_close_t=None), events(opened=False), None)
    assert v.verdict == "strict"
    # an answer without server_no_context_takeover to a client that offered it (k6) is invalid: refusing it is right
    k6 = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
    v = judge_client(case["pmd-answer-plain"], observation("pmd-answer-plain", [], tcp_end="client-eof", offer=k6,
                                                           peer_close_t=None), events(opened=False), None)
    assert v.verdict == "informational" and "MUST include" in v.detail and "strict: never opened" in v.detail
    v = judge_client(case["pmd-answer-server-no-context-takeover"],
                     observation("pmd-answer-server-no-context-takeover", [], tcp_end="client-eof", offer=k6,
                                 peer_close_t=None), events(opened=False), None)
    assert v.verdict == "non-strict" and v.detail.startswith("never opened: refused the answer")
    bomb = case["pmd-bomb"]
    assert judge_client(bomb, observation("pmd-bomb", [close(0.5, 1009)]), events(), None).verdict == "strict"
    v = judge_client(bomb, observation("pmd-bomb", [close(0.5, 1006 + 1)]), events(), None)
    assert v.verdict == "non-strict" and "not with 1009" in v.detail
    assert judge_client(bomb, observation("pmd-bomb", [], tcp_end="peer-gave-up", peer_close_t=None), events(),
                        None).verdict == "fail"
    bad = case["pmd-not-deflate"]
    assert judge_client(bad, observation(bad.id, [], tcp_end="client-eof"), events(), None).verdict == "non-strict"


# --- the servers' judge, on recorded observations

def served(case_id: str, answer: str | None, frames: list[ClientFrame], handshake: str | None = None,
           tcp_end: str = SERVER_EOF) -> ServerObservation:
    obs = ServerObservation(case_id, handshake=handshake, extensions=answer, step_t=[0.0, 0.1], script_done_t=0.1,
                            our_close_t=0.1, tcp_end=tcp_end, tcp_end_t=0.2)
    obs.frames = [(0.05 + i / 100, f) for i, f in enumerate(frames)]
    return obs


def data(opcode: int, payload: bytes, rsv: int = 0, fin: bool = True) -> ClientFrame:
    return ClientFrame(fin, rsv, opcode, False, payload)


CLOSED = data(CLOSE, close_payload(1000))


def test_server_judge_inflates_the_echoes() -> None:
    case = server_cases.BY_ID["pmd-offer-plain"]
    hello = [m.data for m in case.expect.messages]
    c = Compressor(15, True)
    echoes = [data(TEXT, c.message(m), rsv=4) for m in hello]
    v = judge_server(case, served(case.id, "permessage-deflate", [*echoes, CLOSED]))
    assert (v.verdict, v.close) == ("strict", "strict"), v.detail
    assert v.observed is not None and v.observed["offer"] == "permessage-deflate"
    # a stream continued with server_no_context_takeover agreed: the second message does not inflate alone
    same = replace(case, expect=echo(text(hello[0]), text(hello[0])))
    c = Compressor(15, True)
    echoes = [data(TEXT, c.message(hello[0]), rsv=4) for _ in range(2)]
    assert judge_server(same, served(case.id, "permessage-deflate", [*echoes, CLOSED])).verdict == "strict"
    v = judge_server(same, served(case.id, "permessage-deflate; server_no_context_takeover", [*echoes, CLOSED]))
    assert v.verdict == "fail" and "does not inflate" in v.detail
    # an echo split in two frames, RSV1 on the first only
    payload = compress(hello[0])
    split = [data(TEXT, payload[:5], rsv=4, fin=False), data(0, payload[5:]), data(TEXT, compress(hello[1]), rsv=4)]
    v = judge_server(case, served(case.id, "permessage-deflate; server_no_context_takeover", [*split, CLOSED]))
    assert v.verdict == "strict", v.detail
    split[1] = data(0, payload[5:], rsv=4)
    assert "continuation" in judge_server(case, served(case.id, "permessage-deflate", [*split, CLOSED])).detail
    v = judge_server(case, served(case.id, "permessage-deflate; client_max_window_bits=10", []))
    assert v.verdict == "fail" and "not offered" in v.detail
    v = judge_server(case, served(case.id, None, [data(TEXT, m) for m in hello] + [CLOSED]))
    assert v.verdict == "informational" and "declined" in v.detail


def test_server_judge_declines_and_the_bomb() -> None:
    case = server_cases.BY_ID["pmd-decline-server-max-window-bits-16"]
    plain = [data(TEXT, b"plain"), CLOSED]
    assert judge_server(case, served(case.id, None, plain)).verdict == "strict"
    v = judge_server(case, served(case.id, "permessage-deflate", plain))
    assert v.verdict == "fail" and "MUST decline" in v.detail
    v = judge_server(case, served(case.id, None, [], handshake="answered the upgrade with 'HTTP/1.1 400 Bad'"))
    assert v.verdict == "non-strict" and "refused the upgrade" in v.detail
    bomb = server_cases.BY_ID["pmd-bomb"]
    assert judge_server(bomb, served(bomb.id, OFFER.replace("; client_max_window_bits", ""),
                                     [data(CLOSE, close_payload(1009))])).verdict == "strict"
    v = judge_server(bomb, served(bomb.id, "permessage-deflate", [data(CLOSE, close_payload(1002))]))
    assert v.verdict == "non-strict"
    v = judge_server(bomb, served(bomb.id, "permessage-deflate", [data(BINARY, b"x")], tcp_end="gave-up"))
    assert v.verdict == "fail"


# --- one small play of each side (bun, bun/deflate)

def load(out: Path, prefix: str) -> dict[str, Any]:
    files = sorted(out.glob(f"{prefix}-deflate-conformance-*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def test_clients_end_to_end(tmp_path: Path) -> None:
    ids = ["pmd-answer-plain", "pmd-answer-server-max-window-bits-16", "pmd-binary-64kib-x3-no-takeover",
           "pmd-window-bits-9", "pmd-fragmented-text-64kib-4", "pmd-rsv1-continuation"]
    done = wsbench("conformance", "--deflate", "-c", "bun", "-c", "deno", *(a for i in ids for a in ("--case", i)),
                   "--out", str(tmp_path), "-q")
    assert done.returncode == 0, done.stderr
    run = load(tmp_path, "client")
    assert run["schema_version"] >= 14 and run["settings"]["deflate"] == {"mode": "on"}
    verdicts = run["deflate_conformance"]["clients"]["verdicts"]
    assert {cid: v["verdict"] for cid, v in verdicts["bun"].items()} == dict.fromkeys(ids, "strict")
    assert {v["verdict"] for v in verdicts["deno"].values()} == {"n/a"}
    assert "## Deflate conformance — clients" in done.stdout


def test_servers_end_to_end(tmp_path: Path) -> None:
    ids = ["pmd-offer-plain", "pmd-decline-unknown-parameter", "pmd-echo-text-64kib-x3-takeover",
           "pmd-fragmented-text-64kib-4", "pmd-rsv1-ping", "pmd-not-deflate"]
    done = wsbench("conformance", "--deflate", "--servers", "-s", "bun", *(a for i in ids for a in ("--case", i)),
                   "--out", str(tmp_path), "-q")
    assert done.returncode == 0, done.stderr
    run = load(tmp_path, "server")
    verdicts = run["deflate_conformance"]["servers"]["verdicts"]["bun/deflate"]
    assert {cid: v["verdict"] for cid, v in verdicts.items()} == dict.fromkeys(ids, "strict")
    assert "permessage-deflate" in verdicts["pmd-offer-plain"]["observed"]["extensions"]
    assert "## Deflate conformance — servers" in done.stdout


@pytest.mark.parametrize("side", ["clients", "servers"])
def test_a_saved_run_is_reported(side: str, tmp_path: Path) -> None:
    """``wsbench report`` renders a deflate conformance run's tables as the command printed them."""
    fixture = Path(__file__).resolve().parent / "fixtures" / "schemas" / f"v14-deflate-conformance-{side}.json"
    done = wsbench("report", str(fixture), "--format", "md", "-o", str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "results.md").read_text()
    assert f"## Deflate conformance — {side}, RFC 7692 permessage-deflate" in text
