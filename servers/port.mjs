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

// The --host argument of the contract: the one address to listen on, 127.0.0.1 unless
// asked (servers/README.md, item 2). An IPv4 or IPv6 address, never a wildcard (0.0.0.0,
// ::): a server listens on a non-loopback address only when it is given one.
export function parseHost(argv) {
  let host = '127.0.0.1';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let v;
    if (a.startsWith('--host=')) v = a.slice(7);
    else if (a === '--host') v = argv[++i];
    else continue;
    const v4 = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;
    const v6 = /^[0-9a-fA-F:.]*:[0-9a-fA-F:.]*$/;
    const wildcard = v === '0.0.0.0' || (v6.test(v) && /^[0:]*$/.test(v));
    if (v === undefined || !(v4.test(v) || v6.test(v)) || wildcard) {
      throw new Error(`invalid --host ${JSON.stringify(v)}: give one IP address of this host (not a wildcard)`);
    }
    host = v;
  }
  return host;
}
