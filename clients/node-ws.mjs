// Adapter: Node.js 20 (node_modules/node20/bin/node, pinned in package.json) with the `ws` package,
// with or without its bufferutil add-on (the catalog's node-ws-native and node-ws).
//   node_modules/node20/bin/node clients/node-ws.mjs --url ws://127.0.0.1:PORT/ --type binary --size 32 --count 50000
import WebSocket from 'ws';
import { barrier, hold } from './node-harness.mjs';
import { describeTlsSocket } from './node-tls.mjs';
import { main } from './workload/main.js';
import { wsInfo } from '../servers/ws-info.mjs';

// Offers no compression unless WSBENCH_WS_DEFLATE=1 (the deflate axis, wsbench run
// --deflate on: harness/runtimes.toml's deflate entry), then ws' perMessageDeflate as it
// ships (its default offer); accepts large echoes.
// With WSBENCH_WS_DEFLATE_NO_TAKEOVER=1 too (workloads with no_context_takeover), the offer
// asks for no context takeover both ways (server_no_context_takeover; client_no_context_takeover).
const DEFLATE = process.env.WSBENCH_WS_DEFLATE === '1';
const PMD = process.env.WSBENCH_WS_DEFLATE_NO_TAKEOVER === '1'
  ? { serverNoContextTakeover: true, clientNoContextTakeover: true }
  : true;

// With permessage-deflate, ws compresses on libuv's thread pool from the caller's bytes,
// not a copy, after send() has returned: a buffer stamped again for the next message
// changed what the previous one carried (measured: the echo of message 1 carried sequence
// number 31, `make bench SUITE=deflate`'s deflate_counting_4k). With deflate on, each
// binary message is handed to ws as a copy (part of what its deflate cells cost), as k6's
// adapter does for the same reason.
function copyOf(data) {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  return data.slice(0);
}
class CopyingWebSocket extends WebSocket {
  send(data, options, cb) {
    return super.send(copyOf(data), options, cb);
  }
}

function WsClient(url) {
  const options = { perMessageDeflate: DEFLATE ? PMD : false, maxPayload: 256 * 1024 * 1024 };
  return DEFLATE ? new CopyingWebSocket(url, options) : new WebSocket(url, options);
}

const env = {
  WebSocket: WsClient,
  now: () => performance.now(),
  print: (line) => process.stdout.write(line + '\n'), // synchronous for pipes and files on Linux
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  binaryType: 'arraybuffer', // ws would otherwise deliver Buffer
  barrier,
  hold,
  // ws keeps the connection's socket (a TLSSocket over wss://) in ws._socket.
  tlsInfo: (ws) => describeTlsSocket(ws._socket),
  // Whether ws masks with the bufferutil add-on (the node-ws-native row) or in JavaScript
  // (node-ws, WS_NO_BUFFER_UTIL=1): read from ws's loaded modules; the harness checks it.
  about: () => ({ ws: wsInfo() }),
};

process.exit(await main(env, process.argv.slice(2)));
