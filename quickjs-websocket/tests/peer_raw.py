"""Raw-socket WebSocket peer for the quickjs-websocket tests (asyncio streams, no
WebSocket library): behaviours a well-behaved server library will not produce.

Prints `WSBENCH-READY port=N` once listening on 127.0.0.1.  Behaviour by path:

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
  /drop                    send text "bye", then drop TCP without a close frame
  /huge?len=N&type=T&send=M
                           100 ms after the 101: one frame header declaring N
                           payload bytes (T text or binary), M payload bytes, then
                           wait (no more bytes)
  /grow?size=N&count=C     one binary message in C fragments of N bytes (stops
                           early once the client closes; reads the client's frames
                           between any two fragments)
  /send?size=N&type=T      100 ms after the 101: one message of N bytes (text:
                           ASCII), then echo
  /many?n=N                once the client's first message came: N text messages
                           "m0".."m<N-1>" in one write, then echo
  /utf8?case=K             100 ms after the 101: a text message with invalid UTF-8
                           (see UTF8_CASES), then wait without closing
  /badclose?case=K         100 ms after the 101: a close frame no client may accept
                           (see BAD_CLOSES), then wait for the client's close
  /hs?case=K[&p=P]         the opening handshake's response, as HS_CASES makes it for
                           case K (P: the Sec-WebSocket-Protocol it names); if it is a
                           101 the client must take, a text message "hi" follows in the
                           same write, then echo; otherwise the connection stays open
                           until the client drops it
  /pings?n=N&at=A&msg=M&close=C
                           N pings ("ping-0".."ping-<N-1>"), then M text messages
                           "after", then (C=1) a close frame 1000, all in ONE write:
                           with the 101 (A=101) or 100 ms after it (A=later); with C=0
                           the close follows once the last ping is answered (or after
                           3 s); every pong received is reported as `PONG <hex>`

With --tls-cert/--tls-key it speaks TLS (wss://): the server side of TLS done by hand
(ssl.SSLObject between memory BIOs, TlsStream below), so that every path above behaves
the same over TLS (each write of the peer goes out as the records of that write, at
once) and the paths below can do to TLS what no TLS library's transport would:

  /tls?case=K              (TLS only) 100 ms after the 101: three messages (text,
                           3,000 bytes binary, text with 2-, 3- and 4-byte characters),
                           then as TLS_CASES says: byte by byte, close_notify before or
                           after a close frame, a TCP reset or a truncation in the middle
                           of a fourth message's record, a fatal alert in the middle of
                           the fourth message

Every close frame received is reported on stdout as `CLOSE <code> <reason>` (`CLOSE
none` when it carried no code), a TCP end without one as `EOF`; with TLS the client's
close_notify as `NOTIFY` when it comes, a failed TLS handshake as `TLSFAIL <reason>`.
"""
import argparse
import asyncio
import base64
import hashlib
import os
import socket
import ssl
import struct
import sys
from urllib.parse import parse_qs, urlsplit

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(op, payload=b"", fin=True, length=None):
    """An unmasked server frame; `length` overrides the declared payload length."""
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | op
    if n < 126:
        head = struct.pack("!BB", b0, n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, 126, n)
    else:
        head = struct.pack("!BBQ", b0, 127, n)
    return head + payload


def close_frame(code=1000, reason=b""):
    return frame(8, struct.pack("!H", code) + reason)


