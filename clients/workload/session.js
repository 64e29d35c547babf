// One run of a workload kind: its sockets, timeout, result line and clean shutdown.

import { closeDetail, describe, errorDetail } from './errors.js';

const CLOSED = 3; // WebSocket.CLOSED

// The result line's "tls" field (clients/README.md): what the first connection over
// wss:// negotiated, as far as the adapter's env.tlsInfo(ws) can tell; null for each
// field it cannot, with the reason in cannot_tell.
function tlsField(env, ws) {
  const info = (typeof env.tlsInfo === 'function' && env.tlsInfo(ws)) || {
    cannot_tell: 'this client reports no TLS details',
  };
  const field = { version: null, cipher: null, group: null, library: null };
  for (const key of Object.keys(field)) if (info[key]) field[key] = String(info[key]);
  if (info.cannot_tell) field.cannot_tell = String(info.cannot_tell);
  return field;
}

// Runs one kind, prints WSBENCH-START and the result line, holds at the end barrier
// (env.hold, when the adapter has one) with its connections open, closes them, and
// resolves to the result object. Rejects (with an Error whose message is one line) on
// any failure: connection error, early close, or timeout (then without holding: the
// caller holds).
//
// body(ctx) starts the work; ctx offers:
//   ctx.connect(onOpen)  a new tracked socket on opts.url; errors and closes fail the run
//   ctx.forget(ws)       stop tracking a socket (it is closed and done with)
//   ctx.progress = fn    returns a description of the state for the timeout message
//   ctx.measure(fn)      announce the measured phase (WSBENCH-START), wait at the start
//                        barrier (env.barrier) until the harness has taken its readings,
//                        then call fn, which starts the clock
//   ctx.mark(name, fn)   print WSBENCH-MARK <name>, wait for the harness's line
//                        (env.barrier(name): any line), then call fn
//   ctx.done(result)     print the result line and finish
//   ctx.fail(err)        finish with an error
//   ctx.onTimeout = fn   called at --timeout-ms instead of failing (a kind whose result
//                        is what happened until then)
//   ctx.finished         true once done or failed
export function run(env, opts, body) {
  return new Promise((resolve, reject) => {
    const sockets = [];
    let timer = null;
    let tls = /^wss:/i.test(opts.url) ? null : undefined; // null: not known yet
    let extensions = null; // the first connection's WebSocket extensions (permessage-deflate), once open

    // On success the result has already been printed; with env.hold (the harness's end
    // barrier) the connections stay open, their handlers detached, until the harness has
    // taken its end readings (the bytes on the wire of their sockets among them), and are
    // closed after it, so closing is not part of what was measured. Then they are closed
    // cleanly (bounded wait) so the server sees a close frame rather than a dropped TCP
    // connection. On failure they are closed at once, without waiting.
    const CLOSE_WAIT_MS = 500;
    function finish(err, result) {
      if (ctx.finished) return;
      ctx.finished = true;
      if (timer !== null && typeof env.clearTimeout === 'function') env.clearTimeout(timer);
      for (const ws of sockets) {
        ws.onopen = null;
        ws.onmessage = null;
        ws.onerror = null;
        ws.onclose = null;
      }
      if (err || typeof env.hold !== 'function') {
        closeAll(err, result);
        return;
      }
      Promise.resolve(env.hold()).then(
        () => closeAll(null, result),
        (e) => closeAll(new Error('end barrier: ' + describe(e)), result),
      );
    }
    function closeAll(err, result) {
      const settle = () => (err ? reject(err) : resolve(result));
      let pending = 0;
      let settled = false;
      const once = () => {
        if (!settled && --pending <= 0) {
          settled = true;
          settle();
        }
      };
      for (const ws of sockets) {
        if (ws.readyState === CLOSED) continue;
        if (!err) {
          pending++;
          ws.onclose = once;
          ws.onerror = once;
        }
        try {
          ws.close(1000);
        } catch (e) {
          if (!err) once();
        }
      }
      if (pending === 0) {
        settled = true;
        settle();
      } else {
        env.setTimeout(() => {
          if (!settled) {
            settled = true;
            settle();
          }
        }, CLOSE_WAIT_MS);
      }
    }

    const ctx = {
      finished: false,
      onTimeout: null,
      progress: () => '',
      phase: 'connect',
      connect(onOpen) {
        let ws;
        try {
          ws = new env.WebSocket(opts.url);
          ws.binaryType = env.binaryType || 'arraybuffer';
        } catch (e) {
          throw new Error('cannot connect to ' + opts.url + ': ' + describe(e));
        }
        sockets.push(ws);
        ws.onerror = (ev) => finish(new Error('WebSocket error in phase ' + ctx.phase + errorDetail(ev)));
        ws.onclose = (ev) => finish(new Error('connection closed in phase ' + ctx.phase + ' ' + closeDetail(ev)));
        ws.onopen = () => {
          if (tls === null) tls = tlsField(env, ws);
          if (extensions === null && typeof ws.extensions === 'string') extensions = ws.extensions;
          try {
            onOpen(ws);
          } catch (e) {
            finish(e && e.unsupported ? e : new Error('send failed: ' + describe(e)));
          }
        };
        return ws;
      },
      forget(ws) {
        const i = sockets.indexOf(ws);
        if (i >= 0) sockets.splice(i, 1);
      },
      done(result) {
        if (ctx.finished) return;
        if (tls) result.tls = tls;
        if (extensions) result.extensions = extensions; // what its first connection agreed (deflate)
        if (typeof env.about === 'function') Object.assign(result, env.about());
        env.print(JSON.stringify(result));
        finish(null, result);
      },
      fail(err) {
        finish(err);
      },
      measure(fn) {
        ctx.phase = 'start barrier';
        env.print('WSBENCH-START');
        wait(null, 'start barrier', () => {
          ctx.phase = 'measured';
          fn();
        });
      },
      mark(name, fn) {
        ctx.phase = 'mark ' + name;
        env.print('WSBENCH-MARK ' + name);
        wait(name, 'mark ' + name, fn);
      },
    };

    // env.barrier(mark): the harness's line on stdin (GO, or any line at a mark), then fn.
    function wait(mark, what, fn) {
      const begin = () => {
        if (ctx.finished) return;
        try {
          fn();
        } catch (e) {
          finish(e);
        }
      };
      const go = typeof env.barrier === 'function' ? env.barrier(mark) : null;
      if (go === null) begin();
      else go.then(begin, (e) => finish(new Error(what + ': ' + describe(e))));
    }

    timer = env.setTimeout(() => {
      if (typeof ctx.onTimeout === 'function') {
        ctx.onTimeout();
        return;
      }
      const p = ctx.progress();
      finish(new Error('timeout after ' + opts.timeoutMs + ' ms (phase ' + ctx.phase + (p ? ', ' + p : '') + ')'));
    }, opts.timeoutMs);

    try {
      body(env, opts, ctx);
    } catch (e) {
      // Failed before the caller could attach a handler: settle one microtask later,
      // or qjs (2025-04-26) counts the rejection as unhandled and exits with code 1.
      Promise.resolve().then(() => finish(e));
    }
  });
}

export function median(xs) {
  const a = xs.slice().sort((x, y) => x - y);
  const h = a.length >> 1;
  return a.length % 2 ? a[h] : (a[h - 1] + a[h]) / 2;
}

// The keys every result line has.
export function baseResult(messages, nbytes, seconds, errors) {
  const ok = seconds > 0;
  return {
    messages: messages,
    bytes: nbytes,
    seconds: seconds,
    msgs_per_s: ok ? messages / seconds : 0,
    mb_per_s: ok ? nbytes / seconds / 1e6 : 0,
    errors: errors,
  };
}

export const TRANSFER = { transfer: true };

// The shortest timer delay used. Not 0: in QuickJS (qjs) a timer that is already due runs
// before, and instead of, polling the sockets, so a chain of 0 ms timers would starve
// the WebSocket's I/O; Node rounds 0 up to 1 ms anyway. Whole milliseconds, since qjs
// truncates fractions.
export const MIN_TIMER_MS = 1;
