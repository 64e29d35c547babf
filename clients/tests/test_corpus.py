"""The corpus (clients/README.md, "Message contents"): --text json and --bytes random.

Both generators, the shared JavaScript workload (clients/workload/payload.js, on Node
and on qjs) and wsbench-loadgen (clients/loadgen/corpus.c, through its --dump-messages),
must produce the same ring of messages byte for byte, so every client sends the same
message k. The corpus is ASCII and exactly the message size, every slot's body differs,
random bytes do not compress and JSON does; the default contents are what they were.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zlib
from pathlib import Path

import pytest
from flipping_server import Flip, FlippingServer

from wsbench.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
CLIENTS = [c.name for c in CATALOG.select("client", None, None)]
NODE = ROOT / "node_modules/node20/bin/node"
QJS = ROOT / "build/prefix/bin/qjs"
LOADGEN = ROOT / "build/bin/wsbench-loadgen"
DUMP = ROOT / "clients/tests/corpus_dump.mjs"
SIZES = [16, 100, 1024, 4096, 131072]
KINDS = [("text", "json"), ("binary", "random")]


def js_ring(runtime: Path, kind: str, size: int, contents: str) -> list[bytes]:
    assert runtime.exists(), f"{runtime} is missing (make setup)"
    proc = subprocess.run([str(runtime), str(DUMP), kind, str(size), contents], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-1000:]
    return [bytes.fromhex(line) for line in proc.stdout.splitlines()]


def loadgen_ring(kind: str, size: int, option: list[str]) -> list[bytes]:
    assert LOADGEN.exists(), f"{LOADGEN} is missing (make setup)"
    proc = subprocess.run([str(LOADGEN), "--url", "ws://127.0.0.1:1/", "--count", "1", "--type", kind,
                           "--size", str(size), *option, "--dump-messages"],
                          cwd=ROOT, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-1000:]
    data = proc.stdout
    assert size and len(data) % size == 0, (len(data), size)
    return [data[i:i + size] for i in range(0, len(data), size)]


def option_for(kind: str, contents: str) -> list[str]:
    return ["--text" if kind == "text" else "--bytes", contents]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind,contents", KINDS)
def test_js_and_loadgen_send_the_same_bytes(kind: str, contents: str, size: int) -> None:
    js = js_ring(NODE, kind, size, contents)
    native = loadgen_ring(kind, size, option_for(kind, contents))
    assert len(js) == len(native), f"ring sizes differ: JavaScript {len(js)}, loadgen {len(native)}"
    assert len(js) == max(16, min(4096, 1 << ((2 * 1024 * 1024 // size).bit_length() - 1)))
    for j, (a, b) in enumerate(zip(js, native)):
        if a != b:
            at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            pytest.fail(f"slot {j} differs at byte {at}: JavaScript {a[at:at + 16]!r}, loadgen {b[at:at + 16]!r}")
    for j, msg in enumerate(js):
        assert len(msg) == size
        if kind == "text":  # the sequence field: the slot number in hex, then the JSON
            assert msg[:8] == f"{j:08x}".encode()
            assert all(32 <= c < 127 or c == 10 for c in msg), "the JSON corpus is printable ASCII and newlines"
        else:
            assert int.from_bytes(msg[:4], "little") == j
    bodies = {msg[8:] if kind == "text" else msg[4:] for msg in js}
    if size >= 100:
        assert len(bodies) == len(js), "every slot has a body of its own"


@pytest.mark.parametrize("kind,contents", KINDS)
def test_qjs_generates_the_same(kind: str, contents: str) -> None:
    """qjs (the QuickJS clients) runs the same generator: its 32-bit arithmetic too."""
    for size in (100, 4096):
        assert js_ring(QJS, kind, size, contents) == js_ring(NODE, kind, size, contents)


def test_the_json_looks_like_a_feed() -> None:
    msg = js_ring(NODE, "text", 4096, "json")[3].decode()
    lines = msg[8:].split("\n")
    records = [json.loads(line) for line in lines[:-1]]  # the last one is cut at the size
    assert len(records) > 30
    assert list(records[0]) == ["seq", "sym", "px", "qty", "side", "ts"]
    assert [r["seq"] for r in records] == list(range(records[0]["seq"], records[0]["seq"] + len(records)))
    assert {r["side"] for r in records} == {"buy", "sell"}
    assert len({r["sym"] for r in records}) > 4
    assert all(b["ts"] >= a["ts"] for a, b in zip(records, records[1:]))


def test_compression_is_what_real_contents_give() -> None:
    """Random bytes do not compress; JSON does, but not to the few bytes of a cyclic body;
    and with a 32 KiB window (context takeover) the next message finds no copy of the last."""
    rand = js_ring(NODE, "binary", 4096, "random")
    text = js_ring(NODE, "text", 4096, "json")
    for ring, low, high in ((rand, 0.99, 1.01), (text, 0.1, 0.4)):  # JSON: about 0.18
        z = zlib.compressobj(6, zlib.DEFLATED, -15)
        out = sum(len(z.compress(msg) + z.flush(zlib.Z_SYNC_FLUSH)) for msg in ring[:64])
        ratio = out / sum(len(msg) for msg in ring[:64])
        assert low < ratio < high, ratio
    cyclic = js_ring(NODE, "text", 4096, "ascii")
    z = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert len(z.compress(cyclic[1]) + z.flush(zlib.Z_SYNC_FLUSH)) < 150  # what the corpus replaces


def test_the_default_contents_are_unchanged() -> None:
    """No flag: ASCII cycling 'abc...XYZ0-9-_' after the field, binary bytes i & 255."""
    text = js_ring(NODE, "text", 200, "ascii")
    cycle = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
    assert text[5] == b"00000005" + (cycle * 4)[:192]
    assert len(text) == 4096
    (binary,) = js_ring(NODE, "binary", 300, "counting")
    assert binary == bytes(i & 255 for i in range(300))  # stamped per message at send time
    assert loadgen_ring("binary", 300, [])[0] == b"\0\0\0\0" + bytes(i & 255 for i in range(4, 300))


@pytest.mark.parametrize("argv,error", [
    (["--type", "binary", "--text", "json"], "--text json needs --type text"),
    (["--type", "text", "--bytes", "random"], "--bytes random needs --type binary"),
    (["--type", "text", "--text", "json", "--verify", "off"], "--text json needs --verify on"),
    (["--type", "binary", "--bytes", "random", "--verify", "off"], "--bytes random needs --verify on"),
    (["--type", "binary", "--bytes", "zeros"], "--bytes must be counting or random"),
    (["--type", "text", "--text", "yaml"], "--text must be ascii, mixed or json"),
])
@pytest.mark.parametrize("client", ["node-ws", "loadgen"])
def test_refusals(client: str, argv: list[str], error: str) -> None:
    program = CATALOG.clients[client]
    proc = subprocess.run([*program.command, "--url", "ws://127.0.0.1:1/", "--size", "64", "--count", "10", *argv],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stdout
    assert error in json.loads(proc.stdout.splitlines()[-1])["error"]


def test_transfer_refuses_random_bytes() -> None:
    program = CATALOG.clients["node-ws"]
    proc = subprocess.run([*program.command, "--url", "ws://127.0.0.1:1/", "--type", "binary", "--size", "64",
                           "--count", "10", "--bytes", "random", "--transfer"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and "--transfer cannot send --bytes random" in proc.stdout


def run_client(client: str, url: str, *args: str) -> dict[str, object]:
    program = CATALOG.clients[client]
    missing = program.missing()
    assert not missing, f"{client}: {missing[0]} is missing (make setup)"
    env = {k: v for k, v in os.environ.items() if k != "WSBENCH_HOLD"}
    proc = subprocess.run([*program.command, "--url", url, *args], cwd=ROOT, env={**env, **program.env},
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{client}: no result line; stderr: {proc.stderr[-500:]}"
    return json.loads(lines[-1])


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("kind,contents", KINDS)
def test_every_client_runs_the_corpus_and_checks_it(client: str, kind: str, contents: str) -> None:
    """Against a clean echo server every echo is checked; a flipped byte in the body of the
    last echo of a round (message 1000: ring slot 999 of 2,048) is caught, and the byte
    named as sent is that slot's own."""
    args = ["--type", kind, "--size", "1024", *option_for(kind, contents)]
    with FlippingServer(Flip(offset=0, only=10**9)) as server:
        result = run_client(client, server.url, *args, "--count", "1000", "--warmup", "100",
                            "--mode", "window", "--window", "16", "--min-ms", "100")
    assert "error" not in result, result
    assert result["messages"] == result["checked"] == 1000 * result["rounds"]  # type: ignore[operator]
    with FlippingServer(Flip(offset=999, only=1000)) as server:
        result = run_client(client, server.url, *args, "--count", "1000", "--warmup", "0")
    assert "error" in result, f"the corrupted echo went unnoticed: {result}"
    sent = js_ring(NODE, kind, 1024, contents)[999][999]
    want = rf"echo of message 1000 \(measured\) differs at byte 999: got 0x{sent ^ 1:02x}, sent 0x{sent:02x}"
    assert re.search(want, str(result["error"])), result["error"]


@pytest.mark.parametrize("client", ["node-ws", "quickjs", "loadgen"])
@pytest.mark.parametrize("kind,contents", KINDS)
@pytest.mark.parametrize("workload", ["latency", "openloop"])
def test_latency_and_openloop_run_the_corpus(client: str, kind: str, contents: str, workload: str) -> None:
    """checkEcho and messageFor (verify.js) and loadgen's msgs.c serve the other kinds."""
    what = ["--count", "300"] if workload == "latency" else ["--rate", "2000", "--duration-ms", "150"]
    with FlippingServer(Flip(offset=0, only=10**9)) as server:
        result = run_client(client, server.url, "--kind", workload, "--type", kind, "--size", "200",
                            *option_for(kind, contents), "--warmup", "20", *what)
    assert "error" not in result, result
    assert result["checked"] == result["messages"] and int(result["messages"]) >= 300  # type: ignore[call-overload]
