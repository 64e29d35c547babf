// The messages a workload sends: ASCII or mixed UTF-8 text, or binary, of an exact size.

const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';

export function asciiString(size) {
  // Printable ASCII, so characters == UTF-8 bytes. Doubling keeps this O(log size).
  let s = ASCII;
  while (s.length < size) s += s;
  return s.slice(0, size);
}

// Exactly `size` bytes of UTF-8 cycling through 1-, 2-, 3- and 4-byte characters
// (a, é, €, 😀 and friends); where the next character would not fit, ASCII pads.
export function mixedString(size) {
  const unit = ['a', '\u00e9', '\u20ac', '\ud83d\ude00', 'b', '\u00df', '\u4e2d', '\ud83c\udf0d'];
  const unitBytes = 1 + 2 + 3 + 4 + 1 + 2 + 3 + 4; // 20
  let block = unit.join('');
  let blockBytes = unitBytes;
  let s = '';
  let n = 0;
  // Append doubling blocks while they fit, then single characters, then ASCII padding.
  const blocks = [];
  while (blockBytes * 2 <= size) {
    blocks.push([block, blockBytes]);
    block += block;
    blockBytes *= 2;
  }
  blocks.push([block, blockBytes]);
  for (let i = blocks.length - 1; i >= 0; i--) {
    while (n + blocks[i][1] <= size) {
      s += blocks[i][0];
      n += blocks[i][1];
    }
  }
  const sizes = [1, 2, 3, 4, 1, 2, 3, 4];
  for (let i = 0; i < unit.length && n + sizes[i] <= size; i++) {
    s += unit[i];
    n += sizes[i];
  }
  return s + asciiString(size - n);
}

// UTF-8 length of a JavaScript string (lone surrogates count as U+FFFD, 3 bytes).
export function utf8Length(s) {
  let n = 0;
  const len = s.length;
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

// The corpus (--text json, --bytes random; clients/README.md, "Message contents"): message
// bodies that compress as real traffic does, each ring slot's from its own seed, the same
// bytes as wsbench-loadgen's (clients/loadgen/corpus.c; clients/tests/test_corpus.py
// compares the two byte for byte).
//
// The generator is xorshift32 (Marsaglia 2003, shifts 13, 17, 5) on a uint32 state: in
// JavaScript the shifts and XORs act on 32-bit integers, and `>>> 0` keeps the state
// unsigned, so it is the C code's uint32_t arithmetic exactly. Slot j's state starts at
// (j + 1) * 0x9e3779b9 mod 2^32 (Math.imul: a plain product would lose bits past 2^53),
// and its first four outputs are dropped.

function corpusSeed(slot) {
  let x = Math.imul(slot + 1, 0x9e3779b9) >>> 0;
  if (x === 0) x = 1;
  for (let i = 0; i < 4; i++) x = xorshift32(x);
  return x;
}

function xorshift32(x) {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

// The symbols of the feed, and each one's price (in cents) and price spread.
const SYMBOLS = ['BTC-USD', 'ETH-USD', 'SOL-USD', 'XRP-USD', 'ADA-USD', 'DOGE-USD', 'AVAX-USD', 'LINK-USD'];
const PRICE_CENTS = [4123450, 221275, 6120, 62, 38, 9, 2245, 1432];
const PRICE_SPREAD = [82469, 4425, 122, 2, 2, 1, 45, 29];

function decimals(v, scale, digits) {
  let frac = String(v % scale);
  while (frac.length < digits) frac = '0' + frac;
  return String(Math.floor(v / scale)) + '.' + frac;
}

// Exactly `size` ASCII characters of a trade feed, slot `slot`'s: JSON records one per
// line (newline-delimited JSON), cut at `size`:
//   {"seq":48213977,"sym":"ETH-USD","px":2233.41,"qty":12.0532,"side":"buy","ts":1732812345678}
// seq counts up from a random 8-digit start, ts from a random moment of 2024-11-28 by 0
// to 249 ms a record; sym, px, qty and side are drawn for every record.
export function jsonString(slot, size) {
  let x = corpusSeed(slot);
  x = xorshift32(x);
  let seq = 10000000 + (x % 90000000);
  x = xorshift32(x);
  let ts = 1732752000000 + (x % 86400000);
  let s = '';
  while (s.length < size) {
    x = xorshift32(x);
    const sym = x & 7;
    x = xorshift32(x);
    const px = PRICE_CENTS[sym] + (x % PRICE_SPREAD[sym]);
    x = xorshift32(x);
    const qty = 1 + (x % 5000000);
    x = xorshift32(x);
    const side = x & 1 ? 'sell' : 'buy';
    ts += (x >>> 1) % 250;
    s += '{"seq":' + String(seq) + ',"sym":"' + SYMBOLS[sym] + '","px":' + decimals(px, 100, 2) +
      ',"qty":' + decimals(qty, 10000, 4) + ',"side":"' + side + '","ts":' + String(ts) + '}\n';
    seq++;
  }
  return s.slice(0, size);
}

// Fills `bytes` (a Uint8Array) with slot `slot`'s random bytes: each output of the
// generator gives four, least significant first.
export function randomBytes(slot, bytes) {
  let x = corpusSeed(slot);
  const n = bytes.length;
  for (let i = 0; i < n; i += 4) {
    x = xorshift32(x);
    bytes[i] = x & 255;
    if (i + 1 < n) bytes[i + 1] = (x >>> 8) & 255;
    if (i + 2 < n) bytes[i + 2] = (x >>> 16) & 255;
    if (i + 3 < n) bytes[i + 3] = x >>> 24;
  }
}
