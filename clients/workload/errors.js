// Errors and one-line descriptions shared by the workload kinds.

// An error that makes the client exit with status 3: this client cannot run what was asked.
export function unsupported(what) {
  const e = new Error('unsupported: ' + what);
  e.unsupported = true;
  return e;
}

export function describe(err) {
  if (err && typeof err.message === 'string' && err.message !== '') return err.message;
  return String(err);
}

export function closeDetail(ev) {
  return '(code ' + (ev && ev.code) + (ev && ev.reason ? ', reason ' + ev.reason : '') + ')';
}

// ev.message (Bun, Deno), ev.error.message (an Error), or ev.error itself when it is the
// message (k6: a string).
export function errorDetail(ev) {
  const err = ev && ev.error;
  const msg = ev && (ev.message || (typeof err === 'string' ? err : err && err.message));
  return msg ? ': ' + msg : '';
}

export function oneLine(e) {
  return String((e && e.message) || e).replace(/\s+/g, ' ');
}
