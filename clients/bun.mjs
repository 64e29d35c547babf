// Adapter: Bun with its built-in WebSocket.
//   bun --no-install --no-env-file clients/bun.mjs --url ws://127.0.0.1:PORT/ ...
import { parseArgs, run } from './workload.js';

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // Bun's default would be 'nodebuffer'
};

try {
  await run(env, parseArgs(process.argv.slice(2)));
  process.exit(0);
} catch (e) {
  process.stdout.write(JSON.stringify({ error: String((e && e.message) || e).replace(/\s+/g, ' ') }) + '\n');
  process.exit(1);
}
