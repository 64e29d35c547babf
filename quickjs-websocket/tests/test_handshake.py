"""The opening handshake as the client sees it (raw-socket peer, tests/peer_raw.py /hs):
responses a client must take, and ones it must refuse, on both builds.  With all
optimizations the module sets ws:// connections up itself (switch `connect`,
src/dial.c); the baseline leaves it to libwebsockets."""
import pytest

from qjsws_testkit import run_qjs

# (case, offered subprotocols, the one the server names, what the client reports)
TAKEN = [
    ("plain", None, None, ""),
    ("pieces", None, None, ""),           # the head arrives 7 bytes per write
    ("tokens", None, None, ""),           # header names in any case, blanks, token lists
    ("plain", "chat,superchat", "superchat", "superchat"),
    ("plain", "chat,superchat", None, ""),  # none chosen: open, protocol ""
]

REFUSED = ["status200", "badaccept", "noaccept", "noupgrade", "noconnection", "extension",
           "eof", "long", "unoffered", "unoffered-none"]


@pytest.mark.parametrize("case,offer,chosen,reported", TAKEN)
def test_handshake_taken(peer_factory, variant, case, offer, chosen, reported):
    if case == "tokens" and variant:
        pytest.xfail("libwebsockets 4.3.5 takes only blanks, not tabs, around header values "
                     "('got bad Upgrade header'): it refuses this valid 101")
    peer = peer_factory("raw")
    url = peer.url + "hs?case=" + case + ("&p=" + chosen if chosen else "")
    env = dict(variant, **({"QJSWS_TEST_PROTOCOLS": offer} if offer else {}))
    res = run_qjs("events", url, "close", env_extra=env, timeout=30)
    assert [e["type"] for e in res["events"]] == ["open", "message", "close"], res["events"]
    assert res["events"][0]["protocol"] == reported, res["events"]
    assert res["close"] == {"code": 1000, "reason": "", "wasClean": True}, res


@pytest.mark.parametrize("case", REFUSED)
def test_handshake_refused(peer_factory, variant, case):
    """Not a 101 this client may take: error then close 1006, never open, no message
    (RFC 6455 4.1: _Fail the WebSocket Connection_)."""
    peer = peer_factory("raw")
    env = dict(variant)
    if case == "unoffered":  # a subprotocol, but not one of those offered
        url, env["QJSWS_TEST_PROTOCOLS"] = peer.url + "hs?case=plain&p=other", "chat"
    elif case == "unoffered-none":  # a subprotocol when none was offered
        url = peer.url + "hs?case=plain&p=chat"
    else:
        url = peer.url + "hs?case=" + case
    res = run_qjs("events", url, env_extra=env, timeout=30)
    assert [e["type"] for e in res["events"]] == ["error", "close"], res["events"]
    assert res["close"] == {"code": 1006, "reason": "", "wasClean": False}, res
