"""Raw-socket WebSocket peer for the quickjs-websocket tests (asyncio streams, no
WebSocket library): behaviours a well-behaved server library will not produce.  Every
frame it writes or reads is the product's (wsbench.conformance.frames), its TLS the
conformance peer's TLS by hand (wsbench.conformance.wire.TlsWire).

Prints `WSBENCH-READY port=N` once listening on 127.0.0.1.  A behaviour is an async
function registered for a URL path with @path; those several tests share are here, one
that serves a single test file lives in that file and is loaded from it
(--behaviours FILE: qjs_runs.peer_argv passes the requesting test module when it
registers any).  Here:

  /echo                    echo every data message (same opcode, same bytes)
  /burst?cut=C             the 101 response and several frames (a fragmented message,
                           a ping, a 300-byte text frame, ...) in ONE write, cut at C
                           (none, hdr1, hdr3, payload, frag, fraghdr); the rest 200 ms
                           later; then echo
  /stall?ms=N              read nothing for N ms after the 101 (the client's sends back
                           up in its queue), then echo
  /stall?until=PATH        the same, until the file PATH exists (the client makes it
                           once its sends are queued, whatever the machine's pace)
  /dropclose               echo; answer the client's close frame by dropping TCP
  /noreply                 echo; ignore the client's close frame (no answer, no FIN)
  /huge?len=N&type=T&send=M
                           100 ms after the 101: one frame header declaring N
                           payload bytes (T text or binary), M payload bytes, then
                           wait (no more bytes)
  /grow?size=N&count=C     one binary message in C fragments of N bytes (stops
                           early once the client closes; reads the client's frames
                           between any two fragments)
  /send?size=N&type=T      100 ms after the 101: one message of N bytes (text:
                           ASCII), then echo
  /utf8?case=K             100 ms after the 101: a text message with invalid UTF-8
                           (see UTF8_CASES), then wait without closing
  /badclose?case=K         100 ms after the 101: a close frame no client may accept
                           (see BAD_CLOSES), then wait for the client's close
  /pings?n=N&at=A&msg=M&close=C
                           N pings ("ping-0".."ping-<N-1>"), then M text messages
                           "after", then (C=1) a close frame 1000, all in ONE write:
                           with the 101 (A=101) or 100 ms after it (A=later); with C=0
                           the close follows once the last ping is answered (or after
                           3 s); every pong received is reported as `PONG <hex>`

In the test files: /hs (test_handshake.py), /tls (test_tls.py), /many
(test_semantics.py), /drop (test_hostile.py).

With --tls-cert/--tls-key it speaks TLS (wss://), so that every path behaves the same
over TLS (each write of the peer goes out as the records of that write, at once); the
TLS by hand (``TlsWire.tls``) lets a behaviour do to TLS what no TLS library's transport
would.

Every close frame received is reported on stdout as `CLOSE <code> <reason>` (`CLOSE
none` when it carried no code), a TCP end without one as `EOF` (after `NOTIFY` when the
client's close_notify ended its TLS session), a failed TLS handshake as `TLSFAIL <reason>`.
"""
import asyncio
import importlib.util
import os
import ssl
import sys
from urllib.parse import parse_qs, urlsplit

from wsbench.conformance.frames import (CLOSE, PING, PONG, accept_for, close_payload, read_client_frame, server_frame,
                                        switching_protocols)
from wsbench.conformance.wire import TlsWire

from testkit.raw_ws import request_headers
from testkit.wss import peer_context, peer_options

PATHS = {}  # URL path -> async behaviour(reader, writer, hello, q, headers)


def path(name):
    """Register the decorated coroutine as the behaviour for URL path ``name``; it gets
    the stream (asyncio's, or a TlsWire as both reader and writer), the 101 response to
    send (hello), the query (one value per key) and the request's header fields."""
    def register(behaviour):
        PATHS[name] = behaviour
        return behaviour
    return register


