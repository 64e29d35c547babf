// Adapter: Deno with its built-in WebSocket.
//   deno run --no-config --no-lock --no-remote --no-npm --no-prompt --allow-net=127.0.0.1 \
//       clients/deno.mjs --url ws://127.0.0.1:PORT/ ...
import { main } from './workload/main.js';

const encoder = new TextEncoder();
function print(line) {
  const buf = encoder.encode(line + '\n');
  let off = 0;
  while (off < buf.length) off += Deno.stdout.writeSync(buf.subarray(off));
}

// With WSBENCH_HOLD=1 (set by the harness), stay alive until stdin reaches end-of-file.
async function hold() {
  if (Deno.env.get('WSBENCH_HOLD') !== '1') return;
  const buf = new Uint8Array(256);
  while ((await Deno.stdin.read(buf)) !== null);
}

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // the default would be 'blob'
  hold,
};

Deno.exit(await main(env, Deno.args));
