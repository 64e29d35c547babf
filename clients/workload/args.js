// Command-line options of the shared workload (clients/README.md): parsing and checks.

import { unsupported } from './errors.js';

const USAGE =
  '--url ws://127.0.0.1:PORT/ [--kind echo|latency|openloop|buffered|request|handshake|observe|idle|cycles|backpressure] ' +
  '--type text|binary --size BYTES --count N [--warmup N] [--mode burst|window|pingpong] ' +
  '[--window W] [--text ascii|mixed|json] [--bytes counting|random] [--connections C] [--transfer] [--rate R] ' +
  '[--duration-ms D] [--polls P] [--expect text|close] [--expect-length L] [--min-ms MS] [--tls-resume] ' +
  '[--verify on|off] [--timeout-ms MS] [--concurrency C] [--hold-ms H] [--stall-ms MS] [--warm] [--marks M] ' +
  '[--total-bytes B] [--send-ms MS] [--settle-ms MS] ' +
  '(see clients/README.md)';

// Options each kind accepts besides --url, --kind and --timeout-ms, and those it needs.
// --type and --size are accepted (and ignored) by every kind, so a caller may pass them
// uniformly.
export const KINDS = {
  echo: {
    options: ['type', 'size', 'count', 'warmup', 'mode', 'window', 'text', 'bytes', 'connections', 'transfer',
      'min-ms', 'verify'],
    required: ['type', 'size', 'count'],
  },
  latency: {
    options: ['type', 'size', 'count', 'warmup', 'text', 'bytes', 'verify'],
    required: ['type', 'size', 'count'],
  },
  openloop: {
    options: ['type', 'size', 'rate', 'duration-ms', 'warmup', 'text', 'bytes', 'verify'],
    required: ['type', 'size', 'rate', 'duration-ms'],
  },
  buffered: {
    options: ['type', 'size', 'count', 'polls', 'min-ms', 'text', 'bytes', 'verify'],
    required: ['size', 'count'],
  },
  request: {
    options: ['type', 'size', 'count', 'warmup', 'expect', 'expect-length', 'min-ms'],
    required: ['expect'],
  },
  // --tls-resume: the runtime may resume the TLS session of an earlier connection; the JS
  // runtimes that do (Node 22, Deno) do it by themselves, always (clients/README.md)
  handshake: { options: ['type', 'size', 'count', 'warmup', 'min-ms', 'tls-resume'], required: ['count'] },
  observe: { options: ['type', 'size'], required: [] },
  idle: {
    options: ['type', 'size', 'connections', 'concurrency', 'hold-ms', 'ping-ms', 'sources', 'stall-ms', 'warm'],
    required: ['connections', 'hold-ms'],
  },
  // the soak kind (cycles.js): --count connect–echo–close cycles, --connections at a time
  cycles: { options: ['type', 'size', 'count', 'connections', 'marks'], required: ['count', 'connections'] },
  // against a server that stops reading (lws-echo's ?stall=MS): backpressure.js
  backpressure: { options: ['type', 'size', 'total-bytes', 'send-ms', 'settle-ms'], required: ['size'] },
};
const FLAGS = ['transfer', 'tls-resume', 'warm']; // options without a value

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

// A flag: absent or false/0 is false, bare or true/1 true.
function boolFlag(name, value) {
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new Error('--' + name + ' takes no value (or true/false), got ' + JSON.stringify(value));
}

