// What the `ws` package of this process actually uses for masking and UTF-8 validation,
// read from the modules ws loaded (not assumed from what is installed): the node-ws server
// prints it in its WSBENCH-INFO line (servers/README.md), the node-ws client in its result
// line (clients/README.md), and the harness checks it against the catalog's `expect`.
//
// ws 8 (lib/buffer-util.js) masks with Node's http.websocketMask where Node has one (Node
// 20 does not), else with the `bufferutil` add-on unless WS_NO_BUFFER_UTIL is set and
// bufferutil loads, else in JavaScript (`_mask`). bufferutil itself falls back to
// JavaScript (its fallback.js) when its native binary does not load. So the add-on is in
// use only if ws's exported mask is ws's wrapper around bufferutil *and* bufferutil's
// exports are the native binary's (functions of [native code], the .node file in
// require.cache). Validation (lib/validation.js): buffer.isUtf8 where Node has it (20.x
// does), else utf-8-validate, else JavaScript.
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const require = createRequire(import.meta.url);

function native(fn) {
  return typeof fn === 'function' && /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(fn));
}

function source(fn) {
  return typeof fn === 'function' ? Function.prototype.toString.call(fn) : '';
}

// The module files ws itself loaded (its package "exports" hide lib/; the absolute path is
// the same require.cache entry ws uses, so these are ws's own module instances).
export function wsInfo() {
  const root = dirname(require.resolve('ws/package.json'));
  const bufferUtil = require(join(root, 'lib', 'buffer-util.js'));
  const validation = require(join(root, 'lib', 'validation.js'));
  const maskSource = source(bufferUtil.mask);
  const mask = maskSource.includes('websocketMask')
    ? 'node:http'
    : maskSource.includes('bufferUtil.mask')
      ? 'bufferutil'
      : bufferUtil.mask && bufferUtil.mask.name === '_mask'
        ? 'js'
        : 'unknown';
  const addon = Object.keys(require.cache).find((k) => /[\\/]bufferutil[\\/].*\.node$/.test(k)) || null;
  let addonNative = false;
  let addonVersion = null;
  if (mask === 'bufferutil') {
    const bu = require('bufferutil'); // the cached module ws loaded
    addonNative = native(bu.mask) && native(bu.unmask) && addon !== null;
    addonVersion = require('bufferutil/package.json').version;
  }
  const utf8Source = source(validation.isValidUTF8);
  const utf8 = utf8Source.includes('isUtf8(')
    ? 'buffer.isUtf8'
    : validation.isValidUTF8.name === '_isValidUTF8'
      ? 'js'
      : 'utf-8-validate';
  return {
    version: require('ws/package.json').version,
    bufferutil: mask === 'bufferutil' && addonNative,
    mask: mask === 'bufferutil' && !addonNative ? 'bufferutil (its JavaScript fallback)' : mask,
    addon: addonNative ? relative(process.cwd(), addon) : null,
    bufferutil_version: addonVersion,
    utf8,
    utf8_validate_loaded: Object.keys(require.cache).some((k) => /[\\/]utf-8-validate[\\/]/.test(k)),
  };
}
