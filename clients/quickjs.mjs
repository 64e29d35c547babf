// Adapter: QuickJS (`qjs` 2025-04-26) with quickjs-websocket (libwebsockets).
//   build/prefix/bin/qjs clients/quickjs.mjs --url ws://127.0.0.1:PORT/ --type binary --size 32 --count 50000
// Optimizations can be switched off with QJSWS_DISABLE (see quickjs-websocket/README.md).
import * as std from 'std';
import * as os from 'os';
import { WebSocket } from '../build/quickjs-websocket/websocket.js';
import { main } from './workload/main.js';

function print(line) {
  std.out.puts(line + '\n');
  std.out.flush();
}

// With WSBENCH_HOLD=1 (set by the harness), stay alive until stdin reaches end-of-file.
// Nothing else is pending by then, so a blocking read is fine.
async function hold() {
  if (std.getenv('WSBENCH_HOLD') !== '1') return;
  while (std.in.getline() !== null);
}

const env = {
  WebSocket: WebSocket,
  now: () => os.now(), // monotonic, milliseconds (fractional)
  print,
  setTimeout: (fn, ms) => os.setTimeout(fn, ms),
  clearTimeout: (t) => os.clearTimeout(t),
  binaryType: 'arraybuffer',
  hold,
};

main(env, scriptArgs.slice(1)).then((code) => std.exit(code));
