// buffered: bufferedAmount after a burst of sends, and how fast it drains.
//
// One round: send --count messages back to back, read ws.bufferedAmount --polls times in
// a tight loop while they are pending, then poll it from timers until it is 0, and wait
// for every echo. Rounds repeat until the phase has lasted --min-ms. getter_calls_per_s
// is over all rounds' tight loops; drain_ms is the median round's, pending_bytes the
// first round's first reading.

import { unsupported } from './errors.js';
import { baseResult, median, MIN_TIMER_MS } from './session.js';
import { checkEcho, makeMessages, messageFor } from './verify.js';

export function bufferedBody(env, opts, ctx) {
  const m = makeMessages(env, opts.type, opts.size, opts.text, opts.verify, opts.bytes);
  const n = opts.count;
  let ws = null;
  let k = 0; // sequence number the next echo must carry
  let ks = 0; // ... and the next message to send
  let nextWhole = 0;
  let every = 1;
  let compared = 0;
  let received = 0; // echoes of this round
  let rounds = 0;
  let drained = false;
  let tRound = 0;
  let t0 = 0;
  let pendingBytes = -1;
  let polled = 0;
  let pollMs = 0;
  const drains = [];

  function onMessage(ev) {
    const whole = k === nextWhole || received + 1 === n;
    const err = checkEcho(m, ev.data, k, whole, -1, every === 1 ? 'warm-up' : 'measured');
    if (err !== null) return ctx.fail(err);
    if (whole && every > 1) compared++;
    if (k === nextWhole) nextWhole += every;
    k++;
    if (++received === n) roundOver();
  }

  function send() {
    received = 0;
    drained = false;
    tRound = env.now();
    for (let i = 0; i < n; i++) ws.send(messageFor(m, ks++));
  }

  // A measured round: the sends, the tight loop of reads, then the drain.
  function round() {
    send();
    const first = ws.bufferedAmount;
    if (pendingBytes < 0) pendingBytes = first;
    const polls = opts.polls;
    let sink = 0;
    const g0 = env.now();
    for (let i = 0; i < polls; i++) sink += ws.bufferedAmount;
    const g1 = env.now();
    if (!(sink >= 0)) return ctx.fail(new Error('bufferedAmount read as ' + sink)); // keeps the reads alive
    polled += polls;
    pollMs += g1 - g0;
    ctx.phase = 'drain';
    poll();
  }

  function poll() {
    if (ctx.finished) return;
    if (ws.bufferedAmount === 0) {
      drains.push(env.now() - tRound);
      drained = true;
      ctx.phase = 'receive';
      roundOver();
    } else {
      env.setTimeout(poll, MIN_TIMER_MS);
    }
  }

  function roundOver() {
    if (received < n || (every > 1 && !drained)) return;
    if (every === 1) {
      // warm-up done (one round of sends, every echo compared): the measured phase
      every = m.sampleEvery;
      nextWhole = k + every - 1;
      ctx.measure(() => {
        t0 = env.now();
        round();
      });
      return;
    }
    rounds++;
    const now = env.now();
    if (now - t0 < opts.minMs) {
      ctx.phase = 'send';
      round();
      return;
    }
    const messages = rounds * n;
    const r = baseResult(messages, messages * m.utf8Size, (now - t0) / 1000, 0);
    r.pending_bytes = pendingBytes;
    r.getter_calls_per_s = pollMs > 0 ? polled / (pollMs / 1000) : 0;
    r.drain_ms = median(drains);
    r.rounds = rounds;
    r.checked = m.verify ? messages : 0;
    r.compared = compared;
    ctx.done(r);
  }

  ctx.progress = () => 'received ' + received + ' of ' + n + (drained ? '' : ', bufferedAmount ' + ws.bufferedAmount);
  ws = ctx.connect(() => {
    ws.onmessage = onMessage;
    ctx.phase = 'warmup';
    send(); // warm-up: one unmeasured round of the same sends
  });
  if (typeof ws.bufferedAmount !== 'number') {
    throw unsupported('WebSocket.bufferedAmount (got ' + typeof ws.bufferedAmount + ')');
  }
}
