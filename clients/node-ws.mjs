// Adapter: Node.js 20 (system `node`) with the `ws` package.
//   node clients/node-ws.mjs --url ws://127.0.0.1:PORT/ --type binary --size 32 --count 50000
import WebSocket from 'ws';
import { parseArgs, run } from './workload.js';

// Same behaviour as the other clients: offer no compression; accept large echoes.
function WsClient(url) {
  return new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
}

const env = {
  WebSocket: WsClient,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'), // synchronous for pipes and files on Linux
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // ws would otherwise deliver Buffer
};

try {
  await run(env, parseArgs(process.argv.slice(2)));
  process.exit(0);
} catch (e) {
  process.stdout.write(JSON.stringify({ error: String((e && e.message) || e).replace(/\s+/g, ' ') }) + '\n');
  process.exit(1);
}
