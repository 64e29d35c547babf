// Test programs for quickjs-websocket, run under qjs:
//   qjs run.js MODE URL [ARGS...]
// Prints one JSON line with the results and exits 0 (the pytest side judges).
import * as std from 'std'
import * as os from 'os'
import { WebSocket, poolStats, options, getMaxMessageSize, setMaxMessageSize, getCAFile, setCAFile, getTLSResume, setTLSResume } from '../../../build/quickjs-websocket/websocket.js'

const [, mode, url, ...rest] = scriptArgs

function out (obj) {
  std.out.puts(JSON.stringify(obj) + '\n')
  std.out.flush()
}

// natural: let the event loop run dry (runtime teardown runs, for valgrind)
function done (obj, natural) {
  out(obj)
  if (natural) os.clearTimeout(watchdog)
  else std.exit(0)
}

// hard stop so a hung test never hangs pytest
const watchdog = os.setTimeout(() => done({ error: 'timeout in qjs test program', mode }), Number(std.getenv('QJSWS_TEST_TIMEOUT') || 60000))

function pattern (n, seed) {
  const u = new Uint8Array(n)
  for (let i = 0; i < n; i++) u[i] = (i * 31 + seed) & 255
  return u
}

function textPattern (n) {
  let s = 'The quick brown fox jumps over the lazy dog 0123456789. '
  while (s.length < n) s += s
  return s.slice(0, n)
}

// peak resident set (VmHWM) and peak virtual size (VmPeak: counts allocations
// never touched too) of this process, KiB
function procStatus (key) {
  const f = std.open('/proc/self/status', 'r') // (std.loadFile() reads /proc files as empty)
  const text = f ? f.readAsString() : ''
  if (f) f.close()
  const m = new RegExp(key + ':\\s+(\\d+)').exec(text)
  return m ? Number(m[1]) : -1
}
function peakRss () { return procStatus('VmHWM') }

function sameBytes (ab, u) {
  if (!(ab instanceof ArrayBuffer) || ab.byteLength !== u.length) return false
  const a = new Uint8Array(ab)
  for (let i = 0; i < u.length; i++) if (a[i] !== u[i]) return false
  return true
}