# the frames /burst sends, and where each cut point lies (offset in their bytes)
BIG_TEXT = b"x" * 300
BURST = [
    frame(1, b"m0"),
    frame(1, b"frag", fin=False), frame(0, b"mented"),
    frame(2, bytes(range(10))),
    frame(9, b"p"),
    frame(1, BIG_TEXT),
    frame(2, b"ab", fin=False), frame(0, b"cd"),
    frame(1, b"last"),
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
    "frag": [frame(1, b"ok\xff\xfe", fin=False)],
    # a valid lead byte ends fragment 1, fragment 2 starts with a non-continuation
    "split": [frame(1, b"ok \xe2\x82", fin=False), frame(0, b"A", fin=False)],
    # a partial frame: 1,000 bytes declared, 20 sent, the invalid byte among them
    "partial": [frame(1, b"abcdefghij\xc0\xafklmnopqr", length=1000)],
    # a message that ends inside a 3-byte sequence
    "truncated": [frame(1, b"abc\xe2\x82")],
    # a surrogate split across fragments (ED | A0 80)
    "surrogate": [frame(1, b"ab\xed", fin=False), frame(0, b"\xa0\x80", fin=True)],
    # the same, long enough (>= 1 KiB) for strrecv's one-pass validation and decoding:
    # after 2-byte characters, an invalid byte ends the first fragment
    "long-frag": [frame(1, "é".encode() * 600 + b"\xff", fin=False)],
    # pure ASCII so far, a sequence cut by the fragment's end, a bad continuation
    "long-split": [frame(1, b"a" * 2000 + b"\xe2\x82", fin=False), frame(0, b"A", fin=False)],
    # 100,000 bytes declared, 3 KiB sent: 3-byte characters, then an overlong form
    "long-partial": [frame(1, "€".encode() * 1000 + b"\xc0\xaf", length=100000)],
    # the message ends inside a sequence, after 1 KiB of text in an earlier fragment
    "long-truncated": [frame(1, "é".encode() * 600, fin=False), frame(0, b"abc\xe2\x82", fin=True)],
}


BAD_CLOSES = {
    "one-byte": frame(8, b"\x03"),               # a body of 1 byte cannot hold a code
    "code-1015": close_frame(1015),             # 1015 MUST NOT be sent (RFC 6455 7.4.1)
    "code-1005": close_frame(1005),             # nor 1005
    "reason": close_frame(1000, b"\xff\xfe"),   # the reason must be UTF-8
}