def behaviour_files(module):
    """[module's file] if the module registered a behaviour, else []: what the peer
    must load for that test module (--behaviours)."""
    name = getattr(module, "__name__", None)
    return [module.__file__] if any(b.__module__ == name for b in PATHS.values()) else []


def close_frame(code=1000, reason=b""):
    return server_frame(CLOSE, close_payload(code, reason))


# the frames /burst sends, and where each cut point lies (offset in their bytes)
BIG_TEXT = b"x" * 300
BURST = [
    server_frame(1, b"m0"),
    server_frame(1, b"frag", fin=False), server_frame(0, b"mented"),
    server_frame(2, bytes(range(10))),
    server_frame(9, b"p"),
    server_frame(1, BIG_TEXT),
    server_frame(2, b"ab", fin=False), server_frame(0, b"cd"),
    server_frame(1, b"last"),
]


def burst_cut(cut):
    off = [0]
    for f in BURST:
        off.append(off[-1] + len(f))
    big = off[5]  # start of the 300-byte text frame (4-byte header)
    return {
        "none": big,               # at a message boundary
        "hdr1": big + 1,           # one byte into a header
        "hdr3": big + 3,           # inside the 16-bit extended length
        "payload": big + 100,      # inside a payload
        "frag": off[7],            # after a non-final fragment: message unfinished
        "fraghdr": off[7] + 1,     # ... and one byte into the continuation's header
    }[cut]


UTF8_CASES = {
    # a first fragment (complete frame, FIN clear) with invalid bytes, then a pause
    "frag": [server_frame(1, b"ok\xff\xfe", fin=False)],
    # a valid lead byte ends fragment 1, fragment 2 starts with a non-continuation
    "split": [server_frame(1, b"ok \xe2\x82", fin=False), server_frame(0, b"A", fin=False)],
    # a partial frame: 1,000 bytes declared, 20 sent, the invalid byte among them
    "partial": [server_frame(1, b"abcdefghij\xc0\xafklmnopqr", declared=1000)],
    # a message that ends inside a 3-byte sequence
    "truncated": [server_frame(1, b"abc\xe2\x82")],
    # a surrogate split across fragments (ED | A0 80)
    "surrogate": [server_frame(1, b"ab\xed", fin=False), server_frame(0, b"\xa0\x80", fin=True)],
    # the same, long enough (>= 1 KiB) for strrecv's one-pass validation and decoding:
    # after 2-byte characters, an invalid byte ends the first fragment
    "long-frag": [server_frame(1, "é".encode() * 600 + b"\xff", fin=False)],
    # pure ASCII so far, a sequence cut by the fragment's end, a bad continuation
    "long-split": [server_frame(1, b"a" * 2000 + b"\xe2\x82", fin=False), server_frame(0, b"A", fin=False)],
    # 100,000 bytes declared, 3 KiB sent: 3-byte characters, then an overlong form
    "long-partial": [server_frame(1, "€".encode() * 1000 + b"\xc0\xaf", declared=100000)],
    # the message ends inside a sequence, after 1 KiB of text in an earlier fragment
    "long-truncated": [server_frame(1, "é".encode() * 600, fin=False), server_frame(0, b"abc\xe2\x82", fin=True)],
}


BAD_CLOSES = {
    "one-byte": server_frame(8, b"\x03"),               # a body of 1 byte cannot hold a code
    "code-1015": close_frame(1015),             # 1015 MUST NOT be sent (RFC 6455 7.4.1)
    "code-1005": close_frame(1005),             # nor 1005
    "reason": close_frame(1000, b"\xff\xfe"),   # the reason must be UTF-8
}


