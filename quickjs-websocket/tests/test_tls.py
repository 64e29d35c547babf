"""wss:// as TLS events make it (the raw-socket peer in TLS mode serving /tls, below):
records that arrive byte by byte, close_notify before and after the WebSocket close, a
TCP reset, a truncation and a fatal alert in the middle of a message; a renegotiation
request and TLS 1.3 key updates while the client's writes are blocked (tests/c/tls_peer.c,
OpenSSL: what Python's ssl cannot do); certificates the client must refuse; the CA file
option; TLS set up only when the first wss:// connection is made; unread bytes of the
shared read buffer kept for their connection when another one reads.  Optimized (our TLS
transport, src/tp_tls.c) and baseline (libwebsockets)."""
import asyncio
import shutil
import socket
import struct
import subprocess
from pathlib import Path

import peer_raw
import pytest

from peer_raw import close_frame, path, wait_for_close
from qjs_runs import ARM_ROOT, CA_FILE, HERE, QJS, ROOT, TARGET_RUN, TLS_DIR, Peer, need_client, peer_argv, run_qjs
from wsbench.conformance.frames import BINARY, TEXT, server_frame

# what /tls sends before each case's fault: text "one", 3,000 bytes binary, a text of
# 14 UTF-16 units (2-, 3- and 4-byte characters)
MESSAGES = [("text", 3), ("binary", 3000), ("text", 14)]
TLS_MESSAGES = [server_frame(TEXT, b"one"), server_frame(BINARY, (bytes(range(256)) * 12)[:3000]),
                server_frame(TEXT, "é€😀 and ascii".encode())]
TLS_FOURTH = server_frame(TEXT, b"never delivered: " + b"4" * 3000)

TLS_CASES = {
    # the 101 and the messages one byte per TCP write (records arrive in pieces), then
    # the close frame the same way; a clean close
    "bytes": "bytewise",
    # a close frame, then close_notify in the same write: the client answers the close
    # frame (over a session whose other half is closed) and closes cleanly
    "notify-after": "close frame, close_notify",
    # close_notify without a WebSocket close, TCP left open: error, close 1006
    "notify-before": "close_notify",
    # half of a fourth message's record, then a TCP reset
    "reset": "reset mid-record",
    # half of a fourth message's record, then TCP closed without close_notify
    "truncate": "truncation mid-record",
    # the first half of a fourth message (in whole records), then a fatal alert, TCP
    # left open
    "alert": "fatal alert mid-message",
}


