"""Behavioural tests for quickjs-websocket (run: python -m pytest quickjs-websocket/tests)."""
import pytest

from qjs_runs import run_qjs

PEERS = ["python", "lws", "node"]


def assert_all_ok(res):
    bad = [r for r in res["results"] if not r["ok"]]
    assert not bad, bad
    assert res["close"]["code"] == 1000, res["close"]


# the client program for this test, run by run.js (qjs_runs.run_qjs)
ECHO_JS = r"""
const sizes = (rest[0] || '0,1,125,126,127,65536,1048576,16777216').split(',').map(Number)
const cases = []
for (const n of sizes) {
  cases.push(['text-' + n, textPattern(n)])
  cases.push(['binary-' + n, pattern(n, n & 255).buffer])
}
cases.push(['view-offset', new Uint8Array(pattern(300, 7).buffer, 10, 200)])
cases.push(['utf8-2byte', 'é ñ ü ß ©'.repeat(50)])
cases.push(['utf8-3byte', '€ 中文 日本語 ☃'.repeat(50)])
cases.push(['utf8-4byte', '😀 𝄞 🚀 𐍈'.repeat(50)])
cases.push(['utf8-mixed-big', ('aé€😀').repeat(40000)])
echoCases(cases, (r) => done({ mode, options, ...r, pool: poolStats() }))
"""


@pytest.mark.parametrize("kind", PEERS)
def test_echo_sizes_and_utf8(peer_factory, variant, kind):
    peer = peer_factory(kind)
    res = run_qjs(ECHO_JS, peer.url, env_extra=variant)
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


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# the output blocks our framing keeps (poolStats().out_spares/out_spare_bytes); url:
# peer_raw's /stall?until=FILE (reads nothing until FILE exists, then echoes): N x 1 MiB
# at once back up in the queue, then FILE (args: N FILE) is made; kept as it drains
# (the bound); trimmed once idle (the housekeeping ticks); kept again by a burst of
# 64 KiB messages; trimmed at the close
SPARES_JS = r"""
const n = Number(rest[0] || 40)
const flag = rest[1]
const ws = new WebSocket(url)
const r = { peak: 0, polls: 0 }
const stats = () => { const p = poolStats(); return [p.out_spares, p.out_spare_bytes] }
const look = () => { const s = stats(); if (s[1] > r.peak) r.peak = s[1]; return s }
// every 5 ms until cond(), then then()
const poll = (cond, then) => {
  const t = () => { r.polls++; if (cond()) then(); else os.setTimeout(t, 5) }
  os.setTimeout(t, 5)
}
const t0 = os.now()
let got = 0
ws.onopen = () => {
  const big = pattern(1 << 20, 3).buffer
  for (let i = 0; i < n; i++) ws.send(big)
  r.queued = ws.bufferedAmount
  if (flag) std.open(flag, 'w').close() // the peer may read now
  poll(() => { look(); return ws.bufferedAmount === 0 }, () => { r.drained = stats() })
}
ws.onmessage = (e) => {
  if (++got === n) {
    // every echo is in: nothing is sent any more, the next ticks find it idle
    const t1 = os.now()
    poll(() => stats()[1] <= 65536 || os.now() - t1 > 3000, () => {
      r.idle = stats()
      r.idleMs = Math.round(os.now() - t1)
      const m = pattern(65536, 4).buffer
      let k = 0
      ws.onmessage = () => { if (++k === 32) { r.again = stats(); ws.close(1000) } }
      for (let i = 0; i < 32; i++) ws.send(m)
    })
  }
}
ws.onclose = (e) => {
  r.ms = Math.round(os.now() - t0)
  // the connection is let go right after its close event
  os.setTimeout(() => {
    r.closed = stats()
    done({ mode, ...r, close: { code: e.code, wasClean: e.wasClean } })
  }, 0)
}
"""


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
    res = run_qjs(SPARES_JS, peer.url + "stall?until=" + str(flag), 80, flag, env_extra={})
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
    res = run_qjs(ECHO_JS, peer.url, "0,1,125,126,127,65535,65536,65537", env_extra={})
    assert_all_ok(res)
    assert res["pool"]["own_writes"] > 0 and res["pool"]["own_reads"] > 0, res["pool"]


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# messages the server fragments; we only check reassembly
FRAG_JS = r"""
const sizes = (rest[0] || '0,1,2,3,100,4096,65536,200000,1048576').split(',').map(Number)
const cases = []
for (const n of sizes) {
  cases.push(['text-' + n, textPattern(n)])
  cases.push(['binary-' + n, pattern(n, 3).buffer])
}
cases.push(['utf8-4byte', '😀𝄞🚀'.repeat(1000)])
echoCases(cases, (r) => done({ mode, ...r }))
"""


