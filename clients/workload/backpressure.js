// backpressure: does bufferedAmount tell the truth while the server reads nothing?
//
// Run against a server that stops reading after the upgrade (lws-echo's ?stall=MS,
// servers/README.md), so that the kernel's queues of both sides fill and everything else
// the application sends stays in the client runtime. After the start barrier:
//   1. WSBENCH-MARK begin: the harness reads the client's memory and both ends' sockets
//      before anything is sent.
//   2. Send messages of --size bytes as fast as the API takes them, in batches of about
//      1 MiB, one timer tick apart (so the runtime's I/O runs between batches), until
//      --total-bytes are sent or --send-ms have passed; bufferedAmount is read after
//      every send (its largest value kept) and after every batch (the series).
//   3. Let the runtime settle for --settle-ms (reading bufferedAmount every 50 ms), read
//      it once more and print WSBENCH-MARK full: at that instant the harness reads the
//      client's kernel send queue, the server's receive queue and the client's RSS, and
//      sets what the application gave the API beside what it handed to the kernel
//      (harness/wsbench/backpressure.py).
//   4. The server reads again when its stall is over: wait for every echo (checked, in
//      order) and for bufferedAmount to reach 0. At --timeout-ms the result says what was
//      received (recovered: false) instead of failing.
// A send() that throws stops the sending (send_threw says why); what it returned, if
// anything but undefined, is kept (send_returned).

import { describe, unsupported } from './errors.js';
import { baseResult, MIN_TIMER_MS } from './session.js';
import { checkEcho, makeMessages, messageFor } from './verify.js';

const BATCH_BYTES = 1024 * 1024;
const SETTLE_POLL_MS = 50;
const DRAIN_POLL_MS = 5;
const SERIES_MAX = 256; // readings kept in the series (a batch each, then the settling polls)

// The bytes a client frame of `n` payload bytes takes on the wire (RFC 6455 5.2: the
// header, its extended length, the 4-byte masking key).
export function clientFrameBytes(n) {
  return n + (n < 126 ? 2 : n < 65536 ? 4 : 10) + 4;
}

export function backpressureBody(env, opts, ctx) {
  const m = makeMessages(env, opts.type, opts.size, 'ascii', true, 'counting');
  const size = m.utf8Size;
  const total = Math.max(1, Math.floor(opts.totalBytes / Math.max(size, 1)));
  let ws = null;
  let sent = 0; // messages handed to send()
  let k = 0; // the sequence number the next echo must carry
  let compared = 0;
  let threw = null;
  const returned = [];
  let maxBuffered = 0;
  const series = [];
  let t0 = 0;
  let tSent = 0;
  let tGo = 0; // after the mark "full"
  let tFirst = -1;
  let tDrained = -1;
  let bufferedAtMark = -1;
  let state = 'send';

  const reading = (t) => {
    if (series.length < SERIES_MAX) series.push([Math.round((t - t0) * 1000) / 1000, sent * size, ws.bufferedAmount]);
  };

  function onMessage(ev) {
    if (tFirst < 0) tFirst = env.now();
    const whole = m.isText || k % m.sampleEvery === 0 || k + 1 === sent; // text: always compared whole
    const err = checkEcho(m, ev.data, k, whole, -1, 'measured');
    if (err !== null) return ctx.fail(err);
    if (whole) compared++;
    k++;
    if (k > sent) return ctx.fail(new Error('echo of message ' + k + ' arrived, only ' + sent + ' were sent'));
    if (state === 'recover') maybeDone();
  }

  function batch() {
    if (ctx.finished) return;
    const until = sent + Math.max(1, Math.floor(BATCH_BYTES / Math.max(size, 1)));
    while (sent < total && sent < until && threw === null) {
      let r;
      try {
        r = ws.send(messageFor(m, sent));
      } catch (e) {
        threw = describe(e);
        break;
      }
      sent++;
      if (r !== undefined && returned.length < 4 && returned.indexOf(String(r)) < 0) returned.push(String(r));
      const b = ws.bufferedAmount;
      if (b > maxBuffered) maxBuffered = b;
    }
    const now = env.now();
    reading(now);
    if (sent < total && threw === null && now - t0 < opts.sendMs) {
      env.setTimeout(batch, MIN_TIMER_MS);
      return;
    }
    tSent = now;
    state = 'settle';
    ctx.phase = 'settle';
    env.setTimeout(settle, Math.min(SETTLE_POLL_MS, opts.settleMs));
  }

  function settle() {
    if (ctx.finished) return;
    const now = env.now();
    reading(now);
    if (now - tSent < opts.settleMs) {
      env.setTimeout(settle, SETTLE_POLL_MS);
      return;
    }
    bufferedAtMark = ws.bufferedAmount;
    ctx.mark('full', () => {
      tGo = env.now();
      state = 'recover';
      ctx.phase = 'recover';
      drain();
    });
  }

  function drain() {
    if (ctx.finished) return;
    if (tDrained < 0 && ws.bufferedAmount === 0) tDrained = env.now();
    if (!maybeDone()) env.setTimeout(drain, DRAIN_POLL_MS);
  }

  function maybeDone() {
    if (k < sent || ws.bufferedAmount !== 0) return false;
    if (tDrained < 0) tDrained = env.now();
    report(true);
    return true;
  }

  function report(recovered) {
    const now = env.now();
    const r = baseResult(k, k * size, (now - t0) / 1000, 0);
    r.sent_messages = sent;
    r.sent_bytes = sent * size;
    r.frame_bytes = sent * clientFrameBytes(size);
    r.message_bytes = size;
    r.buffered_at_mark = bufferedAtMark;
    r.buffered_max = maxBuffered;
    r.buffered_end = ws.bufferedAmount;
    r.send_threw = threw;
    r.send_returned = returned;
    r.send_ms = tSent - t0;
    r.series = series;
    r.recovered = recovered;
    r.wait_ms = tFirst >= 0 && tGo > 0 ? Math.max(0, tFirst - tGo) : null; // the mark's GO to the first echo
    r.recover_ms = tFirst >= 0 && recovered ? now - Math.max(tFirst, tGo) : null; // then to every echo, nothing buffered
    r.drained_ms = tDrained >= 0 && tGo > 0 ? tDrained - tGo : null;
    r.checked = k;
    r.compared = compared;
    ctx.done(r);
  }

  ctx.progress = () => 'sent ' + sent + ' of ' + total + ', received ' + k + ', bufferedAmount ' + ws.bufferedAmount;
  // Past --timeout-ms after the mark: the result says what came back (not recovered).
  ctx.onTimeout = () => {
    if (state === 'recover') report(false);
    else ctx.fail(new Error('timeout after ' + opts.timeoutMs + ' ms (phase ' + ctx.phase + ', ' + ctx.progress() + ')'));
  };
  ws = ctx.connect(() => {
    ws.onmessage = onMessage;
    ctx.measure(() => {
      ctx.mark('begin', () => {
        t0 = env.now();
        ctx.phase = 'send';
        batch();
      });
    });
  });
  if (typeof ws.bufferedAmount !== 'number') {
    throw unsupported('WebSocket.bufferedAmount (got ' + typeof ws.bufferedAmount + ')');
  }
}
