"""lws-echo-deflate (servers/lws/README.md, "lws-echo-deflate"): lws-echo's sources built
against the libwebsockets with extensions (build/prefix-pmd). With --deflate it accepts a
raw client's permessage-deflate offer with lws' own extension, prints each connection's
WSBENCH-DEFLATE line with the header lws answered, and echoes text and binary messages
compressed (RSV1 on the first frame) that inflate to what was sent, with and without
context takeover; it ends a decompression bomb with close 1009 at the contract's 64 MiB,
at once and with its memory bounded; it refuses the RFC 7692 knobs (lws has no server
setting for them); the plain lws-echo refuses --deflate. The lws 4.3.5 behaviours the
README lists are pinned here too, so that the list stays true."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
import zlib
from dataclasses import dataclass

import pytest

from testkit.background import Background
from testkit.deflate_wire import FrameReader
from testkit.raw_ws import CLIENT_MASK, SAMPLE_KEY, read_head, request_headers
from testkit.wss import cert_args, client_context
from wsbench.conformance.frames import BINARY, CLOSE, CONT, TEXT, ClientFrame, server_frame
from wsbench.deflate import DEFLATE_LINE
from wsbench.paths import ROOT

LWS_ECHO = ROOT / "build" / "bin" / "lws-echo"
LWS_ECHO_DEFLATE = ROOT / "build" / "bin" / "lws-echo-deflate"
OFFER = "permessage-deflate; client_max_window_bits"  # what ws, undici and Bun offer
TAIL = b"\x00\x00\xff\xff"
RSV1 = 4
LIMIT = 64 << 20  # the contract's largest message (servers/README.md, item 6)

pytestmark = pytest.mark.skipif(not (LWS_ECHO_DEFLATE.exists() and LWS_ECHO.exists()),
                                reason="build/bin/lws-echo-deflate missing (make setup)")


def deflate_server(*args: str, **kw: object) -> Background:
    return Background([str(LWS_ECHO_DEFLATE), "--port", "0", "--deflate", *args], **kw)  # type: ignore[arg-type]


@dataclass
class Message:
    opcode: int
    compressed: bool  # RSV1 on its first frame
    frames: list[ClientFrame]
    payload: bytes  # inflated when compressed


class Client:
    """A raw client of one connection that offers ``offer`` and keeps its own compressor
    and the inflater of the server's messages, each reset after every message when the
    agreed parameters say so (RFC 7692 7.1.1)."""

    def __init__(self, port: int, offer: str | None = OFFER, path: str = "/", tls: bool = False) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if tls:
            self.sock = client_context().wrap_socket(self.sock, server_hostname="localhost")
        ext = f"Sec-WebSocket-Extensions: {offer}\r\n" if offer else ""
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {SAMPLE_KEY}\r\n"
                           f"Sec-WebSocket-Version: 13\r\n{ext}\r\n").encode())
        head, rest = read_head(self.sock.recv).split(b"\r\n\r\n", 1)
        self.status = head.split(b"\r\n", 1)[0].decode()
        self.headers = request_headers(head)
        self.frames = FrameReader(self.sock, rest)
        agreed = self.headers.get("sec-websocket-extensions", "")
        self.client_reset = "client_no_context_takeover" in agreed
        self.server_reset = "server_no_context_takeover" in agreed
        self.compressor = zlib.compressobj(wbits=-15)
        self.inflater = zlib.decompressobj(wbits=-15)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def compress(self, data: bytes) -> bytes:
        if self.client_reset:
            self.compressor = zlib.compressobj(wbits=-15)
        out = self.compressor.compress(data) + self.compressor.flush(zlib.Z_SYNC_FLUSH)
        assert out.endswith(TAIL)
        return out[:-4]

    def send(self, opcode: int, data: bytes, *, compressed: bool = True, pieces: int = 1) -> None:
        """One message, compressed or not, in ``pieces`` frames (RSV1 on the first only)."""
        body = self.compress(data) if compressed else data
        step = -(-len(body) // pieces) if body else 0
        out = b""
        for i in range(pieces):
            part = body[i * step:(i + 1) * step]
            out += server_frame(opcode if i == 0 else CONT, part, fin=i == pieces - 1,
                                rsv=RSV1 if compressed and i == 0 else 0, mask=CLIENT_MASK)
        self.sock.sendall(out)

    def receive(self) -> Message:
        """The server's next data message, its frames joined (and inflated)."""
        frames = [self.frames.next()]
        assert frames[0].opcode in (TEXT, BINARY), frames[0]
        while not frames[-1].fin:
            frames.append(self.frames.next())
            assert frames[-1].opcode == CONT and frames[-1].rsv == 0, frames[-1]
        body = b"".join(f.payload for f in frames)
        compressed = bool(frames[0].rsv & RSV1)
        if compressed:
            if self.server_reset:
                self.inflater = zlib.decompressobj(wbits=-15)
            body = self.inflater.decompress(body + TAIL)
        return Message(frames[0].opcode, compressed, frames, body)

    def echo(self, opcode: int, data: bytes, **kw: object) -> Message:
        self.send(opcode, data, **kw)  # type: ignore[arg-type]
        return self.receive()

    def close_frame(self, wait_s: float) -> tuple[ClientFrame | None, bool, float]:
        """The server's close frame (None if TCP ended without one), whether TCP ended
        within ``wait_s`` of the start, and when the close came (s)."""
        t0 = time.monotonic()
        self.sock.settimeout(wait_s)
        close = None
        try:
            while True:
                f = self.frames.next()
                if f.opcode == CLOSE:
                    close = f
                    break
        except (ConnectionError, OSError):
            return close, True, time.monotonic() - t0
        at = time.monotonic() - t0
        try:
            while self.sock.recv(65536):
                pass
        except (socket.timeout, TimeoutError):
            return close, False, at
        except OSError:
            pass
        return close, True, at


