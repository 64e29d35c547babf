"""wsbench-loadgen with permessage-deflate (RFC 7692, `--deflate on`; clients/loadgen/README.md,
"permessage-deflate"): the offer as a raw asyncio peer reads it, the knobs and their refusals,
echoes verified end to end against the ws library's server and Bun's with compression (ws://
and wss://), every message sent compressed (testkit.deflate_wire's raw server), and a raw
peer's bad answers, bomb, bad data and RSV1 on a continuation. The deflate code itself is the
wire protocol room's (wsproto/deflate_core.c, its own tests)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import threading
import zlib
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import pytest
from wsbench.conformance.frames import BINARY, CLOSE, CONT, TEXT, accept_for, apply_mask, close_payload, server_frame

from testkit.background import Background
from testkit.deflate_wire import RSV1, TAIL, inflate
from testkit.raw_ws import request_headers
from testkit.wss import CA, ROOT, server_tls_command

LOADGEN = ROOT / "build/bin/wsbench-loadgen"
NODE_WS = ["node_modules/node20/bin/node", "servers/node-ws/server.mjs", "--deflate"]
BUN = ["node_modules/@oven/bun-linux-x64/bin/bun", "--no-install", "--no-env-file", "servers/bun/server.js", "--deflate"]
OFFER = "permessage-deflate; client_max_window_bits"  # the default offer (ws, undici, Bun send it too)
DEFLATE_LINE = re.compile(r'^WSBENCH-DEFLATE offered=("[^"]*"|none|\?) response=("[^"]*"|none|\?)$')

pytestmark = pytest.mark.skipif(not LOADGEN.exists(), reason="wsbench-loadgen missing (make setup)")
needs_node = pytest.mark.skipif(not (ROOT / NODE_WS[0]).exists(), reason="node20 missing (make setup)")
needs_bun = pytest.mark.skipif(not (ROOT / BUN[0]).exists(), reason="bun missing (make setup)")


def loadgen(*args: str, prefix: list[str] | None = None, timeout: float = 60) -> tuple[int, dict[str, Any]]:
    """Exit code and the last stdout line as JSON."""
    proc = subprocess.run([*(prefix or []), str(LOADGEN), *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    lines = proc.stdout.strip().splitlines()
    return proc.returncode, json.loads(lines[-1]) if lines else {}


def loadgen_peak(*args: str, timeout: float = 60) -> tuple[int, dict[str, Any], int]:
    """The same, and the run's peak RSS (VmHWM, KiB), read while it holds at its end
    (WSBENCH_HOLD=1: it waits for its stdin to end, after its GO)."""
    proc = subprocess.Popen([str(LOADGEN), *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.PIPE, text=True, env={**os.environ, "WSBENCH_HOLD": "1"})
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("GO\n")
        proc.stdin.flush()
        line = ""
        while not line.startswith("{"):
            line = proc.stdout.readline()
            assert line, "no result line"
        status = Path(f"/proc/{proc.pid}/status").read_text()
        proc.stdin.close()
        code = proc.wait(10)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    peak = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.M)
    assert peak, status
    return code, json.loads(line), int(peak.group(1))


# --- a raw asyncio peer: it answers the upgrade with the extension it is given, then runs a script

Script = Callable[["PeerConn"], Awaitable[None]]


class PeerConn:
    """One client connection as the raw peer sees it: its frames (unmasked), its close code."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.frames: list[tuple[int, int, bytes]] = []  # (RSV bits 0-7, opcode, payload)
        self.close_code: int | None = None

    async def frame(self) -> tuple[int, int, bytes] | None:
        """The client's next frame, or None at the end of the stream."""
        try:
            b0, b1 = await self.reader.readexactly(2)
            n = b1 & 0x7F
            if n >= 126:
                n = int.from_bytes(await self.reader.readexactly(2 if n == 126 else 8), "big")
            key = await self.reader.readexactly(4) if b1 & 0x80 else b""
            payload = await self.reader.readexactly(n)
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        got = ((b0 >> 4) & 7, b0 & 0x0F, apply_mask(payload, key) if key else payload)
        self.frames.append(got)
        return got

    async def until_close(self) -> None:
        """Read the client's frames up to its close frame, answer it, end the connection."""
        while (f := await self.frame()) is not None:
            if f[1] == CLOSE:
                self.close_code = int.from_bytes(f[2][:2], "big") if len(f[2]) >= 2 else 1005
                self.writer.write(server_frame(CLOSE, f[2][:2]))
                break
        await self.writer.drain()
        self.writer.close()

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()


