// The one workload implementation shared by every client adapter (see README.md).
//
// Plain ECMAScript module: no Node, Bun, Deno or browser API is used here, so it also
// runs on QuickJS. Everything runtime-specific comes in through `env`:
//
//   env.WebSocket      constructor, `new env.WebSocket(url)` (WHATWG-style object)
//   env.now()          monotonic clock in milliseconds
//   env.print(line)    write one line to stdout and flush it
//   env.setTimeout     (fn, ms) => handle; env.clearTimeout is optional
//   env.binaryType     optional, defaults to 'arraybuffer'
//   env.hold()         optional; resolves when the harness has taken its readings
//                      (stdin reaches end-of-file), see README.md
//
// The per-message paths (the onMessage functions below) are kept as small as possible
// and are the same for every runtime: what gets measured is the runtime's WebSocket,
// not this loop.

import { Histogram } from './histogram.js';

const USAGE =
  '--url ws://127.0.0.1:PORT/ [--kind echo|latency|openloop|buffered|request|handshake] ' +
  '--type text|binary --size BYTES --count N [--warmup N] [--mode burst|window|pingpong] ' +
  '[--window W] [--text ascii|mixed] [--connections C] [--transfer] [--rate R] ' +
  '[--duration-ms D] [--polls P] [--expect text|close] [--expect-length L] [--timeout-ms MS] ' +
  '(see clients/README.md)';

// Options each kind accepts besides --url, --kind and --timeout-ms, and those it needs.
// --type and --size are accepted (and ignored) by every kind, so a caller may pass them
// uniformly.
const KINDS = {
  echo: {
    options: ['type', 'size', 'count', 'warmup', 'mode', 'window', 'text', 'connections', 'transfer'],
    required: ['type', 'size', 'count'],
  },
  latency: { options: ['type', 'size', 'count', 'warmup'], required: ['type', 'size', 'count'] },
  openloop: {
    options: ['type', 'size', 'rate', 'duration-ms', 'warmup'],
    required: ['type', 'size', 'rate', 'duration-ms'],
  },
  buffered: { options: ['type', 'size', 'count', 'polls'], required: ['size', 'count'] },
  request: { options: ['type', 'size', 'count', 'warmup', 'expect', 'expect-length'], required: ['expect'] },
  handshake: { options: ['type', 'size', 'count', 'warmup'], required: ['count'] },
};
const FLAGS = ['transfer']; // options without a value

function intArg(name, value, min) {
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value)) {
    throw new Error('--' + name + ' needs a non-negative integer, got ' + JSON.stringify(value));
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new Error('--' + name + ' must be an integer >= ' + min + ', got ' + value);
  }
  return n;
}

function numArg(name, value) {
  const n = typeof value === 'string' && /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : NaN;
  if (!(n > 0) || !isFinite(n)) throw new Error('--' + name + ' needs a positive number, got ' + JSON.stringify(value));
  return n;
}

// An error that makes the client exit with status 3: this client cannot run what was asked.
function unsupported(what) {
  const e = new Error('unsupported: ' + what);
  e.unsupported = true;
  return e;
}