function numArg(name, value) {
  const n = typeof value === 'string' && /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : NaN;
  if (!(n > 0) || !isFinite(n)) throw new Error('--' + name + ' needs a positive number, got ' + JSON.stringify(value));
  return n;
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
  // the load generator's kind (one publisher, N subscribers): not the WebSocket API's to time
  if (kind === 'fanout') throw unsupported('kind fanout (wsbench-loadgen only)');
  if (kind === 'pinghold') throw unsupported('kind pinghold (the WebSocket API sends no pings; wsbench-loadgen only)');
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
  // The measured phase repeats its rounds until it has lasted this long (0: one round).
  o.minMs = raw['min-ms'] === undefined ? 0 : intArg('min-ms', raw['min-ms'], 0);
  // off: echoes are not checked (only to measure what the checks cost; see README.md).
  if (raw.verify !== undefined && raw.verify !== 'on' && raw.verify !== 'off') throw new Error('--verify must be on or off');
  o.verify = raw.verify !== 'off';
  // The message contents (clients/README.md, "Message contents"): text ascii, mixed or
  // json (the corpus), binary bytes counting (i & 255) or random (the corpus).
  o.text = raw.text === undefined ? 'ascii' : raw.text;
  if (o.text !== 'ascii' && o.text !== 'mixed' && o.text !== 'json') throw new Error('--text must be ascii, mixed or json');
  if (o.text !== 'ascii' && o.type !== 'text') throw new Error('--text ' + o.text + ' needs --type text');
  o.bytes = raw.bytes === undefined ? 'counting' : raw.bytes;
  if (o.bytes !== 'counting' && o.bytes !== 'random') throw new Error('--bytes must be counting or random');
  if (o.bytes !== 'counting' && o.type !== 'binary') throw new Error('--bytes ' + o.bytes + ' needs --type binary');
  if ((o.text === 'json' || o.bytes === 'random') && !o.verify) {
    throw new Error('--' + (o.text === 'json' ? 'text json' : 'bytes random') +
      ' needs --verify on (unverified, one message is sent over and over)');
  }

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
    o.connections = raw.connections === undefined ? 1 : intArg('connections', raw.connections, 1);
    if (o.connections > o.count) throw new Error('--count must be at least --connections');
    o.transfer = raw.transfer === undefined ? false : raw.transfer;
    if (o.transfer === 'true' || o.transfer === '1') o.transfer = true;
    else if (o.transfer === 'false' || o.transfer === '0') o.transfer = false;
    if (typeof o.transfer !== 'boolean') throw new Error('--transfer takes no value (or true/false)');
    if (o.transfer && o.type !== 'binary') throw new Error('--transfer needs --type binary');
    if (o.transfer && o.bytes === 'random') throw new Error('--transfer cannot send --bytes random (its buffers are stamped per message)');
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
  } else if (kind === 'idle') {
    // "max": until the first connection fails (0 here)
    o.connections = raw.connections === 'max' ? 0 : intArg('connections', raw.connections, 1);
    o.concurrency = raw.concurrency === undefined ? 100 : intArg('concurrency', raw.concurrency, 1);
    o.holdMs = intArg('hold-ms', raw['hold-ms'], 0);
    o.pingMs = raw['ping-ms'] === undefined ? 0 : intArg('ping-ms', raw['ping-ms'], 0);
    o.sources = raw.sources === undefined ? 1 : intArg('sources', raw.sources, 1);
    o.stallMs = raw['stall-ms'] === undefined ? 5000 : intArg('stall-ms', raw['stall-ms'], 1);
    // --warm: one message and its echo on every connection before the hold (idle.js)
    o.warm = boolFlag('warm', raw.warm);
  } else if (kind === 'cycles') {
    o.connections = intArg('connections', raw.connections, 1);
    o.marks = raw.marks === undefined ? 50 : intArg('marks', raw.marks, 1);
  } else if (kind === 'backpressure') {
    if (o.size < 1) throw new Error('--size must be at least 1 for --kind backpressure');
    o.totalBytes = raw['total-bytes'] === undefined ? 32 * 1024 * 1024 : intArg('total-bytes', raw['total-bytes'], 1);
    o.sendMs = raw['send-ms'] === undefined ? 1000 : intArg('send-ms', raw['send-ms'], 1);
    o.settleMs = raw['settle-ms'] === undefined ? 300 : intArg('settle-ms', raw['settle-ms'], 1);
  }
  return o;
}
