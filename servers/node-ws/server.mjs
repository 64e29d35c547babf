// Echo server: Node.js 20 (node_modules/node20/bin/node, pinned in package.json) + the `ws`
// package. Contract: servers/README.md.
//   node_modules/node20/bin/node servers/node-ws/server.mjs --port 0
import { WebSocketServer } from 'ws';
import { parsePort } from '../port.mjs';

const wss = new WebSocketServer({
  host: '127.0.0.1',
  port: parsePort(process.argv.slice(2)),
  perMessageDeflate: false,
  maxPayload: 256 * 1024 * 1024,
  clientTracking: false,
  // no `path`: the upgrade is accepted on any request path
});

wss.on('connection', (ws) => {
  // data is a Buffer holding the message bytes as received (text is not decoded),
  // so the echo is byte-exact; isBinary keeps the type.
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  ws.on('error', (err) => process.stderr.write(`connection error: ${err.message}\n`));
});

wss.on('error', (err) => {
  process.stderr.write(`server error: ${err.message}\n`);
  process.exit(1);
});

wss.on('listening', () => {
  // stdout writes are synchronous for pipes and files on Linux: the line is flushed.
  process.stdout.write(`WSBENCH-READY port=${wss.address().port}\n`);
});

function shutdown() {
  wss.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
