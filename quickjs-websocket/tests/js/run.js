// Test programs for quickjs-websocket, run under qjs:
//   qjs run.js MODE URL [ARGS...]
// Prints one JSON line with the results and exits 0 (the pytest side judges).  MODE: one
// of the modes below, the programs several test files share, or FILE.js, a test's own
// program (written inline in its test file; qjs_runs.run_qjs makes the file).
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

// the programs several test files share (a test file's own: inline in it)
const modes = {
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
  // every message as it came (text as UTF-16 units, binary as hex), the errors and the close:
  // the stream property test (test_stream_property.py) compares them with what it sent
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
}

// A mode given as a file (a test's own JS, inline in its test file: qjs_runs.run_qjs)
// exports a function that takes what the modes here see (qjs_runs.KIT names them).
const kit = { mode, url, rest, std, os, WebSocket, poolStats, options, getMaxMessageSize, setMaxMessageSize,
  getCAFile, setCAFile, getTLSResume, setTLSResume, out, done, pattern, textPattern, procStatus, peakRss, sameBytes, echoCases }

if (modes[mode]) modes[mode]()
else if (mode.endsWith('.js')) import(mode).then((m) => m.default(kit)).catch((e) => done({ error: 'mode ' + mode + ': ' + e }))
else done({ error: 'unknown mode ' + mode })
