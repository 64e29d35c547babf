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
