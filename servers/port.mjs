// Shared by the JavaScript echo servers: the --port argument of the contract
// (servers/README.md). Returns the port (0 = let the kernel pick); throws on a bad value.
export function parsePort(argv) {
  let port = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let v;
    if (a.startsWith('--port=')) v = a.slice(7);
    else if (a === '--port') v = argv[++i];
    else continue; // no other argument is required; ignore the rest
    if (v === undefined || !/^[0-9]+$/.test(v) || Number(v) > 65535) {
      throw new Error(`invalid --port ${JSON.stringify(v)}`);
    }
    port = Number(v);
  }
  return port;
}
