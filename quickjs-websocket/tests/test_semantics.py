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


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# strings with lone surrogates are sent as USVStrings (each lone surrogate -> U+FFFD)
SURROGATES_JS = r"""
const cases = ['a\uD800b', '\uDC00', 'x\uD83D', '\uD83D\uDE00', 'a\uDFFF\uD800b', '\uD800\uD800', 'é\uDBFF', 'plain ascii']
const ws = new WebSocket(url)
const got = []
let i = 0
ws.onopen = () => ws.send(cases[0])
ws.onmessage = (e) => {
  got.push(Array.from(e.data, (ch) => ch.codePointAt(0).toString(16)).join(' '))
  if (++i < cases.length) ws.send(cases[i])
  else ws.close(4000, 'r\uD800')
}
ws.onclose = (e) => done({ mode, got, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
"""


def test_lone_surrogates_sent_as_fffd(peer_factory, variant):
    """Each lone surrogate goes out as U+FFFD (the strict Python peer would close with
    1007 on the raw ED A0..BF bytes); pairs stay pairs; the close reason too."""
    peer = peer_factory("python")
    res = run_qjs(SURROGATES_JS, peer.url, env_extra=variant)
    assert res["got"] == ["61 fffd 62", "fffd", "78 fffd", "1f600", "61 fffd fffd 62",
                          "fffd fffd", "e9 fffd", " ".join("%x" % ord(ch) for ch in "plain ascii")], res
    assert res["close"] == {"code": 4000, "reason": "r\ufffd", "wasClean": True}, res
    assert peer.wait_line("CLOSE ") == ["CLOSE 4000 r\ufffd"], peer.lines


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# microtask checkpoint: promise continuations run after each message's dispatch;
# url: the raw peer's /many?n=N, above (N messages in one write once we said 'go')
MICROTASK_JS = r"""
const n = Number(rest[0] || 50)
const ws = new WebSocket(url)
const log = []
let i = 0
let asyncDone = 0
ws.onopen = () => {
  log.push('open')
  Promise.resolve().then(() => log.push('open-p'))
  ws.send('go')
}
ws.onmessage = (e) => {
  const k = i++
  log.push('m' + k)
  Promise.resolve().then(() => log.push('p' + k)).then(() => log.push('q' + k))
  if (k === n - 1) ws.close(1000)
}
// an async listener: its continuation after await must also run before the next message
// (e.data is read before the await: with "eventpool" the event object is reused)
ws.addEventListener('message', async (e) => {
  const d = e.data
  await null
  asyncDone++
  log.push('a' + d.slice(1))
})
ws.onclose = (e) => {
  log.push('close')
  Promise.resolve().then(() => {
    log.push('close-p')
    done({ mode, log, asyncDone, close: { code: e.code, wasClean: e.wasClean }, pool: poolStats() })
  })
}
"""


