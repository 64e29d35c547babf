// Echo server: Node.js 20 (node_modules/node20/bin/node, pinned in package.json) + the `ws`
// package, with or without its bufferutil add-on (the catalog's node-ws-native and
// node-ws, WS_NO_BUFFER_UTIL=1), and /broadcast. Contract: servers/README.md.
//   node_modules/node20/bin/node servers/node-ws/server.mjs --port 0 [--host ADDR] [--tls-cert FILE --tls-key FILE]
//     [--idle-defaults]: accepted and changes nothing (servers/README.md item 18): ws has no
//     idle timeout and sends no pings unless the application does, and this script does neither
//     [--broadcast-limit BYTES]
//     [--deflate [--deflate-threshold N] [--deflate-{server,client}-no-context-takeover]
//      [--deflate-{server,client}-max-window-bits 9..15]]
// With the TLS arguments: node:https (Node's own OpenSSL) carrying ws, wss:// only. With
// --deflate: ws' perMessageDeflate (its threshold: 1,024 bytes unless given).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { WebSocketServer } from 'ws';
import { deflateLine, parseDeflate } from '../deflate.mjs';
import { LIMIT_CLOSE_CODE, LIMIT_CLOSE_REASON, parseBroadcastLimit } from '../limit.mjs';
import { parseHost, parsePort } from '../port.mjs';
import { parseTls, tlsLine } from '../tls.mjs';
import { wsInfo } from '../ws-info.mjs';

function die(message) {
  process.stderr.write(`node-ws server: ${message}\n`);
  process.exit(1);
}

const argv = process.argv.slice(2);
const port = parsePort(argv);
let host = '127.0.0.1';
let tls = null;
let deflate = null;
let limit = null;
try {
  host = parseHost(argv);
  limit = parseBroadcastLimit(argv);
  tls = parseTls(argv);
  deflate = parseDeflate(argv, ['--deflate-threshold', '--deflate-server-no-context-takeover',
    '--deflate-client-no-context-takeover', '--deflate-server-max-window-bits', '--deflate-client-max-window-bits'],
  'ws has no such knob');
} catch (e) {
  die(e.message);
}

// ws' perMessageDeflate options from the deflate arguments (unset: ws' defaults).
function wsDeflate(args) {
  const options = {
    threshold: args['--deflate-threshold'],
    serverNoContextTakeover: args['--deflate-server-no-context-takeover'],
    clientNoContextTakeover: args['--deflate-client-no-context-takeover'],
    serverMaxWindowBits: args['--deflate-server-max-window-bits'],
    clientMaxWindowBits: args['--deflate-client-max-window-bits'],
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

// Over TLS the https server listens and ws takes its upgrades (and forwards its
// 'listening' and 'error' events).
function httpsServer({ cert, key }) {
  try {
    return createServer({ cert: readFileSync(cert), key: readFileSync(key) });
  } catch (e) {
    return die(`cannot use --tls-cert ${cert} --tls-key ${key}: ${e.message}`);
  }
}
const server = tls ? httpsServer(tls) : null;

const wss = new WebSocketServer({
  ...(server ? { server } : { host, port }),
  perMessageDeflate: deflate ? wsDeflate(deflate) : false,
  maxPayload: 256 * 1024 * 1024,
  clientTracking: false,
  // no `path`: the upgrade is accepted on any request path
});

// What the TLS socket of a connection negotiated. A server socket cannot tell the
// key-exchange group (getEphemeralKeyInfo() is null there).
function reportTls(socket) {
  const cipher = socket.getCipher();
  process.stdout.write(tlsLine({
    version: socket.getProtocol(),
    cipher: cipher && cipher.standardName,
    group: null,
    resumed: socket.isSessionReused(),
    library: `OpenSSL ${process.versions.openssl}`,
  }) + '\n');
}

// /broadcast (servers/README.md): every message goes to every open /broadcast
// connection, the sender included, in a loop over them. ws queues what a slow
// client has not taken yet (nothing is dropped; the queue grows instead). With
// --broadcast-limit (item 16): a subscriber whose ws.bufferedAmount (bytes queued, not
// yet written to its socket) passes the limit is closed with 1008 instead of being sent
// more; ws sends the close frame after what is queued (and destroys the socket when the
// client answers it, or 30 s later: ws' closeTimeout).
const subscribers = new Set();

function broadcast(data, isBinary) {
  for (const sub of subscribers) {
    if (limit !== null && sub.bufferedAmount > limit) {
      subscribers.delete(sub);
      sub.close(LIMIT_CLOSE_CODE, LIMIT_CLOSE_REASON);
      continue;
    }
    sub.send(data, { binary: isBinary });
  }
}

function isBroadcast(url) {
  const q = url.indexOf('?');
  return (q < 0 ? url : url.slice(0, q)) === '/broadcast';
}

// With --deflate: the Sec-WebSocket-Extensions header ws answers an upgrade with (its
// 'headers' event, just before the 101 goes out), printed once the connection is open.
const answered = new WeakMap();
if (deflate) {
  wss.on('headers', (headers, req) => {
    const line = headers.find((h) => h.toLowerCase().startsWith('sec-websocket-extensions:'));
    answered.set(req, line ? line.slice(line.indexOf(':') + 1).trim() : null);
  });
}

wss.on('connection', (ws, req) => {
  if (server) reportTls(req.socket);
  if (deflate) {
    const offered = req.headers['sec-websocket-extensions'];
    process.stdout.write(deflateLine({ offered: offered ?? null, response: answered.get(req) ?? null }) + '\n');
  }
  ws.on('error', (err) => process.stderr.write(`connection error: ${err.message}\n`));
  if (isBroadcast(req.url || '/')) {
    subscribers.add(ws);
    ws.on('close', () => subscribers.delete(ws));
    ws.on('message', broadcast);
    return;
  }
  // data is a Buffer holding the message bytes as received (text is not decoded),
  // so the echo is byte-exact; isBinary keeps the type.
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});

wss.on('error', (err) => {
  process.stderr.write(`server error: ${err.message}\n`);
  process.exit(1);
});

wss.on('listening', () => {
  // What ws masks and validates with (bufferutil or JavaScript; servers/README.md, item
  // 13), then readiness. stdout writes are synchronous for pipes and files on Linux.
  process.stdout.write(`WSBENCH-INFO ${JSON.stringify({ ws: wsInfo() })}\n`);
  process.stdout.write(`WSBENCH-READY port=${wss.address().port}\n`);
});

if (server) server.listen(port, host);

function shutdown() {
  wss.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
