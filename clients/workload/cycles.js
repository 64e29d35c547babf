// cycles: --count connect–echo–close cycles in batches of --connections (the soak kind,
// clients/README.md): every WebSocket of a batch is opened at once, sends one message of
// --size bytes (--type text or binary) and takes its echo (compared whole), then closes
// with 1000 and waits for its close event; the next batch starts once the whole batch has
// closed. "WSBENCH-MARK cycles-<done>" at the start (cycles-0) and after every batch that
// ends one --marks-th of the run (the last one always), with no connection open: the
// harness reads this process's memory and descriptors there. A connection that fails, loses
// its echo or closes with another code fails the run, named. Keys as wsbench-loadgen's.

import { closeDetail, errorDetail } from './errors.js';
import { baseResult } from './session.js';

// 19990 -> "19,990"
function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

// The message every connection sends: lowercase letters a..z over and over (the same bytes
// as wsbench-loadgen's, valid UTF-8 as text).
function payload(opts) {
  let s = '';
  for (let i = 0; i < opts.size; i++) s += String.fromCharCode(97 + (i % 26));
  if (opts.type === 'text') return s;
  const b = new Uint8Array(opts.size);
  for (let i = 0; i < opts.size; i++) b[i] = s.charCodeAt(i);
  return b.buffer;
}

// Whether the echo `data` is `sent`, or where it differs (one line), or null.
function echoProblem(sent, data) {
  if (typeof sent === 'string') {
    if (typeof data !== 'string') return 'came back as binary, sent as text';
    if (data.length !== sent.length) return 'is ' + data.length + ' characters long, sent ' + sent.length;
    for (let i = 0; i < sent.length; i++) if (data.charCodeAt(i) !== sent.charCodeAt(i)) return 'differs at byte ' + i;
    return null;
  }
  if (typeof data === 'string') return 'came back as text, sent as binary';
  const a = new Uint8Array(sent);
  const b = new Uint8Array(data);
  if (b.length !== a.length) return 'is ' + b.length + ' bytes long, sent ' + a.length;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return 'differs at byte ' + i;
  return null;
}

export function cyclesBody(env, opts, ctx) {
  const sent = payload(opts);
  const batches = Math.ceil(opts.count / opts.connections);
  const every = Math.ceil(batches / opts.marks);
  let done = 0; // cycles completed
  let batchNo = 0;
  let marks = 0;
  let inBatch = 0; // connections of this batch not yet closed
  let t0 = 0;

  function cycle(number) {
    let echoed = false;
    let closing = false;
    const ws = ctx.connect(() => ws.send(sent));
    ws.onmessage = (ev) => {
      if (echoed) {
        ctx.fail(new Error('connection ' + thousands(number) + ' received a second message'));
        return;
      }
      const bad = echoProblem(sent, ev.data);
      if (bad !== null) {
        ctx.fail(new Error('echo on connection ' + thousands(number) + ' ' + bad));
        return;
      }
      echoed = true;
      closing = true;
      ws.close(1000);
    };
    ws.onerror = (ev) => ctx.fail(new Error('connection ' + thousands(number) + ': error' + errorDetail(ev) +
      (closing ? ' (closing)' : echoed ? '' : ' (before its echo)')));
    ws.onclose = (ev) => {
      ws.onclose = ws.onerror = ws.onmessage = ws.onopen = null;
      ctx.forget(ws);
      if (!closing || (ev && ev.code !== 1000)) {
        ctx.fail(new Error('connection ' + thousands(number) + ' closed ' + closeDetail(ev) +
          (closing ? ' (closing)' : ' (before its echo)')));
        return;
      }
      if (--inBatch === 0) batchDone();
    };
  }

  function startBatch() {
    const b = Math.min(opts.connections, opts.count - done);
    inBatch = b;
    ctx.phase = 'cycles ' + thousands(done + 1) + ' to ' + thousands(done + b);
    for (let i = 1; i <= b; i++) cycle(done + i);
  }

  function batchDone() {
    done += Math.min(opts.connections, opts.count - done);
    batchNo++;
    const next = done < opts.count ? startBatch : finish;
    if (batchNo % every === 0 || done === opts.count) {
      marks++;
      ctx.mark('cycles-' + done, next);
    } else {
      next();
    }
  }

  function finish() {
    const s = (env.now() - t0) / 1000;
    const r = baseResult(done, done * opts.size, s, 0);
    r.cycles = done;
    r.batch = opts.connections;
    r.marks = marks;
    r.cycles_per_s = r.msgs_per_s;
    ctx.done(r);
  }

  ctx.progress = () => 'completed ' + done + ' of ' + opts.count + ' cycles, ' + inBatch + ' of the batch open';
  ctx.measure(() => {
    t0 = env.now();
    marks++;
    ctx.mark('cycles-0', startBatch);
  });
}
