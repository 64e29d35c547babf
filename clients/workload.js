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
// The per-message path (onMessage below) is kept as small as possible and is the same
// for every runtime: what gets measured is the runtime's WebSocket, not this loop.

const USAGE =
  '--url ws://127.0.0.1:PORT/ --type text|binary --size BYTES --count N ' +
  '[--warmup N] [--mode burst|window|pingpong] [--window W] [--timeout-ms MS]';

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

// argv: the arguments after the script name, e.g. ['--url', 'ws://...', '--type', 'text'].
// Accepts both `--key value` and `--key=value`.
export function parseArgs(argv) {
  const raw = {};
  const known = ['url', 'type', 'size', 'count', 'warmup', 'mode', 'window', 'timeout-ms'];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.slice(0, 2) !== '--') throw new Error('unexpected argument ' + JSON.stringify(a) + '; usage: ' + USAGE);
    let key = a.slice(2);
    let value;
    const eq = key.indexOf('=');
    if (eq >= 0) {
      value = key.slice(eq + 1);
      key = key.slice(0, eq);
    } else {
      if (i + 1 >= argv.length) throw new Error('--' + key + ' needs a value');
      value = argv[++i];
    }
    if (known.indexOf(key) < 0) throw new Error('unknown option --' + key + '; usage: ' + USAGE);
    raw[key] = value;
  }
  for (const req of ['url', 'type', 'size', 'count']) {
    if (raw[req] === undefined) throw new Error('missing --' + req + '; usage: ' + USAGE);
  }
  if (!/^wss?:\/\//.test(raw.url)) throw new Error('--url must start with ws:// or wss://');
  if (raw.type !== 'text' && raw.type !== 'binary') throw new Error('--type must be text or binary');
  const mode = raw.mode === undefined ? 'burst' : raw.mode;
  if (mode !== 'burst' && mode !== 'window' && mode !== 'pingpong') {
    throw new Error('--mode must be burst, window or pingpong');
  }
  const size = intArg('size', raw.size, 0);
  const count = intArg('count', raw.count, 1);
  const warmup = raw.warmup === undefined ? Math.min(count, 1000) : intArg('warmup', raw.warmup, 0);
  let window = 0;
  if (mode === 'window') {
    if (raw.window === undefined) throw new Error('--mode window needs --window W');
    window = intArg('window', raw.window, 1);
  } else if (raw.window !== undefined) {
    intArg('window', raw.window, 1); // validated, but only used by --mode window
  }
  const timeoutMs = raw['timeout-ms'] === undefined ? 60000 : intArg('timeout-ms', raw['timeout-ms'], 1);
  return { url: raw.url, type: raw.type, size, count, warmup, mode, window, timeoutMs };
}

function makePayload(type, size) {
  if (type === 'text') {
    // Printable ASCII, so characters == UTF-8 bytes. Doubling keeps this O(log size).
    let s = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';
    while (s.length < size) s += s;
    return s.slice(0, size);
  }
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = i & 255;
  return bytes.buffer;
}

function describe(err) {
  if (err && typeof err.message === 'string' && err.message !== '') return err.message;
  return String(err);
}