def text_of(n: int, seed: int = 0) -> bytes:
    """n bytes of UTF-8 that compresses as text does (ASCII words and a few 2-4-byte characters)."""
    words = ["price", "bid", "ask", "symbol", "ACME", "€", "中文", "😀", "déjà", "101.25"]
    out, i = bytearray(), seed
    while len(out) < n:
        out += (words[i % len(words)] + " ").encode()
        i = i * 7 + 3
    while len(out) > n or not _utf8(bytes(out)):
        out = out[:-1] if len(out) > n else out + b" "
    return bytes(out)


def _utf8(b: bytes) -> bool:
    try:
        b.decode()
        return True
    except UnicodeDecodeError:
        return False


SIZES = [0, 1, 125, 126, 1000, 65535, 65536, 128 * 1024]


def test_the_offer_is_accepted_and_its_line_says_what_lws_answered() -> None:
    with deflate_server() as live, Client(live.port) as c:
        assert c.status.startswith("HTTP/1.1 101")
        assert c.headers["sec-websocket-extensions"] == "permessage-deflate"
        m = c.echo(TEXT, b"hello")
        assert m.compressed and m.payload == b"hello"
        lines = live.wait_line("WSBENCH-DEFLATE")
    assert lines == [f'WSBENCH-DEFLATE offered="{OFFER}" response="permessage-deflate"']
    assert DEFLATE_LINE.match(lines[0])


