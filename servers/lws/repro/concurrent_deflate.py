"""Reproduction of an lws 4.3.5 fault (servers/lws/README.md, "lws-echo-deflate"): with
several connections compressing at once, lws' permessage-deflate inflater fails
("invalid distance code", "invalid block type": the connection ends) or echoes a message
changed. One connection is served right; so are eight by the ws library's server.
The cause, proven there: zlib's unread input is left in lws' per-thread read buffer
(pt->serv_buf), which another connection's read overwrites before lws resumes inflating.

    .venv/bin/python servers/lws/repro/concurrent_deflate.py [N M SIZE] [--server ws] [--binary PATH]

N connections at once (default 8), each sending M compressed text messages of SIZE bytes
(default 16 of 65,536: JSON-like records, each message its own), inflating every echo with
its own stream (context takeover both ways, as lws answered) and comparing it byte for
byte. Prints each connection that failed: (connection, message, bytes back, bytes sent,
first differing byte, compressed) or the exception that ended it; exit 1 if any did.
--binary runs another lws-echo-deflate (one linked against a patched or instrumented
libwebsockets; its stderr is passed through)."""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import threading
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "harness"))
sys.path.insert(0, str(ROOT))

from testkit.deflate_wire import RSV1, TAIL, deflate_client  # noqa: E402
from testkit.raw_ws import CLIENT_MASK  # noqa: E402
from wsbench.conformance.frames import server_frame  # noqa: E402

SERVERS = {"lws": [str(ROOT / "build" / "bin" / "lws-echo-deflate"), "--deflate"],
           "ws": [str(ROOT / "node_modules" / "node20" / "bin" / "node"), str(ROOT / "servers" / "node-ws" / "server.mjs"),
                  "--deflate"]}


def body(seed: int, size: int) -> bytes:
    r = random.Random(seed)
    out, n = [], 0
    while n < size:
        rec = b'{"seq":%d,"sym":"BTC-USD","px":%d.%02d,"qty":%d}\n' % (
            r.randrange(10**8), r.randrange(50000), r.randrange(100), r.randrange(1000))
        out.append(rec)
        n += len(rec)
    return b"".join(out)[:size]


def connection(i: int, port: int, m: int, size: int, failed: list) -> None:
    try:
        s, _, reader = deflate_client(port)
        compressor, inflater = zlib.compressobj(6, zlib.DEFLATED, -15), zlib.decompressobj(-15)
        messages = [body(i * 1000 + k, size) for k in range(m)]
        for msg in messages:
            payload = (compressor.compress(msg) + compressor.flush(zlib.Z_SYNC_FLUSH))[:-4]
            s.sendall(server_frame(1, payload, rsv=RSV1, mask=CLIENT_MASK))
        for k, msg in enumerate(messages):
            first = frame = reader.next()
            parts = [frame.payload]
            while not frame.fin:
                frame = reader.next()
                parts.append(frame.payload)
            data = b"".join(parts)
            got = inflater.decompress(data + TAIL) if first.rsv & RSV1 else data
            if got != msg:
                at = next((j for j in range(min(len(got), len(msg))) if got[j] != msg[j]), min(len(got), len(msg)))
                failed.append((i, k, len(got), len(msg), at, bool(first.rsv & RSV1)))
                return
        s.close()
    except Exception as exc:  # the connection ended: what ended it is the finding
        failed.append((i, repr(exc)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=8)
    ap.add_argument("m", nargs="?", type=int, default=16)
    ap.add_argument("size", nargs="?", type=int, default=65536)
    ap.add_argument("--server", choices=list(SERVERS), default="lws")
    ap.add_argument("--binary", help="the lws-echo-deflate to run (default build/bin/lws-echo-deflate)")
    args = ap.parse_args()
    command = SERVERS[args.server]
    if args.binary:
        if args.server != "lws":
            ap.error("--binary is for --server lws")
        command = [args.binary, *command[1:]]
    server = subprocess.Popen([*command, "--port", "0", "--host", "127.0.0.1"], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        port = None
        assert server.stdout is not None
        for line in server.stdout:
            ready = re.search(r"WSBENCH-READY port=(\d+)", line)
            if ready:
                port = int(ready.group(1))
                break
        if port is None:
            print("the server printed no readiness line", file=sys.stderr)
            return 2
        threading.Thread(target=lambda: [None for _ in server.stdout or ()], daemon=True).start()
        failed: list = []
        threads = [threading.Thread(target=connection, args=(i, port, args.m, args.size, failed)) for i in range(args.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        os.killpg(server.pid, 9)
        server.wait()
    print(f"{args.server}: {args.n} connections x {args.m} messages of {args.size} bytes: "
          f"{len(failed)} connection(s) failed{': ' if failed else ''}{failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
