"""The peer's byte stream to one client: plain TCP (``Wire``), or TLS done by hand on top
of it (``TlsWire``: ``ssl.SSLObject`` with memory BIOs between the asyncio stream and the
WebSocket bytes), so that the peer sees exactly how a client ends its TLS session and can
end one itself in ways a TLS transport never would: TCP closed without close_notify, a
fatal alert in the middle of a message (tls_cases.py).

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
    """TLS as a server, by hand: what the client sends goes into ``_in``, what OpenSSL
    writes into ``_out`` goes to the client as soon as it is there."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 context: ssl.SSLContext) -> None:
        super().__init__(reader, writer)
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_side=True)
        self._plain = bytearray()  # decrypted, not yet read
        self._eof = False
        self._over = False  # after a fault: the session is over; the client's bytes are only counted
        self.after_fault = 0  # bytes the client sent after the fault (its close_notify, an alert, ...)

    def _flush(self) -> None:
        data = self._out.read()
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
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                raw = await self._raw()
                if not raw:
                    raise asyncio.IncompleteReadError(b"", None)
                self._in.write(raw)
            except ssl.SSLError:
                self._flush()  # our alert, if OpenSSL wrote one
                raise
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
                data = self._tls.read(READ_SIZE)
            except ssl.SSLWantReadError:
                raw = await self._raw()
                if self._over:  # a fault came while we waited: the session is gone
                    self.after_fault += len(raw)
                    self._eof = not raw
                elif not raw:
                    self.tls_end = "TCP closed without close_notify"
                    self._eof = True
                else:
                    self._in.write(raw)
                continue
            except ssl.SSLZeroReturnError:
                data = b""
            except ssl.SSLError as exc:
                self._flush()
                self.tls_end = ssl_reason(exc)
                raise
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
        view = memoryview(data)
        while view:
            view = view[self._tls.write(view):]
        self._flush()

    def close(self) -> None:
        if not self._over:
            self._close_notify()
        self.writer.transport.close()

    def _close_notify(self) -> None:
        try:
            self._tls.unwrap()
        except ssl.SSLError:  # SSLWantReadError: ours is written; the client's is not awaited
            pass
        self._flush()

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
        self._over = True
        if self.writer.can_write_eof():
            self.writer.write_eof()
        await self.writer.drain()
        return done

    def _alert(self) -> str:
        """Give our TLS stack a record no key decrypts, as if the client had sent it:
        OpenSSL fails the session and writes its own encrypted fatal alert
        (bad_record_mac) into the outgoing BIO; exactly those bytes go to the client."""
        self._flush()
        self._in.write(CORRUPT_RECORD)
        try:
            self._tls.read(READ_SIZE)
        except ssl.SSLError as exc:
            reason = (exc.reason or type(exc).__name__).lower().replace("_", " ")
        else:
            raise RuntimeError("OpenSSL decrypted a corrupt record")
        alert = self._out.read()
        self.writer.write(alert)
        return f"a fatal alert from OpenSSL ({len(alert)} bytes, after '{reason}'), then TCP closed"
