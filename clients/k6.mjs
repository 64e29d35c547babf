// Adapter: k6 (built by scripts/setup-k6.sh into build/tools/k6/k6) with its WebSocket
// (k6/websockets). k6 takes no script arguments and has no stdin, so it is started by
// clients/k6.sh, which passes the workload's command line in WSBENCH_ARGV (one argument a
// line); the barriers go over the harness's loopback HTTP endpoint (WSBENCH_HOLD_URL).
// What k6 cannot do like the other runtimes, and what stands in for it: clients/README.md, "k6".
//   clients/k6.sh --url ws://127.0.0.1:PORT/ --type text --size 11 --count 50000
import exec from 'k6/execution';
import http from 'k6/http';
import { WebSocket } from 'k6/websockets';
import { main } from './workload/main.js';

const argv = (__ENV.WSBENCH_ARGV || '').split('\n').filter((a) => a !== '');
const held = __ENV.WSBENCH_HOLD === '1';
// The deflate axis (wsbench run --deflate): k6 offers permessage-deflate only when its
// Params.compression says "deflate" (its default is none).
const deflate = __ENV.WSBENCH_K6_DEFLATE === '1';
const holdUrl = __ENV.WSBENCH_HOLD_URL || '';

// One VU runs the workload once. maxDuration only bounds it: the workload's own
// --timeout-ms (default 60 s) fails the run first, and the harness kills it after that.
function timeoutMs() {
  const i = argv.indexOf('--timeout-ms');
  const ms = i >= 0 ? Number(argv[i + 1]) : 60000;
  return Number.isFinite(ms) && ms > 0 ? ms : 60000;
}
export const options = {
  scenarios: {
    wsbench: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: `${timeoutMs() + 120000}ms` },
  },
};

// The harness's side of the run (clients/README.md, "Output and the two barriers"): k6
// cannot read stdin, so with WSBENCH_HOLD=1 it asks the harness's endpoint instead.
// http.get blocks this VU until the harness answers: "GO" once it has taken its start
// readings, and the hold's answer once it has taken its end readings.
function ask(what) {
  if (!holdUrl) throw new Error('WSBENCH_HOLD=1 without WSBENCH_HOLD_URL: k6 has no stdin to wait on');
  const res = http.get(holdUrl + what, { timeout: '3600s', tags: { wsbench: what } });
  if (res.error) throw new Error(`${what}: ${res.error}`);
  return res;
}
function barrier() {
  if (!held) return null;
  return new Promise((resolve) => {
    const res = ask('go');
    const body = String(res.body).trim();
    if (res.status !== 200 || body !== 'GO') {
      throw new Error(`expected GO from the harness, got ${res.status} ${JSON.stringify(body.slice(0, 40))}`);
    }
    resolve();
  });
}
function hold() {
  if (held) ask('hold');
  return Promise.resolve();
}

// k6 has no performance.now(), and Date.now() counts whole milliseconds.
// exec.instance.currentTestRunDuration is the time since the test started in ms, a float
// read from Go's time.Now().UnixNano() (the real-time clock, nanoseconds): microsecond
// steps, about 1.3 µs a reading once exec.instance (about 19 µs to get: it builds the
// object) is kept. Not monotonic: see clients/README.md, "k6". exec.instance exists only
// in the VU, so it is taken at the first reading.
let instance = null;
function now() {
  if (instance === null) instance = exec.instance;
  return instance.currentTestRunDuration;
}

// k6's send() does not copy an ArrayBuffer: it queues a reference to its bytes for a
// writer goroutine, which writes them later, so a buffer changed after send() goes out
// changed (the workload stamps one buffer per message: the echo of message 1 came back
// carrying sequence number 366). Every k6 script that reuses a buffer must hand send() a
// copy; the adapter does (its cost is k6's CPU). Strings are immutable: sent as they are.
// k6 defines send as non-writable and non-configurable, so the socket the workload gets
// is an object whose prototype is k6's socket, with its own send: everything else (the
// on* handlers, binaryType, readyState, bufferedAmount, close) is k6's accessor or method,
// reached through the prototype (k6's accessors do not look at `this`).
function K6Socket(url) {
  const ws = deflate ? new WebSocket(url, null, { compression: 'deflate' }) : new WebSocket(url);
  const send = ws.send;
  return Object.create(ws, {
    send: {
      value: (data) => send(typeof data === 'string' ? data : ArrayBuffer.isView(data) ? data.slice() : data.slice(0)),
    },
  });
}

// k6's timers are globals that ignore `this`: passed as they are.
const env = { WebSocket: K6Socket, now, setTimeout, clearTimeout, barrier, hold };
env.binaryType = 'arraybuffer'; // k6's default is 'blob'
env.print = (line) => console.log(line); // with --log-output=stdout --log-format=raw: the line, verbatim
env.tlsInfo = () => ({ cannot_tell: "k6's WebSocket exposes no TLS state of its connection; its TLS is Go's crypto/tls" });

// k6 exits 0 whatever the script returns or throws; abort() is what makes it exit
// non-zero (108). The result line (or {"error": ...}) has been printed by then.
export default async function () {
  const code = await main(env, argv);
  if (code !== 0) exec.test.abort(`the workload ended with exit code ${code}`);
}
