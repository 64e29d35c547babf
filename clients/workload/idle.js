// idle: --connections N WebSockets (or "max": until the first failure) with at most
// --concurrency connecting at once, timed; the start barrier; a hold of --hold-ms; the
// mark WSBENCH-MARK held (the harness reads this process's memory with every connection
// open); then one text message on each: the connections whose echo comes back are
// `alive`. The WebSocket API has no ping (a browser's sends none either), so the hold is
// only time: --ping-ms above 0 and --sources above 1 (no bind in the API) are unsupported.
//
// --warm: once all are open, before the start barrier, each connection sends one message
// and waits for its echo, so that the mark reads connections after traffic (with
// permessage-deflate most runtimes create their zlib streams at the first message):
// message 0 of --text json of 1 KiB (verify.js, oneJsonMessage; wsbench-loadgen sends the
// same bytes), its echo compared whole; `warmed` counts those echoes.
//
// A failure while opening (an error event, a close before open, no open for --stall-ms)
// stops the opening and becomes `limit`, one line; the run goes on with the connections
// that opened. Keys as the load generator's where they apply (clients/README.md).

import { closeDetail, describe, errorDetail, unsupported } from './errors.js';
import { baseResult } from './session.js';
import { checkEcho, oneJsonMessage } from './verify.js';

const ALIVE = 'wsbench-alive';
const ALIVE_WAIT_MS = 10000;
const WARM_SIZE = 1024; // bytes of the --warm message (the JSON corpus, compressible)

