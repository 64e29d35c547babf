import { unsupported } from './errors.js';
import { makePayload } from './payload.js';
import { MIN_TIMER_MS, baseResult } from './session.js';

// ---- buffered: bufferedAmount after a burst of sends, and how fast it drains ------------

export function bufferedBody(env, opts, ctx) {
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
