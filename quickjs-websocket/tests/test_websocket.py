"""Behavioural tests for quickjs-websocket (run: python -m pytest quickjs-websocket/tests)."""
import pytest

from qjs_runs import run_qjs

PEERS = ["python", "lws", "node"]


def assert_all_ok(res):
    bad = [r for r in res["results"] if not r["ok"]]
    assert not bad, bad
    assert res["close"]["code"] == 1000, res["close"]


@pytest.mark.parametrize("kind", PEERS)
def test_echo_sizes_and_utf8(peer_factory, variant, kind):
    peer = peer_factory(kind)
    res = run_qjs("echo", peer.url, env_extra=variant)
    assert len(res["results"]) == 2 * 8 + 5
    assert_all_ok(res)
    assert res["close"]["wasClean"] is True


@pytest.mark.parametrize("kind", PEERS)
def test_burst_many_sends(peer_factory, variant, kind):
    peer = peer_factory(kind)
    res = run_qjs("burst", peer.url, 3000, env_extra=variant)
    assert res["got"] == 3000 and res["bad"] == 0, res
    assert res["close"] == {"code": 1000, "wasClean": True}, res
    if res["options"]["framing"]:
        # our own framing was used, and the burst was coalesced into far fewer writes
        assert 0 < res["pool"]["own_writes"] < 3000, res["pool"]
        assert res["pool"]["own_reads"] > 0, res["pool"]
    else:
        assert res["pool"]["own_writes"] == 0, res["pool"]