@pytest.mark.parametrize("offer", [
    "permessage-deflate",
    "permessage-deflate; client_no_context_takeover",
    "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
])
def test_text_and_binary_of_every_size_echo_compressed(offer: str) -> None:
    with deflate_server() as live, Client(live.port, offer) as c:
        assert c.headers["sec-websocket-extensions"] == offer  # lws echoes the valueless parameters
        for rep in range(2):  # the second round leans on the context of the first
            for n in SIZES:
                for opcode, data in ((TEXT, text_of(n, rep)), (BINARY, os.urandom(n // 2) * 2 + b"z" * (n % 2))):
                    m = c.echo(opcode, data)
                    # an empty message comes back uncompressed (README.md: lws would send an empty payload)
                    assert (m.opcode, m.compressed, len(m.payload)) == (opcode, n > 0, len(data)), (offer, n)
                    assert m.payload == data, (offer, n, opcode)
        lines = live.wait_line("WSBENCH-DEFLATE")
    assert lines == [f'WSBENCH-DEFLATE offered="{offer}" response="{offer}"']


def test_messages_in_pieces_and_uncompressed_ones_echo_too() -> None:
    data = text_of(40000)
    with deflate_server() as live, Client(live.port) as c:
        m = c.echo(TEXT, data, pieces=5)  # RSV1 on the first frame only
        assert m.compressed and m.payload == data
        m = c.echo(BINARY, data, compressed=False, pieces=3)  # RFC 7692 lets a client send it plain
        assert m.compressed and m.opcode == BINARY and m.payload == data


def test_empty_messages_come_back_uncompressed_and_the_context_holds() -> None:
    """lws 4.3.5 would compress an empty message that follows another to an empty payload
    (zlib makes no second empty block in a row), which a client that keeps its context
    cannot inflate without losing step; lws-echo-deflate sends it uncompressed itself."""
    words = text_of(3000)
    with deflate_server() as live, Client(live.port) as c:
        for opcode in (TEXT, BINARY, TEXT):
            assert c.echo(opcode, words).payload == words
            m = c.echo(opcode, b"")
            assert (m.opcode, m.compressed, m.payload, len(m.frames)) == (opcode, False, b"", 1)
            m = c.echo(opcode, b"", pieces=2)
            assert (m.compressed, m.payload) == (False, b"")
        assert c.echo(TEXT, words).payload == words
    with deflate_server() as live, Client(live.port, path="/?fragments=3") as c:
        assert c.echo(TEXT, words).payload == words
        m = c.echo(BINARY, b"")
        assert (m.compressed, [len(f.payload) for f in m.frames]) == (False, [0, 0, 0])
        assert c.echo(TEXT, words).payload == words


def test_a_big_message_goes_through_lws_in_several_goes_from_the_echo_buffer() -> None:
    """lws' extension compresses a big message a frame per POLLOUT with zlib still reading
    the caller's buffer: lws-echo-deflate keeps it until lws calls it again (it crashed at
    8 MiB when the buffer was freed on lws_write's return)."""
    with deflate_server() as live, Client(live.port) as c:
        for size in (8 << 20, 16 << 20):
            data = (b"0123456789abcdef" * 4096) * (size >> 16)
            m = c.echo(BINARY, data)
            assert m.compressed and m.payload == data
            data = os.urandom(1 << 20) * 2
            assert c.echo(BINARY, data).payload == data


def test_serve_replies_are_compressed_and_broadcast_goes_out_uncompressed() -> None:
    with deflate_server() as live:
        with Client(live.port, path="/?serve=utf8&bytes=3000000") as c:
            for _ in range(2):
                m = c.echo(TEXT, b"go")
                assert m.opcode == TEXT and m.compressed and len(m.payload) == 3_000_000
                m.payload.decode()
        with Client(live.port, path="/broadcast") as a, Client(live.port, path="/broadcast") as b:
            a.send(BINARY, b"x" * 5000)
            for who in (a, b):  # the shared frames, as framed once (README.md)
                m = who.receive()
                assert (m.opcode, m.compressed, m.payload) == (BINARY, False, b"x" * 5000)


def test_lws_sends_a_big_message_in_frames_of_its_1_kib_deflate_buffer() -> None:
    data = os.urandom(100_000)  # incompressible: about 100 frames
    with deflate_server() as live, Client(live.port) as c:
        m = c.echo(BINARY, data)
    assert m.payload == data and m.compressed
    assert len(m.frames) >= 90 and max(len(f.payload) for f in m.frames) == 1024


@pytest.mark.parametrize("offer, answer", [
    ("permessage-deflate; server_max_window_bits=10", "permessage-deflate"),
    ("permessage-deflate; client_max_window_bits=10", "permessage-deflate"),
    ("x-webkit-deflate-frame", None),
    ("permessage-deflate; client_max_window_bits, permessage-deflate", "permessage-deflate"),
])
def test_the_answer_follows_the_offer(offer: str, answer: str | None) -> None:
    with deflate_server() as live, Client(live.port, offer) as c:
        assert c.headers.get("sec-websocket-extensions") == answer
        m = c.echo(TEXT, b"abc" * 100, compressed=answer is not None)
        assert m.payload == b"abc" * 100 and m.compressed is (answer is not None)
        lines = live.wait_line("WSBENCH-DEFLATE")
    response = f'"{answer}"' if answer else "none"
    assert lines == [f'WSBENCH-DEFLATE offered="{offer}" response={response}']


def test_over_tls_too() -> None:
    data = text_of(20000)
    with deflate_server(*cert_args()) as live, Client(live.port, tls=True) as c:
        m = c.echo(TEXT, data)
        assert m.compressed and m.payload == data
        lines = live.wait_line("WSBENCH-")
    assert [line.split()[0] for line in lines] == ["WSBENCH-TLS", "WSBENCH-DEFLATE"]
    assert lines[1] == f'WSBENCH-DEFLATE offered="{OFFER}" response="permessage-deflate"'


def test_lws_4_3_5_compresses_with_15_bits_when_the_offer_asks_for_fewer() -> None:
    """Pinned (README.md): server_max_window_bits=10 is dropped from the answer and lws'
    compressor reaches back further than 1 KiB; an inflater of 10 bits cannot follow."""
    data = os.urandom(2000) * 2  # its second half is a back-reference 2,000 bytes away
    with deflate_server() as live, Client(live.port, "permessage-deflate; server_max_window_bits=10") as c:
        assert c.headers["sec-websocket-extensions"] == "permessage-deflate"
        m = c.echo(BINARY, data)
    assert m.payload == data
    body, small = b"".join(f.payload for f in m.frames) + TAIL, zlib.decompressobj(wbits=-10)
    with pytest.raises(zlib.error, match="invalid distance too far back"):
        while body:  # a little output at a time, so that only the 1 KiB window holds the past
            small.decompress(body, 64)
            body = small.unconsumed_tail


def test_a_client_that_offers_nothing_gets_none_and_plain_echoes() -> None:
    with deflate_server() as live, Client(live.port, offer=None) as c:
        assert "sec-websocket-extensions" not in c.headers
        m = c.echo(TEXT, b"x" * 2000, compressed=False)
        assert not m.compressed and m.payload == b"x" * 2000
        assert live.wait_line("WSBENCH-DEFLATE") == ["WSBENCH-DEFLATE offered=none response=none"]


def test_without_deflate_the_offer_is_refused_rsv1_fails_and_nothing_is_printed() -> None:
    with Background([str(LWS_ECHO_DEFLATE), "--port", "0"]) as live, Client(live.port) as c:
        assert "sec-websocket-extensions" not in c.headers
        assert c.echo(TEXT, b"plain", compressed=False).payload == b"plain"
        c.send(TEXT, b"squeezed")
        close, _, _ = c.close_frame(3)
        assert close is not None and close.close_code() == 1002
        assert not live.wait_line("WSBENCH-DEFLATE", timeout=0.3)


def test_rsv1_on_a_continuation_of_a_plain_message_and_bad_utf8_inside_fail() -> None:
    with deflate_server() as live:
        with Client(live.port) as c:
            c.sock.sendall(server_frame(TEXT, b"abc", fin=False, mask=CLIENT_MASK)
                           + server_frame(CONT, b"def", rsv=RSV1, mask=CLIENT_MASK))
            close, _, _ = c.close_frame(3)
            assert close is not None and close.close_code() == 1002
        with Client(live.port) as c:
            c.send(TEXT, b"ok " * 100 + b"\xff")  # invalid once inflated
            close, _, _ = c.close_frame(3)
            assert close is not None and close.close_code() == 1007


def bomb(total: int) -> bytes:
    """``total`` zero bytes as one compressed payload (1 GiB: about 1 MiB)."""
    comp, mib = zlib.compressobj(wbits=-15), bytes(1 << 20)
    body = b"".join(comp.compress(mib) for _ in range(total >> 20)) + comp.compress(bytes(total & 0xFFFFF))
    return (body + comp.flush(zlib.Z_SYNC_FLUSH))[:-4]


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_decompression_bomb_is_closed_with_1009_at_once_and_memory_stays_bounded() -> None:
    payload = bomb(1 << 30)
    assert len(payload) < 2 << 20
    with deflate_server() as live:
        with Client(live.port) as c:
            frame = server_frame(BINARY, payload, rsv=RSV1, mask=CLIENT_MASK)
            try:
                c.sock.sendall(frame)
            except OSError:
                pass  # the server may end TCP before all of it is read
            close, ended, at = c.close_frame(4)
        assert close is not None and close.close_code() == 1009 and ended and at < 3, (close, ended, at)
        assert peak_rss_kib(live.proc.pid) < 160 * 1024  # the 64 MiB message and lws' buffers
        assert cpu_s(live.proc.pid) < 2
        with Client(live.port) as c:  # and it serves on
            assert c.echo(TEXT, b"after").payload == b"after"


def test_64_mib_is_taken_and_one_byte_more_is_1009() -> None:
    with deflate_server() as live:
        with Client(live.port) as c:
            data = (b"0123456789abcdef" * 4096) * (LIMIT // 65536)
            m = c.echo(BINARY, data)
            assert m.compressed and len(m.payload) == LIMIT and m.payload == data
        with Client(live.port) as c:
            c.sock.sendall(server_frame(BINARY, bomb(LIMIT + 1), rsv=RSV1, mask=CLIENT_MASK))
            close, _, _ = c.close_frame(4)
            assert close is not None and close.close_code() == 1009


def test_lws_4_3_5_fails_server_no_context_takeover_alone() -> None:
    """Pinned (README.md): lws applies server_no_context_takeover to its inflater (the
    client's messages) instead of its compressor, so a client that keeps its context, as
    the offer lets it, sees its second message refused: zlib's "invalid distance too far
    back", TCP ends without a close frame."""
    offer = "permessage-deflate; server_no_context_takeover"
    data = b"the same words again and again, " * 30
    with deflate_server() as live, Client(live.port, offer) as c:
        assert c.headers["sec-websocket-extensions"] == offer
        assert c.echo(TEXT, data).payload == data
        c.send(TEXT, data)  # compressed against the first: a back-reference into it
        close, ended, _ = c.close_frame(4)
        assert close is None and ended
        time.sleep(0.2)
        assert "invalid distance too far back" in live.stderr()


KNOBS = [
    ["--deflate-server-no-context-takeover"],
    ["--deflate-client-no-context-takeover"],
    ["--deflate-server-max-window-bits", "10"],
    ["--deflate-client-max-window-bits", "10"],
    ["--deflate-threshold", "0"],
    ["--deflate-compressor", "shared"],
]


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: k[0])
def test_every_knob_is_one_line_and_a_non_zero_exit(knob: list[str]) -> None:
    run = subprocess.run([str(LWS_ECHO_DEFLATE), "--port", "0", "--deflate", *knob], capture_output=True,
                         text=True, timeout=10, stdin=subprocess.DEVNULL)
    assert run.returncode == 2 and run.stdout == ""
    assert re.fullmatch(rf"lws-echo-deflate: {knob[0]}: libwebsockets 4\.3\.5 has no server setting for it "
                        r"\(its answer follows the client's offer\)\n", run.stderr), run.stderr


def test_plain_lws_echo_refuses_deflate_in_one_line() -> None:
    for args in (["--deflate"], ["--deflate-server-no-context-takeover"]):
        run = subprocess.run([str(LWS_ECHO), "--port", "0", *args], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL)
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.count("\n") == 1 and "built without permessage-deflate" in run.stderr
        assert "lws-echo-deflate" in run.stderr


def test_only_lws_echo_deflate_links_the_extensions_build() -> None:
    def lib(binary: object) -> str:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
        return next(line for line in out.splitlines() if "libwebsockets" in line)

    assert "/build/prefix-pmd/lib/" in lib(LWS_ECHO_DEFLATE)
    assert "/build/prefix/lib/" in lib(LWS_ECHO)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind missing")
def test_a_compressed_session_is_clean_under_valgrind() -> None:
    argv = ["valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite",
            "--quiet", str(LWS_ECHO_DEFLATE), "--port", "0", "--deflate"]
    with Background(argv, ready_s=60) as live:
        for offer in ("permessage-deflate", "permessage-deflate; client_no_context_takeover"):
            with Client(live.port, offer) as c:
                data = os.urandom(3 << 20)  # a buffer over 1 MiB is freed once sent (msgq.c)
                assert c.echo(BINARY, data).payload == data
                for n in (0, 100, 5000, 70000):
                    data = text_of(n)
                    assert c.echo(TEXT, data).payload == data
                    assert c.echo(BINARY, data, pieces=3).payload == data
                c.sock.sendall(server_frame(CLOSE, b"\x03\xe8", mask=CLIENT_MASK))
                close, _, _ = c.close_frame(10)
                assert close is not None
        with Client(live.port) as c:
            c.sock.sendall(server_frame(BINARY, bomb(LIMIT + 4096), rsv=RSV1, mask=CLIENT_MASK))
            close, _, _ = c.close_frame(30)
            assert close is not None and close.close_code() == 1009
        assert live.wait_line("WSBENCH-DEFLATE") and len(live.lines) == 3
        live.proc.send_signal(signal.SIGTERM)
        rc = live.proc.wait(timeout=30)
    assert rc == 0, live.stderr()[-2000:]
