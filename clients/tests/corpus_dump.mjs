// The messages the shared workload sends (its ring, clients/workload/verify.js), one ring
// slot a line in hex, for clients/tests/test_corpus.py; runs on Node and on qjs:
//   node clients/tests/corpus_dump.mjs text|binary SIZE ascii|mixed|json|counting|random
import { makeMessages } from '../workload/verify.js';

const argv = typeof scriptArgs !== 'undefined' ? scriptArgs.slice(1) : process.argv.slice(2);
const type = argv[0];
const size = Number(argv[1]);
const contents = argv[2];
const isText = type === 'text';
const m = makeMessages({}, type, size, isText ? contents : 'ascii', true, isText ? 'counting' : contents);
const HEX = [];
for (let i = 0; i < 256; i++) HEX.push((i < 16 ? '0' : '') + i.toString(16));

function hexOf(msg) {
  const out = [];
  if (typeof msg === 'string') {
    for (let i = 0; i < msg.length; i++) {
      const c = msg.charCodeAt(i);
      if (c > 127) throw new Error('not ASCII at ' + i); // the corpus is ASCII (mixed is not dumped)
      out.push(HEX[c]);
    }
  } else {
    const b = new Uint8Array(msg);
    for (let i = 0; i < b.length; i++) out.push(HEX[b[i]]);
  }
  return out.join('');
}

const slots = isText ? m.ring : m.bufRing !== null ? m.bufRing : [m.buf];
for (let j = 0; j < slots.length; j++) console.log(hexOf(slots[j]));
