// Shared by the JavaScript echo servers: --broadcast-limit BYTES (servers/README.md, item
// 16): a /broadcast subscriber whose unsent backlog passes BYTES is closed. Returns the
// number of bytes, or null without the argument; throws on a bad value.
export function parseBroadcastLimit(argv) {
  let limit = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let v;
    if (a.startsWith('--broadcast-limit=')) v = a.slice('--broadcast-limit='.length);
    else if (a === '--broadcast-limit') v = argv[++i];
    else continue;
    if (v === undefined || !/^[0-9]+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) {
      throw new Error(`invalid --broadcast-limit ${JSON.stringify(v)}: give a positive number of bytes`);
    }
    limit = Number(v);
  }
  return limit;
}

// The close a server sends a subscriber over the limit where it picks the code: 1008
// (policy violation), with this reason.
export const LIMIT_CLOSE_CODE = 1008;
export const LIMIT_CLOSE_REASON = 'broadcast backlog over the limit';