# ws:// only: the kept blocks are our framing's, whatever the transport; over wss:// how
# much backs up depends on how fast the client encrypts against how fast the peer reads
# (under make test-asan 8.8 MB, not the tens of MiB this test needs).  The peer reads
# nothing until the client has queued the whole burst (peer_raw's /stall?until=FILE: the
# client makes FILE after its sends), so all but what the socket takes backs up whatever
# the machine's pace; it then drains at once (it unmasks a MiB in under 10 ms), so
# no housekeeping interval passes without a block given back, and the drained queue's
# blocks fill the keep to its bound.  (Against lws-echo, which reads at once, as little as
# 9.3 MB backed up; behind peer_raw's former 300 ms sleep and byte-by-byte unmasking, a
# 200 ms tick found the slow drain idle and trimmed the kept blocks to 14.7 MB once.)
@pytest.mark.parametrize("scheme", ["ws"])
def test_kept_output_blocks_bounded_and_released_when_idle(peer_factory, tmp_path):
    """Our framing keeps the output blocks a drained queue gives back, those of 1 MiB
    frames too, so that the next burst does not page-fault its blocks in anew (bin_64k):
    80 x 1 MiB sent at once (tens of MiB back up in the queue) leave the 32 MiB bound kept
    once drained (the 31 whole blocks that fit in it); the housekeeping tick finds
    the connection idle (nothing taken or given back for a whole 200 ms interval) and trims
    the kept blocks to at most one of 64 KiB; a burst of 64 KiB messages keeps some again;
    the close of the last connection trims them at once (poolStats().out_spares,
    .out_spare_bytes)."""
    peer = peer_factory("raw")
    flag = tmp_path / "queued"
    res = run_qjs("spares", peer.url + "stall?until=" + str(flag), 80, flag, env_extra={})
    keep, block = 32 << 20, (1 << 20) + 4096  # a 1 MiB frame's block: its size rounded up to 4 KiB
    assert res["queued"] > keep, res  # more than the bound backed up
    blocks, kept = res["drained"]
    assert (blocks, kept) == (keep // block, keep // block * block), res  # 31 blocks, 32,632,832 B
    assert res["peak"] <= keep, res
    assert res["idle"][1] <= 65536 and res["idleMs"] < 3000, res
    assert res["again"][0] >= 1, res
    assert res["closed"][1] <= 65536, res
    assert res["close"] == {"code": 1000, "wasClean": True}, res


def test_echo_uses_framing_path(peer_factory):
    peer = peer_factory("lws")
    res = run_qjs("echo", peer.url, "0,1,125,126,127,65535,65536,65537", env_extra={})
    assert_all_ok(res)
    assert res["pool"]["own_writes"] > 0 and res["pool"]["own_reads"] > 0, res["pool"]


@pytest.mark.parametrize("n", [2, 4])
def test_fragments_lws(peer_factory, variant, n):
    peer = peer_factory("lws")
    res = run_qjs("frag", peer.url + "?fragments=%d" % n, env_extra=variant)
    assert_all_ok(res)


@pytest.mark.parametrize("n", [2, 4])
def test_fragments_python(peer_factory, variant, n):
    peer = peer_factory("python")
    res = run_qjs("frag", peer.url + "frag?n=%d" % n, env_extra=variant)
    assert_all_ok(res)


def test_invalid_utf8_closes_1007(peer_factory, variant):
    peer = peer_factory("python")
    res = run_qjs("badutf8", peer.url + "badutf8", env_extra=variant)
    assert res["close"]["code"] == 1007
    assert not any(e["type"] == "message" for e in res["events"]), res["events"]
    assert any(l.startswith("CLOSE 1007") for l in peer.wait_line("CLOSE ")), peer.lines


@pytest.mark.parametrize("code,reason", [(1000, "bye"), (4001, "custom reason")])
def test_server_initiated_close(peer_factory, variant, code, reason):
    peer = peer_factory("python")
    res = run_qjs("serverclose", peer.url + "close?code=%d&reason=%s" % (code, reason.replace(" ", "%20")),
                  env_extra=variant)
    assert res["opened"] is True
    assert res["readyState"] == 3
    assert res["close"] == {"code": code, "reason": reason, "wasClean": True}


@pytest.mark.parametrize("args,expect", [((), (1000, "")), ((1000, "normal"), (1000, "normal")),
                                         ((3000, "app"), (3000, "app")),
                                         ((4999, "ünïcode ✓"), (4999, "ünïcode ✓"))])
def test_client_close_codes(peer_factory, variant, args, expect):
    peer = peer_factory("python")
    res = run_qjs("clientclose", peer.url, *args, env_extra=variant)
    assert res["states"] == [2]
    assert res["close"]["code"] == expect[0]
    assert res["close"]["wasClean"] is True
    lines = peer.wait_line("CLOSE ")
    assert lines == ["CLOSE %d %s" % expect], lines


def test_ping_answered(peer_factory, variant):
    peer = peer_factory("python")
    res = run_qjs("ping", peer.url + "ping", env_extra=variant)
    assert res["msgs"] == ["pong-ok"]
    assert res["close"]["code"] == 1000


def test_connection_refused(variant, scheme):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    res = run_qjs("refused", "%s://127.0.0.1:%d/" % (scheme, port), env_extra=variant)
    assert res["events"] == ["error", "close"]
    assert res["close"] == {"code": 1006, "wasClean": False}
    assert res["readyState"] == 3


def test_api_errors(peer_factory, variant):
    peer = peer_factory("python")
    res = run_qjs("api", peer.url, env_extra=variant)
    assert res["badScheme"] == "SyntaxError"
    assert res["ftp"] == "SyntaxError"
    assert res["fragment"] == "SyntaxError"
    assert res["badPort"] == "SyntaxError"
    assert res["badProto"] == "SyntaxError"
    assert res["dupProto"] == "SyntaxError"
    assert res["constants"] == [0, 1, 2, 3]
    assert res["maxDefault"] == 256 << 20
    assert res["setMaxBad"] == ["RangeError"] * 5
    assert res["setMaxOld"] == 256 << 20 and res["setMaxNew"] == 12345
    assert res["url"] == peer.url + "proto"
    assert res["initialState"] == 0
    assert res["binaryType"] == "arraybuffer"
    assert res["sendConnecting"] == "InvalidStateError"
    assert res["bufferedAmount"] == 0
    assert res["protocol"] == "superchat"
    assert res["protocolMsg"] == "superchat"
    assert res["extensions"] == ""
    assert res["closeBadCode"] == "InvalidAccessError"
    assert res["closeBadCode2"] == "InvalidAccessError"
    assert res["closeLongReason"] == "SyntaxError"
    assert res["viewEcho"] == [9, 8, 7]
    assert res["afterClose"] == 2
    assert res["sendClosing"] == "none"
    assert res["close"] == {"code": 4000, "reason": "ünïcödé", "wasClean": True}
    assert res["finalState"] == 3


@pytest.mark.parametrize("kind", ["lws", "python"])
def test_many_sequential_connections(peer_factory, variant, kind):
    peer = peer_factory(kind)
    res = run_qjs("manyconn", peer.url, 1000, env_extra=variant, timeout=180)
    assert res["opened"] == 1000
    assert res["after"] <= res["before"], res
    assert res["mid"] <= res["before"], res