@pytest.mark.parametrize("n", [2, 4])
def test_fragments_lws(peer_factory, variant, n):
    peer = peer_factory("lws")
    res = run_qjs(FRAG_JS, peer.url + "?fragments=%d" % n, env_extra=variant)
    assert_all_ok(res)


@pytest.mark.parametrize("n", [2, 4])
def test_fragments_python(peer_factory, variant, n):
    peer = peer_factory("python")
    res = run_qjs(FRAG_JS, peer.url + "frag?n=%d" % n, env_extra=variant)
    assert_all_ok(res)


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# server sends invalid UTF-8 in a text frame
BADUTF8_JS = r"""
const ws = new WebSocket(url)
const ev = []
ws.onmessage = (e) => ev.push({ type: 'message', data: String(e.data) })
ws.onerror = () => ev.push({ type: 'error' })
ws.onclose = (e) => done({ mode, events: ev, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
"""


def test_invalid_utf8_closes_1007(peer_factory, variant):
    peer = peer_factory("python")
    res = run_qjs(BADUTF8_JS, peer.url + "badutf8", env_extra=variant)
    assert res["close"]["code"] == 1007
    assert not any(e["type"] == "message" for e in res["events"]), res["events"]
    assert any(l.startswith("CLOSE 1007") for l in peer.wait_line("CLOSE ")), peer.lines


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# server closes; URL carries code & reason
SERVERCLOSE_JS = r"""
const ws = new WebSocket(url)
let opened = false
ws.onopen = () => { opened = true }
ws.onclose = (e) => done({ mode, opened, readyState: ws.readyState, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
"""


@pytest.mark.parametrize("code,reason", [(1000, "bye"), (4001, "custom reason")])
def test_server_initiated_close(peer_factory, variant, code, reason):
    peer = peer_factory("python")
    res = run_qjs(SERVERCLOSE_JS, peer.url + "close?code=%d&reason=%s" % (code, reason.replace(" ", "%20")),
                  env_extra=variant)
    assert res["opened"] is True
    assert res["readyState"] == 3
    assert res["close"] == {"code": code, "reason": reason, "wasClean": True}


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# client closes with code/reason from args
CLIENTCLOSE_JS = r"""
const code = rest[0] === undefined ? undefined : Number(rest[0])
const reason = rest[1]
const ws = new WebSocket(url)
const states = []
ws.onopen = () => {
  ws.send('x')
}
ws.onmessage = () => {
  if (code === undefined) ws.close()
  else ws.close(code, reason)
  states.push(ws.readyState)
}
ws.onclose = (e) => done({ mode, states, readyState: ws.readyState, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
"""


@pytest.mark.parametrize("args,expect", [((), (1000, "")), ((1000, "normal"), (1000, "normal")),
                                         ((3000, "app"), (3000, "app")),
                                         ((4999, "ünïcode ✓"), (4999, "ünïcode ✓"))])
def test_client_close_codes(peer_factory, variant, args, expect):
    peer = peer_factory("python")
    res = run_qjs(CLIENTCLOSE_JS, peer.url, *args, env_extra=variant)
    assert res["states"] == [2]
    assert res["close"]["code"] == expect[0]
    assert res["close"]["wasClean"] is True
    lines = peer.wait_line("CLOSE ")
    assert lines == ["CLOSE %d %s" % expect], lines


# the client program for this test, run by run.js (qjs_runs.run_qjs)
PING_JS = r"""
const ws = new WebSocket(url)
const msgs = []
ws.onmessage = (e) => {
  msgs.push(e.data)
  if (e.data === 'pong-ok') ws.close(1000)
}
ws.onclose = (e) => done({ mode, msgs, close: { code: e.code, wasClean: e.wasClean } })
"""


def test_ping_answered(peer_factory, variant):
    peer = peer_factory("python")
    res = run_qjs(PING_JS, peer.url + "ping", env_extra=variant)
    assert res["msgs"] == ["pong-ok"]
    assert res["close"]["code"] == 1000


