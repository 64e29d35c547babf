/*
 * Browser-style WebSocket for the stock QuickJS `qjs`, on libwebsockets.
 *
 *   import { WebSocket } from './websocket.js'
 *
 * The native half (lws.so, next to this file) does the protocol work and
 * talks to the qjs event loop through os.setReadHandler/os.setWriteHandler
 * and os.setTimeout.  Optimizations are switched off with the environment
 * variable QJSWS_DISABLE (see README.md); lws.options() reports them.
 */
import * as os from 'os'
import * as std from 'std'
import * as lws from './lws.so'

const OPT = lws.options()
/* opt "direct": C dispatches messages itself (the naive receive path, join
   off, goes through _emitMessage) */
const DIRECT = OPT.direct && OPT.join

const CONNECTING = 0
const OPEN = 1
const CLOSING = 2
const CLOSED = 3

/* lws timers (connect/close-ack timeouts) only need coarse service */
const HOUSEKEEP_MS = 200

export class DOMException extends Error {
  constructor (message, name) {
    super(message)
    this.name = name || 'Error'
  }
}

function reportError (e) {
  try {
    std.err.puts('Uncaught exception in WebSocket event handler: ' + e + '\n')
    if (e && e.stack) std.err.puts(e.stack + '\n')
    std.err.flush()
  } catch (_) {}
}

/* ------------------------------------------------------------------ */
/* event loop glue                                                      */

let timer = null
let timerImmediate = false

function onTimer () {
  timer = null
  schedule(lws.tick())
}

/*
 * Keep lws' timers serviced while connections exist.
 * scheduler on:  one timer; re-armed only when it fired or when an
 *                immediate service is needed and the armed one is not.
 * scheduler off: the naive way, clearTimeout + setTimeout after every
 *                service call.
 */
function schedule (pending) {
  if (lws.active() === 0) {
    if (timer !== null) {
      os.clearTimeout(timer)
      timer = null
    }
    return
  }
  if (OPT.scheduler) {
    if (timer !== null && (timerImmediate || !pending)) return
    if (timer !== null) os.clearTimeout(timer)
  } else if (timer !== null) {
    os.clearTimeout(timer)
  }
  timerImmediate = !!pending
  timer = os.setTimeout(onTimer, pending ? 0 : HOUSEKEEP_MS)
}

function onEpoll () {
  schedule(lws.service())
}

/* called from C when lws (un)registers interest in a socket */
function pollfn (fd, mask) {
  if (OPT.batch) {
    /* fd is the epoll fd holding every lws socket */
    os.setReadHandler(fd, mask ? onEpoll : null)
  } else {
    os.setReadHandler(fd, (mask & 1) ? () => schedule(lws.service_fd(fd, 1)) : null)
    os.setWriteHandler(fd, (mask & 2) ? () => schedule(lws.service_fd(fd, 2)) : null)
  }
}

let handle = null
function ensureInit () {
  /* C calls the events' methods with this = the WebSocket: no closures per connection */
  if (handle === null) {
    const P = WebSocket.prototype
    handle = lws.init(pollfn, P._event, P._emitMessage, P._dispatch, reportError)
  }
}

/* ------------------------------------------------------------------ */
/* URL parsing (naive JS fallback for opt "urlparse")                   */

/* regular expressions are made at their first use: a literal is compiled when the
   module is loaded, which every start-up pays (String.raw: the literal's text) */
const RE_SRC = {
  url: [String.raw`^\s*(wss?|https?):\/\/(\[[^\]\/?#@]+\]|[^\/?#:@\[\]]+)(?::(\d*))?([\/?][^#]*)?\s*$`, 'i'],
  hostBad: [String.raw`[\s%<>\\^|]`, ''],
  space: [String.raw`\s`, ''],
  token: ['^[!#$%&\'*+\\-.^_`|~0-9A-Za-z]+$', '']
}
const RE = Object.create(null)
function re (name) {
  return RE[name] || (RE[name] = new RegExp(RE_SRC[name][0], RE_SRC[name][1]))
}

