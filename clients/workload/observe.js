// observe: connect to --url, send nothing, and record what the runtime's WebSocket does
// with what the server sends: open, each message (a digest of it), error and close, in
// order. When the connection is closed, or after --timeout-ms, one result line carries
// them all (`wsbench conformance` judges them against what it sent; clients/README.md).

import { errorDetail } from './errors.js';
import { baseResult } from './session.js';

const EDGE = 8; // code units (text) or bytes (binary) in a digest's head and tail
const SAMPLES = 16; // sample points spread over the message
const MAX_EVENTS = 256; // a client that delivers a storm of messages reports the first ones

// type, length (UTF-16 code units for text, bytes for binary), the first and last EDGE
// units and SAMPLES units at floor(i * length / SAMPLES): enough to tell a message from a
// truncated, reordered or shifted one without printing 16 MiB.
function digest(data) {
  let at;
  let n;
  let kind;
  if (typeof data === 'string') {
    kind = 'text';
    n = data.length;
    at = (i) => data.charCodeAt(i);
  } else if (data instanceof ArrayBuffer) {
    kind = 'binary';
    const bytes = new Uint8Array(data);
    n = bytes.length;
    at = (i) => bytes[i];
  } else {
    return { type: 'message', kind: typeof data, length: -1, head: [], tail: [], sample: [] };
  }
  const head = [];
  const tail = [];
  const sample = [];
  for (let i = 0; i < EDGE && i < n; i++) head.push(at(i));
  for (let i = Math.max(0, n - EDGE); i < n; i++) tail.push(at(i));
  if (n > 0) for (let i = 0; i < SAMPLES; i++) sample.push(at(Math.floor((i * n) / SAMPLES)));
  return { type: 'message', kind, length: n, head, tail, sample };
}

export function observeBody(env, opts, ctx) {
  const events = [];
  let t0 = 0;
  let messages = 0;
  let units = 0;
  let untold = 0;

  function record(ev) {
    ev.t = Math.round((env.now() - t0) * 10) / 10; // ms since the connection was requested
    if (events.length < MAX_EVENTS) events.push(ev);
    else untold++;
  }

  function report(timedOut) {
    const r = baseResult(messages, units, (env.now() - t0) / 1000, 0);
    r.timed_out = timedOut;
    r.events = events;
    if (untold) r.events_untold = untold;
    ctx.done(r);
  }

  ctx.onTimeout = () => report(true);
  ctx.progress = () => events.length + ' events';
  ctx.measure(() => {
    t0 = env.now();
    const ws = ctx.connect(() => record({ type: 'open' }));
    ws.onmessage = (ev) => {
      const d = digest(ev.data);
      messages++;
      units += d.length > 0 ? d.length : 0;
      record(d);
    };
    ws.onerror = (ev) => {
      const e = { type: 'error' };
      const msg = errorDetail(ev).slice(2);
      if (msg) e.message = msg.replace(/\s+/g, ' ').slice(0, 200);
      record(e);
    };
    ws.onclose = (ev) => {
      record({ type: 'close', code: ev.code, reason: String(ev.reason), wasClean: ev.wasClean });
      report(false);
    };
  });
}
