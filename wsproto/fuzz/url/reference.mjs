// Writes reference.json: what Node's WHATWG URL makes of each case in cases.jsonl, as a
// WebSocket URL (the WebSocket constructor's rules: ws/wss, http/https mapped to them, no
// fragment).  Run with: node wsproto/fuzz/url/reference.mjs
import { readFileSync, writeFileSync } from 'node:fs'

const here = new URL('.', import.meta.url)
const lines = readFileSync(new URL('cases.jsonl', here), 'utf8').split('\n').filter((l) => l.trim())
const defaults = { 'ws:': 80, 'wss:': 443 }
const out = lines.map((line) => {
  const [input, note = ''] = JSON.parse(line)
  let node
  try {
    const u = new URL(input)
    let proto = u.protocol
    if (proto === 'http:') proto = 'ws:'
    if (proto === 'https:') proto = 'wss:'
    if (!(proto in defaults) || u.href.includes('#')) throw new Error('not a WebSocket URL')
    node = {
      accept: true,
      secure: proto === 'wss:',
      host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: u.port === '' ? defaults[proto] : Number(u.port),
      path: (u.pathname || '/') + u.search
    }
  } catch (e) {
    node = { accept: false }
  }
  return { input, node, differs: note.startsWith('differs:') ? note.slice(9).trim() : '' }
})
writeFileSync(new URL('reference.json', here), JSON.stringify({ node: process.version, cases: out }, null, 1) + '\n')