function parseUrlJS (url) {
  if (url.indexOf('#') >= 0) throw new SyntaxError('Invalid WebSocket URL')
  const m = re('url').exec(url)
  if (m === null) throw new SyntaxError('Invalid WebSocket URL')
  const scheme = m[1].toLowerCase()
  const secure = scheme === 'wss' || scheme === 'https'
  let host = m[2].toLowerCase()
  if (host[0] === '[') host = host.slice(1, -1)
  if (re('hostBad').test(host)) throw new SyntaxError('Invalid WebSocket URL')
  let port = secure ? 443 : 80
  if (m[3] !== undefined && m[3] !== '') {
    port = parseInt(m[3], 10)
    if (!(port >= 0 && port <= 65535)) throw new SyntaxError('Invalid WebSocket URL')
  }
  let path = m[4] === undefined ? '/' : m[4]
  if (path[0] === '?') path = '/' + path
  if (re('space').test(path)) throw new SyntaxError('Invalid WebSocket URL')
  const hostpart = host.indexOf(':') >= 0 ? '[' + host + ']' : host
  const defport = secure ? 443 : 80
  const href = (secure ? 'wss://' : 'ws://') + hostpart + (port === defport ? '' : ':' + port) + path
  return [secure, host, port, path, href] /* as lws.parse_url() */
}

/* ------------------------------------------------------------------ */
/* naive reassembly (opt "join" off): JS collects chunks and joins them */

function arrayBufferJoinNaive (bufs) {
  const total = bufs.reduce((n, b) => n + b.byteLength, 0)
  const out = new Uint8Array(total)
  let off = 0
  for (let i = 0; i < bufs.length; i++) {
    const u = new Uint8Array(bufs[i])
    out.set(u, off)
    off += u.length
  }
  return out.buffer
}


/*
 * permessage-deflate (RFC 7692): the third argument's perMessageDeflate, as
 * connect() takes it: null (not offered), or [server_no_context_takeover,
 * client_no_context_takeover, server_max_window_bits, client_max_window_bits]
 * (window bits 0: not named; client's 1: named without a value).  true offers
 * "permessage-deflate; client_max_window_bits" (what ws, undici and browsers
 * offer).  Bad values throw here, at construction.
 */
const PMD_KEYS = ['serverNoContextTakeover', 'clientNoContextTakeover', 'serverMaxWindowBits', 'clientMaxWindowBits']
function windowBits (name, v, any) {
  if (v === undefined || v === false) return 0
  if (v === true && any) return 1
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 9 || v > 15) {
    throw new RangeError('perMessageDeflate.' + name + ': an integer from 9 to 15' + (any ? ', true or false' : ''))
  }
  return v
}
function deflateOffer (pmd, secure) {
  if (pmd === undefined || pmd === false || pmd === null) return null
  if (pmd !== true && typeof pmd !== 'object') {
    throw new TypeError('perMessageDeflate: true, false or an object of parameters')
  }
  let offer
  if (pmd === true) {
    offer = [0, 0, 0, 1]
  } else {
    for (const k of Object.keys(pmd)) {
      if (PMD_KEYS.indexOf(k) < 0) throw new TypeError('perMessageDeflate: unknown parameter ' + k)
    }
    for (const k of PMD_KEYS.slice(0, 2)) {
      if (pmd[k] !== undefined && typeof pmd[k] !== 'boolean') throw new TypeError('perMessageDeflate.' + k + ': true or false')
    }
    offer = [pmd.serverNoContextTakeover ? 1 : 0, pmd.clientNoContextTakeover ? 1 : 0,
      windowBits('serverMaxWindowBits', pmd.serverMaxWindowBits, false),
      windowBits('clientMaxWindowBits', pmd.clientMaxWindowBits === undefined ? true : pmd.clientMaxWindowBits, true)]
  }
  /* switched off (QJSWS_DISABLE=deflate, or all): not offered */
  if (!OPT.deflate) return null
  if (!lws.own_path(secure)) {
    throw new DOMException('permessage-deflate needs the module\'s own connection setup and framing ' +
      '(libwebsockets, which does it with connect, framing, batch' + (secure ? ' or tls' : '') +
      ' off, is built without extensions)', 'NotSupportedError')
  }
  return offer
}

function utf8Length (s) {
  return lws.encode_utf8(s).byteLength
}

/* ------------------------------------------------------------------ */

export class WebSocket {
  /* options (not in the standard): {perMessageDeflate: true | {serverNoContextTakeover,
     clientNoContextTakeover, serverMaxWindowBits, clientMaxWindowBits}} */
  constructor (url, protocols, options) {
    /* (`arguments` only when needed: it costs an object per construction) */
    if (url === undefined && arguments.length < 1) throw new TypeError('WebSocket: 1 argument required')
    url = String(url)
    /* [secure, host, port, path, url as serialized] */
    const u = OPT.urlparse ? lws.parse_url(url) : parseUrlJS(url)

    let protos = null
    if (protocols !== undefined) {
      const list = typeof protocols === 'string' ? [protocols] : Array.from(protocols, String)
      const seen = new Set()
      for (const p of list) {
        if (!re('token').test(p) || seen.has(p.toLowerCase())) {
          throw new DOMException('Invalid subprotocol: ' + p, 'SyntaxError')
        }
        seen.add(p.toLowerCase())
      }
      if (list.length) protos = list.join(', ')
    }
    let deflate = null
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') throw new TypeError('WebSocket: options must be an object')
      deflate = deflateOffer(options.perMessageDeflate, u[0])
    }

