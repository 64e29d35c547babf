// k6's send() of an ArrayBuffer does not copy it (docs/k6.md): sends N binary messages
// from one buffer, writing the message's number into its first 4 bytes before each
// send() (as any script reusing a buffer would), and counts the echoes that came back
// with another number than the one sent. With COPY=1 it sends buffer.slice(0) instead.
// Prints one JSON line: {"sent", "wrong", "first_wrong": [message, number it carried]}.
//   build/tools/k6/k6 run --no-usage-report -q --log-output=stdout --log-format=raw \
//       -e URL=ws://127.0.0.1:PORT/ clients/k6/send-aliasing.js
// k6 (internal/js/modules/k6/websockets, send): an ArrayBuffer's bytes are queued as they
// are (sobek's ArrayBuffer.Bytes(), no copy) for a writer goroutine that writes them later.
import { WebSocket } from 'k6/websockets';

const URL = __ENV.URL;
const N = Number(__ENV.N || 1000);
const SIZE = Number(__ENV.SIZE || 64);
const COPY = __ENV.COPY === '1';

export const options = {
  scenarios: { a: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '5m' } },
};

export default function () {
  const ws = new WebSocket(URL);
  ws.binaryType = 'arraybuffer';
  const buf = new ArrayBuffer(SIZE);
  const view = new DataView(buf);
  let got = 0;
  let wrong = 0;
  let first = null;
  ws.onopen = () => {
    for (let i = 0; i < N; i++) {
      view.setUint32(0, i, true);
      ws.send(COPY ? buf.slice(0) : buf);
    }
  };
  ws.onmessage = (ev) => {
    const carried = new DataView(ev.data).getUint32(0, true);
    if (carried !== got) {
      wrong++;
      if (first === null) first = [got, carried];
    }
    if (++got === N) {
      console.log(JSON.stringify({ sent: N, copy: COPY, wrong, first_wrong: first }));
      ws.close();
    }
  };
}
