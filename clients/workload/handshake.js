// handshake: connect, open, close, in sequence: --count of them, and more until the
// measured phase has lasted --min-ms.

import { closeDetail } from './errors.js';
import { baseResult } from './session.js';

export function handshakeBody(env, opts, ctx) {
  let done = 0;
  let target = 0;
  let minMs = 0;
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
      if (++done >= target && env.now() - t0 >= minMs) phaseDone();
      else cycle();
    };
  }

  function startPhase(n, ms, cb) {
    target = n;
    minMs = ms;
    done = 0;
    phaseDone = cb;
    if (n === 0) cb();
    else cycle();
  }

  ctx.progress = () => 'completed ' + done + ' of ' + target;
  ctx.phase = 'warmup';
  startPhase(opts.warmup, 0, () =>
    ctx.measure(() => {
      t0 = env.now();
      startPhase(opts.count, opts.minMs, () => {
        const r = baseResult(done, 0, (env.now() - t0) / 1000, 0);
        r.handshakes_per_s = r.msgs_per_s;
        ctx.done(r);
      });
    }),
  );
}