    /* as few fields as possible: each one costs a property addition per
       connection (the handshakes workload creates thousands) */
    this._url = u[4]
    this._readyState = CONNECTING
    this._protocol = ''
    this._binaryType = 'arraybuffer'
    this._onopen = null
    this._onmessage = null
    this._onerror = null
    this._onclose = null
    this._listeners = null
    this._lsMessage = null
    if (!OPT.join) {
      /* the naive receive path's chunk collection */
      this._inbuf = null
      this._inCount = 0
      this._inBinary = false
    }
    /* eventpool: the message event object, made at the first message and
       reused for every later one (handlers must not keep it); with "direct"
       C makes and keeps it */
    if (!DIRECT) this._evMessage = null

    ensureInit()
    /* _conn is absent until connect() returns: events raised inside it are
       deferred (_event); _deferred too exists only then */
    this._conn = deflate === null ? lws.connect(u[0], u[1], u[2], u[3], protos, this)
      : lws.connect(u[0], u[1], u[2], u[3], protos, this, deflate)
    const q = this._deferred
    if (q !== undefined) {
      this._deferred = undefined
      /* one timer per event: qjs runs the promise jobs after each handler,
         the same microtask checkpoint C does after events it dispatches */
      const next = () => {
        const e = q.shift()
        this._event(e[0], e[1], e[2], e[3], e[4])
        if (q.length) os.setTimeout(next, 0)
      }
      os.setTimeout(next, 0)
    }
    schedule(false)
  }

  get url () { return this._url }
  get readyState () { return this._readyState }
  get protocol () { return this._protocol }
  /* the server's Sec-WebSocket-Extensions answer once open, as browsers give it
     (permessage-deflate agreed); '' when none */
  get extensions () { return this._extensions || '' }
  get binaryType () { return this._binaryType }
  set binaryType (v) {
    /* only ArrayBuffer delivery exists in qjs (no Blob); other values ignored */
    if (v === 'arraybuffer') this._binaryType = v
  }

  /*
   * buffered on:  the first read makes bufferedAmount an own data property
   *               of this WebSocket (non-writable), which C keeps current
   *               from then on: later reads are plain property lookups and
   *               never get here.
   * buffered off: every read calls C, which walks the send queue.
   */
  /*
   * Not in the standard: over wss://, once the TLS handshake is done, what it
   * negotiated, {version, cipher, group, library} (null where not known);
   * null over ws://, before the handshake is done, and once the connection
   * is over.
   */
  get tlsInfo () {
    const c = this._conn
    return c ? c.tls() : null
  }

  get bufferedAmount () {
    const c = this._conn
    if (c === null) return 0
    return OPT.buffered ? c.watch() : c.buffered()
  }

  get onopen () { return this._onopen }
  set onopen (f) { this._onopen = typeof f === 'function' ? f : null }
  get onmessage () { return this._onmessage }
  set onmessage (f) {
    this._onmessage = typeof f === 'function' ? f : null
    if (DIRECT) this._messageHandlers()
  }
  get onerror () { return this._onerror }
  set onerror (f) { this._onerror = typeof f === 'function' ? f : null }
  get onclose () { return this._onclose }
  set onclose (f) { this._onclose = typeof f === 'function' ? f : null }

  send (data, options) {
    const st = this._readyState
    if (st === CONNECTING) throw new DOMException('WebSocket is still CONNECTING', 'InvalidStateError')
    if (st !== OPEN) return /* CLOSING/CLOSED: discarded, as in browsers */
    const c = this._conn
    if (typeof data === 'string') {
      if (OPT.strsend) c.send(data, true)
      else c.send(lws.encode_utf8(data), true) /* naive: intermediate copy */
    } else if (data instanceof ArrayBuffer) {
      /* C copies synchronously into the frame buffer, so no defensive
         copy is needed; {transfer: true} is accepted either way. */
      if (OPT.transfer) c.send(data, false)
      else c.send(data.slice(0), false)
    } else if (ArrayBuffer.isView(data)) {
      if (OPT.transfer) {
        c.send(data.buffer, false, data.byteOffset, data.byteLength)
      } else {
        c.send(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength), false)
      }
    } else {
      const s = String(data)
      if (OPT.strsend) c.send(s, true)
      else c.send(lws.encode_utf8(s), true)
    }
    void options
  }

  close (code, reason) {
    if (code !== undefined) {
      code = Number(code)
      if (!(code === 1000 || (Number.isInteger(code) && code >= 3000 && code <= 4999))) {
        throw new DOMException('Invalid close code: ' + code, 'InvalidAccessError')
      }
    }
    if (reason !== undefined) {
      reason = String(reason)
      if (utf8Length(reason) > 123) throw new DOMException('Close reason too long', 'SyntaxError')
    }
    const st = this._readyState
    if (st === CLOSING || st === CLOSED) return
    this._readyState = CLOSING
    if (this._conn !== null) this._conn.close(code, reason)
    schedule(st === CONNECTING)
  }

  addEventListener (type, listener, options) {
    if (listener === null || listener === undefined) return
    type = String(type)
    const once = typeof options === 'object' && options !== null && !!options.once
    if (this._listeners === null) this._listeners = Object.create(null)
    let ls = this._listeners[type]
    if (ls === undefined) ls = this._listeners[type] = []
    for (const l of ls) if (l.fn === listener) return
    ls.push({ fn: listener, once })
    if (type === 'message') {
      this._lsMessage = ls
      if (DIRECT) this._messageHandlers()
    }
  }

  removeEventListener (type, listener) {
    if (this._listeners === null) return
    type = String(type)
    const ls = this._listeners[type]
    if (ls === undefined) return
    const i = ls.findIndex(l => l.fn === listener)
    if (i >= 0) ls.splice(i, 1)
    if (DIRECT && ls === this._lsMessage) this._messageHandlers()
  }

  /* opt "direct": tell C what a message is dispatched to (no message comes
     before connect() returned, nor after the close event) */
  _messageHandlers () {
    const c = this._conn
    if (c) c.onmessage(this._onmessage, this._lsMessage === null ? 0 : this._lsMessage.length)
  }

  dispatchEvent (ev) {
    this._dispatch(ev.type, this['_on' + ev.type] || null, ev)
    return true
  }

  _dispatch (type, handler, ev) {
    if (handler !== null) {
      try { handler.call(this, ev) } catch (e) { reportError(e) }
    }
    const all = this._listeners
    if (all === null) return
    const ls = all[type]
    if (ls === undefined || ls.length === 0) return
    for (const l of ls.slice()) {
      if (l.once) this.removeEventListener(type, l.fn)
      try {
        if (typeof l.fn === 'function') l.fn.call(this, ev)
        else l.fn.handleEvent(ev)
      } catch (e) { reportError(e) }
    }
  }

  /* called from C (this = the WebSocket), unless "direct": then C does the
     same itself (ev_message, src/jsev.c) */
  _emitMessage (data) {
    let ev
    if (OPT.eventpool) {
      ev = this._evMessage
      if (ev === null) ev = this._evMessage = { type: 'message', target: this, currentTarget: this, data: null, origin: '' }
      ev.data = data
    } else {
      ev = { type: 'message', target: this, currentTarget: this, data, origin: '' }
    }
    const h = this._onmessage
    if (h !== null) {
      try { h.call(this, ev) } catch (e) { reportError(e) }
    }
    if (this._lsMessage !== null && this._lsMessage.length) this._dispatch('message', null, ev)
    if (OPT.eventpool) ev.data = null
  }

  /* called from C (this = the WebSocket) */
  _event (kind, a, b, c, d) {
    if (this._conn === undefined) {
      /* raised synchronously by connect(), inside the constructor: deliver later */
      if (this._deferred === undefined) this._deferred = []
      this._deferred.push([kind, a, b, c, d])
      return
    }
    switch (kind) {
      case 1: { /* open */
        if (this._readyState !== CONNECTING) return
        this._readyState = OPEN
        this._protocol = a
        if (b !== undefined) this._extensions = b /* permessage-deflate agreed */
        /* open, error and close happen once per socket: their own objects
           (eventpool or not) */
        const ev = { type: 'open', target: this, currentTarget: this }
        this._dispatch('open', this._onopen, ev)
        break
      }
      case 2: /* chunk (naive receive path) */
        this._chunk(a, b, c, d)
        break
      case 3: { /* error */
        const ev = { type: 'error', target: this, currentTarget: this, message: a }
        this._dispatch('error', this._onerror, ev)
        break
      }
      case 4: { /* close */
        if (this._readyState === CLOSED) return
        this._readyState = CLOSED
        this._conn = null
        if (!OPT.join) this._inbuf = null
        const ev = { type: 'close', target: this, currentTarget: this, code: a, reason: b, wasClean: c }
        this._dispatch('close', this._onclose, ev)
        break
      }
    }
  }

  _chunk (ab, first, final, binary) {
    if (first) {
      if (OPT.fragbuf) {
        /* pre-size: guess 2 pieces for small first chunks, 4 otherwise */
        this._inbuf = new Array(ab.byteLength < 1024 ? 2 : 4)
      } else {
        this._inbuf = []
      }
      this._inCount = 0
      this._inBinary = binary
    }
    if (this._inbuf === null) return
    if (OPT.fragbuf) {
      if (this._inCount >= this._inbuf.length) this._inbuf.length = this._inbuf.length * 2
      this._inbuf[this._inCount++] = ab
    } else {
      this._inbuf.push(ab)
    }
    if (!final) return
    const bufs = this._inbuf
    if (OPT.fragbuf) bufs.length = this._inCount
    this._inbuf = null
    let data
    try {
      data = arrayBufferJoinNaive(bufs)
      if (!this._inBinary) data = lws.decode_utf8(data)
    } catch (e) {
      /* the joined buffer or the string could not be created */
      if (this._conn !== null) this._conn.fail(1009, 'out of memory for the message')
      return
    }
    if (data === null) {
      if (this._conn !== null) this._conn.fail(1007)
    } else {
      this._emitMessage(data)
    }
  }
}