async def read_request(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    return head.decode("latin-1").split("\r\n")[0].split(" ")[1], request_headers(head)


def response(headers):
    """The 101 for a request with these header fields."""
    return switching_protocols(accept_for(headers.get("sec-websocket-key", "")))


async def read_frame(reader):
    """One client frame -> (fin, opcode, payload), unmasked; None at end of stream."""
    try:
        f = await read_client_frame(reader, limit=None)
    except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
        return None
    return f.fin, f.opcode, f.payload


def end_of_stream(reader):
    """Report the end of the client's stream: `EOF` (after `NOTIFY` when TLS ended with the
    client's close_notify)."""
    if getattr(reader, "tls_end", None) == "close_notify":
        print("NOTIFY", flush=True)
    print("EOF", flush=True)


def report_close(payload):
    if len(payload) >= 2:
        code = int.from_bytes(payload[:2], "big")
        print("CLOSE %d %s" % (code, payload[2:].decode("utf-8", "replace")), flush=True)
    else:
        print("CLOSE none", flush=True)


async def echo(reader, writer, on_close="reply"):
    """Echo data messages (reassembled) until the client closes."""
    parts, op0 = [], 0
    while True:
        f = await read_frame(reader)
        if f is None:
            end_of_stream(reader)
            return
        fin, op, data = f
        if op == CLOSE:
            report_close(data)
            if on_close == "reply":
                writer.write(server_frame(CLOSE, data[:2]))
                await writer.drain()
            elif on_close == "noreply":
                await asyncio.sleep(3600)
            return
        if op == PING:
            writer.write(server_frame(PONG, data))
            continue
        if op in (1, 2):
            parts, op0 = [], op
        if op in (0, 1, 2):
            parts.append(data)
            if fin:
                writer.write(server_frame(op0, b"".join(parts)))
                await writer.drain()


async def wait_for_close(reader, writer):
    """Read (and drop) frames until the client's close frame (answered) or EOF."""
    while True:
        f = await read_frame(reader)
        if f is None:
            end_of_stream(reader)
            return
        if f[1] == CLOSE:
            report_close(f[2])
            try:
                writer.write(server_frame(CLOSE, f[2][:2]))
                await writer.drain()
            except ConnectionError:
                pass
            return


@path("/burst")
async def burst(reader, writer, hello, q, headers):
    data = b"".join(BURST)
    cut = burst_cut(q.get("cut", "none"))
    writer.write(hello + data[:cut])  # one write: 101 + frames + a cut
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.write(data[cut:])
    await writer.drain()
    await echo(reader, writer)


def echoing(on_close):
    """The 101, then echo, the client's close frame answered as ``on_close`` says."""
    async def behaviour(reader, writer, hello, q, headers):
        writer.write(hello)
        await echo(reader, writer, on_close)
    return behaviour


for _name, _on_close in (("/echo", "reply"), ("/dropclose", "drop"), ("/noreply", "noreply")):
    path(_name)(echoing(_on_close))


@path("/stall")
async def stall(reader, writer, hello, q, headers):
    writer.write(hello)
    await writer.drain()
    if "until" in q:  # the client made this file once its sends were queued
        while not os.path.exists(q["until"]):
            await asyncio.sleep(0.005)
    else:
        await asyncio.sleep(int(q.get("ms", "300")) / 1000)
    await echo(reader, writer)


@path("/huge")
async def huge(reader, writer, hello, q, headers):
    n, m = int(q["len"]), int(q.get("send", "0"))
    op = 1 if q.get("type") == "text" else 2
    writer.write(hello)
    await writer.drain()
    await asyncio.sleep(0.1)  # after the handshake, not in the 101 write
    writer.write(server_frame(op, b"a" * m, declared=n))
    await writer.drain()
    await wait_for_close(reader, writer)


@path("/grow")
async def grow(reader, writer, hello, q, headers):
    size, count = int(q["size"]), int(q["count"])
    writer.write(hello)
    closer = asyncio.ensure_future(wait_for_close(reader, writer))
    chunk = b"g" * size
    for i in range(count):
        if closer.done():
            break
        writer.write(server_frame(2 if i == 0 else 0, chunk, fin=(i == count - 1)))
        try:
            await writer.drain()
        except ConnectionError:
            break
        # a server reads while it writes: drain() returns without yielding while
        # the socket takes every chunk, so without this the closer read the
        # client's close frame only when the socket filled, i.e. never while the
        # client kept pace (a peer slower than the client's drain: the frame sat
        # unread until the client's 5 s close timeout reset the connection)
        await asyncio.sleep(0)
    await closer


@path("/send")
async def send(reader, writer, hello, q, headers):
    size = int(q["size"])
    op = 1 if q.get("type") == "text" else 2
    writer.write(hello)
    await writer.drain()
    await asyncio.sleep(0.1)
    writer.write(server_frame(op, b"s" * size))
    await writer.drain()
    await echo(reader, writer)


async def after_the_101(reader, writer, hello, data):
    """``data`` 100 ms after the 101 (not in its write), then wait for the client's close."""
    writer.write(hello)
    await writer.drain()
    await asyncio.sleep(0.1)
    writer.write(data)
    await writer.drain()
    await wait_for_close(reader, writer)


@path("/utf8")
async def utf8(reader, writer, hello, q, headers):
    await after_the_101(reader, writer, hello, b"".join(UTF8_CASES[q["case"]]))


@path("/badclose")
async def badclose(reader, writer, hello, q, headers):
    await after_the_101(reader, writer, hello, BAD_CLOSES[q["case"]])


@path("/pings")
async def pings(reader, writer, hello, q, headers):
    """pings (and maybe messages and a close) in one write; report the pongs"""
    n = int(q.get("n", "1"))
    last = b"ping-%d" % (n - 1)
    data = b"".join(server_frame(9, b"ping-%d" % i) for i in range(n))
    data += server_frame(1, b"after") * int(q.get("msg", "0"))
    closing = q.get("close") == "1"
    if closing:
        data += close_frame(1000)
    if q.get("at") == "later":
        writer.write(hello)
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.write(data)
    else:
        writer.write(hello + data)  # one write: 101 + frames
    await writer.drain()
    while True:
        try:
            f = await asyncio.wait_for(read_frame(reader), 3)
        except asyncio.TimeoutError:
            print("TIMEOUT", flush=True)
            if closing:
                return
            f = (True, -1, b"")  # no (last) pong within 3 s: close anyway
        if f is None:
            end_of_stream(reader)
            return
        op, payload = f[1], f[2]
        if op == 10:
            print("PONG %s" % payload.hex(), flush=True)
        elif op == 8:
            report_close(payload)
            if not closing:
                writer.write(server_frame(8, payload[:2]))
                await writer.drain()
            return
        if not closing and (op == -1 or (op == 10 and payload == last)):
            closing = True
            writer.write(close_frame(1000))
            await writer.drain()



async def handler(reader, writer):
    if TLS_CONTEXT is not None:
        t = TlsWire(reader, writer, TLS_CONTEXT)
        try:
            await t.handshake()
        except (ssl.SSLError, ConnectionError, asyncio.IncompleteReadError) as exc:
            print("TLSFAIL %s" % getattr(exc, "reason", exc), flush=True)
            writer.close()
            return
        reader = writer = t
    try:
        target, headers = await read_request(reader)
        url = urlsplit(target)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        behaviour = PATHS.get(url.path)
        if behaviour is None:
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        else:
            await behaviour(reader, writer, response(headers), q, headers)
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        print("EOF", flush=True)
    finally:
        try:
            writer.close()
        except ConnectionError:
            pass


TLS_CONTEXT = None


def load_behaviours(files):
    """Run each test file that registers behaviours, with `import peer_raw` meaning this
    running peer (so that its @path lands in PATHS here)."""
    sys.modules["peer_raw"] = sys.modules[__name__]
    for i, file in enumerate(files):
        spec = importlib.util.spec_from_file_location("peer_behaviours_%d" % i, file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


async def main(port):
    server = await asyncio.start_server(handler, "127.0.0.1", port)
    print("WSBENCH-READY port=%d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    args = peer_options(more=lambda p: p.add_argument(
        "--behaviours", action="append", default=[], metavar="FILE",
        help="a test file whose @path behaviours this peer serves too"))
    TLS_CONTEXT = peer_context(args)
    load_behaviours(args.behaviours)
    try:
        asyncio.run(main(args.port))
    except KeyboardInterrupt:
        sys.exit(0)
