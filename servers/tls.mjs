// Shared by the JavaScript echo servers: the TLS arguments of the contract
// (servers/README.md, "TLS") and the WSBENCH-TLS line.

// { cert, key } (file names) from --tls-cert FILE --tls-key FILE, or null without them;
// throws when only one is given.
export function parseTls(argv) {
  const got = {};
  for (let i = 0; i < argv.length; i++) {
    for (const name of ['cert', 'key']) {
      const flag = `--tls-${name}`;
      if (argv[i] === flag) got[name] = argv[++i];
      else if (argv[i].startsWith(flag + '=')) got[name] = argv[i].slice(flag.length + 1);
    }
  }
  if (got.cert === undefined && got.key === undefined) return null;
  if (!got.cert || !got.key) throw new Error('--tls-cert and --tls-key go together');
  return { cert: got.cert, key: got.key };
}

// The line a server prints for a connection accepted over TLS; unknown fields are '?'.
export function tlsLine({ version, cipher, group, resumed, library }) {
  const token = (v) => (v ? String(v).replace(/\s+/g, '_') : '?');
  const lib = library ? `"${String(library).replace(/"/g, "'")}"` : '?';
  const reuse = resumed === true ? 'yes' : resumed === false ? 'no' : '?';
  return `WSBENCH-TLS version=${token(version)} cipher=${token(cipher)} group=${token(group)} resumed=${reuse} library=${lib}`;
}