/* opt "direct": send() in C for an OPEN WebSocket and a string or an
   ArrayBuffer; every other case is the send() above, called from there */
if (OPT.direct) {
  Object.defineProperty(WebSocket.prototype, 'send', {
    value: lws.native_send(WebSocket.prototype.send, ArrayBuffer.prototype),
    writable: true,
    enumerable: false,
    configurable: true
  })
}

for (const [k, v] of [['CONNECTING', CONNECTING], ['OPEN', OPEN], ['CLOSING', CLOSING], ['CLOSED', CLOSED]]) {
  Object.defineProperty(WebSocket, k, { value: v, enumerable: true })
  Object.defineProperty(WebSocket.prototype, k, { value: v, enumerable: true })
}

/*
 * The largest message accepted, in bytes, for every connection of the
 * process: 256 MiB by default, or QJSWS_MAX_MESSAGE.  A larger message (by
 * its frame header, or as its fragments add up) fails the connection with
 * 1009 before more than the limit is buffered.  setMaxMessageSize() returns
 * the previous value.
 */
export function getMaxMessageSize () { return lws.max_message() }
export function setMaxMessageSize (bytes) {
  if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0 || bytes > 0x7fffffff) {
    throw new RangeError('setMaxMessageSize: bytes must be an integer from 0 to 2147483647')
  }
  return lws.max_message(bytes)
}

