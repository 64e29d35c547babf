// latency: closed loop, one message in flight, every round trip timed. The count is
// fixed (no --min-ms): the histogram's definition is its message count.

import { Histogram } from './histogram.js';
import { baseResult } from './session.js';
import { checkEcho, makeMessages, messageFor } from './verify.js';

export function latencyBody(env, opts, ctx) {
  const m = makeMessages(env, opts.type, opts.size, opts.text, opts.verify, opts.bytes);
  const hist = new Histogram();
  let ws = null;
  let k = 0; // sequence number of the message in flight
  let received = 0;
  let nextWhole = 0;
  let tSend = 0;
  let t0 = 0;

  function onMessage(ev) {
    const now = env.now();
    const d = ev.data;
    const last = received + 1 === opts.count;
    const err = checkEcho(m, d, k, k === nextWhole || last, -1, 'measured');
    if (err !== null) return ctx.fail(err);
    if (k === nextWhole) nextWhole += m.sampleEvery;
    hist.record((now - tSend) * 1000);
    if (++received === opts.count) {
      const r = baseResult(received, received * m.utf8Size, (now - t0) / 1000, 0);
      r.latency_us = hist.summary();
      r.latency_hist = hist.sparse();
      r.checked = m.verify ? received : 0;
      ctx.done(r);
    } else {
      const msg = messageFor(m, ++k);
      tSend = env.now();
      ws.send(msg);
    }
  }

  function measured(first) {
    ws.onmessage = onMessage;
    k = first;
    nextWhole = first + m.sampleEvery - 1;
    const msg = messageFor(m, k);
    tSend = env.now();
    t0 = tSend;
    ws.send(msg);
  }

  ctx.progress = () => 'received ' + received + ' of ' + opts.count;
  ws = ctx.connect(() => {
    ctx.phase = 'warmup';
    pingpongWarmup(ws, m, opts.warmup, ctx, (next) => ctx.measure(() => measured(next)));
  });
}

// Unmeasured warm-up for the kinds that have their own measured loop: n messages, one at
// a time, every echo compared byte for byte. Calls done(n), the next sequence number,
// after the n-th echo.
export function pingpongWarmup(ws, m, n, ctx, done) {
  let k = 0;
  if (n === 0) {
    done(0);
    return;
  }
  ws.onmessage = (ev) => {
    const err = checkEcho(m, ev.data, k, true, -1, 'warm-up');
    if (err !== null) return ctx.fail(err);
    if (++k === n) done(n);
    else ws.send(messageFor(m, k));
  };
  ws.send(messageFor(m, 0));
}
