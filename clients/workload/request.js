// request: time from a 1-byte request until a prepared reply is delivered. The measured
// phase makes --count requests, and more until it has lasted --min-ms; delivery_ms is
// the median. The replies are the server's prepared messages (servers/README.md): their
// type and length are checked, their content is the runtime's to validate.

import { errorDetail } from './errors.js';
import { utf8Length } from './payload.js';
import { baseResult, median } from './session.js';

export function requestBody(env, opts, ctx) {
  const L = opts.expectLength;
  let ws = null;
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
    if (typeof d !== 'string' || d.length !== L) {
      const what = typeof d === 'string' ? 'text of ' + d.length + ' code units' : 'binary';
      return ctx.fail(new Error('reply ' + (received + 1) + ' (' + ctx.phase + ') came back as ' + what +
        ', expected text of ' + L + ' code units'));
    }
    if (ctx.phase === 'measured') times.push(now - tReq);
    if (replyBytes < 0) replyBytes = utf8Length(d);
    ++received;
    if (received >= target && (ctx.phase !== 'measured' || now - t0 >= opts.minMs)) {
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
    startPhase(opts.count, () => {
      const r = baseResult(received, received * replyBytes, (t1 - t0) / 1000, 0);
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
    ctx.measure(() => {
      tReq = env.now();
      ws.send('?');
    });
  }

  ctx.progress = () => 'received ' + received + ' of ' + target;
  ws = ctx.connect(() => {
    if (opts.expect === 'close') {
      expectClose();
      return;
    }
    ws.onmessage = onMessage;
    ctx.phase = 'warmup';
    startPhase(opts.warmup, () => ctx.measure(measured));
  });
}