async def read_request(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return path, headers


def response(headers):
    key = headers.get("sec-websocket-key", "").encode()
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    return (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")


def hs_response(headers, case, proto):
    """The response to a client's upgrade request for /hs?case=...: (bytes, valid?)."""
    key = headers.get("sec-websocket-key", "").encode()
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    status = b"HTTP/1.1 101 Switching Protocols"
    upgrade, connection = b"Upgrade: websocket", b"Connection: Upgrade"
    acc = b"Sec-WebSocket-Accept: " + accept
    extra = [b"Sec-WebSocket-Protocol: " + proto.encode()] if proto is not None else []
    valid = True
    if case == "tokens":  # any case, blanks, token lists: still a valid 101
        upgrade, connection = b"upgrade: \t WebSocket ", b"CONNECTION: keep-alive,Upgrade"
        acc = b"sec-websocket-accept:" + accept
    elif case == "status200":
        status, valid = b"HTTP/1.1 200 OK", False
    elif case == "badaccept":
        acc = b"Sec-WebSocket-Accept: " + base64.b64encode(hashlib.sha1(key + b"x" + GUID).digest())
        valid = False
    elif case == "noaccept":
        acc, valid = b"X-Nothing: here", False
    elif case == "noupgrade":
        upgrade, valid = b"Upgrade: h2c", False
    elif case == "noconnection":
        connection, valid = b"Connection: keep-alive", False
    elif case == "extension":
        extra, valid = extra + [b"Sec-WebSocket-Extensions: permessage-deflate"], False
    elif case == "long":  # a head longer than any client keeps (no blank line in 12 KiB)
        extra, valid = extra + [b"X-Filler: " + b"f" * 100] * 120, False
    head = b"\r\n".join([status, upgrade, connection, acc] + extra) + b"\r\n\r\n"
    return head, valid


async def read_frame(reader):
    """One client frame -> (fin, opcode, payload); None at end of stream."""
    try:
        b0, b1 = await reader.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await reader.readexactly(8))
        mask = await reader.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
        data = await reader.readexactly(n)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return bool(b0 & 0x80), b0 & 0x0F, unmask(data, mask)


def unmask(data, mask):
    """The payload XORed with the repeated mask, as one integer XOR (a loop over the bytes
    in Python took 0.23 s per MiB under load, this under 10 ms: a peer that slow let the
    client's housekeeping tick find its drain idle)."""
    n = len(data)
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
    return (int.from_bytes(data, "big") ^ key).to_bytes(n, "big")


def report_close(payload):
    if len(payload) >= 2:
        code = struct.unpack("!H", payload[:2])[0]
        print("CLOSE %d %s" % (code, payload[2:].decode("utf-8", "replace")), flush=True)
    else:
        print("CLOSE none", flush=True)


async def echo(reader, writer, on_close="reply"):
    """Echo data messages (reassembled) until the client closes."""
    parts, op0 = [], 0
    while True:
        f = await read_frame(reader)
        if f is None:
            print("EOF", flush=True)
            return
        fin, op, data = f
        if op == 8:
            report_close(data)
            if on_close == "reply":
                writer.write(frame(8, data[:2]))
                await writer.drain()
            elif on_close == "noreply":
                await asyncio.sleep(3600)
            return
        if op == 9:
            writer.write(frame(10, data))
            continue
        if op in (1, 2):
            parts, op0 = [], op
        if op in (0, 1, 2):
            parts.append(data)
            if fin:
                writer.write(frame(op0, b"".join(parts)))
                await writer.drain()


async def wait_for_close(reader, writer):
    """Read (and drop) frames until the client's close frame (answered) or EOF."""
    while True:
        f = await read_frame(reader)
        if f is None:
            print("EOF", flush=True)
            return
        if f[1] == 8:
            report_close(f[2])
            try:
                writer.write(frame(8, f[2][:2]))
                await writer.drain()
            except ConnectionError:
                pass
            return


async def pings(reader, writer, hello, q):
    """/pings: pings (and maybe messages and a close) in one write; report the pongs."""
    n = int(q.get("n", "1"))
    last = b"ping-%d" % (n - 1)
    data = b"".join(frame(9, b"ping-%d" % i) for i in range(n))
    data += frame(1, b"after") * int(q.get("msg", "0"))
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
            print("EOF", flush=True)
            return
        op, payload = f[1], f[2]
        if op == 10:
            print("PONG %s" % payload.hex(), flush=True)
        elif op == 8:
            report_close(payload)
            if not closing:
                writer.write(frame(8, payload[:2]))
                await writer.drain()
            return
        if not closing and (op == -1 or (op == 10 and payload == last)):
            closing = True
            writer.write(close_frame(1000))
            await writer.drain()


# An application-data record (TLS 1.2 and 1.3 alike) of 32 bytes no traffic key decrypts
# (harness/wsbench/conformance/wire.py: how the fatal alert of /tls?case=alert is made).
CORRUPT_RECORD = bytes((23, 3, 3, 0, 32)) + bytes(range(32))
TLS_MESSAGES = [frame(1, b"one"), frame(2, (bytes(range(256)) * 12)[:3000]),
                frame(1, "é€😀 and ascii".encode())]
TLS_FOURTH = frame(1, b"never delivered: " + b"4" * 3000)


class TlsStream:
    """TLS as a server by hand, with the asyncio stream's reader and writer interface:
    what the client sends goes into _in, what OpenSSL writes into _out goes to the
    client at once."""

    def __init__(self, reader, writer, context):
        self.reader, self.writer = reader, writer
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self._in, self._out, server_side=True)
        self.plain = bytearray()
        self.eof = False
        self.over = False  # after a fault of ours: nothing more is written or decrypted

    def flush(self):
        data = self._out.read()
        if data and not self.writer.transport.is_closing():
            self.writer.write(data)

    async def handshake(self):
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                raw = await self.reader.read(65536)
                if not raw:
                    raise ConnectionResetError("TCP closed during the TLS handshake")
                self._in.write(raw)
        self.flush()

    async def _more(self):
        """Decrypt more of the client's bytes; False at its end."""
        while not self.eof:
            try:
                data = self.tls.read(65536)
            except ssl.SSLWantReadError:
                self.flush()
                raw = await self.reader.read(65536)
                if not raw:
                    self.eof = True
                else:
                    self._in.write(raw)
                continue
            except ssl.SSLZeroReturnError:
                data = b""
            except ssl.SSLError as exc:
                raise ConnectionResetError("TLS: %s" % exc.reason) from None
            if not data:
                print("NOTIFY", flush=True)
                self.eof = True
                continue
            self.plain += data
            return True
        return False

    def _take(self, n):
        out = bytes(self.plain[:n])
        del self.plain[:n]
        return out

    async def readexactly(self, n):
        while len(self.plain) < n:
            if not await self._more():
                raise asyncio.IncompleteReadError(bytes(self.plain), n)
        return self._take(n)

    async def readuntil(self, sep):
        while sep not in self.plain:
            if not await self._more():
                raise asyncio.IncompleteReadError(bytes(self.plain), None)
        return self._take(self.plain.index(sep) + len(sep))

    async def read(self, n=-1):
        if not self.plain and not await self._more():
            return b""
        return self._take(len(self.plain) if n < 0 else n)

    def records(self, data):
        """The records of one write of ours, not sent."""
        view = memoryview(data)
        while view:
            view = view[self.tls.write(view):]
        return self._out.read()

    def write(self, data):
        if not self.over:
            self.writer.write(self.records(data))

    async def drain(self):
        await self.writer.drain()

    def close_notify(self):
        try:
            self.tls.unwrap()
        except ssl.SSLError:  # SSLWantReadError: ours is written, the client's not awaited
            pass
        self.flush()

    def close(self):
        if not self.over and not self.writer.transport.is_closing():
            self.close_notify()
        self.writer.close()

    def alert(self):
        """Our TLS stack's own fatal alert (bad_record_mac), from a record no key
        decrypts handed to it as if from the client."""
        self.flush()
        self._in.write(CORRUPT_RECORD)
        try:
            self.tls.read(65536)
        except ssl.SSLError:
            pass
        self.over = True
        return self._out.read()


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