@path("/tls")
async def tls_case(t, _, hello, q, headers):
    """(TLS only: t is the peer's TlsWire, its TLS by hand in t.tls) 100 ms after the 101,
    the three messages, then as TLS_CASES says: byte by byte, close_notify before or after
    a close frame, a TCP reset or a truncation in the middle of a fourth message's record,
    a fatal alert in the middle of the fourth message."""
    case = q.get("case")
    if peer_raw.TLS_CONTEXT is None or case not in TLS_CASES:
        raise ValueError(case)
    writer = t.writer
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if case == "bytes":
        data = b"".join(t.tls.encrypt(m) for m in [hello] + TLS_MESSAGES + [close_frame(1000)])
        for i in range(len(data)):
            writer.write(data[i:i + 1])
            await writer.drain()
            if i % 64 == 0:
                await asyncio.sleep(0.001)
        await wait_for_close(t, t)
        return
    t.write(hello)
    await t.drain()
    await asyncio.sleep(0.1)
    t.write(b"".join(TLS_MESSAGES))
    await t.drain()
    if case == "notify-after":
        writer.write(t.tls.encrypt(close_frame(1000)))
        writer.write(t.tls.close_notify())
        await writer.drain()
        await wait_for_close(t, t)
        return
    if case == "notify-before":
        writer.write(t.tls.close_notify())
        t.session_over()
        await writer.drain()
        await report_end(t)
        return
    if case == "alert":  # whole records (an alert inside a record is just bytes of it)
        writer.write(t.tls.encrypt(TLS_FOURTH[:len(TLS_FOURTH) // 2]))
    else:
        half = t.tls.encrypt(TLS_FOURTH)
        writer.write(half[:len(half) // 2])
    await writer.drain()
    await asyncio.sleep(0.1)
    t.session_over()
    if case == "reset":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return
    if case == "truncate":
        writer.write_eof()
        await report_end(t)
        return
    writer.write(t.tls.corrupt()[0])  # our TLS stack's own fatal alert (bad_record_mac)
    await writer.drain()
    await report_end(t)


async def report_end(t):
    """After a fault of ours: wait for the client's end of TCP (`EOF`), reading and
    counting what it still sends (it may not be decrypted any more)."""
    while await t.reader.read(65536):
        pass
    print("EOF", flush=True)


def tls_peer(cert="server"):
    argv, cwd = peer_argv("raw", True, cert, behaviours=[__file__])
    return Peer("raw", argv, cwd, True)


@pytest.fixture
def peers():
    made = []

    def make(cert="server"):
        p = tls_peer(cert=cert)
        made.append(p)
        return p

    yield make
    for p in made:
        p.stop()


def messages(res):
    return [(e["kind"], e["len"]) for e in res["events"] if e["type"] == "message"]


def types(res):
    return [e["type"] for e in res["events"]]


@pytest.mark.parametrize("case", ["bytes", "notify-after"])
def test_tls_session_ends_cleanly(peers, variant, case):
    """Records that arrive one byte per TCP segment (the 101, the messages, the close
    frame); a close frame followed at once by the server's close_notify (the client's
    answer goes out over a session whose other half is closed): every message, then a
    clean close, and the peer reads the client's close frame."""
    peer = peers()
    res = run_qjs("events", peer.url + "tls?case=" + case, env_extra=variant, timeout=30)
    assert messages(res) == MESSAGES, res["events"]
    assert types(res) == ["open", "message", "message", "message", "close"], res["events"]
    assert res["close"] == {"code": 1000, "reason": "", "wasClean": True}, res
    assert peer.wait_line("CLOSE") == ["CLOSE 1000 "], peer.lines


@pytest.mark.parametrize("case", ["notify-before", "reset", "truncate", "alert"])
def test_tls_session_fails_under_an_open_connection(peers, variant, case):
    """close_notify without a WebSocket close (TCP left open), a TCP reset or TCP closed
    without close_notify (truncation) in the middle of a fourth message's record, a
    fatal alert in the middle of the fourth message (TCP left open): the three complete
    messages, not the fourth, then error and close 1006, not clean (the TLS-failure
    set's verdict)."""
    peer = peers()
    res = run_qjs("events", peer.url + "tls?case=" + case, env_extra=variant, timeout=30)
    assert messages(res) == MESSAGES, res["events"]
    assert types(res) == ["open", "message", "message", "message", "error", "close"], res["events"]
    assert res["close"] == {"code": 1006, "reason": "", "wasClean": False}, res
    assert res["events"][-1]["t"] - res["events"][0]["t"] < 3000, res["events"]


@pytest.mark.parametrize("cert", ["untrusted", "wrong-host", "expired"])
def test_certificate_refused(peers, variant, cert):
    """A certificate from a CA not trusted, for another host, or expired: the TLS
    handshake fails (the peer sees it fail), never open; error, then close 1006."""
    peer = peers(cert)
    res = run_qjs("events", peer.url + "echo", env_extra=variant, timeout=30)
    assert types(res) == ["error", "close"], res["events"]
    assert res["close"] == {"code": 1006, "reason": "", "wasClean": False}, res
    assert peer.wait_line("TLSFAIL"), peer.lines
    if not variant:
        assert "certificate verify failed" in res["events"][0]["message"], res["events"]


# the client program for this test, run by run.js (qjs_runs.run_qjs)
# wss://: a connection with the CA file in force (QJSWS_CA_FILE, or none), then
# setCAFile(ARG) and a second one (each: its events), then setCAFile(null)
CAFILE_JS = r"""
const results = []
const before = getCAFile()
const one = (next) => {
  const ws = new WebSocket(url)
  const ev = []
  ws.onopen = () => { ev.push('open'); ws.close(1000) }
  ws.onerror = (e) => ev.push('error')
  ws.onclose = (e) => { ev.push('close ' + e.code + ' ' + e.wasClean); results.push(ev); next() }
}
one(() => {
  let bad = null
  try { setCAFile(42) } catch (e) { bad = e.name }
  let missing = null
  try { setCAFile('/nonexistent/ca.pem') } catch (e) { missing = e.name }
  const prev = setCAFile(rest[0])
  one(() => {
    const now = getCAFile()
    setCAFile(null)
    done({ mode, results, before, prev, now, after: getCAFile(), bad, missing })
  })
})
"""


def test_ca_file_option(peers, variant):
    """No CA file: the system's store, which does not hold the test CA (refused); then
    setCAFile(ca.pem) from JS: the next connection opens (on the lws fallback through a
    vhost of its own: its context already exists).  Bad arguments throw."""
    peer = peers()
    env = dict(variant, QJSWS_CA_FILE="")
    res = run_qjs(CAFILE_JS, peer.url + "echo", str(CA_FILE), env_extra=env, timeout=30)
    assert res["before"] is None and res["prev"] is None, res
    assert res["now"] == str(CA_FILE) and res["after"] is None, res
    assert res["results"] == [["error", "close 1006 false"], ["open", "close 1000 true"]], res
    assert res["bad"] == "TypeError" and res["missing"] == "Error", res


# the client program for this test, run by run.js (qjs_runs.run_qjs)
TLSINFO_JS = r"""
const ws = new WebSocket(url)
const seen = { connecting: ws.tlsInfo }
ws.onopen = () => { seen.open = ws.tlsInfo; ws.close(1000) }
ws.onerror = () => { seen.error = true }
ws.onclose = (e) => { seen.closed = ws.tlsInfo; done({ mode, seen, code: e.code }) }
"""


def test_tls_info_tells_what_was_negotiated(peer_factory, scheme, variant):
    """WebSocket.tlsInfo (not in the standard): over wss://, once open, the version, cipher,
    group and library the handshake settled on, on our transport and on libwebsockets'
    (the baseline); null over ws://, before the TLS handshake is done (while connecting it
    may be: our transport takes its first steps in the constructor) and once it is over."""
    peer = peer_factory("lws")
    res = run_qjs(TLSINFO_JS, peer.url, env_extra=variant, timeout=30)
    seen = res["seen"]
    assert res["code"] == 1000 and "error" not in seen, res
    assert seen["connecting"] in (None, seen["open"]) and seen["closed"] is None, res
    if scheme == "ws":
        assert seen["open"] is None, res
    else:
        assert seen["open"] == {"version": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384", "group": "x25519",
                                "library": seen["open"]["library"]}, res
        assert seen["open"]["library"].startswith("OpenSSL 3."), res


@pytest.mark.parametrize("how", ["off", "env", "js"])
def test_sessions_resumed_only_when_asked(peer_factory, scheme, how):
    """Off by default: four connections in a row, four full handshakes. With
    QJSWS_TLS_RESUME=1, or setTLSResume(true) from JS, the second and later resume the
    session of the one before (the peer: lws-echo in TLS mode, OpenSSL's tickets);
    setTLSResume takes booleans only."""
    if scheme == "ws":
        pytest.skip("TLS sessions: wss:// only")
    peer = peer_factory("lws")
    env = {"QJSWS_TLS_RESUME": "1"} if how == "env" else {}
    res = run_qjs("resume", peer.url, "on" if how == "js" else "off", env_extra=env, timeout=30)
    assert res["results"] == ["again"] * 4 and res["bad"] == "TypeError", res
    assert (res["before"], res["after"]) == ((how == "env"), how != "off"), res
    pool = res["pool"]
    assert (pool["tls_handshakes"], pool["tls_resumed"]) == (4, 0 if how == "off" else 3), pool


def test_tls_set_up_at_the_first_wss_connection(peer_factory, scheme):
    """Start-up sets nothing of TLS up: a ws:// run never reads OpenSSL's configuration
    or a CA store; a wss:// run reads them when it connects (strace)."""
    if not shutil.which("strace"):
        pytest.skip("strace not installed")
    need_client()
    peer = peer_factory("lws")
    trace = subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", "/dev/stderr", *TARGET_RUN, str(QJS),
                            "clients/quickjs.mjs", "--url", peer.url, "--type", "text", "--size", "11",
                            "--count", "10", "--warmup", "0"],
                           cwd=ARM_ROOT or ROOT, capture_output=True, text=True, timeout=60,
                           # (make test-asan: LeakSanitizer cannot run under ptrace)
                           env={"PATH": "/usr/bin:/bin", "QJSWS_CA_FILE": str(CA_FILE),
                                "ASAN_OPTIONS": "detect_leaks=0"})
    assert trace.returncode == 0, trace.stderr[-2000:]
    opened = [l for l in trace.stderr.splitlines() if "openat(" in l and "ENOENT" not in l]
    tls = [l for l in opened if "openssl.cnf" in l or "ca.pem" in l or "/etc/ssl" in l]
    if scheme == "ws":
        assert tls == [], tls
    else:
        assert any("ca.pem" in l for l in tls), opened



def test_one_read_of_the_socket_per_round_trip(peer_factory, scheme):
    """One message in flight at a time (the latency kind): each echo takes one recv() of
    the socket, over wss:// as over ws://. The TLS transport stops reading when the BIO's
    last recv() emptied the socket and neither the BIO nor OpenSSL holds a byte more,
    instead of one more recv() only to hear EAGAIN (src/tp_tls.c, tls_read)."""
    if not shutil.which("strace"):
        pytest.skip("strace not installed")
    need_client()
    peer = peer_factory("lws")
    n = 200
    trace = subprocess.run(["strace", "-f", "-e", "trace=recvfrom,recvmsg,read", "-e", "signal=none", "-qq",
                            "-o", "/dev/stderr", *TARGET_RUN, str(QJS), "clients/quickjs.mjs", "--url", peer.url,
                            "--kind", "latency", "--type", "binary", "--size", "32", "--count", str(n),
                            "--warmup", "0"],
                           cwd=ARM_ROOT or ROOT, capture_output=True, text=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin", "QJSWS_CA_FILE": str(CA_FILE),
                                "ASAN_OPTIONS": "detect_leaks=0"})
    assert trace.returncode == 0, trace.stderr[-2000:]
    reads = [l for l in trace.stderr.splitlines() if "recvfrom(" in l or "recvmsg(" in l]
    # the echoes, and a few for the upgrade, the TLS handshake and the close
    assert n <= len(reads) <= n + 12, (len(reads), reads[-20:])

# the client program for this test, run by run.js (qjs_runs.run_qjs)
# two connections at once: the first one's messages come in the write of its 101
# (peer_raw /pings?...&msg=M), and at its first message the second one (rest[0])
# connects and echoes one message
INTERLEAVE_JS = r"""
const a = new WebSocket(url)
let got = 0
let bad = 0
let echoed = false
let aclose = null
let closed = 0
const errors = []
const finish = () => {
  if (++closed === 2) done({ mode, got, bad, echoed, errors, close: aclose, pool: poolStats() })
}
a.onmessage = (e) => {
  if (e.data !== 'after') bad++
  if (got++ > 0) return
  const b = new WebSocket(rest[0])
  b.onopen = () => b.send('b')
  b.onmessage = (e2) => { echoed = e2.data === 'b'; b.close(1000) }
  b.onerror = (e2) => errors.push('b: ' + e2.message)
  b.onclose = finish
}
a.onerror = (e) => errors.push('a: ' + e.message)
a.onclose = (e) => { aclose = { code: e.code, wasClean: e.wasClean }; finish() }
"""


def test_unread_bytes_move_with_their_connection(peers, variant):
    """The read buffer is one for the process: the 101 and 10,000 messages in one write
    (five records), the upgrade takes the head and stops with records still in the
    buffer; from the first message a second connection makes its TLS handshake, whose
    first read moves them into a buffer of the first connection's own.  Every message
    intact and in order, the second connection's echo, two clean closes."""
    peer = peers()
    res = run_qjs(INTERLEAVE_JS, peer.url + "pings?n=1&at=101&msg=10000&close=1", peer.url + "echo",
                  env_extra=variant, timeout=60)
    assert res["got"] == 10000 and res["bad"] == 0, res
    assert res["echoed"] and res["errors"] == [], res
    assert res["close"] == {"code": 1000, "wasClean": True}, res
    if not variant:
        assert res["pool"]["tls_kept"] >= 1, res["pool"]


@pytest.fixture(scope="module")
def tls_peer_exe(tmp_path_factory):
    cc = shutil.which("cc")
    if cc is None or not CA_FILE.exists():
        pytest.skip("cc or build/tls missing")
    exe = Path(tmp_path_factory.mktemp("tls_peer")) / "tls_peer"
    subprocess.run([cc, "-O1", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(HERE / "c" / "tls_peer.c"), "-lssl", "-lcrypto"], check=True)
    return exe


def c_peer(exe, mode):
    return Peer("tls_peer", [str(exe), str(TLS_DIR / "server.pem"), str(TLS_DIR / "server.key"), mode],
                None, True)


def test_key_updates_while_writes_are_blocked(tls_peer_exe, variant):
    """TLS 1.3: the peer reads nothing for 300 ms while the client bursts 3,000 messages
    (~60 MB: its writes wait), then sends a KeyUpdate that requests the client's, and
    another after every 500 echoed frames.  OpenSSL answers a requested update at the
    client's next write once nothing is half written (openssl#8773; answering at once,
    with a record half written, failed the session: openssl#8677): every echo intact, a
    clean close.  (pool: tls_read_wants_write, tls_write_wants_read count the reads
    that had to wait for POLLOUT and the writes for POLLIN, for the report.)"""
    peer = c_peer(tls_peer_exe, "keyupdate")
    try:
        res = run_qjs("burst", peer.url, 3000, env_extra=variant, timeout=60)
        assert res["got"] == 3000 and res["bad"] == 0, res
        assert res["errors"] == [] and res["close"] == {"code": 1000, "wasClean": True}, res
        lines = peer.wait_line("KEYUPDATES")
        assert lines and int(lines[0].split()[1]) >= 6, peer.lines
        if not variant:
            assert res["pool"]["tls_staged"] > 0, res["pool"]  # records joined across blocks
            # a burst's records the full socket did not take, held and sent at POLLOUT
            assert res["pool"]["tls_held_out"] > 0, res["pool"]
    finally:
        peer.stop()


def test_renegotiation_refused(tls_peer_exe, variant):
    """TLS 1.2: the peer asks for a renegotiation (HelloRequest) while the client's burst
    has its writes blocked.  Our transport refuses (SSL_OP_NO_RENEGOTIATION: a
    no_renegotiation alert, sent when the socket takes it); libwebsockets' client
    answers with an unexpected_message alert while its writes wait, or renegotiates when
    they do not (timing: both seen).  A refusal makes the peer's OpenSSL end the session
    with a fatal alert: error, then close 1006, not clean; no hang."""
    peer = c_peer(tls_peer_exe, "reneg")
    try:
        res = run_qjs("burst", peer.url, 3000, env_extra=variant, timeout=60)
        if variant and res["got"] == 3000:
            # libwebsockets' path (the fallback) lets OpenSSL renegotiate when the request
            # finds its writes idle (a loaded machine: the burst had all gone out): then
            # the session goes on, every echo arrives and the close is clean.
            assert res["bad"] == 0 and res["errors"] == [], res
            assert res["close"] == {"code": 1000, "wasClean": True}, res
            assert peer.wait_line("RENEG-DONE"), peer.lines
            return
        assert res["got"] < 3000 and res["bad"] == 0, res
        assert res["errors"] and res["close"] == {"code": 1006, "wasClean": False}, res
        ended = peer.wait_line("RENEG-REFUSED") + peer.wait_line("TLSERR", timeout=0.5)
        assert ended, peer.lines
        if not variant:
            assert ended[0] == "RENEG-REFUSED no renegotiation", peer.lines
    finally:
        peer.stop()


# the client program for test_large_payloads_read_into_their_message: messages of several
# sizes sent at once, every echo compared whole (url: an echo server)
LARGE_JS = r"""
const sizes = [70000, 5000, 1 << 20, 65536, 11, 300000, 4097]
const text = textPattern(100000), wide = 'é€'.repeat(20000) + 'x'
const ws = new WebSocket(url)
ws.binaryType = 'arraybuffer'
const bad = []
let i = 0
ws.onopen = () => {
  sizes.forEach((n, k) => ws.send(pattern(n, k)))
  ws.send(text)
  ws.send(wide)
}
ws.onmessage = (e) => {
  const ok = i < sizes.length ? sameBytes(e.data, pattern(sizes[i], i))
    : e.data === (i === sizes.length ? text : wide)
  if (!ok) bad.push(i)
  if (++i === sizes.length + 2) ws.close()
}
ws.onclose = (e) => done({ got: i, bad, close: { code: e.code, wasClean: e.wasClean }, pool: poolStats() })
"""


@pytest.mark.parametrize("direct", ["on", "off"])
def test_large_payloads_read_into_their_message(peer_factory, direct):
    """Switch rxdirect: the rest of a large frame's payload is read straight into its
    message (after its header, or after the part a read brought), over ws:// and over
    wss:// (where the payload comes in 16 KiB records, split across reads, and the reader
    takes the next frame's header alone).  Binary messages from 4,097 B to 1 MiB, an
    11-byte one between them, a 100 KB ASCII text and a 60 KB one that is not: every echo
    intact, and reads into messages happened (none with the switch off)."""
    env = {} if direct == "on" else {"QJSWS_DISABLE": "rxdirect"}
    peer = peer_factory("python")
    res = run_qjs(LARGE_JS, peer.url, env_extra=env)
    assert res["got"] == 9 and res["bad"] == [], res
    assert res["close"]["wasClean"] is True, res
    if direct == "on":
        assert res["pool"]["own_sunk"] > 0, res["pool"]
    else:
        assert res["pool"]["own_sunk"] == 0, res["pool"]
