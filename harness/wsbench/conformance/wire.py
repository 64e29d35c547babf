"""The peer's byte stream to one client: plain TCP (``Wire``), or TLS done by hand on top
of it (``TlsWire``: ``ssl.SSLObject`` with memory BIOs between the asyncio stream and the
WebSocket bytes), so that the peer sees exactly how a client ends its TLS session and can
end one itself in ways a TLS transport never would: TCP closed without close_notify, a
fatal alert in the middle of a message (tls_cases.py).

``MemoryTls`` is that TLS without any I/O of its own: bytes in, records out. It is the
repository's one TLS done by hand: ``TlsWire`` drives it on asyncio, the test kit's
blocking peers (testkit/memory_tls.py) on a socket, the quickjs-websocket tests' raw peer
through ``TlsWire``.

What a client's end counts as (peer.py's ``tcp_end``, docs/conformance.md): a
close_notify, or TCP closed with or without one before it, is the client closing the
connection ("client-eof", as a FIN is over plain TCP); a reset, or a TLS error (an alert
from the client, a record the peer cannot read), is the client dropping it abortively
("client-reset"). ``tls_end`` says which TLS-level end it was.
"""

from __future__ import annotations

import asyncio
import ssl

READ_SIZE = 65536
HEAD_LIMIT = 16384  # readuntil: an upgrade request longer than this is not one
# An application-data record (TLS 1.2 and 1.3 alike) of 32 bytes no traffic key decrypts.
CORRUPT_RECORD = bytes((23, 3, 3, 0, 32)) + bytes(range(32))
FAULTS = ("truncate", "alert", "close-notify")


def ssl_reason(exc: BaseException) -> str:
    """An SSL error in words: ``the client's alert: unknown ca``, ``TLS error: ...``."""
    if isinstance(exc, ssl.SSLError):
        reason = exc.reason or type(exc).__name__
        if "_ALERT_" in reason:
            return "the client's alert: " + reason.split("_ALERT_", 1)[1].lower().replace("_", " ")
        return "TLS error: " + reason.lower().replace("_", " ")
    if isinstance(exc, (asyncio.IncompleteReadError, EOFError)):
        return "the client closed TCP"
    if isinstance(exc, ConnectionResetError):
        return "the client reset TCP"
    if isinstance(exc, asyncio.TimeoutError):
        return "no handshake within the time allowed"
    return f"{type(exc).__name__}: {exc}"


