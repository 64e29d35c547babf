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


def test_microtask_checkpoint_after_each_event(peer_factory, variant):
    """50 messages in one server write: each message's promise jobs (.then chains and
    an async listener's continuation) run before the next message is dispatched."""
    n = 50
    peer = peer_factory("raw")
    res = run_qjs("microtask", peer.url + "many?n=%d" % n, n, env_extra=variant)
    log = res["log"]
    assert log[:2] == ["open", "open-p"], log[:10]
    assert log[-2:] == ["close", "close-p"], log[-10:]
    body = log[2:-2]
    assert len(body) == 4 * n, body
    for k in range(n):
        group = body[4 * k:4 * k + 4]
        assert group[0] == "m%d" % k and sorted(group[1:]) == sorted(["p%d" % k, "q%d" % k, "a%d" % k]), (k, body[:4 * k + 8])
        assert group.index("p%d" % k) < group.index("q%d" % k), group
    assert res["asyncDone"] == n
    assert res["close"] == {"code": 1000, "wasClean": True}, res
    if not variant:
        assert res["pool"]["own_reads"] < n, res["pool"]  # several messages per read
