// Echo server: Deno.serve + Deno.upgradeWebSocket, and /broadcast (a loop over the
// /broadcast sockets). Contract: servers/README.md.
//   deno run --no-config --no-lock --no-remote --no-npm --no-prompt --allow-net=127.0.0.1 \
//       [--allow-read=CERT,KEY] servers/deno/server.ts --port 0 [--host ADDR] [--tls-cert CERT --tls-key KEY]
//       [--broadcast-limit BYTES]
// (--host ADDR needs --allow-net=ADDR instead: Deno's permission names the address listened on.)
// With the TLS arguments: Deno.serve's cert and key (Deno's rustls), wss:// only; Deno needs
// read permission for the two files. Deno tells nothing of what a connection negotiated
// (nor its rustls version), so no WSBENCH-TLS line is printed.
import { parseIdleDefaults } from "../idle.mjs";
import { LIMIT_CLOSE_CODE, LIMIT_CLOSE_REASON, parseBroadcastLimit } from "../limit.mjs";
import { parseHost, parsePort } from "../port.mjs";
import { parseTls } from "../tls.mjs";

const encoder = new TextEncoder();
function println(line: string): void {
  // Deno.stdout writes are unbuffered; loop in case of a short write.
  const buf = encoder.encode(line + "\n");
  let off = 0;
  while (off < buf.length) off += Deno.stdout.writeSync(buf.subarray(off));
}

// Installed before the READY line, so a signal right after it is handled. Exiting
// closes the listener; open connections are not waited for.
function shutdown(): void {
  Deno.exit(0);
}
Deno.addSignalListener("SIGTERM", shutdown);
Deno.addSignalListener("SIGINT", shutdown);

function die(message: string): never {
  console.error(`deno server: ${message}`);
  Deno.exit(1);
}

// The PEM texts of --tls-cert and --tls-key, or null without them.
function tlsFiles(): { cert: string; key: string } | null {
  try {
    const files = parseTls(Deno.args);
    return files && { cert: Deno.readTextFileSync(files.cert), key: Deno.readTextFileSync(files.key) };
  } catch (e) {
    return die((e as Error).message);
  }
}
const tls = tlsFiles();

function host(): string {
  try {
    return parseHost(Deno.args);
  } catch (e) {
    return die((e as Error).message);
  }
}

function serve(options: Deno.ServeTcpOptions, handler: Deno.ServeHandler): void {
  try {
    Deno.serve(options, handler);
  } catch (e) {
    die(tls ? `cannot use the TLS certificate or key: ${(e as Error).message}` : (e as Error).message);
  }
}

// /broadcast: a socket is a subscriber from its upgrade on. Deno fires `open` some time
// after the 101 response went out and refuses send() before it, so what is published
// meanwhile waits in the socket's `early` list and goes out, in order, on open.
type Data = string | ArrayBuffer;
const subscribers = new Map<WebSocket, Data[] | null>(); // null: open, sent directly

// --broadcast-limit (servers/README.md item 16): a subscriber whose socket.bufferedAmount
// (bytes sent but not yet written out) passes it is closed with 1008 instead of sent more.
function broadcastLimit(): number | null {
  try {
    return parseBroadcastLimit(Deno.args);
  } catch (e) {
    return die((e as Error).message);
  }
}
const limit = broadcastLimit();
const IDLE = parseIdleDefaults(Deno.args) ? {} : { idleTimeout: 0 };

function publish(data: Data): void {
  for (const [sub, early] of subscribers) {
    if (early) early.push(data);
    else if (limit !== null && sub.bufferedAmount > limit) {
      subscribers.delete(sub);
      sub.close(LIMIT_CLOSE_CODE, LIMIT_CLOSE_REASON);
    } else sub.send(data);
  }
}

function subscribe(socket: WebSocket): void {
  subscribers.set(socket, []);
  socket.onopen = () => {
    const early = subscribers.get(socket);
    subscribers.set(socket, null);
    for (const data of early ?? []) socket.send(data);
  };
  socket.onclose = () => subscribers.delete(socket);
  socket.onmessage = (e) => publish(e.data);
}

serve({
  hostname: host(),
  port: parsePort(Deno.args),
  ...(tls ?? {}),
  // Replaces Deno's own "Listening on ..." line; reports the real port for --port 0.
  onListen: ({ port }) => println(`WSBENCH-READY port=${port}`),
  onError: (err) => {
    console.error(`request error: ${err}`);
    return new Response("internal error\n", { status: 500 });
  },
}, (req) => {
  // Any path is accepted.
  if ((req.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
    return new Response("WebSocket upgrade expected\n", { status: 426 });
  }
  // idleTimeout 0: no server pings and no idle close; with --idle-defaults (servers/README.md
  // item 18) Deno's own. Deno never negotiates permessage-deflate.
  const { socket, response } = Deno.upgradeWebSocket(req, IDLE);
  socket.binaryType = "arraybuffer";
  socket.onerror = (e) => console.error(`connection error: ${(e as ErrorEvent).message ?? e}`);
  if (new URL(req.url).pathname === "/broadcast") {
    subscribe(socket);
    return response;
  }
  // e.data is a string for text messages and an ArrayBuffer for binary ones,
  // and send() keeps the type accordingly.
  socket.onmessage = (e) => socket.send(e.data);
  return response;
});

