"""Pings answered (raw-socket peer, tests/peer_raw.py /pings): RFC 6455 5.5.2 and 5.5.3.

Every ping gets a pong unless a close frame came first; of several pings not yet
answered a pong may answer only the most recent, so the pongs must be the pings in
order with some skipped, and the last ping must be answered, before our close frame.
Found by the stream property test (issue 14): libwebsockets, which parses on the
baseline path and, with own framing, the frames that come in the same write as the
101, (a) sends the answer to a close frame that follows a ping in the same read
before the pong, and drops the pong; (b) drops a ping that comes while its pong for
an earlier one is still pending (it answers the first, not the last).
"""
import pytest

from qjs_runs import run_qjs


def pongs_and_close(peer):
    """The peer's reports: the pong payloads (hex) in order, and its CLOSE line."""
    lines = peer.wait_line("CLOSE")
    assert lines, peer.lines
    at = peer.lines.index(lines[0])
    pongs = [l.split(" ", 1)[1] if " " in l else "" for l in peer.lines[:at] if l.startswith("PONG")]
    return pongs, lines[0]


def check(pongs, n):
    pings = [(b"ping-%d" % i).hex() for i in range(n)]
    it = iter(pings)
    assert all(any(p == q for q in it) for p in pongs), (pongs, pings)
    assert pongs and pongs[-1] == pings[-1], "last ping unanswered before the close: %r" % pongs


@pytest.mark.parametrize("at", ["101", "later"])
@pytest.mark.parametrize("n", [1, 3])
def test_ping_then_close_in_one_write(peer_factory, variant, at, n):
    """(a) Pings and a close frame in one write (with the 101, or after it): the pong of
    the last ping goes out before our answer to the close."""
    peer = peer_factory("raw")
    res = run_qjs("collect", peer.url + "pings?n=%d&at=%s&close=1" % (n, at), env_extra=variant,
                  timeout=30)
    assert res["errors"] == [], res
    assert res["close"] == {"code": 1000, "reason": "", "wasClean": True}, res
    pongs, close = pongs_and_close(peer)
    assert close == "CLOSE 1000 ", peer.lines
    check(pongs, n)


@pytest.mark.parametrize("at", ["101", "later"])
@pytest.mark.parametrize("n,msg", [(2, 0), (3, 1), (5, 2)])
def test_pings_in_one_write_all_answered(peer_factory, variant, at, n, msg):
    """(b) Several pings (then messages) in one write, with the 101 (where lws parses
    them before our parser takes over) or after it: the last ping is answered (the
    peer closes once it is, or after 3 s without it)."""
    peer = peer_factory("raw")
    res = run_qjs("collect", peer.url + "pings?n=%d&at=%s&msg=%d" % (n, at, msg), env_extra=variant,
                  timeout=30)
    assert res["errors"] == [], res
    assert res["messages"] == [["text", "00610066007400650072"]] * msg, res
    assert res["close"] == {"code": 1000, "reason": "", "wasClean": True}, res
    pongs, close = pongs_and_close(peer)
    assert "TIMEOUT" not in peer.lines, peer.lines
    check(pongs, n)