// argv: the arguments after the script name, e.g. ['--url', 'ws://...', '--type', 'text'].
// Accepts both `--key value` and `--key=value`; flags (--transfer) take no value.
export function parseArgs(argv) {
  const raw = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.slice(0, 2) !== '--') throw new Error('unexpected argument ' + JSON.stringify(a) + '; usage: ' + USAGE);
    let key = a.slice(2);
    let value;
    const eq = key.indexOf('=');
    if (eq >= 0) {
      value = key.slice(eq + 1);
      key = key.slice(0, eq);
    } else if (FLAGS.indexOf(key) >= 0) {
      value = 'true';
    } else {
      if (i + 1 >= argv.length) throw new Error('--' + key + ' needs a value');
      value = argv[++i];
    }
    raw[key] = value;
  }
  const kind = raw.kind === undefined ? 'echo' : raw.kind;
  const spec = Object.prototype.hasOwnProperty.call(KINDS, kind) ? KINDS[kind] : null;
  if (spec === null) throw new Error('--kind must be one of ' + Object.keys(KINDS).join(', '));
  for (const key of Object.keys(raw)) {
    if (key === 'url' || key === 'kind' || key === 'timeout-ms') continue;
    if (spec.options.indexOf(key) < 0) {
      let known = false;
      for (const k of Object.keys(KINDS)) if (KINDS[k].options.indexOf(key) >= 0) known = true;
      if (known) throw new Error('--' + key + ' does not apply to --kind ' + kind);
      throw new Error('unknown option --' + key + '; usage: ' + USAGE);
    }
  }
  for (const req of ['url'].concat(spec.required)) {
    if (raw[req] === undefined) throw new Error('missing --' + req + ' (--kind ' + kind + '); usage: ' + USAGE);
  }
  if (!/^wss?:\/\//.test(raw.url)) throw new Error('--url must start with ws:// or wss://');

  const o = { kind, url: raw.url };
  o.timeoutMs = raw['timeout-ms'] === undefined ? 60000 : intArg('timeout-ms', raw['timeout-ms'], 1);
  o.type = raw.type === undefined ? 'binary' : raw.type;
  if (o.type !== 'text' && o.type !== 'binary') throw new Error('--type must be text or binary');
  o.size = raw.size === undefined ? 0 : intArg('size', raw.size, 0);
  o.count = raw.count === undefined ? 1 : intArg('count', raw.count, 1);

  if (kind === 'echo') {
    o.warmup = raw.warmup === undefined ? Math.min(o.count, 1000) : intArg('warmup', raw.warmup, 0);
    o.mode = raw.mode === undefined ? 'burst' : raw.mode;
    if (o.mode !== 'burst' && o.mode !== 'window' && o.mode !== 'pingpong') {
      throw new Error('--mode must be burst, window or pingpong');
    }
    o.window = 0;
    if (o.mode === 'window') {
      if (raw.window === undefined) throw new Error('--mode window needs --window W');
      o.window = intArg('window', raw.window, 1);
    } else if (raw.window !== undefined) {
      intArg('window', raw.window, 1); // validated, but only used by --mode window
    }
    o.text = raw.text === undefined ? 'ascii' : raw.text;
    if (o.text !== 'ascii' && o.text !== 'mixed') throw new Error('--text must be ascii or mixed');
    if (o.text === 'mixed' && o.type !== 'text') throw new Error('--text mixed needs --type text');
    o.connections = raw.connections === undefined ? 1 : intArg('connections', raw.connections, 1);
    if (o.connections > o.count) throw new Error('--count must be at least --connections');
    o.transfer = raw.transfer === undefined ? false : raw.transfer;
    if (o.transfer === 'true' || o.transfer === '1') o.transfer = true;
    else if (o.transfer === 'false' || o.transfer === '0') o.transfer = false;
    if (typeof o.transfer !== 'boolean') throw new Error('--transfer takes no value (or true/false)');
    if (o.transfer && o.type !== 'binary') throw new Error('--transfer needs --type binary');
  } else if (kind === 'latency') {
    o.warmup = raw.warmup === undefined ? Math.min(o.count, 1000) : intArg('warmup', raw.warmup, 0);
  } else if (kind === 'openloop') {
    o.rate = numArg('rate', raw.rate);
    o.durationMs = intArg('duration-ms', raw['duration-ms'], 1);
    // Messages due in [t0, t0 + D): i * 1000 / R < D.
    o.total = Math.max(1, Math.ceil((o.durationMs * o.rate) / 1000 - 1e-9));
    o.warmup = raw.warmup === undefined ? Math.min(o.total, 1000) : intArg('warmup', raw.warmup, 0);
  } else if (kind === 'buffered') {
    o.polls = raw.polls === undefined ? 1000000 : intArg('polls', raw.polls, 1);
  } else if (kind === 'request') {
    o.expect = raw.expect;
    if (o.expect !== 'text' && o.expect !== 'close') throw new Error('--expect must be text or close');
    if (o.expect === 'text') {
      if (raw['expect-length'] === undefined) throw new Error('--expect text needs --expect-length L');
      o.expectLength = intArg('expect-length', raw['expect-length'], 0);
      // One unmeasured request by default: it also gives the reply's UTF-8 size.
      o.warmup = raw.warmup === undefined ? 1 : intArg('warmup', raw.warmup, 0);
    } else {
      if (raw['expect-length'] !== undefined) intArg('expect-length', raw['expect-length'], 0);
      if (o.count !== 1) throw new Error('--expect close takes --count 1');
      if (raw.warmup !== undefined && raw.warmup !== '0') throw new Error('--expect close takes no --warmup');
      o.warmup = 0;
    }
  } else if (kind === 'handshake') {
    o.warmup = raw.warmup === undefined ? 0 : intArg('warmup', raw.warmup, 0);
  }
  return o;
}