// Runs the workload, prints WSBENCH-START and the result line, and resolves to the
// result object. Rejects (with an Error whose message is one line) on any failure:
// connection error, early close, or timeout.
export function run(env, opts) {
  const isText = opts.type === 'text';
  const size = opts.size;
  const payload = makePayload(opts.type, size);

  return new Promise((resolve, reject) => {
    let finished = false;
    let ws = null;
    let timer = null;

    // On success the result has already been printed; the connection is then closed
    // cleanly (bounded wait, outside the measurement) so the server sees a close frame
    // rather than a dropped TCP connection. On failure it is closed without waiting.
    const CLOSE_WAIT_MS = 500;
    function finish(err, result) {
      if (finished) return;
      finished = true;
      if (timer !== null && typeof env.clearTimeout === 'function') env.clearTimeout(timer);
      const settle = () => (err ? reject(err) : resolve(result));
      if (ws === null) {
        settle();
        return;
      }
      ws.onopen = null;
      ws.onmessage = null;
      ws.onerror = null;
      ws.onclose = null;
      if (err) {
        try {
          ws.close(1000);
        } catch (e) {
          // already closing or closed: nothing to do
        }
        settle();
        return;
      }
      let settled = false;
      const once = () => {
        if (!settled) {
          settled = true;
          settle();
        }
      };
      ws.onclose = once;
      ws.onerror = once;
      env.setTimeout(once, CLOSE_WAIT_MS);
      try {
        ws.close(1000);
      } catch (e) {
        once();
      }
    }

    timer = env.setTimeout(() => {
      finish(new Error('timeout after ' + opts.timeoutMs + ' ms (phase ' + phase + ', sent ' + sent +
        ', received ' + received + ' of ' + target + ')'));
    }, opts.timeoutMs);

    // Phase state, shared with the message handler.
    let phase = 'connect';
    let target = 0; // messages in the current phase
    let sent = 0;
    let received = 0;
    let bytes = 0;
    let errors = 0; // over warm-up and measured phase alike
    let t0 = 0;
    let t1 = 0;
    let phaseDone = null;

    function onMessage(ev) {
      const d = ev.data;
      const str = typeof d === 'string';
      const len = str ? d.length : d.byteLength | 0;
      if (str !== isText || len !== size) errors++;
      bytes += len;
      if (++received === target) {
        t1 = env.now();
        phaseDone();
      } else if (sent < target) {
        sent++;
        ws.send(payload);
      }
    }

    // Sends `n` messages keeping at most `inFlight` outstanding; calls done() after
    // the n-th echo has arrived.
    function startPhase(name, n, inFlight, done) {
      phase = name;
      target = n;
      sent = 0;
      received = 0;
      bytes = 0;
      phaseDone = done;
      const first = inFlight < n ? inFlight : n;
      t0 = env.now();
      for (let i = 0; i < first; i++) {
        sent++;
        ws.send(payload);
      }
    }

    function inFlightFor(n) {
      if (opts.mode === 'pingpong') return 1;
      if (opts.mode === 'window') return opts.window;
      return n; // burst
    }

    function measured() {
      env.print('WSBENCH-START');
      startPhase('measured', opts.count, inFlightFor(opts.count), () => {
        const seconds = (t1 - t0) / 1000;
        const ok = seconds > 0;
        finish(null, report(received, bytes, seconds, ok));
      });
    }

    function report(messages, nbytes, seconds, ok) {
      const result = {
        messages: messages,
        bytes: nbytes,
        seconds: seconds,
        msgs_per_s: ok ? messages / seconds : 0,
        mb_per_s: ok ? nbytes / seconds / 1e6 : 0,
        errors: errors,
      };
      env.print(JSON.stringify(result));
      return result;
    }

    try {
      ws = new env.WebSocket(opts.url);
      ws.binaryType = env.binaryType || 'arraybuffer';
    } catch (e) {
      finish(new Error('cannot connect to ' + opts.url + ': ' + describe(e)));
      return;
    }
    ws.onerror = (ev) => {
      const msg = ev && (ev.message || (ev.error && ev.error.message));
      finish(new Error('WebSocket error in phase ' + phase + (msg ? ': ' + msg : '')));
    };
    ws.onclose = (ev) => {
      finish(new Error('connection closed in phase ' + phase + ' (code ' + (ev && ev.code) +
        (ev && ev.reason ? ', reason ' + ev.reason : '') + ')'));
    };
    ws.onopen = () => {
      ws.onmessage = onMessage;
      try {
        if (opts.warmup > 0) startPhase('warmup', opts.warmup, inFlightFor(opts.warmup), measured);
        else measured();
      } catch (e) {
        finish(new Error('send failed: ' + describe(e)));
      }
    };
  });
}

function oneLine(e) {
  return String((e && e.message) || e).replace(/\s+/g, ' ');
}

// The whole client: parse, run, report a failure as {"error": ...}, then wait for the
// harness (env.hold) so it can read this process's CPU time and memory while it is
// still alive. Resolves to the exit code; the adapter exits with it.
export async function main(env, argv) {
  let code = 0;
  try {
    await run(env, parseArgs(argv));
  } catch (e) {
    env.print(JSON.stringify({ error: oneLine(e) }));
    code = 1;
  }
  if (env.hold) await env.hold();
  return code;
}
