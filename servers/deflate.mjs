// Shared by the JavaScript echo servers: the permessage-deflate arguments of the contract
// (servers/README.md, items 5 and 15) and the WSBENCH-DEFLATE line.

// The arguments, each with the name of its value's kind. A server passes the names it
// has a knob for (KNOBS below); any other deflate argument is refused by name.
const FLAGS = {
  '--deflate-threshold': 'bytes',
  '--deflate-server-no-context-takeover': null,
  '--deflate-client-no-context-takeover': null,
  '--deflate-server-max-window-bits': 'bits',
  '--deflate-client-max-window-bits': 'bits',
  '--deflate-compressor': 'name',
};

// Bun's compressors (Bun.serve's WebSocketCompressor type).
const COMPRESSORS = ['shared', 'dedicated', '3KB', '4KB', '8KB', '16KB', '32KB', '64KB', '128KB', '256KB'];

function value(flag, kind, v) {
  if (v === undefined) throw new Error(`${flag} needs a value`);
  if (kind === 'bytes' && /^[0-9]{1,10}$/.test(v)) return Number(v);
  if (kind === 'bits' && /^(9|1[0-5])$/.test(v)) return Number(v);
  if (kind === 'name' && COMPRESSORS.includes(v)) return v;
  const want = { bytes: 'a number of bytes', bits: 'window bits from 9 to 15', name: COMPRESSORS.join(', ') }[kind];
  throw new Error(`invalid ${flag} ${JSON.stringify(v)}: give ${want}`);
}

// null without --deflate; else { flag: value } of the deflate arguments given (true for
// the flags without a value). Throws on a deflate argument the server has no knob for
// (`knobs`: the flags it takes; `why` says what the runtime offers instead), on a bad
// value, and on a deflate argument without --deflate.
export function parseDeflate(argv, knobs, why) {
  let on = false;
  const got = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? argv[i].split(/=(.*)/s, 2) : [argv[i], undefined];
    if (flag === '--deflate') {
      on = true;
      continue;
    }
    if (!(flag in FLAGS)) continue;
    if (!knobs.includes(flag)) throw new Error(`${flag}: ${why}`);
    const kind = FLAGS[flag];
    got[flag] = kind === null ? true : value(flag, kind, inline !== undefined ? inline : argv[++i]);
  }
  if (!on && Object.keys(got).length) throw new Error(`${Object.keys(got)[0]} goes with --deflate`);
  return on ? got : null;
}

// The line a server with --deflate prints for every WebSocket connection: the client's
// Sec-WebSocket-Extensions header and the server's, or none where there was none; `?`
// where the runtime cannot tell (no " inside a quoted value).
export function deflateLine({ offered, response }) {
  const field = (v) => (v === undefined ? '?' : v === null || v === '' ? 'none' : `"${String(v).replace(/"/g, "'")}"`);
  return `WSBENCH-DEFLATE offered=${field(offered)} response=${field(response)}`;
}
