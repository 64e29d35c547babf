// The one workload implementation shared by every client adapter (see README.md).
//
// Plain ECMAScript module: no Node, Bun, Deno or browser API is used here, so it also
// runs on QuickJS. Everything runtime-specific comes in through `env`:
//
//   env.WebSocket      constructor, `new env.WebSocket(url)` (WHATWG-style object)
//   env.now()          monotonic clock in milliseconds
//   env.print(line)    write one line to stdout and flush it
//   env.setTimeout     (fn, ms) => handle; env.clearTimeout is optional
//   env.binaryType     optional, defaults to 'arraybuffer'
//   env.barrier(mark)  optional; null, or a promise that resolves when the harness has
//                      taken its readings at the start of the measured phase ("GO" on
//                      stdin), or with `mark` at WSBENCH-MARK <mark> (any line), see README.md
//   env.hold()         optional; resolves when the harness has taken its readings at
//                      the end (stdin reaches end-of-file)
//   env.seqOf, env.firstDiff   optional native versions of the echo checks (verify.js)
//   env.tlsInfo(ws)    optional; over wss://, what the connection negotiated:
//                      {version, cipher, group, library, cannot_tell} (session.js)
//   env.about()        optional; keys added to the result line, read when the phase is
//                      over: what the client's implementation actually used (node-ws:
//                      {ws: {bufferutil, ...}}, README.md)
//
// The per-message paths (the onMessage functions below) are kept as small as possible
// and are the same for every runtime: what gets measured is the runtime's WebSocket,
// not this loop.

import { parseArgs } from './args.js';
import { backpressureBody } from './backpressure.js';
import { bufferedBody } from './buffered.js';
import { cyclesBody } from './cycles.js';
import { echoBody } from './echo.js';
import { oneLine } from './errors.js';
import { handshakeBody } from './handshake.js';
import { idleBody } from './idle.js';
import { latencyBody } from './latency.js';
import { observeBody } from './observe.js';
import { openloopBody } from './openloop.js';
import { requestBody } from './request.js';
import { run } from './session.js';

export { parseArgs } from './args.js';
export { utf8Length } from './payload.js';

const KIND_BODIES = {
  echo: echoBody,
  latency: latencyBody,
  openloop: openloopBody,
  buffered: bufferedBody,
  request: requestBody,
  handshake: handshakeBody,
  observe: observeBody,
  idle: idleBody,
  cycles: cyclesBody,
  backpressure: backpressureBody,
};


// The whole client: parse, run (which waits for the harness, env.hold, with its
// connections open: session.js), report a failure as {"error": ...} and then wait for the
// harness, so it can read this process's CPU time and memory while it is still alive. Resolves to the exit code (0; 1 on failure; 3 when this client cannot run
// what was asked); the adapter exits with it.
export async function main(env, argv) {
  let code = 0;
  try {
    const opts = parseArgs(argv);
    await run(env, opts, KIND_BODIES[opts.kind]); // it held at the end barrier, connections open
  } catch (e) {
    env.print(JSON.stringify({ error: oneLine(e) }));
    code = e && e.unsupported ? 3 : 1;
    if (env.hold) await env.hold();
  }
  return code;
}
