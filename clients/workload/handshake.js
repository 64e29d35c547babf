import { closeDetail } from './errors.js';
import { baseResult } from './session.js';

// ---- handshake: connect, open, close, in sequence ----------------------------------------

export function handshakeBody(env, opts, ctx) {
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
