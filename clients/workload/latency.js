import { Histogram } from './histogram.js';
import { makePayload } from './payload.js';
import { baseResult } from './session.js';

// ---- latency: closed loop, one message in flight, every round trip timed -----------------

export function latencyBody(env, opts, ctx) {
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
export function pingpongWarmup(ws, payload, isText, size, n, onError, done) {
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
