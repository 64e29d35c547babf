// Echo server: Deno.serve + Deno.upgradeWebSocket. Contract: servers/README.md.
//   deno run --no-config --no-lock --no-remote --no-npm --no-prompt --allow-net=127.0.0.1 \
//       servers/deno/server.ts --port 0
import { parsePort } from "../port.mjs";

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

Deno.serve({
  hostname: "127.0.0.1",
  port: parsePort(Deno.args),
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
  // idleTimeout 0: no server pings and no idle close. Deno never negotiates
  // permessage-deflate.
  const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 0 });
  socket.binaryType = "arraybuffer";
  // e.data is a string for text messages and an ArrayBuffer for binary ones,
  // and send() keeps the type accordingly.
  socket.onmessage = (e) => socket.send(e.data);
  socket.onerror = (e) => console.error(`connection error: ${(e as ErrorEvent).message ?? e}`);
  return response;
});

