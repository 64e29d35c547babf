import { Histogram } from './histogram.js';
import { pingpongWarmup } from './latency.js';
import { makePayload } from './payload.js';
import { MIN_TIMER_MS, baseResult } from './session.js';

// ---- openloop: messages sent on a schedule, timed from when they were due ---------------

export function openloopBody(env, opts, ctx) {
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
