// Adapter: Deno with its built-in WebSocket.
//   deno run --no-config --no-lock --no-remote --no-npm --no-prompt --allow-net=127.0.0.1 \
//       clients/deno.mjs --url ws://127.0.0.1:PORT/ ...
import { parseArgs, run } from './workload.js';

const encoder = new TextEncoder();
function print(line) {
  const buf = encoder.encode(line + '\n');
  let off = 0;
  while (off < buf.length) off += Deno.stdout.writeSync(buf.subarray(off));
}

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print,
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // the default would be 'blob'
};

try {
  await run(env, parseArgs(Deno.args));
  Deno.exit(0);
} catch (e) {
  print(JSON.stringify({ error: String((e && e.message) || e).replace(/\s+/g, ' ') }));
  Deno.exit(1);
}