class MemoryTls:
    """The server side of TLS on two memory BIOs, no I/O: ``feed`` it what the client
    sent, send the client what ``take`` returns (what OpenSSL wrote: handshake messages,
    tickets, records, alerts). Records of a write come back from ``encrypt`` unsent, to
    be cut or held; ``close_notify`` and ``corrupt`` end the session as the caller says."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_side=True)

    def feed(self, raw: bytes) -> None:
        self._in.write(raw)

    def take(self) -> bytes:
        return self._out.read()

    def handshake(self) -> bool:
        """One step of the handshake: True once it is done, False while it needs more of
        the client's bytes; raises ssl.SSLError (the client's alert, ...)."""
        try:
            self._tls.do_handshake()
        except ssl.SSLWantReadError:
            return False
        return True

    def decrypt(self, n: int = READ_SIZE) -> bytes | None:
        """Up to ``n`` bytes of the client's plain text; b"" once its close_notify came,
        None while a record is incomplete; raises ssl.SSLError (an alert, a record that
        does not decrypt)."""
        try:
            return self._tls.read(n)
        except ssl.SSLWantReadError:
            return None
        except ssl.SSLZeroReturnError:
            return b""

    def encrypt(self, data: bytes) -> bytes:
        """The records of ``data`` (with whatever OpenSSL had to say before them), unsent."""
        view = memoryview(data)
        while view:
            view = view[self._tls.write(view):]
        return self.take()

    def close_notify(self) -> bytes:
        """Our close_notify, unsent (the client's is not awaited)."""
        try:
            self._tls.unwrap()
        except ssl.SSLError:  # SSLWantReadError: ours is written; the client's is not awaited
            pass
        return self.take()

    def corrupt(self) -> tuple[bytes, str]:
        """Give our TLS stack a record no key decrypts, as if the client had sent it:
        OpenSSL fails the session and writes its own encrypted fatal alert
        (bad_record_mac). Returns those bytes, unsent, and OpenSSL's reason in words."""
        self.feed(CORRUPT_RECORD)
        try:
            self._tls.read(READ_SIZE)
        except ssl.SSLError as exc:
            reason = (exc.reason or type(exc).__name__).lower().replace("_", " ")
        else:
            raise RuntimeError("OpenSSL decrypted a corrupt record")
        return self.take(), reason


class Wire:
    """Plain TCP: the asyncio stream as it is."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.tls_end: str | None = None  # TLS only: how the client ended the session

    async def readexactly(self, n: int) -> bytes:
        return await self.reader.readexactly(n)

    async def readuntil(self, separator: bytes) -> bytes:
        return await self.reader.readuntil(separator)

    async def read(self, n: int) -> bytes:
        return await self.reader.read(n)

    def write(self, data: bytes) -> None:
        self.writer.write(data)

    async def drain(self) -> None:
        await self.writer.drain()

    def closing(self) -> bool:
        return self.writer.transport.is_closing()

    def close(self) -> None:
        """An orderly end (TLS: close_notify first), then TCP closed."""
        self.writer.transport.close()

    def abort(self) -> None:
        self.writer.transport.abort()

    async def fault(self, kind: str) -> str:
        raise ValueError(f"the fault '{kind}' needs a TLS connection")


class TlsWire(Wire):
    """TLS as a server, by hand (``MemoryTls``, in ``tls``): what the client sends is fed
    to it, what OpenSSL writes goes to the client as soon as it is there."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 context: ssl.SSLContext) -> None:
        super().__init__(reader, writer)
        self.tls = MemoryTls(context)
        self._plain = bytearray()  # decrypted, not yet read
        self._eof = False
        self._over = False  # after a fault: the session is over; the client's bytes are only counted
        self.after_fault = 0  # bytes the client sent after the fault (its close_notify, an alert, ...)

    def _flush(self) -> None:
        data = self.tls.take()
        if data:
            self.writer.write(data)

    async def _raw(self) -> bytes:
        self._flush()  # what OpenSSL has to say first (handshake messages, tickets)
        return await self.reader.read(READ_SIZE)

    async def handshake(self) -> None:
        """The server side of the handshake; raises ssl.SSLError (the client's alert, ...)
        or ConnectionError / asyncio.IncompleteReadError (TCP ended under it)."""
        while True:
            try:
                if self.tls.handshake():
                    break
            except ssl.SSLError:
                self._flush()  # our alert, if OpenSSL wrote one
                raise
            raw = await self._raw()
            if not raw:
                raise asyncio.IncompleteReadError(b"", None)
            self.tls.feed(raw)
        self._flush()

    async def _more(self) -> bool:
        """Decrypt more of the client's bytes into ``_plain``; False at its end."""
        while not self._eof:
            if self._over:
                raw = await self.reader.read(READ_SIZE)
                self.after_fault += len(raw)
                self._eof = not raw
                continue
            try:
                data = self.tls.decrypt()
            except ssl.SSLError as exc:
                self._flush()
                self.tls_end = ssl_reason(exc)
                raise
            if data is None:
                raw = await self._raw()
                if self._over:  # a fault came while we waited: the session is gone
                    self.after_fault += len(raw)
                    self._eof = not raw
                elif not raw:
                    self.tls_end = "TCP closed without close_notify"
                    self._eof = True
                else:
                    self.tls.feed(raw)
                continue
            if not data:  # the client's close_notify
                self.tls_end = "close_notify"
                self._flush()
                self._eof = True
                continue
            self._plain += data
            return True
        return False

    async def readexactly(self, n: int) -> bytes:
        while len(self._plain) < n:
            if not await self._more():
                partial = bytes(self._plain)
                self._plain.clear()
                raise asyncio.IncompleteReadError(partial, n)
        return self._take(n)

    async def readuntil(self, separator: bytes) -> bytes:
        while True:
            at = self._plain.find(separator)
            if at >= 0:
                return self._take(at + len(separator))
            if len(self._plain) > HEAD_LIMIT:
                raise asyncio.LimitOverrunError("no separator within the limit", len(self._plain))
            if not await self._more():
                partial = bytes(self._plain)
                self._plain.clear()
                raise asyncio.IncompleteReadError(partial, None)

    async def read(self, n: int) -> bytes:
        if not self._plain and not await self._more():
            return b""
        return self._take(n)

    def _take(self, n: int) -> bytes:
        out = bytes(self._plain[:n])
        del self._plain[:n]
        return out

    def write(self, data: bytes) -> None:
        if self._over:
            return
        self.writer.write(self.tls.encrypt(data))

    def close(self) -> None:
        if not self._over:
            self._close_notify()
        self.writer.transport.close()

    def _close_notify(self) -> None:
        self.writer.write(self.tls.close_notify())

    def session_over(self) -> None:
        """From here on the session is over (the caller ended it, ``tls`` by hand):
        nothing more is written or decrypted; the client's bytes are only counted
        (``after_fault``)."""
        self._over = True

    async def fault(self, kind: str) -> str:
        """End the session as ``kind`` says (FAULTS) in the middle of the stream, then
        close the peer's side of TCP (the client's side stays open: how it ends it is
        observed); returns what was done, in words."""
        if kind == "alert":
            done = self._alert()
        elif kind == "close-notify":
            self._close_notify()
            done = "close_notify, then TCP closed"
        elif kind == "truncate":
            done = "TCP closed without close_notify"
        else:
            raise ValueError(f"unknown TLS fault '{kind}'")
        self.session_over()
        if self.writer.can_write_eof():
            self.writer.write_eof()
        await self.writer.drain()
        return done

    def _alert(self) -> str:
        """OpenSSL's own fatal alert (``MemoryTls.corrupt``): exactly those bytes go to
        the client."""
        self._flush()
        alert, reason = self.tls.corrupt()
        self.writer.write(alert)
        return f"a fatal alert from OpenSSL ({len(alert)} bytes, after '{reason}'), then TCP closed"