class RawPeer:
    """An asyncio server in a thread of its own: each connection's upgrade request is kept
    (its header fields, names in lower case), answered with 101 and `answer` as its
    Sec-WebSocket-Extensions (None: no such header), and then handed to `script`."""

    def __init__(self, script: Script, answer: str | None = "permessage-deflate") -> None:
        self.script, self.answer = script, answer
        self.requests: list[dict[str, str]] = []
        self.conns: list[PeerConn] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._conn, "127.0.0.1", 0), self.loop).result(5)
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{self.port}/"

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        headers = request_headers(head)
        self.requests.append(headers)
        ext = f"Sec-WebSocket-Extensions: {self.answer}\r\n" if self.answer is not None else ""
        writer.write((f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept_for(headers['sec-websocket-key'])}\r\n{ext}\r\n").encode())
        conn = PeerConn(reader, writer)
        self.conns.append(conn)
        try:
            await self.script(conn)
        except ConnectionError:
            pass

    def __enter__(self) -> "RawPeer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def sending(*frames: bytes) -> Script:
    """A script: send these frames, then read the client's up to its close."""
    async def script(conn: PeerConn) -> None:
        for f in frames:
            await conn.send(f)
        await conn.until_close()
    return script


async def closing_at_once(conn: PeerConn) -> None:
    await conn.send(server_frame(CLOSE, close_payload(1000)))
    await conn.until_close()


def compressed(data: bytes) -> bytes:
    """A message's payload as permessage-deflate sends it (raw DEFLATE, the flush tail dropped)."""
    c = zlib.compressobj(wbits=-15)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(TAIL)
    return out[:-4]


def observe(url: str, *args: str, timeout_ms: int = 3000, prefix: list[str] | None = None) -> dict[str, Any]:
    code, res = loadgen("--kind", "observe", "--url", url, "--timeout-ms", str(timeout_ms), "--deflate", "on",
                        *args, prefix=prefix, timeout=120)
    assert code == 0 and "events" in res, res
    return res


def kinds(res: dict[str, Any]) -> list[str]:
    return [e["type"] for e in res["events"]]


# --- the options

@pytest.mark.parametrize("args, error", [
    (["--deflate", "yes"], '--deflate must be on or off, got "yes"'),
    (["--deflate-server-no-context-takeover"], "--deflate-server-no-context-takeover needs --deflate on"),
    (["--deflate", "off", "--deflate-client-max-window-bits", "12"], "--deflate-client-max-window-bits needs --deflate on"),
    (["--deflate", "on", "--deflate-server-max-window-bits", "16"], "--deflate-server-max-window-bits must be 9 to 15, got 16"),
    (["--deflate", "on", "--deflate-client-max-window-bits", "8"], "--deflate-client-max-window-bits must be 9 to 15, got 8"),
    (["--deflate", "on", "--deflate-server-max-window-bits", "x"], '--deflate-server-max-window-bits needs a non-negative integer, got "x"'),
    (["--deflate", "on", "--deflate-client-no-context-takeover=maybe"],
     '--deflate-client-no-context-takeover takes no value (or on/off), got "maybe"'),
], ids=["deflate-value", "knob-alone", "knob-with-off", "server-bits-16", "client-bits-8", "bits-not-a-number",
        "flag-value"])
def test_a_bad_deflate_option_is_one_error_line(args: list[str], error: str) -> None:
    proc = subprocess.run([str(LOADGEN), "--url", "ws://127.0.0.1:1/", "--type", "text", "--size", "1",
                           "--count", "1", *args], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [json.dumps({"error": error})]


# --- the offer, as a raw peer reads it

@pytest.mark.parametrize("args, offer", [
    ([], OFFER),
    (["--deflate-server-no-context-takeover", "--deflate-client-no-context-takeover"],
     "permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits"),
    (["--deflate-server-max-window-bits", "10", "--deflate-client-max-window-bits", "11"],
     "permessage-deflate; server_max_window_bits=10; client_max_window_bits=11"),
], ids=["default", "no-context-takeover", "window-bits"])
def test_the_offer(args: list[str], offer: str) -> None:
    with RawPeer(closing_at_once, answer=None) as peer:
        res = observe(peer.url, *args)
    assert kinds(res) == ["open", "close"], res
    assert peer.requests[0].get("sec-websocket-extensions") == offer


def test_no_offer_without_deflate_on() -> None:
    with RawPeer(closing_at_once, answer=None) as peer:
        for args in ([], ["--deflate", "off"]):
            code, res = loadgen("--kind", "observe", "--url", peer.url, "--timeout-ms", "3000", *args)
            assert code == 0 and kinds(res) == ["open", "close"], res
    assert [r.get("sec-websocket-extensions") for r in peer.requests] == [None, None]


def test_an_answer_without_the_extension_runs_uncompressed() -> None:
    """RFC 7692 lets the server decline: the connection goes on without compression, and the
    result line has no "extensions"."""
    with RawPeer(sending(server_frame(TEXT, b"hello"), server_frame(CLOSE, close_payload(1000))),
                 answer=None) as peer:
        res = observe(peer.url)
    assert kinds(res) == ["open", "message", "close"], res
    assert "extensions" not in res


# --- bad answers fail the connection with the reason

@pytest.mark.parametrize("answer, reason", [
    ("permessage-deflate; foo=1", "permessage-deflate refused: "),
    ("permessage-deflate; server_max_window_bits=16", "permessage-deflate refused: "),
    ("x-webkit-deflate-frame", "permessage-deflate refused: "),
    ("permessage-deflate; client_max_window_bits=12", None),  # not refused: 12 <= the offer's "any"
], ids=["unknown-parameter", "window-bits-16", "not-offered", "fine"])
def test_a_bad_extension_answer_fails_the_upgrade(answer: str, reason: str | None) -> None:
    with RawPeer(closing_at_once, answer=answer) as peer:
        code, res = loadgen("--url", peer.url, "--type", "text", "--size", "11", "--count", "1", "--deflate", "on",
                            timeout=20)
        obs = observe(peer.url)
    if reason is None:
        assert kinds(obs) == ["open", "close"] and obs["events"][1]["code"] == 1000, obs
        return
    assert code == 1 and res["error"].startswith("upgrade failed: " + reason), res
    assert f"(Sec-WebSocket-Extensions: {answer})" in res["error"], res
    assert kinds(obs) == ["error", "close"] and obs["events"][1]["code"] == 1006, obs
    assert obs["events"][0]["message"].startswith("upgrade failed: " + reason), obs


# --- what comes compressed from a raw peer

def test_compressed_messages_from_a_peer_are_inflated() -> None:
    text = ("héllo wörld " * 500).encode()
    frames = [server_frame(TEXT, compressed(text), rsv=RSV1),
              server_frame(BINARY, compressed(bytes(range(256)) * 40), rsv=RSV1),
              server_frame(TEXT, b"plain", rsv=0),  # RFC 7692: a message may go uncompressed
              server_frame(TEXT, compressed(b""), rsv=RSV1),
              # fragmented: RSV1 on the first frame only
              server_frame(TEXT, compressed(b"abc" * 1000)[:10], fin=False, rsv=RSV1),
              server_frame(CONT, compressed(b"abc" * 1000)[10:]),
              server_frame(CLOSE, close_payload(1000))]
    with RawPeer(sending(*frames)) as peer:
        res = observe(peer.url)
    assert kinds(res) == ["open", "message", "message", "message", "message", "message", "close"], res
    lengths = [e["length"] for e in res["events"] if e["type"] == "message"]
    assert lengths == [len(text.decode()), 10240, 5, 0, 3000], res
    assert res["events"][-1]["code"] == 1000 and res["extensions"] == "permessage-deflate"


def bomb() -> bytes:
    """About 1 MiB of DEFLATE that inflates to 1 GiB of zeros: 16 MiB compressed from a fresh
    stream references only itself, so 64 copies of it are one stream."""
    c = zlib.compressobj(wbits=-15)
    piece = c.compress(bytes(16 << 20)) + c.flush(zlib.Z_SYNC_FLUSH)
    return (piece * 64)[:-4]


def test_a_bomb_is_closed_with_1009_within_the_limit() -> None:
    payload = bomb()
    assert 500_000 < len(payload) < 2 << 20
    with RawPeer(sending(server_frame(BINARY, payload, rsv=RSV1))) as peer:
        code, res, peak_kib = loadgen_peak("--kind", "observe", "--url", peer.url, "--timeout-ms", "20000",
                                             "--deflate", "on")
    assert code == 0 and kinds(res) == ["open", "error", "close"], res
    assert "inflates past 67108864 bytes" in res["events"][1]["message"], res
    assert res["events"][2]["code"] == 1009 and peer.conns[0].close_code == 1009
    # observe keeps a message up to 64 MiB; never near the bomb's 1 GiB
    assert peak_kib < 160 * 1024, peak_kib


def test_a_bomb_fails_an_echo_run_and_costs_no_memory() -> None:
    """The echo kinds keep nothing of a message: the limit (256 MiB) is met with the scratch
    buffer alone."""
    with RawPeer(sending(server_frame(BINARY, bomb(), rsv=RSV1))) as peer:
        code, res, peak_kib = loadgen_peak("--url", peer.url, "--type", "binary", "--size", "100", "--count", "1",
                                             "--warmup", "0", "--deflate", "on")
    assert code == 1 and res["error"] == \
        "protocol error from server: compressed message inflates past 268435456 bytes", res
    assert peak_kib < 64 * 1024, peak_kib


@pytest.mark.parametrize("frames, code, words", [
    ([server_frame(TEXT, b"\x07\x00\x00", rsv=RSV1)], 1007, "invalid compressed data"),
    ([server_frame(TEXT, compressed(b"\xff\xfe"), rsv=RSV1)], 1007, "UTF-8"),  # inflated, then validated
    ([server_frame(TEXT, compressed(b"abc")[:1], fin=False, rsv=RSV1),
      server_frame(CONT, compressed(b"abc")[1:], rsv=RSV1)], 1002, "reserved bits"),
    ([server_frame(9, b"", rsv=RSV1)], 1002, "reserved bits"),
], ids=["bad-deflate", "bad-utf8-inside", "rsv1-on-continuation", "rsv1-on-ping"])
def test_bad_compressed_input_fails_the_connection(frames: list[bytes], code: int, words: str) -> None:
    with RawPeer(sending(*frames)) as peer:
        res = observe(peer.url)
    assert kinds(res) == ["open", "error", "close"], res
    assert words in res["events"][1]["message"], res
    assert res["events"][2]["code"] == code and peer.conns[0].close_code == code


def test_rsv1_without_an_agreement_is_a_protocol_error() -> None:
    with RawPeer(sending(server_frame(TEXT, compressed(b"abc"), rsv=RSV1)), answer=None) as peer:
        res = observe(peer.url)
    assert kinds(res) == ["open", "error", "close"] and res["events"][2]["code"] == 1002, res


# --- what loadgen sends: every message compressed, and numbered inside

async def echo_inflated(conn: PeerConn) -> None:
    """Echo every message uncompressed (RFC 7692 lets a side send so), inflating what came
    compressed with one stream for the connection (the client keeps its context)."""
    stream = zlib.decompressobj(wbits=-15)
    while (f := await conn.frame()) is not None and f[1] != CLOSE:
        payload = stream.decompress(f[2] + TAIL) if f[0] & RSV1 else f[2]
        await conn.send(server_frame(f[1], payload))
    if f is not None:
        conn.frames.pop()
        conn.writer.write(server_frame(CLOSE, f[2][:2]))
        await conn.writer.drain()
    conn.writer.close()


@pytest.mark.parametrize("args", [["--type", "text", "--size", "100"], ["--type", "binary", "--size", "70000"]],
                         ids=["text", "binary-70k"])
@pytest.mark.parametrize("takeover", [True, False], ids=["takeover", "no-takeover"])
def test_every_message_is_sent_compressed(args: list[str], takeover: bool) -> None:
    answer = "permessage-deflate" + ("" if takeover else "; client_no_context_takeover")
    with RawPeer(echo_inflated, answer=answer) as peer:
        code, res = loadgen("--url", peer.url, *args, "--count", "30", "--warmup", "10", "--deflate", "on",
                            timeout=30)
    assert code == 0 and res["messages"] == 30 and res["extensions"] == answer, res
    frames = peer.conns[0].frames
    assert len(frames) == 40 and all(f[0] == RSV1 and f[1] in (TEXT, BINARY) for f in frames)
    size = int(args[args.index("--size") + 1])
    stream = zlib.decompressobj(wbits=-15)
    plain = [stream.decompress(f[2] + TAIL) for f in frames]
    assert all(len(p) == size for p in plain) and len(set(plain)) == 40  # each its own number
    if not takeover:  # each message is a stream of its own
        assert [inflate(f[2]) for f in frames] == plain
    compressed_bytes = sum(len(f[2]) for f in frames)
    # the text pattern repeats every 64 bytes: a 100-byte message alone compresses little
    assert compressed_bytes < size * 40 / (10 if takeover else 1), compressed_bytes


# --- end to end against the servers with compression

@pytest.fixture(scope="module")
def node_ws() -> Iterator[Background]:
    with Background(NODE_WS) as server:
        yield server


@pytest.fixture(scope="module")
def node_ws_no_takeover() -> Iterator[Background]:
    with Background([*NODE_WS, "--deflate-server-no-context-takeover", "--deflate-client-no-context-takeover"]) as s:
        yield s


ECHOES = [
    ["--type", "text", "--size", "11", "--count", "2000"],
    ["--type", "text", "--text", "mixed", "--size", "1000", "--count", "500", "--connections", "4"],
    ["--type", "binary", "--size", "4096", "--count", "500", "--mode", "window", "--window", "8"],
    ["--type", "binary", "--size", "70000", "--count", "40"],
    ["--type", "binary", "--size", "1048576", "--count", "4", "--warmup", "1"],
    ["--kind", "latency", "--type", "text", "--size", "64", "--count", "300"],
    ["--kind", "openloop", "--type", "binary", "--size", "32", "--rate", "2000", "--duration-ms", "200"],
    ["--type", "text", "--size", "300", "--count", "500", "--verify", "off"],
]
ECHO_IDS = ["text-11", "mixed-4-conns", "bin-4k-window", "bin-70k", "bin-1m", "latency", "openloop", "verify-off"]


def deflate_lines(server: Background, count: int) -> list[re.Match[str]]:
    lines = server.wait_line("WSBENCH-DEFLATE")
    found = [m for m in (DEFLATE_LINE.match(line) for line in lines) if m]
    assert len(found) >= count, lines
    return found


@needs_node
@pytest.mark.parametrize("args", ECHOES, ids=ECHO_IDS)
def test_echoes_verified_against_ws_with_compression(node_ws: Background, args: list[str]) -> None:
    code, res = loadgen("--url", f"ws://127.0.0.1:{node_ws.port}/", *args, "--deflate", "on")
    assert code == 0 and res["errors"] == 0 and res["messages"] > 0, res
    assert res["extensions"] == "permessage-deflate", res
    line = deflate_lines(node_ws, 1)[-1]
    assert line.group(1) == f'"{OFFER}"' and line.group(2) == '"permessage-deflate"'


@needs_node
@pytest.mark.parametrize("args", [ECHOES[1], ECHOES[3]], ids=["mixed-4-conns", "bin-70k"])
def test_echoes_without_context_takeover(node_ws_no_takeover: Background, args: list[str]) -> None:
    agreed = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
    url = f"ws://127.0.0.1:{node_ws_no_takeover.port}/"
    code, res = loadgen("--url", url, *args, "--deflate", "on")
    assert code == 0 and res["errors"] == 0 and res["extensions"] == agreed, res
    # and asked for by loadgen, with small windows, from a server that grants them
    code, res = loadgen("--url", f"ws://127.0.0.1:{node_ws_no_takeover.port}/", *args, "--deflate", "on",
                        "--deflate-server-no-context-takeover", "--deflate-client-no-context-takeover",
                        "--deflate-server-max-window-bits", "9", "--deflate-client-max-window-bits", "9")
    assert code == 0 and res["errors"] == 0, res
    assert res["extensions"] == agreed + "; server_max_window_bits=9; client_max_window_bits=9", res


@needs_node
def test_the_other_kinds_with_compression(node_ws: Background) -> None:
    url = f"ws://127.0.0.1:{node_ws.port}/"
    code, res = loadgen("--kind", "handshake", "--url", url, "--count", "20", "--deflate", "on")
    assert code == 0 and res["errors"] == 0 and res["extensions"] == "permessage-deflate", res
    code, res = loadgen("--kind", "idle", "--url", url, "--connections", "20", "--hold-ms", "100", "--deflate", "on")
    assert code == 0 and res["alive"] == 20 and res["lost"] == 0, res
    code, res = loadgen("--kind", "fanout", "--url", url + "broadcast", "--connections", "5", "--rate", "500",
                        "--count", "50", "--size", "200", "--deflate", "on")
    assert code == 0 and res["delivered"] == 250, res


@needs_node
def test_echoes_over_wss_with_compression() -> None:
    with Background([*server_tls_command("node-ws"), "--deflate"]) as server:
        for args in (ECHOES[1], ECHOES[3]):
            code, res = loadgen("--url", f"wss://127.0.0.1:{server.port}/", "--ca", str(CA), *args,
                                "--deflate", "on")
            assert code == 0 and res["errors"] == 0, res
            assert res["extensions"] == "permessage-deflate" and res["tls"]["handshakes"] >= 1, res


@needs_bun
@pytest.mark.parametrize("args", [ECHOES[0], ECHOES[1], ECHOES[3], ECHOES[4]],
                         ids=["text-11", "mixed-4-conns", "bin-70k", "bin-1m"])
def test_echoes_verified_against_bun_with_compression(args: list[str]) -> None:
    with Background(BUN) as server:
        code, res = loadgen("--url", f"ws://127.0.0.1:{server.port}/", *args, "--deflate", "on")
    assert code == 0 and res["errors"] == 0 and res["messages"] > 0, res
    assert res["extensions"] == "permessage-deflate; client_no_context_takeover; server_no_context_takeover", res


@needs_node
def test_a_wrong_echo_inside_the_compression_is_caught() -> None:
    """The echo is inflated before it is checked: a peer that changes one byte of a sampled
    echo (and compresses it correctly) fails the run naming the byte."""
    async def corrupt(conn: PeerConn) -> None:
        while (f := await conn.frame()) is not None and f[1] != CLOSE:
            plain = bytearray(inflate(f[2]))
            plain[50] ^= 1
            await conn.send(server_frame(f[1], compressed(bytes(plain)), rsv=RSV1))
        await conn.until_close()
    with RawPeer(corrupt) as peer:
        code, res = loadgen("--url", peer.url, "--type", "text", "--size", "100", "--count", "5", "--warmup", "1",
                            "--deflate", "on", timeout=20)
    assert code == 1 and "warm-up) differs at byte 50" in res["error"], res


# --- valgrind

@needs_node
@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")
def test_a_compressed_session_is_clean_under_valgrind(node_ws: Background, tmp_path: Path) -> None:
    bad = [server_frame(TEXT, compressed(b"x" * 3000), rsv=RSV1), server_frame(TEXT, b"\x07\x00", rsv=RSV1)]
    with RawPeer(sending(*bad)) as peer:
        for args in (["--url", f"ws://127.0.0.1:{node_ws.port}/", "--type", "text", "--size", "2000", "--count",
                      "200", "--connections", "2", "--warmup", "20", "--deflate", "on"],
                     ["--kind", "idle", "--url", f"ws://127.0.0.1:{node_ws.port}/", "--connections", "5",
                      "--hold-ms", "50", "--deflate", "on"],
                     ["--kind", "handshake", "--url", f"ws://127.0.0.1:{node_ws.port}/", "--count", "5",
                      "--deflate", "on"],
                     ["--kind", "observe", "--url", peer.url, "--timeout-ms", "20000", "--deflate", "on"]):
            log = tmp_path / "vg.log"
            code, res = loadgen(*args, timeout=300,
                                prefix=["valgrind", "--leak-check=full", "--error-exitcode=9", f"--log-file={log}"])
            text = log.read_text()
            assert code == 0, (res, text[-3000:])
            assert "ERROR SUMMARY: 0 errors" in text
            assert re.search(r"definitely lost: 0 bytes|All heap blocks were freed", text), text[-3000:]
