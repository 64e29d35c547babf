// k6's WebSocket send queue, on its own (docs/k6.md): sends BURST text messages of SIZE
// bytes at once on one k6/websockets connection, waits for their echoes, and prints one JSON
// line: the burst, the time from the first send to the last echo, and µs per message.
// Nothing of wsbench is involved but an echo server.
//   build/tools/k6/k6 run --no-usage-report -q --log-output=stdout --log-format=raw \
//       -e URL=ws://127.0.0.1:PORT/ -e BURST=50000 clients/k6/send-queue.js
// k6 (internal/js/modules/k6/websockets, writePump) keeps the messages not yet written in
// a slice and drops the first one of each write with `queue = queue[:copy(queue,
// queue[1:])]`: every write copies everything still queued, so a burst of n messages
// costs O(n²) and the time per message grows with the burst.
import exec from 'k6/execution';
import { WebSocket } from 'k6/websockets';

const URL = __ENV.URL;
const BURST = Number(__ENV.BURST || 50000);
const SIZE = Number(__ENV.SIZE || 11);
const ROUNDS = Number(__ENV.ROUNDS || 1);

export const options = {
  scenarios: { q: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '30m' } },
};

export default function () {
  const clock = exec.instance; // currentTestRunDuration: ms, microsecond steps
  const msg = 'x'.repeat(SIZE);
  const ws = new WebSocket(URL);
  let received = 0;
  let round = 0;
  let t0 = 0;
  const times = [];
  function burst() {
    t0 = clock.currentTestRunDuration;
    for (let i = 0; i < BURST; i++) ws.send(msg);
  }
  ws.onopen = burst;
  ws.onmessage = () => {
    if (++received < BURST) return;
    times.push(clock.currentTestRunDuration - t0);
    received = 0;
    if (++round < ROUNDS) {
      burst();
      return;
    }
    const ms = Math.min(...times);
    console.log(JSON.stringify({ burst: BURST, size: SIZE, rounds: ROUNDS, best_ms: ms, us_per_msg: (ms * 1000) / BURST }));
    ws.close();
  };
  ws.onerror = (e) => {
    console.log(JSON.stringify({ error: String(e.error) }));
    exec.test.abort('websocket error');
  };
}
