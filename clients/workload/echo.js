import { makePayload } from './payload.js';
import { MIN_TIMER_MS, TRANSFER, baseResult } from './session.js';

// ---- echo: throughput over one or more connections -------------------------------------

export function echoBody(env, opts, ctx) {
  const isText = opts.type === 'text';
  const size = opts.size;
  const payload = makePayload(opts.type, size, opts.text);
  const expectLen = isText ? payload.length : size; // UTF-16 code units for text
  const C = opts.connections;

  let errors = 0; // over warm-up and measured phase alike
  let bytes = 0;
  let t0 = 0;
  let t1 = 0;
  let pending = 0; // connections not yet through the current step
  const conns = [];

  function inFlightFor(n) {
    if (opts.mode === 'pingpong') return 1;
    if (opts.mode === 'window') return opts.window;
    return n; // burst
  }

  function share(total, i) {
    return Math.floor(total / C) + (i < total % C ? 1 : 0);
  }

  // One connection: its own send/receive counters, the shared totals above.
  function makeConn(count, warmup) {
    let ws = null;
    let target = 0; // messages in the current phase
    let sent = 0;
    let received = 0;
    let phaseDone = null;
    // --transfer: one buffer per message, all made before the first one is sent.
    const bufs = opts.transfer ? new Array(warmup + count) : null;
    let next = 0;
    if (bufs !== null) for (let i = 0; i < bufs.length; i++) bufs[i] = payload.slice(0);

    function onMessage(ev) {
      const d = ev.data;
      const str = typeof d === 'string';
      const len = str ? d.length : d.byteLength | 0;
      if (str !== isText || len !== expectLen) errors++;
      bytes += len;
      if (++received === target) {
        t1 = env.now();
        phaseDone();
      } else if (sent < target) {
        sent++;
        ws.send(payload);
      }
    }

    // A copy of onMessage that sends from the per-message buffers: kept separate on
    // purpose, so neither hot path pays a per-message branch or extra call.
    function onMessageTransfer(ev) {
      const d = ev.data;
      const str = typeof d === 'string';
      const len = str ? d.length : d.byteLength | 0;
      if (str !== isText || len !== expectLen) errors++;
      bytes += len;
      if (++received === target) {
        t1 = env.now();
        phaseDone();
      } else if (sent < target) {
        sent++;
        ws.send(bufs[next++], TRANSFER);
      }
    }

    // Sends `n` messages keeping at most `inFlight` outstanding; calls done() after
    // the n-th echo has arrived.
    function startPhase(n, inFlight, done) {
      target = n;
      sent = 0;
      received = 0;
      phaseDone = done;
      if (n === 0) {
        done();
        return;
      }
      const first = inFlight < n ? inFlight : n;
      for (let i = 0; i < first; i++) {
        sent++;
        if (bufs !== null) ws.send(bufs[next++], TRANSFER);
        else ws.send(payload);
      }
    }

    return {
      open(onOpen) {
        ws = ctx.connect(() => {
          ws.onmessage = bufs !== null ? onMessageTransfer : onMessage;
          onOpen();
        });
      },
      warmup(done) {
        startPhase(warmup, inFlightFor(warmup), done);
      },
      measured(done) {
        startPhase(count, inFlightFor(count), done);
      },
      progress() {
        return 'sent ' + sent + ', received ' + received + ' of ' + target;
      },
    };
  }

  ctx.progress = () => {
    const parts = [];
    for (let i = 0; i < conns.length; i++) parts.push((C > 1 ? '#' + i + ': ' : '') + conns[i].progress());
    return parts.join('; ');
  };

  function step() {
    if (--pending === 0) return true;
    return false;
  }

  function allOpen() {
    if (!step()) return;
    ctx.phase = 'warmup';
    pending = C;
    for (let i = 0; i < C; i++) conns[i].warmup(allWarm);
  }

  function allWarm() {
    if (!step()) return;
    env.print('WSBENCH-START');
    ctx.phase = 'measured';
    bytes = 0;
    pending = C;
    t0 = env.now();
    for (let i = 0; i < C; i++) conns[i].measured(allMeasured);
  }

  function allMeasured() {
    if (!step()) return;
    const seconds = (t1 - t0) / 1000;
    const messages = opts.count;
    // Mixed text: .length counts UTF-16 code units; report UTF-8 payload bytes.
    const nbytes = opts.text === 'mixed' ? messages * size : bytes;
    ctx.done(baseResult(messages, nbytes, seconds, errors));
  }

  for (let i = 0; i < C; i++) conns.push(makeConn(share(opts.count, i), share(opts.warmup, i)));
  pending = C;
  for (let i = 0; i < C; i++) conns[i].open(allOpen);
}