const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';

function asciiString(size) {
  // Printable ASCII, so characters == UTF-8 bytes. Doubling keeps this O(log size).
  let s = ASCII;
  while (s.length < size) s += s;
  return s.slice(0, size);
}

// Exactly `size` bytes of UTF-8 cycling through 1-, 2-, 3- and 4-byte characters
// (a, é, €, 😀 and friends); where the next character would not fit, ASCII pads.
function mixedString(size) {
  const unit = ['a', '\u00e9', '\u20ac', '\ud83d\ude00', 'b', '\u00df', '\u4e2d', '\ud83c\udf0d'];
  const unitBytes = 1 + 2 + 3 + 4 + 1 + 2 + 3 + 4; // 20
  let block = unit.join('');
  let blockBytes = unitBytes;
  let s = '';
  let n = 0;
  // Append doubling blocks while they fit, then single characters, then ASCII padding.
  const blocks = [];
  while (blockBytes * 2 <= size) {
    blocks.push([block, blockBytes]);
    block += block;
    blockBytes *= 2;
  }
  blocks.push([block, blockBytes]);
  for (let i = blocks.length - 1; i >= 0; i--) {
    while (n + blocks[i][1] <= size) {
      s += blocks[i][0];
      n += blocks[i][1];
    }
  }
  const sizes = [1, 2, 3, 4, 1, 2, 3, 4];
  for (let i = 0; i < unit.length && n + sizes[i] <= size; i++) {
    s += unit[i];
    n += sizes[i];
  }
  return s + asciiString(size - n);
}

