// echo: throughput over one or more connections.
//
// After the warm-up, the measured phase runs rounds: each round sends --count messages
// (split over the connections; all at once in burst mode, or keeping --window / one in
// flight) and waits for every echo. Rounds repeat until the phase has lasted --min-ms,
// so a fast client is measured over as long a phase as a slow one; `messages` counts
// every echo of every round. Every echo is checked (verify.js) as it arrives.

import { baseResult, TRANSFER } from './session.js';
import { checkEcho, makeMessages, mismatch, stampView } from './verify.js';

export function echoBody(env, opts, ctx) {
  const m = makeMessages(env, opts.type, opts.size, opts.text, opts.verify, opts.bytes);
  const isText = m.isText;
  const ring = m.ring;
  const ringMask = m.ringMask;
  const bufRing = m.bufRing; // --bytes random: binary messages from a ring (verify.js)
  const slotMask = ringMask & m.seqMask; // ... whose echo k carries k & slotMask
  const buf = m.buf;
  const stamp = m.stamp;
  const seqOf = m.seqOf;
  const seqMask = m.seqMask;
  const size = m.size;
  const plain = m.plain;
  const C = opts.connections;

  let t0 = 0;
  let t1 = 0;
  let pending = 0; // connections not yet through the current step
  let measuring = false;
  let rounds = 0;
  let compared = 0; // measured echoes compared byte for byte
  const conns = [];

  function inFlightFor(n) {
    if (opts.mode === 'pingpong') return 1;
    if (opts.mode === 'window') return opts.window;
    return n; // burst
  }

  function share(total, i) {
    return Math.floor(total / C) + (i < total % C ? 1 : 0);
  }

  // One connection: its own sequence numbers; rounds and totals are shared.
  function makeConn(index, count, warmup) {
    let ws = null;
    let ks = 0; // sequence number of the next message to send
    let kr = 0; // sequence number the next echo must carry
    let sendEnd = 0; // the current round sends messages up to (not including) this one
    let recvEnd = 0; // ... and ends when this echo has arrived
    let nextWhole = 0; // binary: the next echo compared byte for byte
    let every = 1; // binary: echoes between two such comparisons (1 during warm-up)
    let roundDone = null;
    let taken = null; // --verify off: the last message received
    // --transfer: every message of a round from its own buffer, made before the first
    // round and reused by the next ones (each send copies the bytes, see verify.js).
    let bufs = null;
    let stamps = null;
    let next = 0;
    if (opts.transfer) {
      const n = Math.max(count, warmup, 1);
      bufs = new Array(n);
      stamps = new Array(n);
      for (let i = 0; i < n; i++) {
        bufs[i] = m.plain.slice(0);
        stamps[i] = stampView(bufs[i]);
      }
    }

    function phase() {
      return measuring ? 'measured' : 'warm-up';
    }

    function bad(d) {
      ctx.fail(mismatch(m, d, kr, C > 1 ? index : -1, phase()));
    }

    // The general send (the hot paths below inline their own).
    function sendNext() {
      if (bufs !== null) {
        const i = next;
        if (++next === bufs.length) next = 0;
        if (m.verify) stamps[i][0] = ks;
        ++ks;
        ws.send(bufs[i], TRANSFER);
      } else if (!m.verify) {
        ++ks;
        ws.send(plain);
      } else if (isText) {
        ws.send(ring[ks & ringMask]);
        ++ks;
      } else if (bufRing !== null) {
        ws.send(bufRing[ks & ringMask]);
        ++ks;
      } else {
        stamp[0] = ks;
        ++ks;
        ws.send(buf);
      }
    }

    // Binary echo k compared byte for byte; false (and the run failed) if it differs.
    function whole(d, k) {
      const err = checkEcho(m, d, k, true, C > 1 ? index : -1, phase());
      if (err !== null) {
        ctx.fail(err);
        return false;
      }
      if (measuring) compared++;
      return true;
    }

    // The last echo of every round is compared too (unless it just was).
    function endOfRound(d) {
      if (d !== null && kr - 1 !== nextWhole - every && !whole(d, kr - 1)) return;
      roundDone();
    }

    function rxText(ev) {
      const d = ev.data;
      if (d !== ring[kr & ringMask]) return bad(d);
      if (++kr === recvEnd) return endOfRound(null);
      if (ks < sendEnd) {
        ws.send(ring[ks & ringMask]);
        ++ks;
      }
    }

    function rxBinary(ev) {
      const d = ev.data;
      if (seqOf(d, size) !== (kr & seqMask)) return bad(d);
      if (kr === nextWhole) {
        if (!whole(d, kr)) return;
        nextWhole += every;
      }
      if (++kr === recvEnd) return endOfRound(d);
      if (ks < sendEnd) {
        stamp[0] = ks;
        ++ks;
        ws.send(buf);
      }
    }

    // rxBinary for --bytes random: the messages come from the ring of buffers, each
    // stamped once with its slot number (a handler of its own, so that rxBinary is what
    // it was without the corpus).
    function rxRing(ev) {
      const d = ev.data;
      if (seqOf(d, size) !== (kr & slotMask)) return bad(d);
      if (kr === nextWhole) {
        if (!whole(d, kr)) return;
        nextWhole += every;
      }
      if (++kr === recvEnd) return endOfRound(d);
      if (ks < sendEnd) {
        ws.send(bufRing[ks & ringMask]);
        ++ks;
      }
    }

    // rxBinary with the --transfer send: a copy, not a branch, so the common path stays
    // as short as it can be.
    function rxTransfer(ev) {
      const d = ev.data;
      if (seqOf(d, size) !== (kr & seqMask)) return bad(d);
      if (kr === nextWhole) {
        if (!whole(d, kr)) return;
        nextWhole += every;
      }
      if (++kr === recvEnd) return endOfRound(d);
      if (ks < sendEnd) sendNext();
    }

    // --verify off: nothing checked, the same message every time. The message is still
    // taken, as any consumer would, so that the difference is the checking alone.
    function rxPlain(ev) {
      taken = ev.data;
      if (++kr === recvEnd) return endOfRound(null);
      if (ks < sendEnd) {
        if (bufs !== null) {
          sendNext();
        } else {
          ++ks;
          ws.send(plain);
        }
      }
    }

    // Sends `n` messages keeping at most `inFlight` outstanding; done() after the n-th echo.
    function startRound(n, inFlight, done) {
      sendEnd = ks + n;
      recvEnd = kr + n;
      roundDone = done;
      if (n === 0) {
        done();
        return;
      }
      const first = ks + (inFlight < n ? inFlight : n);
      if (bufs !== null) {
        while (ks < first) sendNext();
      } else if (!m.verify) {
        while (ks < first) {
          ++ks;
          ws.send(plain);
        }
      } else if (isText) {
        while (ks < first) {
          ws.send(ring[ks & ringMask]);
          ++ks;
        }
      } else if (bufRing !== null) {
        while (ks < first) {
          ws.send(bufRing[ks & ringMask]);
          ++ks;
        }
      } else {
        while (ks < first) {
          stamp[0] = ks;
          ++ks;
          ws.send(buf);
        }
      }
    }

    return {
      open(onOpen) {
        ws = ctx.connect(() => {
          if (!m.verify) ws.onmessage = rxPlain;
          else if (isText) ws.onmessage = rxText;
          else if (bufRing !== null) ws.onmessage = rxRing;
          else ws.onmessage = bufs !== null ? rxTransfer : rxBinary;
          onOpen();
        });
      },
      warmup(done) {
        every = 1; // every warm-up echo is compared byte for byte
        nextWhole = kr;
        startRound(warmup, inFlightFor(warmup), done);
      },
      round(done) {
        if (every === 1) {
          every = m.sampleEvery;
          nextWhole = kr + every - 1;
        }
        startRound(count, inFlightFor(count), done);
      },
      progress() {
        return 'sent ' + ks + ', received ' + kr + ' of ' + recvEnd;
      },
    };
  }

  ctx.progress = () => {
    const parts = [];
    for (let i = 0; i < conns.length; i++) parts.push((C > 1 ? '#' + (i + 1) + ': ' : '') + conns[i].progress());
    return 'round ' + (rounds + 1) + ': ' + parts.join('; ');
  };

  function step() {
    return --pending === 0;
  }

  function allOpen() {
    if (!step()) return;
    ctx.phase = 'warmup';
    pending = C;
    for (let i = 0; i < C; i++) conns[i].warmup(allWarm);
  }

  function allWarm() {
    if (!step()) return;
    ctx.measure(() => {
      measuring = true;
      t0 = env.now();
      nextRound();
    });
  }

  function nextRound() {
    pending = C;
    for (let i = 0; i < C; i++) conns[i].round(roundOver);
  }

  function roundOver() {
    if (!step()) return;
    t1 = env.now();
    rounds++;
    if (t1 - t0 < opts.minMs) {
      nextRound();
      return;
    }
    const messages = rounds * opts.count;
    const r = baseResult(messages, messages * m.utf8Size, (t1 - t0) / 1000, 0);
    r.rounds = rounds;
    r.checked = m.verify ? messages : 0;
    r.compared = !m.verify ? 0 : isText ? messages : compared;
    ctx.done(r);
  }

  for (let i = 0; i < C; i++) conns.push(makeConn(i, share(opts.count, i), share(opts.warmup, i)));
  pending = C;
  for (let i = 0; i < C; i++) conns[i].open(allOpen);
}
