"""Memory per idle connection of the QuickJS client (resident set, VmRSS of qjs).

    .venv/bin/python quickjs-websocket/bench/tls_idle_memory.py [--module-dir DIR] [-n 1000]
                     [--size BYTES] [--scheme wss|ws] [--repeat N]

lws-echo (in TLS mode for wss://, with build/tls's certificate) on a loopback port; one
qjs process opens one connection, echoes one message of --size bytes on it and reads its
VmRSS (everything set up once per process is then in: the module, OpenSSL's context and
CA, the read buffer of our framing), then opens N more, echoes one message of --size
bytes on each and, once every echo is in and every connection is idle, reads VmRSS
again.  Printed: (RSS_after - RSS_first) / N in bytes per idle connection.  QJSWS_DISABLE
is passed through (QJSWS_DISABLE=tls: the lws fallback).  Used with a module built with
and without SSL_MODE_RELEASE_BUFFERS (docs/quickjs-websocket.md, "TLS"); CFLAGS from the
environment, so that the Makefile's own flags are appended to it:

    CFLAGS="-O2 -g -DQJSWS_TLS_KEEP_BUFFERS" make -C quickjs-websocket OUT=/tmp/keep OBJDIR=/tmp/keep-obj
    .venv/bin/python quickjs-websocket/bench/tls_idle_memory.py --module-dir /tmp/keep
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QJS = ROOT / "build" / "prefix" / "bin" / "qjs"
TLS = ROOT / "build" / "tls"

SCRIPT = r"""
import * as std from 'std'
import * as os from 'os'
import { WebSocket } from '%(module)s/websocket.js'
const url = '%(url)s', n = %(n)d, size = %(size)d
const msg = new Uint8Array(size).fill(97).buffer
function rss () {
  const f = std.open('/proc/self/status', 'r'); const t = f.readAsString(); f.close()
  return Number(/VmRSS:\s+(\d+)/.exec(t)[1]) * 1024
}
const all = []
function open (k, then) {
  let left = k
  for (let i = 0; i < k; i++) {
    const ws = new WebSocket(url)
    all.push(ws)
    ws.onopen = () => ws.send(msg)
    ws.onmessage = () => { if (--left === 0) then() }
    ws.onerror = (e) => { std.out.puts(JSON.stringify({ error: e.message }) + '\n'); std.exit(1) }
  }
}
open(1, () => {
  // idle for a while, so that what OpenSSL frees is freed
  os.setTimeout(() => {
    const first = rss()
    open(n, () => os.setTimeout(() => {
      const after = rss()
      std.out.puts(JSON.stringify({ first, after, n, perConnection: (after - first) / n }) + '\n')
      std.exit(0)
    }, 300))
  }, 300)
})
"""


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8192 if hard == resource.RLIM_INFINITY else min(8192, hard)  # the hard limit is not ours to raise
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))


def one(module_dir, n, size, scheme):
    tls_args = ["--tls-cert", str(TLS / "server.pem"), "--tls-key", str(TLS / "server.key")] if scheme == "wss" else []
    server = subprocess.Popen([str(ROOT / "build" / "bin" / "lws-echo"), "--port", "0", *tls_args],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True, preexec_fn=raise_fd_limit)
    try:
        line = server.stdout.readline()
        port = int(re.match(r"WSBENCH-READY port=(\d+)", line).group(1))
        # drain the server's per-connection lines
        drain = subprocess.Popen(["cat"], stdin=server.stdout, stdout=subprocess.DEVNULL)
        with tempfile.TemporaryDirectory() as tmp:
            js = Path(tmp) / "idle.mjs"
            js.write_text(SCRIPT % {"module": str(Path(module_dir).resolve()), "n": n, "size": size,
                                    "url": "%s://127.0.0.1:%d/" % (scheme, port)})
            env = dict(os.environ, QJSWS_CA_FILE=str(TLS / "ca.pem"))
            out = subprocess.run([str(QJS), str(js)], env=env, capture_output=True, text=True, timeout=300,
                                 preexec_fn=raise_fd_limit)
        drain.kill()
        lines = out.stdout.strip().splitlines()
        if out.returncode != 0 or not lines:
            sys.exit("qjs exited with %d: %s" % (out.returncode, (out.stderr or out.stdout).strip()[-500:]))
        return json.loads(lines[-1])
    finally:
        os.killpg(server.pid, 9)
        server.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module-dir", default=str(ROOT / "build" / "quickjs-websocket"))
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--size", type=int, default=11)
    ap.add_argument("--scheme", default="wss", choices=("wss", "ws"))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    if not shutil.which(str(QJS)):
        sys.exit("build/prefix/bin/qjs missing (make setup)")
    for _ in range(args.repeat):
        r = one(args.module_dir, args.n, args.size, args.scheme)
        print(json.dumps(r))


if __name__ == "__main__":
    main()