# the client program for this test, run by run.js (qjs_runs.run_qjs)
REFUSED_JS = r"""
const ws = new WebSocket(url)
const ev = []
ws.onopen = () => ev.push('open')
ws.onerror = () => ev.push('error')
ws.onclose = (e) => { ev.push('close'); done({ mode, events: ev, readyState: ws.readyState, close: { code: e.code, wasClean: e.wasClean } }) }
"""


def test_connection_refused(variant, scheme):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    res = run_qjs(REFUSED_JS, "%s://127.0.0.1:%d/" % (scheme, port), env_extra=variant)
    assert res["events"] == ["error", "close"]
    assert res["close"] == {"code": 1006, "wasClean": False}
    assert res["readyState"] == 3


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# API errors; url is a live echo server
API_JS = r"""
const r = {}
const name = (f) => { try { f(); return 'none' } catch (e) { return e.name + (e instanceof Error ? '' : '(not Error)') } }
r.badScheme = name(() => new WebSocket('http:/x'))
r.ftp = name(() => new WebSocket('ftp://127.0.0.1/'))
r.fragment = name(() => new WebSocket('ws://127.0.0.1/#frag'))
r.badPort = name(() => new WebSocket('ws://127.0.0.1:99999/'))
r.badProto = name(() => new WebSocket(url, ['a b']))
r.dupProto = name(() => new WebSocket(url, ['chat', 'chat']))
r.constants = [WebSocket.CONNECTING, WebSocket.OPEN, WebSocket.CLOSING, WebSocket.CLOSED]
r.maxDefault = getMaxMessageSize()
r.setMaxBad = [-1, 2 ** 31, 1.5, '5', undefined].map((v) => name(() => setMaxMessageSize(v)))
r.setMaxOld = setMaxMessageSize(12345)
r.setMaxNew = setMaxMessageSize(r.maxDefault)
const ws = new WebSocket(url + 'proto', ['superchat', 'chat'])
r.url = ws.url
r.initialState = ws.readyState
r.binaryType = ws.binaryType
r.sendConnecting = name(() => ws.send('x'))
r.bufferedAmount = ws.bufferedAmount
let n = 0
ws.addEventListener('message', (e) => {
  n++
  if (n === 1) {
    r.protocol = ws.protocol
    r.protocolMsg = e.data
    r.extensions = ws.extensions
    r.closeBadCode = name(() => ws.close(1001))
    r.closeBadCode2 = name(() => ws.close(5000))
    r.closeLongReason = name(() => ws.close(1000, 'x'.repeat(124)))
    ws.send(new Uint8Array([9, 8, 7]))
  } else if (n === 2) {
    r.viewEcho = Array.from(new Uint8Array(e.data))
    r.listenerWorks = true
    ws.close(4000, 'ünïcödé')
    r.afterClose = ws.readyState
    r.sendClosing = name(() => ws.send('late'))
  }
})
ws.onclose = (e) => {
  r.close = { code: e.code, reason: e.reason, wasClean: e.wasClean }
  r.finalState = ws.readyState
  done({ mode, ...r })
}
"""


def test_api_errors(peer_factory, variant):
    peer = peer_factory("python")
    res = run_qjs(API_JS, peer.url, env_extra=variant)
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


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# many sequential connections; fd count must not grow
MANYCONN_JS = r"""
const total = Number(rest[0] || 1000)
const fds = () => os.readdir('/proc/self/fd')[0].length
let i = 0
let opened = 0
let before = -1
let mid = -1
const one = () => {
  if (i === total) {
    // let lws finish tearing down
    os.setTimeout(() => done({ mode, total, opened, before, mid, after: fds() }), 300)
    return
  }
  i++
  const ws = new WebSocket(url)
  ws.onopen = () => { opened++; ws.send('hi') }
  ws.onmessage = () => ws.close()
  ws.onerror = () => {}
  ws.onclose = () => {
    if (i === 10) before = fds()
    if (i === Math.floor(total / 2)) mid = fds()
    os.setTimeout(one, 0)
  }
}
one()
"""


@pytest.mark.parametrize("kind", ["lws", "python"])
def test_many_sequential_connections(peer_factory, variant, kind):
    peer = peer_factory(kind)
    res = run_qjs(MANYCONN_JS, peer.url, 1000, env_extra=variant, timeout=180)
    assert res["opened"] == 1000
    assert res["after"] <= res["before"], res
    assert res["mid"] <= res["before"], res