async def tls_case(t, writer, hello, case):
    if case not in TLS_CASES:
        raise ValueError(case)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if case == "bytes":
        data = b"".join(t.records(m) for m in [hello] + TLS_MESSAGES + [close_frame(1000)])
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
        writer.write(t.records(close_frame(1000)))
        t.close_notify()
        await writer.drain()
        await wait_for_close(t, t)
        return
    if case == "notify-before":
        t.close_notify()
        t.over = True
        await writer.drain()
        await report_end(t)
        return
    if case == "alert":  # whole records (an alert inside a record is just bytes of it)
        writer.write(t.records(TLS_FOURTH[:len(TLS_FOURTH) // 2]))
    else:
        half = t.records(TLS_FOURTH)
        writer.write(half[:len(half) // 2])
    await writer.drain()
    await asyncio.sleep(0.1)
    t.over = True
    if case == "reset":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return
    if case == "truncate":
        writer.write_eof()
        await report_end(t)
        return
    writer.write(t.alert())
    await writer.drain()
    await report_end(t)


async def report_end(t):
    """After a fault of ours: wait for the client's end of TCP (`EOF`), reading and
    counting what it still sends (it may not be decrypted any more)."""
    while await t.reader.read(65536):
        pass
    print("EOF", flush=True)


async def handler(reader, writer):
    if TLS_CONTEXT is not None:
        t = TlsStream(reader, writer, TLS_CONTEXT)
        try:
            await t.handshake()
        except (ssl.SSLError, ConnectionError) as exc:
            print("TLSFAIL %s" % getattr(exc, "reason", exc), flush=True)
            writer.close()
            return
        reader = writer = t
    try:
        target, headers = await read_request(reader)
        url = urlsplit(target)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = url.path
        hello = response(headers)
        if path == "/burst":
            data = b"".join(BURST)
            cut = burst_cut(q.get("cut", "none"))
            writer.write(hello + data[:cut])  # one write: 101 + frames + a cut
            await writer.drain()
            await asyncio.sleep(0.2)
            writer.write(data[cut:])
            await writer.drain()
            await echo(reader, writer)
        elif path == "/hs":
            head, valid = hs_response(headers, q.get("case", ""), q.get("p"))
            if q.get("case") == "eof":  # half a head, then TCP closes
                writer.write(hello[:20])
                await writer.drain()
                return
            if q.get("case") == "pieces":  # a valid head, 7 bytes per write
                for i in range(0, len(hello), 7):
                    writer.write(hello[i:i + 7])
                    await writer.drain()
                    await asyncio.sleep(0.005)
                head = b""
            writer.write(head + (frame(1, b"hi") if valid else b""))
            await writer.drain()
            if valid:
                await echo(reader, writer)
            else:
                await reader.read()  # until the client drops the connection
                print("EOF", flush=True)
        elif path in ("/echo", "/dropclose", "/noreply"):
            writer.write(hello)
            await echo(reader, writer, {"/echo": "reply", "/dropclose": "drop",
                                        "/noreply": "noreply"}[path])
        elif path == "/stall":
            writer.write(hello)
            await writer.drain()
            if "until" in q:  # the client made this file once its sends were queued
                while not os.path.exists(q["until"]):
                    await asyncio.sleep(0.005)
            else:
                await asyncio.sleep(int(q.get("ms", "300")) / 1000)
            await echo(reader, writer)
        elif path == "/drop":
            writer.write(hello + frame(1, b"bye"))
            await writer.drain()
            await asyncio.sleep(0.1)
        elif path == "/huge":
            n, m = int(q["len"]), int(q.get("send", "0"))
            op = 1 if q.get("type") == "text" else 2
            writer.write(hello)
            await writer.drain()
            await asyncio.sleep(0.1)  # after the handshake, not in the 101 write
            writer.write(frame(op, b"a" * m, length=n))
            await writer.drain()
            await wait_for_close(reader, writer)
        elif path == "/grow":
            size, count = int(q["size"]), int(q["count"])
            writer.write(hello)
            closer = asyncio.ensure_future(wait_for_close(reader, writer))
            chunk = b"g" * size
            for i in range(count):
                if closer.done():
                    break
                writer.write(frame(2 if i == 0 else 0, chunk, fin=(i == count - 1)))
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
        elif path == "/send":
            size = int(q["size"])
            op = 1 if q.get("type") == "text" else 2
            writer.write(hello)
            await writer.drain()
            await asyncio.sleep(0.1)
            writer.write(frame(op, b"s" * size))
            await writer.drain()
            await echo(reader, writer)
        elif path == "/many":
            writer.write(hello)
            await read_frame(reader)
            writer.write(b"".join(frame(1, b"m%d" % i) for i in range(int(q["n"]))))
            await writer.drain()
            await echo(reader, writer)
        elif path == "/pings":
            await pings(reader, writer, hello, q)
        elif path == "/tls" and TLS_CONTEXT is not None:
            await tls_case(reader, writer.writer, hello, q.get("case"))
        elif path in ("/utf8", "/badclose"):
            writer.write(hello)
            await writer.drain()
            await asyncio.sleep(0.1)  # after the handshake, not in the 101 write
            writer.write(b"".join(UTF8_CASES[q["case"]]) if path == "/utf8" else BAD_CLOSES[q["case"]])
            await writer.drain()
            await wait_for_close(reader, writer)
        else:
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    except (ConnectionError, asyncio.IncompleteReadError):
        print("EOF", flush=True)
    finally:
        try:
            writer.close()
        except ConnectionError:
            pass


TLS_CONTEXT = None


async def main(port):
    server = await asyncio.start_server(handler, "127.0.0.1", port)
    print("WSBENCH-READY port=%d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    args = ap.parse_args()
    if args.tls_cert:
        TLS_CONTEXT = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        TLS_CONTEXT.minimum_version = ssl.TLSVersion.TLSv1_2
        TLS_CONTEXT.load_cert_chain(args.tls_cert, args.tls_key)
    try:
        asyncio.run(main(args.port))
    except KeyboardInterrupt:
        sys.exit(0)
