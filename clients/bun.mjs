// Adapter: Bun with its built-in WebSocket.
//   bun --no-install --no-env-file clients/bun.mjs --url ws://127.0.0.1:PORT/ ...
import { barrier, hold } from './node-harness.mjs';
import { main } from './workload/main.js';

const env = {
  WebSocket: globalThis.WebSocket,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // Bun's default would be 'nodebuffer'
  barrier,
  hold,
  // Bun's WebSocket client exposes no TLS state of its connection; the library is known.
  tlsInfo: () => ({
    library: `BoringSSL ${process.versions.boringssl}`,
    cannot_tell: "Bun's WebSocket exposes no TLS state of its connection",
  }),
};

process.exit(await main(env, process.argv.slice(2)));