// 19990 -> "19,990" (toLocaleString groups nothing in some engines)
export function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function idleBody(env, opts, ctx) {
  if (opts.pingMs > 0) throw unsupported('--ping-ms (the WebSocket API sends no pings)');
  if (opts.sources > 1) throw unsupported('--sources (the WebSocket API cannot bind a source address)');
  const want = opts.connections; // 0: until the first failure
  const all = []; // every connection started: {number, opened, over, ws, alive, warmDue}
  const open = []; // those that opened, in order
  let started = 0;
  let pending = 0;
  let limit = null;
  let lost = 0;
  let lostFirst = null;
  let alive = 0;
  let alivePhase = false;
  const warm = opts.warm ? oneJsonMessage(WARM_SIZE) : null;
  let warmed = 0; // warm echoes received
  let warmWaiting = 0; // warm messages sent whose echo has not come (nor their connection gone)
  let warmDone = null;
  let t0 = env.now();
  let tLast = t0;
  let lastProgress = t0;
  let afterOpen = null;

  function stop(why) {
    if (limit === null) limit = why;
  }

  function opening() {
    return limit === null && (want === 0 || started < want);
  }

  function startOne() {
    const number = ++started;
    const state = { number, opened: false, over: false, ws: null, alive: false, warmDue: false };
    let ws;
    try {
      ws = ctx.connect(() => opened(state));
    } catch (e) {
      stop('connection ' + thousands(number) + ': ' + describe(e));
      return;
    }
    state.ws = ws;
    all.push(state);
    pending++;
    ws.onerror = (ev) => failed(state, 'failed during the handshake' + errorDetail(ev), 'error' + errorDetail(ev));
    ws.onclose = (ev) => failed(state, 'was closed by the server during the handshake ' + closeDetail(ev),
      'closed ' + closeDetail(ev));
  }

  function opened(state) {
    state.opened = true;
    open.push(state);
    pending--;
    tLast = lastProgress = env.now();
    state.ws.onmessage = (ev) => received(state, ev);
    pump();
  }

  function failed(state, beforeOpen, afterOpened) {
    if (state.over) return;
    state.over = true;
    if (!state.opened) {
      pending--;
      lastProgress = env.now();
      stop('connection ' + thousands(state.number) + ' ' + beforeOpen);
      pump();
      return;
    }
    lost++;
    if (lostFirst === null) lostFirst = 'connection ' + thousands(state.number) + ': ' + afterOpened;
    if (state.warmDue) {
      state.warmDue = false;
      warmWaiting--;
      warmCheck();
    }
    if (alivePhase) aliveCheck();
  }

  function received(state, ev) {
    if (state.warmDue) {
      const err = checkEcho(warm, ev.data, 0, true, state.number - 1, 'warm');
      if (err !== null) {
        ctx.fail(err);
        return;
      }
      state.warmDue = false;
      warmed++;
      warmWaiting--;
      warmCheck();
      return;
    }
    if (!alivePhase || state.alive || ev.data !== ALIVE) {
      const kind = typeof ev.data === 'string' ? 'text' : 'binary';
      ctx.fail(new Error('connection ' + thousands(state.number) + ' received an unexpected ' + kind + ' message'));
      return;
    }
    state.alive = true;
    alive++;
    aliveCheck();
  }

  function pump() {
    while (opening() && pending < opts.concurrency) startOne();
    if (pending === 0 && !opening() && afterOpen !== null) {
      const next = afterOpen;
      afterOpen = null;
      next();
    }
  }

  // No handshake done for --stall-ms with some in flight: the opening stops there.
  function watchStall() {
    if (afterOpen === null) return;
    if (pending > 0 && env.now() - lastProgress >= opts.stallMs) {
      stop('no handshake completed for ' + (opts.stallMs / 1000).toFixed(1) + ' s with ' + thousands(pending) +
        ' in flight after ' + thousands(open.length) + ' opened: the server accepts no more connections');
      for (const s of all) {
        if (s.opened || s.over) continue;
        s.over = true;
        abandon(s.ws);
      }
      pending = 0;
      pump();
      return;
    }
    env.setTimeout(watchStall, Math.max(1, Math.min(250, opts.stallMs >> 2)));
  }

  function abandon(ws) {
    ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
    ctx.forget(ws);
    try {
      ws.close();
    } catch (e) {
      // a socket still connecting may refuse; it is forgotten either way
    }
  }

  function warmCheck() {
    if (warmDone !== null && warmWaiting === 0) {
      const done = warmDone;
      warmDone = null;
      done();
    }
  }

  // --warm: message 0 of the corpus on every open connection, then `next` once every echo
  // is in (or its connection gone); without --warm, `next` at once.
  function warmUp(next) {
    if (warm === null) {
      next();
      return;
    }
    ctx.phase = 'warm';
    warmDone = next;
    for (const s of open) {
      if (s.over) continue;
      s.warmDue = true;
      warmWaiting++;
      s.ws.send(warm.ring[0]);
    }
    warmCheck();
  }

  let aliveDone = null;
  function aliveCheck() {
    if (aliveDone !== null && alive + lost >= open.length) {
      const done = aliveDone;
      aliveDone = null;
      done();
    }
  }

  ctx.progress = () => 'opened ' + open.length + ', ' + pending + ' in flight, ' +
    (warm !== null ? 'warmed ' + warmed + ', ' : '') + 'alive ' + alive;
  ctx.phase = 'open';
  afterOpen = () => {
    const openS = open.length ? (tLast - t0) / 1000 : 0;
    if (open.length === 0) {
      ctx.fail(new Error('no connection opened: ' + limit));
      return;
    }
    warmUp(() => ctx.measure(() => {
      const tHold = env.now();
      env.setTimeout(() => {
        const holdS = (env.now() - tHold) / 1000;
        ctx.mark('held', () => {
          ctx.phase = 'alive check';
          alivePhase = true;
          const timer = env.setTimeout(() => aliveDone && aliveDone(), ALIVE_WAIT_MS);
          aliveDone = () => {
            aliveDone = null;
            if (typeof env.clearTimeout === 'function') env.clearTimeout(timer);
            const r = baseResult(alive, alive * ALIVE.length, holdS, 0);
            r.connections = open.length;
            r.open_s = openS;
            r.opens_per_s = openS > 0 ? open.length / openS : 0;
            r.hold_s = holdS;
            r.alive = alive;
            r.lost = lost;
            r.concurrency = opts.concurrency;
            if (warm !== null) r.warmed = warmed;
            if (limit !== null) r.limit = limit;
            if (lostFirst !== null) r.lost_first = lostFirst;
            ctx.done(r);
          };
          for (const s of open) if (!s.over) s.ws.send(ALIVE);
          aliveCheck();
        });
      }, Math.max(1, opts.holdMs));
    }));
  };
  t0 = tLast = lastProgress = env.now();
  pump();
  watchStall();
}
