"""Web semantics: USVString sends, microtask checkpoints, bufferedAmount."""
import pytest

from peer_raw import echo, path, read_frame
from qjs_runs import run_qjs
from wsbench.conformance.frames import TEXT, server_frame


@path("/many")
async def many(reader, writer, hello, q, headers):
    """(the raw peer's /many?n=N) once the client's first message came: N text messages
    "m0".."m<N-1>" in one write, then echo"""
    writer.write(hello)
    await read_frame(reader)
    writer.write(b"".join(server_frame(TEXT, b"m%d" % i) for i in range(int(q["n"]))))
    await writer.drain()
    await echo(reader, writer)


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


def check_buffered(res, n, published):
    assert res["mismatches"] == [], res["mismatches"]
    assert res["checks"] > 2 * n, res
    assert res["echoes"] == n and res["aClose"] == {"code": 1000, "wasClean": True}, res
    # 0 while connecting; the sends backed up and the queue drained to 0 under the timers' eyes
    assert res["connecting"] == 0
    assert max(res["afterSends"]) > 0, res["afterSends"]
    assert len(res["drain"]) >= 2 and res["drain"][-1] == 0, res["drain"]
    # close() and a send while CLOSING leave it as it was; 0 from the close event on,
    # sends after it discarded (the implementation's behaviour before "buffered" became a
    # data property)
    assert res["afterLateSend"] == res["afterClose"], res
    assert res["closeEvent"] == 0 and res["afterClosedSend"] == 0 and res["final"] == 0, res
    # read-only for the user: assignment throws in strict code and changes nothing
    assert res["assign"] == "TypeError" and res["assignKept"] and res["stable"], res
    if published:
        assert res["own"] == {"data": True, "writable": False, "enumerable": False, "configurable": True}, res
        assert res["ownAgain"] is True  # deleted, then read: defined again
    else:
        assert res["own"] is None and res["ownAgain"] is False, res


@pytest.mark.parametrize("extra", [{}, {"QJSWS_DISABLE": "buffered"}, {"QJSWS_DISABLE": "framing"}],
                         ids=["as-variant", "no-buffered", "no-framing"])
def test_buffered_amount_at_every_observable_point(peer_factory, variant, extra):
    """bufferedAmount read after each of 16 x 1 MiB sends (the peer reads nothing for
    300 ms, so they back up), in every event handler of its connection and of a second
    one, from timers while the queue drains, after close() and after the close event:
    every reading equals the connection's queued bytes at that moment (conn.buffered(),
    what the accessor answers).  With "buffered" it is an own non-writable data
    property republished from C; without, the accessor on the prototype."""
    env = dict(variant)
    if extra:
        if env.get("QJSWS_DISABLE") == "all":
            pytest.skip("already everything off")
        env.update(extra)
    n = 16
    peer = peer_factory("raw")
    res = run_qjs("buffered", peer.url, n, 1 << 20, env_extra=env)
    check_buffered(res, n, res["options"]["buffered"])


EXPECTED_DISPATCH = [
    "event true message true true one \"\" type,target,currentTarget,data,origin true "
    "type:wec:string,target:wec:object,currentTarget:wec:object,data:wec:string,origin:wec:string 1",
    "throw", "listener1 true four", "handleEvent false four",  # onmessage threw: listeners still run
    "handler five", "once five", "handler six",  # a once listener
    "h1 seven", "h2 eight", "before nine", "self nine",
    "nonfn null", "synthetic message fake false", "synthetic-l fake", "dispatchEvent true",
    "send function send 2 true false true",
    "send-this none undefined TypeError TypeError undefined",
    "sent text:a binary:1.2.3 binary:6.7 binary:2 text:42 text:[object Object] text:obj binary:7.0 "
    "binary:1.2.3 text: binary: text:undefined text:null",
    "frozen eleven",
]


@pytest.mark.parametrize("pool", [True, False], ids=["eventpool", "no-eventpool"])
def test_direct_dispatch_same_as_websocket_js(peer_factory, pool):
    """Opt "direct" (C calls onmessage and the listeners, send() in C) shows JS exactly
    what websocket.js' own dispatch and send() do: the event object (its properties,
    their order and attributes, its prototype, one per connection with eventpool, data
    reset to null after the handlers), `this`, the order of onmessage and the listeners,
    a listener added or onmessage replaced by a handler, once listeners, an exception
    reported and the listeners still run, a frozen pooled event, and what send() makes of
    every kind of value and `this`.  The logs of both must be equal, line for line."""
    peer = peer_factory("lws")
    off = "" if pool else "eventpool"
    direct = run_qjs("dispatch", peer.url, env_extra={"QJSWS_DISABLE": off})
    naive = run_qjs("dispatch", peer.url, env_extra={"QJSWS_DISABLE": ",".join(filter(None, ["direct", off]))})
    assert direct["log"] == naive["log"]
    for line in EXPECTED_DISPATCH:
        assert line in direct["log"], (line, direct["log"])
    assert ("again true two two" if pool else "again false one two") in direct["log"]
    assert ("after null" if pool else "after two") in direct["log"]
    assert ("after-freeze twelve" in direct["log"]) is not pool  # the pooled event is frozen
    assert direct["steps"] == 10 and direct["close"] == {"code": 1000, "wasClean": True}
    for res in (direct, naive):
        err = res["_stderr"]
        assert "Uncaught exception in WebSocket event handler: Error: boom" in err, err
        assert err.count("TypeError: 'data' is read-only") == (2 if pool else 0), err
