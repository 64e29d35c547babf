// Echo server: Bun.serve with its websocket handler, and /broadcast (a topic: every
// /broadcast connection subscribes, server.publish sends to all of them, the sender
// included; ws.publish would leave the sender out). Contract: servers/README.md.
//   bun --no-install --no-env-file servers/bun/server.js --port 0 [--host ADDR] [--tls-cert FILE --tls-key FILE]
//     [--deflate [--deflate-compressor shared|dedicated|3KB|...|256KB]] [--broadcast-limit BYTES]
// With the TLS arguments: Bun.serve's `tls` (Bun's BoringSSL), wss:// only. With --deflate:
// its `perMessageDeflate` (true: Bun's defaults; a compressor: what compresses the sends).
import { readFileSync } from 'node:fs';
import { deflateLine, parseDeflate } from '../deflate.mjs';
import { parseIdleDefaults } from '../idle.mjs';
import { parseBroadcastLimit } from '../limit.mjs';
import { parseHost, parsePort } from '../port.mjs';
import { parseTls, tlsLine } from '../tls.mjs';

function die(message) {
  process.stderr.write(`bun server: ${message}\n`);
  process.exit(1);
}

const argv = process.argv.slice(2);
let host = '127.0.0.1';
let tls = null;
let deflate = null;
let limit = null;
try {
  limit = parseBroadcastLimit(argv);
  deflate = parseDeflate(argv, ['--deflate-compressor'],
    "Bun.serve has no knob for RFC 7692's parameters or a threshold; it chooses a compressor (--deflate-compressor)");
  host = parseHost(argv);
  tls = parseTls(argv);
  if (tls) tls = { cert: readFileSync(tls.cert, 'utf8'), key: readFileSync(tls.key, 'utf8') };
} catch (e) {
  die(e.message);
}
// Bun.serve tells nothing of what a connection negotiated: only the library is known.
const TLS_LINE = tls ? tlsLine({ library: `BoringSSL ${process.versions.boringssl}` }) + '\n' : null;

// Bun compresses a send only when asked to (send's and publish's `compress` argument), on
// a connection that negotiated permessage-deflate: with --deflate, every send asks.
const COMPRESS = deflate !== null;

let dropped = 0;
const TOPIC = 'broadcast';
let server = null;

// Installed before the READY line, so a signal right after it is handled.
function shutdown() {
  if (server !== null) server.stop(true);
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

function serve(options) {
  try {
    return Bun.serve(options);
  } catch (e) {
    return die(tls ? `cannot use the TLS certificate or key: ${e.message}` : e.message);
  }
}

server = serve({
  hostname: host,
  port: parsePort(argv),
  ...(tls ? { tls } : {}),
  fetch(req, srv) {
    // Any path is accepted; /broadcast (any query) joins the topic.
    const broadcast = new URL(req.url).pathname === '/broadcast';
    const offered = deflate ? req.headers.get('sec-websocket-extensions') : null;
    if (srv.upgrade(req, { data: { broadcast, offered } })) return undefined;
    return new Response('WebSocket upgrade expected\n', { status: 426 });
  },
  websocket: {
    perMessageDeflate: !deflate ? false : deflate['--deflate-compressor']
      ? { compress: deflate['--deflate-compressor'], decompress: true } : true,
    maxPayloadLength: 256 * 1024 * 1024,
    // The default limit (16 MiB) silently drops sends once that much is queued for a
    // slow reader (send() returns 0), e.g. a 16 MiB echo behind a burst. Echoes must
    // never be dropped, so allow the maximum and never close on it. With
    // --broadcast-limit (servers/README.md item 16): Bun's own knobs, that limit and
    // closeOnBackpressureLimit (Bun picks the close: read from the wire, docs/misbehave.md).
    backpressureLimit: limit ?? 4294967295,
    closeOnBackpressureLimit: limit !== null,
    // No idle timeout and no server pings: nothing but echoes on the wire; with
    // --idle-defaults (servers/README.md item 18) Bun's own (idleTimeout 120 s, pings on).
    ...(parseIdleDefaults(argv) ? {} : { idleTimeout: 0, sendPings: false }),
    open(ws) {
      if (TLS_LINE) process.stdout.write(TLS_LINE);
      // Bun.serve does not tell the header it answered with; ws.extensions is what it agreed.
      if (deflate) process.stdout.write(deflateLine({ offered: ws.data.offered, response: ws.extensions }) + '\n');
      if (ws.data.broadcast) ws.subscribe(TOPIC);
    },
    message(ws, message) {
      if (ws.data.broadcast) {
        // Like send(): bytes sent, -1 when queued under backpressure, 0 when dropped.
        if (server.publish(TOPIC, message, COMPRESS) === 0 && message.length > 0) {
          dropped++;
          process.stderr.write(`broadcast dropped (backpressure); ${dropped} so far\n`);
        }
        return;
      }
      // message is a string for text frames and a Buffer for binary ones;
      // send() keeps the type accordingly.
      // send() returns the bytes written, -1 when queued under backpressure, and 0
      // when dropped; an empty message is sent but also reports 0.
      if (ws.send(message, COMPRESS) === 0 && message.length > 0) {
        dropped++;
        process.stderr.write(`echo dropped (backpressure); ${dropped} so far\n`);
      }
    },
  },
});

process.stdout.write(`WSBENCH-READY port=${server.port}\n`);

