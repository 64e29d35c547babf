// Shared by the Node and Bun adapters: when the harness asks for it (WSBENCH_HOLD=1),
// stay alive after the result line until stdin reaches end-of-file.
export function hold() {
  if (process.env.WSBENCH_HOLD !== '1') return Promise.resolve();
  return new Promise((resolve) => {
    process.stdin.on('end', resolve);
    process.stdin.on('error', resolve);
    process.stdin.resume();
  });
}
