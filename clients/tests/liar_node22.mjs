// Test-only adapter (clients/tests/test_backpressure_kind.py): Node 22's built-in WebSocket
// whose bufferedAmount always reads 0, as bun#31760 reported of Bun's client, run through
// the shared workload unchanged: the harness must name it untruthful (under-reports).
import { barrier, hold } from '../node-harness.mjs';
import { main } from '../workload/main.js';

class LyingWebSocket extends globalThis.WebSocket {
  get bufferedAmount() {
    return 0;
  }
}

const env = {
  WebSocket: LyingWebSocket,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer',
  barrier,
  hold,
};

process.exit(await main(env, process.argv.slice(2)));
