// Adapter: Deno with its built-in WebSocket.
//   deno run --no-config --no-lock --no-remote --no-npm --no-prompt --allow-net=127.0.0.1 \
//       clients/deno.mjs --url ws://127.0.0.1:PORT/ ...
import { main } from './workload/main.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
function print(line) {
  const buf = encoder.encode(line + '\n');
  let off = 0;
  while (off < buf.length) off += Deno.stdout.writeSync(buf.subarray(off));
}

const held = Deno.env.get('WSBENCH_HOLD') === '1';
let pending = ''; // stdin read but not yet consumed

// Next line of stdin, or null at end-of-file.
async function readLine() {
  const buf = new Uint8Array(256);
  for (;;) {
    const nl = pending.indexOf('\n');
    if (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      return line;
    }
    const n = await Deno.stdin.read(buf);
    if (n === null) return null;
    pending += decoder.decode(buf.subarray(0, n));
  }
}

// With WSBENCH_HOLD=1 (set by the harness), wait at the start barrier for "GO" on stdin
// (with `mark`, at WSBENCH-MARK <mark>, for any line)...
function barrier(mark) {
  if (!held) return null;
  return readLine().then((line) => {
    if (line === null) throw new Error(mark ? 'stdin closed at WSBENCH-MARK ' + mark : 'stdin closed before GO');
    if (!mark && line.trim() !== 'GO') throw new Error('expected GO on stdin, got ' + JSON.stringify(line.slice(0, 40)));
  });
}

// ... and after the result line, stay alive until stdin reaches end-of-file.
async function hold() {
  if (!held) return;
  while ((await readLine()) !== null);
}

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // the default would be 'blob'
  barrier,
  hold,
  // Deno's WebSocket exposes no TLS state of its connection, nor the version of its rustls.
  tlsInfo: () => ({ cannot_tell: "Deno's WebSocket exposes no TLS state of its connection, nor its rustls version" }),
};

Deno.exit(await main(env, Deno.args));