// sequential echo of a list of [label, payload] cases
function echoCases (cases, fin) {
  const ws = new WebSocket(url)
  const results = []
  let i = 0
  const next = () => {
    if (i === cases.length) { ws.close(1000, 'done'); return }
    ws.send(cases[i][1])
  }
  ws.onopen = next
  ws.onmessage = (e) => {
    const [label, sent] = cases[i]
    let ok
    if (typeof sent === 'string') ok = typeof e.data === 'string' && e.data === sent
    else {
      const u = sent instanceof ArrayBuffer ? new Uint8Array(sent) : new Uint8Array(sent.buffer, sent.byteOffset, sent.byteLength)
      ok = sameBytes(e.data, u)
    }
    results.push({ label, ok, got: typeof e.data === 'string' ? 'text:' + e.data.length : 'binary:' + e.data.byteLength })
    i++
    next()
  }
  ws.onerror = (e) => results.push({ label: 'error', ok: false, got: e.message })
  ws.onclose = (e) => fin({ results, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
}

const modes = {
  echo () {
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
  },

  // many sends in one burst (coalesced into few socket writes with "framing"):
  // every echo must come back intact and in order; sizes straddle the 7/16/64-bit
  // length encodings
  burst () {
    const n = Number(rest[0] || 3000)
    const sizes = [0, 1, 11, 32, 125, 126, 127, 200, 4096, 65535, 65536, 65537, 70000]
    const msgs = []
    for (let i = 0; i < n; i++) {
      const len = sizes[i % sizes.length]
      msgs.push(i & 1 ? textPattern(len + (i % 7)).slice(0, len) : pattern(len, i & 255).buffer)
    }
    const ws = new WebSocket(url)
    let got = 0
    let bad = 0
    let maxBuffered = 0
    ws.onopen = () => {
      for (const m of msgs) ws.send(m)
      maxBuffered = ws.bufferedAmount
    }
    ws.onmessage = (e) => {
      const sent = msgs[got++]
      const ok = typeof sent === 'string' ? e.data === sent : sameBytes(e.data, new Uint8Array(sent))
      if (!ok) bad++
      if (got === n) ws.close(1000)
    }
    const errors = []
    ws.onerror = (e) => errors.push(e.message)
    ws.onclose = (e) => done({ mode, options, got, bad, maxBuffered, bufferedAfter: ws.bufferedAmount,
      close: { code: e.code, wasClean: e.wasClean }, errors, pool: poolStats() })
  },

  // messages the server fragments; we only check reassembly
  frag () {
    const sizes = (rest[0] || '0,1,2,3,100,4096,65536,200000,1048576').split(',').map(Number)
    const cases = []
    for (const n of sizes) {
      cases.push(['text-' + n, textPattern(n)])
      cases.push(['binary-' + n, pattern(n, 3).buffer])
    }
    cases.push(['utf8-4byte', '😀𝄞🚀'.repeat(1000)])
    echoCases(cases, (r) => done({ mode, ...r }))
  },

  // server sends invalid UTF-8 in a text frame
  badutf8 () {
    const ws = new WebSocket(url)
    const ev = []
    ws.onmessage = (e) => ev.push({ type: 'message', data: String(e.data) })
    ws.onerror = () => ev.push({ type: 'error' })
    ws.onclose = (e) => done({ mode, events: ev, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
  },

  // server closes; URL carries code & reason
  serverclose () {
    const ws = new WebSocket(url)
    let opened = false
    ws.onopen = () => { opened = true }
    ws.onclose = (e) => done({ mode, opened, readyState: ws.readyState, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
  },

  // client closes with code/reason from args
  clientclose () {
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
  },

  ping () {
    const ws = new WebSocket(url)
    const msgs = []
    ws.onmessage = (e) => {
      msgs.push(e.data)
      if (e.data === 'pong-ok') ws.close(1000)
    }
    ws.onclose = (e) => done({ mode, msgs, close: { code: e.code, wasClean: e.wasClean } })
  },

  refused () {
    const ws = new WebSocket(url)
    const ev = []
    ws.onopen = () => ev.push('open')
    ws.onerror = () => ev.push('error')
    ws.onclose = (e) => { ev.push('close'); done({ mode, events: ev, readyState: ws.readyState, close: { code: e.code, wasClean: e.wasClean } }) }
  },

  // API errors; url is a live echo server
  api () {
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
  },

  // many sequential connections; fd count must not grow
  manyconn () {
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
  },

  // the server sends frames in the same write as its 101 response (peer_raw /burst)
  burst101 () {
    const want = ['text:m0', 'text:fragmented', 'binary:0,1,2,3,4,5,6,7,8,9',
      'text:' + 'x'.repeat(300), 'binary:97,98,99,100', 'text:last']
    const show = (d) => typeof d === 'string' ? 'text:' + d : 'binary:' + Array.from(new Uint8Array(d)).join(',')
    const ws = new WebSocket(url)
    const got = []
    const echoes = [textPattern(10), pattern(200, 1).buffer, textPattern(70000), pattern(65536, 2).buffer, 'é€😀']
    let e = 0
    let bad = 0
    const errors = []
    ws.onerror = (ev) => errors.push(ev.message)
    ws.onmessage = (ev) => {
      if (got.length < want.length) {
        got.push(show(ev.data))
        if (got.length === want.length) ws.send(echoes[0])
        return
      }
      const sent = echoes[e++]
      if (typeof sent === 'string' ? ev.data !== sent : !sameBytes(ev.data, new Uint8Array(sent))) bad++
      if (e < echoes.length) ws.send(echoes[e])
      else ws.close(1000)
    }
    ws.onclose = (ev) => done({ mode, ok: JSON.stringify(got) === JSON.stringify(want), got: got.map((s) => s.slice(0, 40)),
      echoed: e, bad, errors, close: { code: ev.code, reason: ev.reason, wasClean: ev.wasClean }, pool: poolStats() },
    std.getenv('QJSWS_TEST_NATURAL') !== undefined)
  },

  // two connections at once: the first one's messages come in the write of its 101
  // (peer_raw /pings?...&msg=M), and at its first message the second one (rest[0])
  // connects and echoes one message
  interleave () {
    const a = new WebSocket(url)
    let got = 0
    let bad = 0
    let echoed = false
    let aclose = null
    let closed = 0
    const errors = []
    const finish = () => {
      if (++closed === 2) done({ mode, got, bad, echoed, errors, close: aclose, pool: poolStats() })
    }
    a.onmessage = (e) => {
      if (e.data !== 'after') bad++
      if (got++ > 0) return
      const b = new WebSocket(rest[0])
      b.onopen = () => b.send('b')
      b.onmessage = (e2) => { echoed = e2.data === 'b'; b.close(1000) }
      b.onerror = (e2) => errors.push('b: ' + e2.message)
      b.onclose = finish
    }
    a.onerror = (e) => errors.push('a: ' + e.message)
    a.onclose = (e) => { aclose = { code: e.code, wasClean: e.wasClean }; finish() }
  },

  // record every event with its time; optional actions:
  //   rest[0]: 'close' -> close(1000) once the first message (or open, if rest[1] is 'open') arrived
  events () {
    // QJSWS_TEST_SETMAX: setMaxMessageSize() before connecting
    const setMax = std.getenv('QJSWS_TEST_SETMAX')
    const maxBefore = getMaxMessageSize()
    if (setMax !== undefined) setMaxMessageSize(Number(setMax))
    const t0 = os.now()
    const ms = () => Math.round(os.now() - t0)
    // QJSWS_TEST_PROTOCOLS: the subprotocols offered (comma-separated)
    const protocols = std.getenv('QJSWS_TEST_PROTOCOLS')
    const ws = protocols === undefined ? new WebSocket(url) : new WebSocket(url, protocols.split(','))
    const ev = []
    const action = rest[0] || ''
    const when = rest[1] || 'message'
    ws.onopen = () => {
      ev.push({ type: 'open', t: ms(), protocol: ws.protocol })
      if (action === 'close' && when === 'open') ws.close(1000)
      if (action === 'send') ws.send(rest[1] || 'x')
    }
    ws.onmessage = (e) => {
      const d = e.data
      ev.push({ type: 'message', t: ms(), kind: typeof d === 'string' ? 'text' : 'binary', len: typeof d === 'string' ? d.length : d.byteLength })
      if (action === 'close' && when === 'message') ws.close(1000)
    }
    ws.onerror = (e) => ev.push({ type: 'error', t: ms(), message: e.message })
    ws.onclose = (e) => {
      ev.push({ type: 'close', t: ms() })
      // QJSWS_TEST_NATURAL: let the event loop run dry (runtime teardown, for valgrind)
      done({ mode, events: ev, close: { code: e.code, reason: e.reason, wasClean: e.wasClean }, readyState: ws.readyState,
        peakRssKiB: peakRss(), peakVmKiB: procStatus('VmPeak'), maxBefore, max: getMaxMessageSize(), pool: poolStats() },
      std.getenv('QJSWS_TEST_NATURAL') !== undefined)
    }
  },

  // bufferedAmount at every point JS can look: after each send, in every event
  // handler (of its own connection and of another one), from timers while the queue
  // drains, after close() and after the close event.  Each reading must equal what
  // the connection's queue holds at that moment, conn.buffered() (the accessor's
  // answer), whether bufferedAmount is the published data property ("buffered")
  // or the accessor.  rest: count and size of the large sends (alternately text
  // and binary); QJSWS_TEST_NATURAL: let the loop run dry at the end (valgrind).
  buffered () {
    const n = Number(rest[0] || 16)
    const size = Number(rest[1] || 1048576)
    const big = [textPattern(size), pattern(size, 5).buffer]
    const truth = (w) => w._conn === null ? 0 : w._conn.buffered()
    const r = { mode, options, checks: 0, mismatches: [], afterSends: [], drain: [] }
    const check = (w, where) => {
      const v = w.bufferedAmount
      const t = truth(w)
      r.checks++
      if (v !== t && r.mismatches.length < 20) r.mismatches.push({ where, v, t })
      return v
    }
    const name = (f) => { try { f(); return 'none' } catch (e) { return e.name } }
    // url: peer_raw's base URL; a's peer reads nothing for 300 ms (QJSWS_TEST_STALL_MS:
    // longer under valgrind, where the sends themselves take longer), so its sends back up
    const a = new WebSocket(url + 'stall?ms=' + (std.getenv('QJSWS_TEST_STALL_MS') || '300')) // the large sender
    const b = new WebSocket(url + 'echo') // a bystander: its handlers look at a
    let echoes = 0
    let polls = 0
    let bEchoes = 0
    let aClosed = false
    r.connecting = check(a, 'connecting')
    a.onopen = () => {
      check(a, 'open')
      for (let i = 0; i < n; i++) {
        a.send(big[i & 1])
        r.afterSends.push(check(a, 'after send ' + i))
      }
      // the property, as the user sees it
      const d = Object.getOwnPropertyDescriptor(a, 'bufferedAmount')
      r.own = d === undefined ? null : { data: 'value' in d, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable }
      const before = a.bufferedAmount
      r.assign = name(() => { a.bufferedAmount = 12345 })
      r.assignKept = a.bufferedAmount === before && check(a, 'after assignment') === before
      r.deleted = delete a.bufferedAmount
      check(a, 'after delete')
      r.ownAgain = Object.getOwnPropertyDescriptor(a, 'bufferedAmount') !== undefined
      let same = true
      for (let i = 0; i < 1000; i++) if (a.bufferedAmount !== before) same = false
      r.stable = same
      os.setTimeout(poll, 0)
    }
    // from timers: the queue drains while nothing is sent
    const poll = () => {
      if (aClosed) return
      polls++
      const v = check(a, 'poll')
      if (r.drain.length === 0 || r.drain[r.drain.length - 1] !== v) r.drain.push(v)
      if (v !== 0) os.setTimeout(poll, 1)
    }
    a.onmessage = () => {
      check(a, 'a.onmessage')
      if (++echoes < n) return
      // the last echo: queue one more, then close with it still queued
      a.send(big[0])
      r.lastSend = check(a, 'last send')
      a.close(1000)
      r.afterClose = check(a, 'after close()')
      a.send('late') // CLOSING: discarded
      r.afterLateSend = check(a, 'after send while closing')
      Promise.resolve().then(() => check(a, 'microtask after close()'))
    }
    a.onclose = (e) => {
      aClosed = true
      r.closeEvent = check(a, 'close event')
      a.send(big[1]) // CLOSED: discarded
      r.afterClosedSend = check(a, 'send after close event')
      r.aClose = { code: e.code, wasClean: e.wasClean }
      b.close(1000)
    }
    b.onopen = () => { check(a, 'b.onopen'); b.send('tick') }
    b.onmessage = () => {
      bEchoes++
      check(a, 'b.onmessage')
      if (!aClosed) os.setTimeout(() => { check(a, 'b timer'); if (b.readyState === 1) b.send('tick') }, 0)
    }
    b.onclose = () => {
      r.echoes = echoes
      r.polls = polls
      r.bEchoes = bEchoes
      r.final = check(a, 'end')
      done(r, std.getenv('QJSWS_TEST_NATURAL') !== undefined)
    }
  },

  // microtask checkpoint: promise continuations run after each message's dispatch;
  // url: peer_raw /many?n=N (N messages in one write once we said 'go')
  microtask () {
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
  },

  // what message handlers see, step by step (test_semantics.py compares the log of the
  // optimized build with the one without "direct", where websocket.js dispatches; url:
  // an echo server)
  dispatch () {
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
  },

  // the output blocks our framing keeps (poolStats().out_spares/out_spare_bytes); url:
  // peer_raw's /stall?until=FILE (reads nothing until FILE exists, then echoes): N x 1 MiB
  // at once back up in the queue, then FILE (args: N FILE) is made; kept as it drains
  // (the bound); trimmed once idle (the housekeeping ticks); kept again by a burst of
  // 64 KiB messages; trimmed at the close
  spares () {
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
  },

  // strings with lone surrogates are sent as USVStrings (each lone surrogate -> U+FFFD)
  surrogates () {
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
  },

  // leak test: N messages (text and binary, several sizes) then pool stats
  // every message as it came (text as UTF-16 units, binary as hex), the errors and the close:
  // the stream property test (test_stream_property.py) compares them with what it sent
  // wss://: a connection with the CA file in force (QJSWS_CA_FILE, or none), then
  // setCAFile(ARG) and a second one (each: its events), then setCAFile(null)
  cafile () {
    const results = []
    const before = getCAFile()
    const one = (next) => {
      const ws = new WebSocket(url)
      const ev = []
      ws.onopen = () => { ev.push('open'); ws.close(1000) }
      ws.onerror = (e) => ev.push('error')
      ws.onclose = (e) => { ev.push('close ' + e.code + ' ' + e.wasClean); results.push(ev); next() }
    }
    one(() => {
      let bad = null
      try { setCAFile(42) } catch (e) { bad = e.name }
      let missing = null
      try { setCAFile('/nonexistent/ca.pem') } catch (e) { missing = e.name }
      const prev = setCAFile(rest[0])
      one(() => {
        const now = getCAFile()
        setCAFile(null)
        done({ mode, results, before, prev, now, after: getCAFile(), bad, missing })
      })
    })
  },
  resume () {
    // rest[0]: 'on' turns resumption on from JS; connects 4 times in sequence, each
    // connection echoing one message before it closes
    const before = getTLSResume()
    let bad = null
    try { setTLSResume(1) } catch (e) { bad = e.name }
    if (rest[0] === 'on') setTLSResume(true)
    const results = []
    const one = (left) => {
      const ws = new WebSocket(url)
      ws.onopen = () => ws.send('again')
      ws.onmessage = (e) => { results.push(e.data); ws.close(1000) }
      ws.onerror = () => results.push('error')
      ws.onclose = () => (left > 1 ? one(left - 1) : done({ mode, before, after: getTLSResume(), bad, results, pool: poolStats() }))
    }
    one(4)
  },
  tlsinfo () {
    const ws = new WebSocket(url)
    const seen = { connecting: ws.tlsInfo }
    ws.onopen = () => { seen.open = ws.tlsInfo; ws.close(1000) }
    ws.onerror = () => { seen.error = true }
    ws.onclose = (e) => { seen.closed = ws.tlsInfo; done({ mode, seen, code: e.code }) }
  },
  collect () {
    const ws = new WebSocket(url)
    ws.binaryType = 'arraybuffer'
    const messages = []
    const errors = []
    const hex = (ab) => {
      const u = new Uint8Array(ab)
      const parts = new Array(u.length)
      for (let i = 0; i < u.length; i++) parts[i] = (u[i] < 16 ? '0' : '') + u[i].toString(16)
      return parts.join('')
    }
    // text as its UTF-16 code units, 4 hex digits each (a raw U+0085 or U+2028 would
    // split the output line for the reader)
    const units = (str) => {
      const parts = new Array(str.length)
      for (let i = 0; i < str.length; i++) parts[i] = str.charCodeAt(i).toString(16).padStart(4, '0')
      return parts.join('')
    }
    ws.onmessage = (e) => {
      messages.push(typeof e.data === 'string' ? ['text', units(e.data)] : ['binary', hex(e.data)])
    }
    ws.onerror = (e) => errors.push(e.message)
    ws.onclose = (e) => done({ mode, messages, errors, close: { code: e.code, reason: e.reason, wasClean: e.wasClean } })
  },

  leak () {
    const total = Number(rest[0] || 10000)
    const ws = new WebSocket(url)
    const sizes = [10, 300, 3000, 10000, 70000]
    let sent = 0
    let got = 0
    let bad = 0
    const payloads = sizes.map((n) => [textPattern(n), pattern(n, 1).buffer])
    const sendOne = () => {
      const p = payloads[sent % sizes.length][sent & 1]
      sent++
      ws.send(p)
    }
    ws.onopen = () => { for (let k = 0; k < 16 && sent < total; k++) sendOne() }
    ws.onmessage = (e) => {
      got++
      const n = typeof e.data === 'string' ? e.data.length : e.data.byteLength
      if (n !== sizes[(got - 1) % sizes.length]) bad++
      if (sent < total) sendOne()
      else if (got === total) ws.close(1000)
    }
    ws.onclose = (e) => {
      // give lws a moment, then report
      os.setTimeout(() => done({ mode, got, bad, close: e.code, pool: poolStats() }, true), 50)
    }
  },
}

if (!modes[mode]) done({ error: 'unknown mode ' + mode })
modes[mode]()
