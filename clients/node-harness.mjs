// Shared by the Node and Bun adapters: the harness's side of the run (clients/README.md).
// With WSBENCH_HOLD=1 the client waits at the start barrier for the harness's "GO" line
// on stdin, and after its result line stays alive until stdin reaches end-of-file.
const held = process.env.WSBENCH_HOLD === '1';
let buffered = '';
let ended = false;
let waiter = null; // called on every stdin event while someone waits

if (held) {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    if (waiter) waiter();
  });
  process.stdin.on('end', () => {
    ended = true;
    if (waiter) waiter();
  });
  process.stdin.on('error', () => {
    ended = true;
    if (waiter) waiter();
  });
  process.stdin.pause();
}

function wait(ready) {
  return new Promise((resolve, reject) => {
    const check = () => {
      let r;
      try {
        r = ready();
      } catch (e) {
        waiter = null;
        process.stdin.pause();
        reject(e);
        return;
      }
      if (r) {
        waiter = null;
        process.stdin.pause();
        resolve();
      }
    };
    waiter = check;
    process.stdin.resume();
    check();
  });
}

// The start barrier ("GO"), or with `mark` the mid-phase mark WSBENCH-MARK <mark>: any
// line goes on (clients/README.md).
export function barrier(mark) {
  if (!held) return null;
  return wait(() => {
    const nl = buffered.indexOf('\n');
    if (nl >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!mark && line !== 'GO') throw new Error('expected GO on stdin, got ' + JSON.stringify(line.slice(0, 40)));
      return true;
    }
    if (ended) throw new Error(mark ? 'stdin closed at WSBENCH-MARK ' + mark : 'stdin closed before GO');
    return false;
  });
}

export function hold() {
  if (!held) return Promise.resolve();
  return wait(() => ended);
}
