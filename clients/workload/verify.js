// The messages of the echo kinds, each carrying its sequence number, and the checks of
// their echoes (clients/README.md, "Verification").
//
// Message k of a connection (k counts from 0 over warm-up and measured messages alike)
// carries k in its first bytes:
//   - text: k modulo the ring size as 8 lowercase hex digits (fewer when the message is
//     shorter), then the ASCII or mixed UTF-8 body. The messages are a ring of R
//     prebuilt strings (R a power of two, 16 to 4096, at most about 2 MiB in all), so
//     sending one is an array read and checking an echo is one string comparison, which
//     every engine does natively: every text echo is compared whole.
//   - binary: k as a little-endian 32-bit integer in the first 4 bytes (2 or 1 byte for
//     shorter messages), then the bytes i & 255. One buffer is stamped before each send
//     (every runtime here copies the bytes during send()); with --transfer every message
//     has its own buffer. Every echo's type, length and sequence number are checked; its
//     bytes are compared during warm-up, at every K-th measured echo (K = 64, or more for
//     messages over 1 KiB so that on average at most 16 bytes per echo are compared) and
//     at the last echo of every round.
//   - --text json, --bytes random (the corpus, payload.js): every ring slot j has a body
//     of its own, generated from seed j, so no message repeats within a compressor's
//     window. Text: the ring above with JSON bodies. Binary: a ring of R buffers (R as
//     for text), each stamped once with its slot number j (so an echo of message k
//     carries k modulo R) and compared against that slot's bytes. The corpus needs the
//     checks on (--verify off sends one message again and again) and is refused with
//     --transfer.
// A lost, duplicated or reordered echo carries the wrong number; the first wrong echo
// fails the run, naming the message and the first differing byte.
//
// env.seqOf(data, size) and env.firstDiff(a, b, from) may replace the generic readers
// below (the qjs adapter passes C versions: a typed-array view costs the QuickJS
// interpreter more than receiving the message does).

import { asciiString, jsonString, mixedString, randomBytes } from './payload.js';

const RING_BYTES = 2 * 1024 * 1024;
const RING_MIN = 16;
const RING_MAX = 4096;
const SAMPLE_EVERY = 64;
const SAMPLE_BYTES_PER_ECHO = 16;

