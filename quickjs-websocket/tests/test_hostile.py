"""Unusual and hostile servers (raw-socket peer, tests/peer_raw.py)."""
import pytest

from qjsws_testkit import run_qjs


@pytest.mark.parametrize("cut", ["none", "hdr1", "hdr3", "payload", "frag", "fraghdr"])
def test_frames_in_the_101_write(peer_factory, variant, cut):
    """101 + frames (a fragmented message, a ping, ...) in one write, cut mid-header,
    mid-payload or mid-message: lws parses them, then hands over only at a message end."""
    peer = peer_factory("raw")
    res = run_qjs("burst101", peer.url + "burst?cut=" + cut, env_extra=variant, timeout=30)
    assert res["ok"], res
    assert res["errors"] == [], res
    assert res["echoed"] == 5 and res["bad"] == 0, res
    assert res["close"] == {"code": 1000, "reason": "", "wasClean": True}, res
    if not variant:
        assert res["pool"]["own_reads"] > 0, res["pool"]  # handed over to our parser
