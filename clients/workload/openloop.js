// openloop: messages sent on a schedule, timed from when they were due. The duration is
// fixed by --duration-ms (no --min-ms).

import { Histogram } from './histogram.js';
import { pingpongWarmup } from './latency.js';
import { MIN_TIMER_MS, baseResult } from './session.js';
import { checkEcho, makeMessages, messageFor } from './verify.js';

export function openloopBody(env, opts, ctx) {
  const m = makeMessages(env, opts.type, opts.size, opts.text, opts.verify, opts.bytes);
  const interval = 1000 / opts.rate; // ms between due times
  const total = opts.total;
  let ws = null;
  let k0 = 0; // sequence number of the first measured message
  let nextWhole = 0;
  let sent = 0;
  let received = 0;
  let t0 = 0;
  let t1 = 0;
  const hist = new Histogram();
  const lag = new Histogram(); // per timer wake-up: how late its first message went out

  // Echoes come back in order: the k-th echo answers the message due at t0 + k * interval.
  function onMessage(ev) {
    const now = env.now();
    const k = k0 + received;
    const err = checkEcho(m, ev.data, k, k === nextWhole || received + 1 === total, -1, 'measured');
    if (err !== null) return ctx.fail(err);
    if (k === nextWhole) nextWhole += m.sampleEvery;
    hist.record((now - (t0 + received * interval)) * 1000);
    if (++received === total) {
      t1 = now;
      const seconds = (t1 - t0) / 1000;
      const r = baseResult(received, received * m.utf8Size, seconds, 0);
      r.checked = m.verify ? received : 0;
      r.rate = opts.rate;
      r.sent = sent;
      r.achieved_rate = r.msgs_per_s;
      r.latency_us = hist.summary();
      r.latency_hist = hist.sparse();
      r.send_lag_us = lag.summary();
      ctx.done(r);
    }
  }

  // Sends every message that is due by now, then sleeps until the next one is due.
  function tick() {
    if (ctx.finished) return;
    const now = env.now();
    if (sent < total && t0 + sent * interval <= now) lag.record((now - (t0 + sent * interval)) * 1000);
    while (sent < total && t0 + sent * interval <= now) ws.send(messageFor(m, k0 + sent++));
    if (sent < total) {
      const delay = Math.ceil(t0 + sent * interval - env.now());
      env.setTimeout(tick, delay > MIN_TIMER_MS ? delay : MIN_TIMER_MS);
    } else {
      ctx.phase = 'drain';
    }
  }

  function measured(first) {
    ws.onmessage = onMessage;
    k0 = first;
    nextWhole = first + m.sampleEvery - 1;
    t0 = env.now();
    tick();
  }

  ctx.progress = () => 'sent ' + sent + ', received ' + received + ' of ' + total;
  ws = ctx.connect(() => {
    ctx.phase = 'warmup';
    pingpongWarmup(ws, m, opts.warmup, ctx, (next) => ctx.measure(() => measured(next)));
  });
}