def test_microtask_checkpoint_after_each_event(peer_factory, variant):
    """50 messages in one server write: each message's promise jobs (.then chains and
    an async listener's continuation) run before the next message is dispatched."""
    n = 50
    peer = peer_factory("raw")
    res = run_qjs(MICROTASK_JS, peer.url + "many?n=%d" % n, n, env_extra=variant)
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


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# what message handlers see, step by step (test_semantics.py compares the log of the
# optimized build with the one without "direct", where websocket.js dispatches; url:
# an echo server)
DISPATCH_JS = r"""
const ws = new WebSocket(url)
const log = []
const L = (...a) => log.push(a.map(String).join(' '))
const attrs = (o) => Object.entries(Object.getOwnPropertyDescriptors(o))
  .map(([k, d]) => k + ':' + (d.writable ? 'w' : '') + (d.enumerable ? 'e' : '') + (d.configurable ? 'c' : '') + ':' + typeof d.value).join(',')
const hex = (d) => typeof d === 'string' ? 'text:' + d : 'binary:' + Array.from(new Uint8Array(d)).join('.')
const name = (f) => { try { f(); return 'none' } catch (e) { return e.name } }
const listeners = []
const listen = (fn, opts) => { listeners.push(fn); ws.addEventListener('message', fn, opts) }
const reset = () => { ws.onmessage = null; for (const fn of listeners.splice(0)) ws.removeEventListener('message', fn) }
let prev = null
let step = 0
const steps = [
  () => { // the event object and `this`, onmessage alone
    ws.onmessage = function (e) {
      L('event', this === ws, e.type, e.target === ws, e.currentTarget === ws, e.data, JSON.stringify(e.origin),
        Object.keys(e).join(), Object.getPrototypeOf(e) === Object.prototype, attrs(e), arguments.length)
      prev = e
      next()
    }
    ws.send('one')
  },
  () => { // the next event: the same object with eventpool, and the last one's data
    const p = prev
    ws.onmessage = (e) => { L('again', e === p, p.data, e.data); e.extra = 1; prev = e; next() }
    ws.send('two')
  },
  () => { // after the handlers: the last event's data (null with eventpool); what a
    // handler added to the event stays on it (eventpool)
    L('after', prev.data)
    ws.onmessage = (e) => { L('kept', 'extra' in e, Object.keys(e).join()); next() }
    ws.send('three')
  },
  () => { // onmessage throws: reported, the listeners still run, in order
    ws.onmessage = () => { L('throw'); throw new Error('boom') }
    listen(function (e) { L('listener1', this === ws, e.data) })
    listen({ handleEvent (e) { L('handleEvent', this === ws, e.data); next() } })
    ws.send('four')
  },
  () => { // a once listener, then its second message
    reset()
    let k = 0
    ws.onmessage = (e) => { L('handler', e.data); if (++k === 2) next() }
    listen((e) => L('once', e.data), { once: true })
    ws.send('five')
    ws.send('six')
  },
  () => { // a listener added by onmessage sees the same message; a replaced onmessage the next
    reset()
    let k = 0
    ws.onmessage = (e) => {
      L('h1', e.data)
      listen((e2) => { L('late', e2.data, e2 === e); if (++k === 2) next() })
      ws.onmessage = (e3) => L('h2', e3.data)
    }
    ws.send('seven')
    ws.send('eight')
  },
  () => { // a listener that removes itself and the handler; then nothing handles a message
    reset()
    const self = (e) => { L('self', e.data); ws.removeEventListener('message', self); ws.onmessage = null }
    listen(self)
    ws.onmessage = (e) => L('before', e.data)
    ws.send('nine')
    ws.send('ten')
    os.setTimeout(next, 200)
  },
  () => { // onmessage = non-function; dispatchEvent of an own object
    reset()
    ws.onmessage = 'nope'
    L('nonfn', ws.onmessage)
    ws.onmessage = (e) => L('synthetic', e.type, e.data, this === undefined)
    listen((e) => L('synthetic-l', e.data))
    L('dispatchEvent', ws.dispatchEvent({ type: 'message', data: 'fake' }))
    next()
  },
  () => { // send(): the method, and what each kind of value is sent as
    reset()
    const d = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'send')
    L('send', typeof d.value, d.value.name, d.value.length, d.writable, d.enumerable, d.configurable)
    L('send-this', name(() => ws.send.call({}, 'x')), ws.send.call({}, 'x'), name(() => ws.send.call(null, 'x')),
      name(() => ws.send.call(undefined, 'x')), ws.send('a'))
    const got = []
    const want = 13
    ws.onmessage = (e) => { got.push(hex(e.data)); if (got.length === want) { L('sent', got.join(' ')); next() } }
    const ab = new Uint8Array([1, 2, 3]).buffer
    const moved = new Uint8Array([4]).buffer
    Object.setPrototypeOf(moved, Object.prototype)
    class MyAB extends ArrayBuffer {}
    const sub = new MyAB(2)
    new Uint8Array(sub)[0] = 7
    ws.send(ab)
    ws.send(new Uint8Array([5, 6, 7, 8]).subarray(1, 3))
    ws.send(new DataView(ab, 1, 1))
    ws.send(42)
    ws.send(moved)
    ws.send({ toString () { return 'obj' } })
    ws.send(sub)
    ws.send(ab, { transfer: true })
    ws.send('')
    ws.send(new ArrayBuffer(0))
    ws.send(undefined)
    ws.send(null)
  },
  () => { // a frozen event (eventpool: no later message can be dispatched), then close
    reset()
    ws.onmessage = (e) => { L('frozen', e.data); Object.freeze(e); ws.onmessage = (e2) => L('after-freeze', e2.data) }
    ws.send('eleven')
    ws.send('twelve')
    os.setTimeout(() => ws.close(1000), 300)
  },
]
// each step begins from a timer, after the last one's message was dispatched (a
// listener added from a handler gets the message being dispatched: step 6)
function next () { os.setTimeout(() => { const f = steps[step++]; if (f) f() }, 0) }
ws.onopen = next
ws.onclose = (e) => done({ mode, log, steps: step, close: { code: e.code, wasClean: e.wasClean } })
"""


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
    direct = run_qjs(DISPATCH_JS, peer.url, env_extra={"QJSWS_DISABLE": off})
    naive = run_qjs(DISPATCH_JS, peer.url, env_extra={"QJSWS_DISABLE": ",".join(filter(None, ["direct", off]))})
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


# sockets opened, used and closed one after another (each one's object and connection freed
# by the collector before the next one is made, so that a new WebSocket may take the address
# of an old one), then three open at once sending in turn: every echo must come back on the
# socket that sent it (the native send() remembers the last sender's connection, src/jsconn.c)
SENDERS_JS = r"""
const got = { serial: [], mixed: [] }
let round = 0
function serial() {
  if (round === 20) return mixed()
  const k = round++
  const ws = new WebSocket(url)
  ws.onopen = () => { ws.send('s' + k); ws.send(new Uint8Array([k]).buffer) }
  let n = 0
  ws.onmessage = (e) => {
    got.serial.push(typeof e.data === 'string' ? e.data : 's' + new Uint8Array(e.data)[0] + 'b')
    if (++n === 2) ws.close()
  }
  ws.onclose = () => { std.gc(); serial() }
}
function mixed() {
  const socks = [0, 1, 2].map(() => new WebSocket(url))
  let open = 0, echoes = 0
  socks.forEach((ws, i) => {
    got.mixed[i] = []
    ws.onopen = () => {
      if (++open < socks.length) return
      for (let j = 0; j < 30; j++) socks[j % 3].send('m' + (j % 3) + ':' + j)
    }
    ws.onmessage = (e) => {
      got.mixed[i].push(e.data)
      if (++echoes === 30) socks.forEach((s) => s.close())
    }
    ws.onclose = () => { if (--open === 0) done({ mode, got }) }
  })
}
serial()
"""


def test_every_send_goes_out_on_its_own_socket(peer_factory, variant):
    peer = peer_factory("raw")
    res = run_qjs(SENDERS_JS, peer.url + "echo", env_extra=variant)
    want_serial = []
    for k in range(20):
        want_serial += ["s%d" % k, "s%db" % k]
    assert res["got"]["serial"] == want_serial, res
    for i in range(3):
        assert res["got"]["mixed"][i] == ["m%d:%d" % (i, j) for j in range(i, 30, 3)], res