function powerOfTwoAtMost(n) {
  let p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

function powerOfTwoAtLeast(n) {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

function hexField(k, width) {
  let s = k.toString(16);
  while (s.length < width) s = '0' + s;
  return s.slice(s.length - width);
}

// Generic readers, used unless the adapter supplies its own.
function seqOfGeneric(d, size) {
  if (typeof d === 'string' || d.byteLength !== size) return undefined;
  if (size >= 4) return new Int32Array(d, 0, 1)[0];
  if (size >= 2) return new Uint16Array(d, 0, 1)[0];
  return size === 1 ? new Uint8Array(d, 0, 1)[0] : 0;
}

function firstDiffGeneric(a, b, from) {
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  const n = x.length < y.length ? x.length : y.length;
  for (let i = from; i < n; i++) if (x[i] !== y[i]) return i;
  return x.length === y.length ? -1 : n;
}

// UTF-8 bytes of a string (for describing a mismatch only).
function utf8Bytes(s) {
  const out = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return out;
}

function hexByte(b) {
  return b === undefined ? 'nothing' : '0x' + (b < 16 ? '0' : '') + b.toString(16);
}

// The ring's number of slots for messages of `size` bytes: a power of two, 16 to 4096,
// about 2 MiB in all (wsbench-loadgen's corpus ring has as many).
export function ringSize(size) {
  return Math.max(RING_MIN, Math.min(RING_MAX, powerOfTwoAtMost(RING_BYTES / Math.max(size, 1))));
}

// Everything the kinds need to send verifiable messages and check their echoes.
//   type, size, text   as on the command line (text: ascii, mixed or json)
//   verify             false: --verify off (the plain payload, nothing checked; only for
//                      measuring what the checks cost)
//   bytes              binary: 'counting' (i & 255, the default) or 'random'
export function makeMessages(env, type, size, text, verify, bytes) {
  const m = {
    isText: type === 'text',
    size: size,
    verify: verify,
    // text
    ring: null,
    ringMask: 0,
    // binary
    bufRing: null, // --bytes random: the ring of buffers, slot j stamped with j (else null)
    buf: null, // the payload, stamped before each send
    stamp: null, // view of its sequence field: stamp[0] = k
    seqMask: 0, // k & seqMask is what the field holds
    stampBytes: 0, // its width: 4 bytes, or 2, 1, 0 for messages under 4 bytes
    sampleEvery: 0,
    seqOf: env.seqOf || seqOfGeneric,
    firstDiff: env.firstDiff || firstDiffGeneric,
    // unverified: the same message every time
    plain: null,
    utf8Size: size,
  };
  const width = Math.min(size, 8);
  const corpus = m.isText ? text === 'json' : bytes === 'random';
  if (corpus && !verify) throw new Error(corpusName(m.isText) + ' needs the checks on (--verify off sends one message over and over)');
  if (m.isText) {
    const n = verify ? ringSize(size) : 1;
    const body = corpus ? null : text === 'mixed' ? mixedString(size - width) : asciiString(size - width);
    m.ring = new Array(n);
    for (let j = 0; j < n; j++) m.ring[j] = corpus ? jsonMessage(j, size) : hexField(j, width) + body;
    m.ringMask = n - 1;
    m.plain = m.ring[0];
  } else {
    m.buf = new ArrayBuffer(size);
    const b = new Uint8Array(m.buf);
    if (corpus) randomBytes(0, b);
    else for (let i = 0; i < size; i++) b[i] = i & 255;
    m.plain = m.buf.slice(0);
    m.stamp = stampView(m.buf);
    m.stampBytes = size >= 4 ? 4 : size >= 2 ? 2 : size;
    m.seqMask = m.stampBytes === 4 ? -1 : m.stampBytes === 2 ? 0xffff : m.stampBytes === 1 ? 0xff : 0;
    m.sampleEvery = Math.max(SAMPLE_EVERY, powerOfTwoAtLeast(Math.ceil(size / SAMPLE_BYTES_PER_ECHO)));
    if (corpus) {
      const n = ringSize(size);
      m.bufRing = new Array(n);
      for (let j = 0; j < n; j++) {
        const slot = new ArrayBuffer(size);
        randomBytes(j, new Uint8Array(slot));
        stampView(slot)[0] = j;
        m.bufRing[j] = slot;
      }
      m.ringMask = n - 1;
    }
  }
  return m;
}

// Ring slot j of --text json (the corpus) of `size` bytes: j as the sequence field, then
// slot j's trade feed records.
export function jsonMessage(j, size) {
  const width = Math.min(size, 8);
  return hexField(j, width) + jsonString(j, size - width);
}

// Message 0 of --text json of `size` bytes alone, as makeMessages' ring holds it, in a set
// that checkEcho and mismatch take like makeMessages' own (the idle kind's --warm message:
// one message, not a ring of 2 MiB).
export function oneJsonMessage(size) {
  return { isText: true, size: size, verify: true, ring: [jsonMessage(0, size)], ringMask: 0, utf8Size: size };
}

function corpusName(isText) {
  return isText ? '--text json' : '--bytes random';
}

// The view through which a binary message's sequence number is written.
export function stampView(buf) {
  const size = buf.byteLength;
  if (size >= 4) return new Int32Array(buf, 0, 1);
  if (size >= 2) return new Uint16Array(buf, 0, 1);
  if (size === 1) return new Uint8Array(buf, 0, 1);
  return new Int32Array(1); // an empty message has no room: stamp into nothing
}

// Message k as it is sent (for the paths that are not hot).
export function messageFor(m, k) {
  if (!m.verify) return m.plain;
  if (m.isText) return m.ring[k & m.ringMask];
  if (m.bufRing !== null) return m.bufRing[k & m.ringMask];
  m.stamp[0] = k;
  return m.buf;
}

// The check of one echo of message k: null if it is right, else an Error naming the
// message (conn: connection number or -1, phase: 'warm-up' or 'measured') and the first
// differing byte. `whole`: compare every byte (text echoes always are).
export function checkEcho(m, d, k, whole, conn, phase) {
  if (!m.verify) return null;
  if (m.isText) return d === m.ring[k & m.ringMask] ? null : mismatch(m, d, k, conn, phase);
  const ring = m.bufRing !== null; // the field holds the slot number, k mod R
  if (m.seqOf(d, m.size) !== ((ring ? k & m.ringMask : k) & m.seqMask)) return mismatch(m, d, k, conn, phase);
  if (whole && m.size > m.stampBytes && m.firstDiff(d, ring ? m.bufRing[k & m.ringMask] : m.buf, m.stampBytes) >= 0) {
    return mismatch(m, d, k, conn, phase);
  }
  return null;
}

// Describe a wrong echo of message k (slow path: runs once, then the run fails).
export function mismatch(m, d, k, conn, phase) {
  const who = 'echo of message ' + String(k + 1) + (conn >= 0 ? ' on connection ' + (conn + 1) : '') +
    ' (' + phase + ')';
  const gotText = typeof d === 'string';
  if (!m.verify) return new Error(who + ' is wrong');
  if (gotText !== m.isText) {
    const what = gotText ? 'text of ' + d.length + ' characters' : 'binary of ' + describeLength(d) + ' bytes';
    return new Error(who + ' came back as ' + what + ', sent as ' + (m.isText ? 'text' : 'binary'));
  }
  let want;
  let got;
  if (m.isText) {
    want = utf8Bytes(m.ring[k & m.ringMask]);
    got = utf8Bytes(d);
  } else if (m.bufRing !== null) {
    want = Array.from(new Uint8Array(m.bufRing[k & m.ringMask]));
    got = Array.from(new Uint8Array(d));
  } else {
    m.stamp[0] = k;
    want = Array.from(new Uint8Array(m.buf));
    got = Array.from(new Uint8Array(d));
  }
  let at = 0;
  while (at < want.length && at < got.length && want[at] === got[at]) at++;
  let why = 'differs at byte ' + String(at) + ': got ' + hexByte(got[at]) + ', sent ' + hexByte(want[at]);
  if (at === want.length || at === got.length) {
    why = 'is ' + String(got.length) + ' bytes long, sent ' + String(want.length);
  }
  const seq = sequenceIn(m, got);
  const due = sequenceIn(m, want);
  if (seq !== null && seq !== due) {
    why += '; it carries sequence number ' + String(seq) + ', this message\'s is ' + String(due) +
      ' (lost, duplicated or reordered echoes)';
  }
  return new Error(who + ' ' + why);
}

function describeLength(d) {
  return d && typeof d.byteLength === 'number' ? String(d.byteLength) : '?';
}

// The sequence number in an echo's bytes, if its field is readable.
function sequenceIn(m, bytes) {
  const width = m.isText ? Math.min(m.size, 8) : m.stampBytes;
  if (width === 0 || bytes.length < width) return null;
  if (m.isText) {
    let s = '';
    for (let i = 0; i < width; i++) s += String.fromCharCode(bytes[i]);
    return /^[0-9a-f]+$/.test(s) ? parseInt(s, 16) : null;
  }
  let v = 0;
  for (let i = width - 1; i >= 0; i--) v = v * 256 + bytes[i];
  return v;
}
