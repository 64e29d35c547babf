"""Web semantics: USVString sends, microtask checkpoints."""
from qjsws_testkit import run_qjs


def test_lone_surrogates_sent_as_fffd(peer_factory, variant):
    """Each lone surrogate goes out as U+FFFD (the strict Python peer would close with
    1007 on the raw ED A0..BF bytes); pairs stay pairs; the close reason too."""
    peer = peer_factory("python")
    res = run_qjs("surrogates", peer.url, env_extra=variant)
    assert res["got"] == ["61 fffd 62", "fffd", "78 fffd", "1f600", "61 fffd fffd 62",
                          "fffd fffd", "e9 fffd", " ".join("%x" % ord(ch) for ch in "plain ascii")], res
    assert res["close"] == {"code": 4000, "reason": "r\ufffd", "wasClean": True}, res
    assert peer.wait_line("CLOSE ") == ["CLOSE 4000 r\ufffd"], peer.lines
