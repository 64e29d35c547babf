// Adapter: QuickJS (`qjs` 2025-04-26) with quickjs-websocket (libwebsockets).
//   build/prefix/bin/qjs clients/quickjs.mjs --url ws://127.0.0.1:PORT/ --type binary --size 32 --count 50000
// Optimizations can be switched off with QJSWS_DISABLE (see quickjs-websocket/README.md).
import * as std from 'std';
import * as os from 'os';
import { WebSocket, setTLSResume } from '../build/quickjs-websocket/websocket.js';
import * as check from '../build/clients/wsbench_check.so';
import { main } from './workload/main.js';

const held = std.getenv('WSBENCH_HOLD') === '1';

// --tls-resume (the handshakes_resume workload): resume each connection's TLS session
// from the one before; the module does a full handshake every time by default.
if (scriptArgs.includes('--tls-resume')) setTLSResume(true);

// Under callgrind (wsbench gate) only the measured phase is counted: from GO to the
// first line printed after it (the result line, or an error); check.count() is a no-op
// natively.
let counting = false;

function print(line) {
  if (counting) {
    check.count(false);
    counting = false;
  }
  std.out.puts(line + '\n');
  std.out.flush();
}

// With WSBENCH_HOLD=1 (set by the harness), wait at the start barrier for the harness's
// "GO" line on stdin (with `mark`, at WSBENCH-MARK <mark>, for any line). Nothing is in
// flight at either point, so a blocking read is fine.
function barrier(mark) {
  if (!held) return null;
  const line = std.in.getline();
  if (mark) return line === null ? Promise.reject(new Error('stdin closed at WSBENCH-MARK ' + mark)) : Promise.resolve();
  if (line === null) return Promise.reject(new Error('stdin closed before GO'));
  if (line.trim() !== 'GO') return Promise.reject(new Error('expected GO on stdin, got ' + JSON.stringify(line.slice(0, 40))));
  counting = true;
  check.count(true);
  return Promise.resolve();
}

// ... and after the result line, stay alive until stdin reaches end-of-file.
async function hold() {
  if (!held) return;
  while (std.in.getline() !== null);
}

// Test only (scripts/compare_campaign.py: a planted change of known cause): with
// WSBENCH_PLANT_SPIN=N every message handler the workload sets runs N empty loop turns
// first. Unset, the module's WebSocket is used as it is: nothing per message changes.
const plantSpin = Number(std.getenv('WSBENCH_PLANT_SPIN') || 0);
let plantSink = 0;
function planted(Base, turns) {
  return class extends Base {
    set onmessage(f) {
      super.onmessage = typeof f !== 'function' ? f : (ev) => {
        let x = 0;
        for (let i = 0; i < turns; i++) x += i;
        plantSink = x;
        return f(ev);
      };
    }
    get onmessage() { return super.onmessage; }
  };
}

// QJSWS_DEFLATE=1 (the deflate axis: harness/runtimes.toml): every connection offers
// permessage-deflate, "permessage-deflate; client_max_window_bits" (quickjs-websocket/README.md),
// without context takeover both ways with QJSWS_DEFLATE_NO_TAKEOVER=1 too.
const Offering = std.getenv('QJSWS_DEFLATE') === '1'
  ? class extends WebSocket { constructor(url, protocols) { super(url, protocols, { perMessageDeflate: pmdOption() }); } }
  : WebSocket;
const pmdOption = () => std.getenv('QJSWS_DEFLATE_NO_TAKEOVER') !== '1' || { serverNoContextTakeover: true, clientNoContextTakeover: true };

const env = {
  WebSocket: plantSpin > 0 ? planted(Offering, plantSpin) : Offering,
  now: () => os.now(), // monotonic, milliseconds (fractional)
  print,
  setTimeout: (fn, ms) => os.setTimeout(fn, ms),
  clearTimeout: (t) => os.clearTimeout(t),
  binaryType: 'arraybuffer',
  barrier,
  hold,
  // The echo checks in C (clients/quickjs-check/check.c): a typed-array view costs the
  // interpreter more than the message's whole receive path.
  seqOf: check.seq,
  firstDiff: check.diff,
  // what the module's TLS (its own transport, or libwebsockets' with the switch off) negotiated
  tlsInfo: (ws) => ws.tlsInfo || { cannot_tell: 'the connection reported no TLS details' },
};

main(env, scriptArgs.slice(1)).then((code) => std.exit(code));
