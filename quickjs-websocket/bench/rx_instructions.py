"""Instructions (callgrind Ir) the QuickJS client spends receiving a fixed message list.

    .venv/bin/python quickjs-websocket/bench/rx_instructions.py [--module-dir DIR] [--repeat N]

A raw Python server sends, right after the 101, COUNT messages of one kind (text_11,
bin_64k, text_16m) in large writes and then a close frame; the client (qjs + the module
in --module-dir, default build/quickjs-websocket) counts them and closes.  The whole qjs
process runs under `valgrind --tool=callgrind`; its total instruction count is printed
per kind, once per repeat.  Deterministic apart from how the kernel splits the reads, so
before/after comparisons of a code change need no timing lock.
"""
import argparse
import asyncio
import base64
import hashlib
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QJS = ROOT / "build" / "prefix" / "bin" / "qjs"
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

KINDS = {  # name: (opcode, payload, count)
    "text_11": (1, b"hello world", 20000),
    "bin_64k": (2, bytes(i & 255 for i in range(65536)), 300),
    # mixed 1- to 4-byte characters, just under 16 MiB
    "text_16m": (1, "abc\u00e9\u20ac\U0001F600".encode() * ((16 << 20) // 12), 3),
}

CLIENT_JS = """
import { WebSocket } from '%s/websocket.js'
const ws = new WebSocket(scriptArgs[1])
let n = 0, bytes = 0
ws.onmessage = (e) => { n++; bytes += typeof e.data === 'string' ? e.data.length : e.data.byteLength }
ws.onclose = (e) => { console.log('RX', n, bytes, e.code) }
"""


def frame(op, payload):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | op, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | op, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | op, 127, n)
    return head + payload


async def serve(kind):
    op, payload, count = KINDS[kind]
    one = frame(op, payload)

    async def handle(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        key = re.search(rb"(?i)sec-websocket-key:\s*(\S+)", head).group(1)
        acc = base64.b64encode(hashlib.sha1(key + GUID).digest())
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + acc + b"\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.2)  # the client is open and on its own parser
        batch = max(1, (1 << 20) // len(one))
        for i in range(0, count, batch):
            writer.write(one * min(batch, count - i))
            await writer.drain()
        writer.write(frame(8, struct.pack("!H", 1000)))
        await writer.drain()
        try:
            await asyncio.wait_for(reader.read(), 60)
        except Exception:
            pass
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def measure(kind, module_dir, tmp):
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(serve(kind))
    port = server.sockets[0].getsockname()[1]
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    js = Path(tmp) / "client.js"
    js.write_text(CLIENT_JS % module_dir)
    out = Path(tmp) / ("cg.%s" % kind)
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out,
                           str(QJS), str(js), "ws://127.0.0.1:%d/" % port],
                          capture_output=True, text=True, timeout=600, start_new_session=True)
    loop.call_soon_threadsafe(server.close)
    loop.call_soon_threadsafe(loop.stop)
    t.join(10)
    rx = [l for l in proc.stdout.splitlines() if l.startswith("RX")]
    total = [l for l in out.read_text().splitlines() if l.startswith(("summary:", "totals:"))]
    return rx[-1] if rx else "RX ? (stderr: %s)" % proc.stderr[-300:], int(total[-1].split()[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module-dir", default=str(ROOT / "build" / "quickjs-websocket"))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.kinds.split(","):
            if kind not in KINDS:
                sys.exit("rx_instructions: unknown kind %r" % kind)
            for _ in range(a.repeat):
                rx, ir = measure(kind, os.path.abspath(a.module_dir), tmp)
                print("%-9s Ir=%d  %s" % (kind, ir, rx), flush=True)


if __name__ == "__main__":
    main()