/*
 * wss://: the CA certificates to trust, for every connection of the process
 * made from now on: a PEM file instead of the system's store (null or '': the
 * system's store again), as QJSWS_CA_FILE sets it at start-up.  Certificate
 * and host name are always verified.  Returns the previous value (null: the
 * system's store).
 */
export function getCAFile () { return lws.ca_file() }
export function setCAFile (path) {
  if (path !== null && typeof path !== 'string') {
    throw new TypeError('setCAFile: path must be a string (a PEM file), or null for the system store')
  }
  if (path) {
    const f = std.open(path, 'r')
    if (f === null) throw new Error('setCAFile: cannot read ' + path)
    f.close()
  }
  return lws.ca_file(path || null)
}

/*
 * wss://: whether new connections resume the TLS session of the last one to
 * the same host and port (an abbreviated handshake: no certificate sent or
 * verified again), as QJSWS_TLS_RESUME=1 sets it at start-up; off by default:
 * a full handshake every time.  Process-wide, on the module's own TLS
 * transport (libwebsockets' path never resumes).  Returns the previous value.
 */
export function getTLSResume () { return lws.tls_resume() }
export function setTLSResume (on) {
  if (typeof on !== 'boolean') throw new TypeError('setTLSResume: true or false')
  return lws.tls_resume(on)
}

/* introspection for tests and the harness */
export const options = OPT
export function poolStats () { return lws.pool_stats() }
export default WebSocket