// UTF-8 length of a JavaScript string (lone surrogates count as U+FFFD, 3 bytes).
export function utf8Length(s) {
  let n = 0;
  const len = s.length;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

export function makePayload(type, size, text) {
  if (type === 'text') return text === 'mixed' ? mixedString(size) : asciiString(size);
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = i & 255;
  return bytes.buffer;
}

function describe(err) {
  if (err && typeof err.message === 'string' && err.message !== '') return err.message;
  return String(err);
}

function closeDetail(ev) {
  return '(code ' + (ev && ev.code) + (ev && ev.reason ? ', reason ' + ev.reason : '') + ')';
}

function errorDetail(ev) {
  const msg = ev && (ev.message || (ev.error && ev.error.message));
  return msg ? ': ' + msg : '';
}

const CLOSED = 3; // WebSocket.CLOSED

// Runs one kind, prints WSBENCH-START and the result line, and resolves to the result
// object. Rejects (with an Error whose message is one line) on any failure: connection
// error, early close, or timeout.
//
// body(ctx) starts the work; ctx offers:
//   ctx.connect(onOpen)  a new tracked socket on opts.url; errors and closes fail the run
//   ctx.forget(ws)       stop tracking a socket (it is closed and done with)
//   ctx.progress = fn    returns a description of the state for the timeout message
//   ctx.done(result)     print the result line and finish
//   ctx.fail(err)        finish with an error
//   ctx.finished         true once done or failed
export function run(env, opts) {
  const body = KIND_BODIES[opts.kind];
  return new Promise((resolve, reject) => {
    const sockets = [];
    let timer = null;

    // On success the result has already been printed; the connections are then closed
    // cleanly (bounded wait, outside the measurement) so the server sees a close frame
    // rather than a dropped TCP connection. On failure they are closed without waiting.
    const CLOSE_WAIT_MS = 500;
    function finish(err, result) {
      if (ctx.finished) return;
      ctx.finished = true;
      if (timer !== null && typeof env.clearTimeout === 'function') env.clearTimeout(timer);
      const settle = () => (err ? reject(err) : resolve(result));
      let pending = 0;
      let settled = false;
      const once = () => {
        if (!settled && --pending <= 0) {
          settled = true;
          settle();
        }
      };
      for (const ws of sockets) {
        ws.onopen = null;
        ws.onmessage = null;
        ws.onerror = null;
        ws.onclose = null;
        if (ws.readyState === CLOSED) continue;
        if (!err) {
          pending++;
          ws.onclose = once;
          ws.onerror = once;
        }
        try {
          ws.close(1000);
        } catch (e) {
          if (!err) once();
        }
      }
      if (pending === 0) {
        settled = true;
        settle();
      } else {
        env.setTimeout(() => {
          if (!settled) {
            settled = true;
            settle();
          }
        }, CLOSE_WAIT_MS);
      }
    }

    const ctx = {
      finished: false,
      progress: () => '',
      phase: 'connect',
      connect(onOpen) {
        let ws;
        try {
          ws = new env.WebSocket(opts.url);
          ws.binaryType = env.binaryType || 'arraybuffer';
        } catch (e) {
          throw new Error('cannot connect to ' + opts.url + ': ' + describe(e));
        }
        sockets.push(ws);
        ws.onerror = (ev) => finish(new Error('WebSocket error in phase ' + ctx.phase + errorDetail(ev)));
        ws.onclose = (ev) => finish(new Error('connection closed in phase ' + ctx.phase + ' ' + closeDetail(ev)));
        ws.onopen = () => {
          try {
            onOpen(ws);
          } catch (e) {
            finish(e && e.unsupported ? e : new Error('send failed: ' + describe(e)));
          }
        };
        return ws;
      },
      forget(ws) {
        const i = sockets.indexOf(ws);
        if (i >= 0) sockets.splice(i, 1);
      },
      done(result) {
        if (ctx.finished) return;
        env.print(JSON.stringify(result));
        finish(null, result);
      },
      fail(err) {
        finish(err);
      },
    };

    timer = env.setTimeout(() => {
      const p = ctx.progress();
      finish(new Error('timeout after ' + opts.timeoutMs + ' ms (phase ' + ctx.phase + (p ? ', ' + p : '') + ')'));
    }, opts.timeoutMs);

    try {
      body(env, opts, ctx);
    } catch (e) {
      finish(e);
    }
  });
}

// The keys every result line has.
function baseResult(messages, nbytes, seconds, errors) {
  const ok = seconds > 0;
  return {
    messages: messages,
    bytes: nbytes,
    seconds: seconds,
    msgs_per_s: ok ? messages / seconds : 0,
    mb_per_s: ok ? nbytes / seconds / 1e6 : 0,
    errors: errors,
  };
}

const TRANSFER = { transfer: true };

// The shortest timer delay used. Not 0: in QuickJS (qjs) a timer that is already due runs
// before, and instead of, polling the sockets, so a chain of 0 ms timers would starve
// the WebSocket's I/O; Node rounds 0 up to 1 ms anyway. Whole milliseconds, since qjs
// truncates fractions.
const MIN_TIMER_MS = 1;

// ---- echo: throughput over one or more connections -------------------------------------

function echoBody(env, opts, ctx) {
  const isText = opts.type === 'text';
  const size = opts.size;
  const payload = makePayload(opts.type, size, opts.text);
  const expectLen = isText ? payload.length : size; // UTF-16 code units for text
  const C = opts.connections;

  let errors = 0; // over warm-up and measured phase alike
  let bytes = 0;
  let t0 = 0;
  let t1 = 0;
  let pending = 0; // connections not yet through the current step
  const conns = [];

  function inFlightFor(n) {
    if (opts.mode === 'pingpong') return 1;
    if (opts.mode === 'window') return opts.window;
    return n; // burst
  }

  function share(total, i) {
    return Math.floor(total / C) + (i < total % C ? 1 : 0);
  }

  // One connection: its own send/receive counters, the shared totals above.
  function makeConn(count, warmup) {
    let ws = null;
    let target = 0; // messages in the current phase
    let sent = 0;
    let received = 0;
    let phaseDone = null;
    // --transfer: one buffer per message, all made before the first one is sent.
    const bufs = opts.transfer ? new Array(warmup + count) : null;
    let next = 0;
    if (bufs !== null) for (let i = 0; i < bufs.length; i++) bufs[i] = payload.slice(0);

    function onMessage(ev) {
      const d = ev.data;
      const str = typeof d === 'string';
      const len = str ? d.length : d.byteLength | 0;
      if (str !== isText || len !== expectLen) errors++;
      bytes += len;
      if (++received === target) {
        t1 = env.now();
        phaseDone();
      } else if (sent < target) {
        sent++;
        ws.send(payload);
      }
    }

    // A copy of onMessage that sends from the per-message buffers: kept separate on
    // purpose, so neither hot path pays a per-message branch or extra call.
    function onMessageTransfer(ev) {
      const d = ev.data;
      const str = typeof d === 'string';
      const len = str ? d.length : d.byteLength | 0;
      if (str !== isText || len !== expectLen) errors++;
      bytes += len;
      if (++received === target) {
        t1 = env.now();
        phaseDone();
      } else if (sent < target) {
        sent++;
        ws.send(bufs[next++], TRANSFER);
      }
    }

    // Sends `n` messages keeping at most `inFlight` outstanding; calls done() after
    // the n-th echo has arrived.
    function startPhase(n, inFlight, done) {
      target = n;
      sent = 0;
      received = 0;
      phaseDone = done;
      if (n === 0) {
        done();
        return;
      }
      const first = inFlight < n ? inFlight : n;
      for (let i = 0; i < first; i++) {
        sent++;
        if (bufs !== null) ws.send(bufs[next++], TRANSFER);
        else ws.send(payload);
      }
    }

    return {
      open(onOpen) {
        ws = ctx.connect(() => {
          ws.onmessage = bufs !== null ? onMessageTransfer : onMessage;
          onOpen();
        });
      },
      warmup(done) {
        startPhase(warmup, inFlightFor(warmup), done);
      },
      measured(done) {
        startPhase(count, inFlightFor(count), done);
      },
      progress() {
        return 'sent ' + sent + ', received ' + received + ' of ' + target;
      },
    };
  }

  ctx.progress = () => {
    const parts = [];
    for (let i = 0; i < conns.length; i++) parts.push((C > 1 ? '#' + i + ': ' : '') + conns[i].progress());
    return parts.join('; ');
  };

  function step() {
    if (--pending === 0) return true;
    return false;
  }

  function allOpen() {
    if (!step()) return;
    ctx.phase = 'warmup';
    pending = C;
    for (let i = 0; i < C; i++) conns[i].warmup(allWarm);
  }

  function allWarm() {
    if (!step()) return;
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    bytes = 0;
    pending = C;
    t0 = env.now();
    for (let i = 0; i < C; i++) conns[i].measured(allMeasured);
  }

  function allMeasured() {
    if (!step()) return;
    const seconds = (t1 - t0) / 1000;
    const messages = opts.count;
    // Mixed text: .length counts UTF-16 code units; report UTF-8 payload bytes.
    const nbytes = opts.text === 'mixed' ? messages * size : bytes;
    ctx.done(baseResult(messages, nbytes, seconds, errors));
  }

  for (let i = 0; i < C; i++) conns.push(makeConn(share(opts.count, i), share(opts.warmup, i)));
  pending = C;
  for (let i = 0; i < C; i++) conns[i].open(allOpen);
}

// ---- latency: closed loop, one message in flight, every round trip timed -----------------

function latencyBody(env, opts, ctx) {
  const isText = opts.type === 'text';
  const size = opts.size;
  const payload = makePayload(opts.type, size, 'ascii');
  const hist = new Histogram();
  let ws = null;
  let errors = 0;
  let bytes = 0;
  let received = 0;
  let tSend = 0;
  let t0 = 0;

  function onMessage(ev) {
    const now = env.now();
    const d = ev.data;
    const str = typeof d === 'string';
    const len = str ? d.length : d.byteLength | 0;
    if (str !== isText || len !== size) errors++;
    bytes += len;
    hist.record((now - tSend) * 1000);
    if (++received === opts.count) {
      const r = baseResult(received, bytes, (now - t0) / 1000, errors);
      r.latency_us = hist.summary();
      ctx.done(r);
    } else {
      tSend = env.now();
      ws.send(payload);
    }
  }

  function measured() {
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    ws.onmessage = onMessage;
    tSend = env.now();
    t0 = tSend;
    ws.send(payload);
  }

  ctx.progress = () => 'received ' + received + ' of ' + opts.count;
  ws = ctx.connect(() => {
    ctx.phase = 'warmup';
    pingpongWarmup(ws, payload, isText, size, opts.warmup, () => errors++, measured);
  });
}

// Unmeasured warm-up for the kinds that have their own measured loop: n messages, one at
// a time. Calls done() after the n-th echo.
function pingpongWarmup(ws, payload, isText, size, n, onError, done) {
  let received = 0;
  if (n === 0) {
    done();
    return;
  }
  ws.onmessage = (ev) => {
    const d = ev.data;
    const str = typeof d === 'string';
    const len = str ? d.length : d.byteLength | 0;
    if (str !== isText || len !== size) onError();
    if (++received === n) done();
    else ws.send(payload);
  };
  ws.send(payload);
}

// ---- openloop: messages sent on a schedule, timed from when they were due ---------------

function openloopBody(env, opts, ctx) {
  const isText = opts.type === 'text';
  const size = opts.size;
  const payload = makePayload(opts.type, size, 'ascii');
  const interval = 1000 / opts.rate; // ms between due times
  const total = opts.total;
  let ws = null;
  let errors = 0;
  let bytes = 0;
  let sent = 0;
  let received = 0;
  let t0 = 0;
  let t1 = 0;
  const hist = new Histogram();
  const lag = new Histogram(); // per timer wake-up: how late its first message went out

  // Echoes come back in order: the k-th echo answers the message due at t0 + k * interval.
  function onMessage(ev) {
    const now = env.now();
    const d = ev.data;
    const str = typeof d === 'string';
    const len = str ? d.length : d.byteLength | 0;
    if (str !== isText || len !== size) errors++;
    bytes += len;
    hist.record((now - (t0 + received * interval)) * 1000);
    if (++received === total) {
      t1 = now;
      const seconds = (t1 - t0) / 1000;
      const r = baseResult(received, bytes, seconds, errors);
      r.rate = opts.rate;
      r.sent = sent;
      r.achieved_rate = r.msgs_per_s;
      r.latency_us = hist.summary();
      r.send_lag_us = lag.summary();
      ctx.done(r);
    }
  }

  // Sends every message that is due by now, then sleeps until the next one is due.
  function tick() {
    if (ctx.finished) return;
    const now = env.now();
    if (sent < total && t0 + sent * interval <= now) lag.record((now - (t0 + sent * interval)) * 1000);
    while (sent < total && t0 + sent * interval <= now) {
      sent++;
      ws.send(payload);
    }
    if (sent < total) {
      const delay = Math.ceil(t0 + sent * interval - env.now());
      env.setTimeout(tick, delay > MIN_TIMER_MS ? delay : MIN_TIMER_MS);
    } else {
      ctx.phase = 'drain';
    }
  }

  function measured() {
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    ws.onmessage = onMessage;
    t0 = env.now();
    tick();
  }

  ctx.progress = () => 'sent ' + sent + ', received ' + received + ' of ' + total;
  ws = ctx.connect(() => {
    ctx.phase = 'warmup';
    pingpongWarmup(ws, payload, isText, size, opts.warmup, () => errors++, measured);
  });
}

// ---- buffered: bufferedAmount after a burst of sends, and how fast it drains ------------

function bufferedBody(env, opts, ctx) {
  const isText = opts.type === 'text';
  const size = opts.size;
  const payload = makePayload(opts.type, size, 'ascii');
  const n = opts.count;
  let ws = null;
  let errors = 0;
  let bytes = 0;
  let received = 0;
  let t0 = 0;
  let t1 = 0;
  let pendingBytes = 0;
  let getterCallsPerS = 0;
  let drainMs = -1;

  function onMessage(ev) {
    const d = ev.data;
    const str = typeof d === 'string';
    const len = str ? d.length : d.byteLength | 0;
    if (str !== isText || len !== size) errors++;
    bytes += len;
    if (++received === n) {
      t1 = env.now();
      maybeDone();
    }
  }

  function maybeDone() {
    if (drainMs < 0 || received < n) return;
    const end = t1 > t0 + drainMs ? t1 : t0 + drainMs;
    const r = baseResult(received, bytes, (end - t0) / 1000, errors);
    r.pending_bytes = pendingBytes;
    r.getter_calls_per_s = getterCallsPerS;
    r.drain_ms = drainMs;
    ctx.done(r);
  }

  function poll() {
    if (ctx.finished) return;
    if (ws.bufferedAmount === 0) {
      drainMs = env.now() - t0;
      ctx.phase = 'receive';
      maybeDone();
    } else {
      env.setTimeout(poll, MIN_TIMER_MS);
    }
  }

  ctx.progress = () => 'received ' + received + ' of ' + n + (drainMs < 0 ? ', bufferedAmount ' + ws.bufferedAmount : '');
  ws = ctx.connect(() => {
    ws.onmessage = onMessage;
    env.print('WSBENCH-START');
    ctx.phase = 'send';
    t0 = env.now();
    for (let i = 0; i < n; i++) ws.send(payload);
    pendingBytes = ws.bufferedAmount;
    const polls = opts.polls;
    let sink = 0;
    const g0 = env.now();
    for (let i = 0; i < polls; i++) sink += ws.bufferedAmount;
    const g1 = env.now();
    if (!(sink >= 0)) errors++; // keeps the reads alive; never true
    getterCallsPerS = g1 > g0 ? polls / ((g1 - g0) / 1000) : 0;
    ctx.phase = 'drain';
    poll();
  });
  if (typeof ws.bufferedAmount !== 'number') {
    throw unsupported('WebSocket.bufferedAmount (got ' + typeof ws.bufferedAmount + ')');
  }
}

// ---- request: time from a 1-byte request until a prepared reply is delivered ------------

function median(xs) {
  const a = xs.slice().sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

function requestBody(env, opts, ctx) {
  const L = opts.expectLength;
  let ws = null;
  let errors = 0;
  let received = 0;
  let target = 0;
  let tReq = 0;
  let t0 = 0;
  let t1 = 0;
  let replyBytes = -1; // UTF-8 size of the first reply
  const times = [];
  let phaseDone = null;

  function onMessage(ev) {
    const now = env.now();
    const d = ev.data;
    if (typeof d !== 'string' || d.length !== L) errors++;
    if (ctx.phase === 'measured') times.push(now - tReq);
    if (replyBytes < 0) replyBytes = typeof d === 'string' ? utf8Length(d) : d.byteLength | 0;
    if (++received === target) {
      t1 = now;
      phaseDone();
    } else {
      tReq = env.now();
      ws.send('?');
    }
  }

  function startPhase(n, done) {
    target = n;
    received = 0;
    phaseDone = done;
    if (n === 0) {
      done();
      return;
    }
    tReq = env.now();
    t0 = tReq;
    ws.send('?');
  }

  function measured() {
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    startPhase(opts.count, () => {
      const r = baseResult(received, received * replyBytes, (t1 - t0) / 1000, errors);
      r.delivery_ms = median(times);
      ctx.done(r);
    });
  }

  function expectClose() {
    let errorEvent = false;
    let errorMessage = '';
    ws.onmessage = (ev) => {
      const d = ev.data;
      const len = typeof d === 'string' ? d.length : d.byteLength | 0;
      ctx.fail(new Error('accepted invalid UTF-8 (message of ' + len + ' code units delivered)'));
    };
    ws.onerror = (ev) => {
      errorEvent = true; // browsers fire error before close on a failed connection
      errorMessage = errorDetail(ev).slice(2);
    };
    ws.onclose = (ev) => {
      const ms = env.now() - tReq;
      const r = baseResult(0, 0, ms / 1000, 0);
      r.delivery_ms = ms;
      r.close_code = ev ? ev.code : null;
      r.close_reason = ev && typeof ev.reason === 'string' ? ev.reason : '';
      r.error_event = errorEvent;
      if (errorMessage !== '') r.error_message = errorMessage.replace(/\s+/g, ' ');
      ctx.done(r);
    };
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    tReq = env.now();
    ws.send('?');
  }

  ctx.progress = () => 'received ' + received + ' of ' + target;
  ws = ctx.connect(() => {
    if (opts.expect === 'close') {
      expectClose();
      return;
    }
    ws.onmessage = onMessage;
    ctx.phase = 'warmup';
    startPhase(opts.warmup, measured);
  });
}

// ---- handshake: connect, open, close, in sequence ----------------------------------------

function handshakeBody(env, opts, ctx) {
  let done = 0;
  let target = 0;
  let t0 = 0;
  let phaseDone = null;

  function cycle() {
    let ws;
    try {
      ws = ctx.connect(() => ws.close(1000));
    } catch (e) {
      ctx.fail(e);
      return;
    }
    ws.onclose = (ev) => {
      ws.onclose = null;
      ws.onerror = null;
      ws.onopen = null;
      ctx.forget(ws);
      if (ev && ev.code !== 1000 && ev.code !== 1005) {
        ctx.fail(new Error('handshake ' + (done + 1) + ': unexpected close ' + closeDetail(ev)));
        return;
      }
      if (++done === target) phaseDone();
      else cycle();
    };
  }

  function startPhase(n, cb) {
    target = n;
    done = 0;
    phaseDone = cb;
    if (n === 0) cb();
    else cycle();
  }

  ctx.progress = () => 'completed ' + done + ' of ' + target;
  ctx.phase = 'warmup';
  startPhase(opts.warmup, () => {
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    t0 = env.now();
    startPhase(opts.count, () => {
      const r = baseResult(opts.count, 0, (env.now() - t0) / 1000, 0);
      r.handshakes_per_s = r.msgs_per_s;
      ctx.done(r);
    });
  });
}

const KIND_BODIES = {
  echo: echoBody,
  latency: latencyBody,
  openloop: openloopBody,
  buffered: bufferedBody,
  request: requestBody,
  handshake: handshakeBody,
};

function oneLine(e) {
  return String((e && e.message) || e).replace(/\s+/g, ' ');
}

// The whole client: parse, run, report a failure as {"error": ...}, then wait for the
// harness (env.hold) so it can read this process's CPU time and memory while it is
// still alive. Resolves to the exit code (0; 1 on failure; 3 when this client cannot run
// what was asked); the adapter exits with it.
export async function main(env, argv) {
  let code = 0;
  try {
    await run(env, parseArgs(argv));
  } catch (e) {
    env.print(JSON.stringify({ error: oneLine(e) }));
    code = e && e.unsupported ? 3 : 1;
  }
  if (env.hold) await env.hold();
  return code;
}
