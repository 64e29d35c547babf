// Test helper (clients/tests/test_deflate_offers.py): the runtime's WebSocket as it ships,
// default options, sends a 2,000-byte and a 16-byte text message to the URL, waits for both
// echoes, prints {"extensions": ...} (what its WebSocket says was agreed) and closes.
//   <runtime> clients/tests/deflate_probe.mjs URL [ws]   (ws: the `ws` package's WebSocket)
const [url, which] = (typeof Deno !== 'undefined' ? Deno.args : process.argv.slice(2));
const Ws = which === 'ws' ? (await import('ws')).default : globalThis.WebSocket;
const socket = new Ws(url);
const messages = ['{"k":"v"}'.repeat(222) + '..', 'sixteen bytes!!!'];
let echoed = 0;
socket.onopen = () => messages.forEach((m) => socket.send(m));
socket.onmessage = () => {
  if (++echoed === messages.length) {
    console.log(JSON.stringify({ extensions: socket.extensions }));
    socket.close(1000);
  }
};
socket.onerror = (e) => { console.error('error', e.message || e); };
