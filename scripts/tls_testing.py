"""Shared by the TLS tests (servers/tests, clients/tests, clients/loadgen/tests): the
certificates of build/tls (scripts/setup-tls.sh), an echo server started in TLS mode with
its stdout drained, and a Python wss:// client that trusts only the test CA.

What each program needs for TLS on its command line or in its environment is written
down here once (SERVER_TLS, CLIENT_TRUST): the harness catalog should say the same."""

from __future__ import annotations

import json
import os
import re
import signal
import ssl
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
TLS_DIR = ROOT / "build" / "tls"
CA = TLS_DIR / "ca.pem"
READY = re.compile(r"^WSBENCH-READY port=(\d+)$")
TLS_LINE = re.compile(r'^WSBENCH-TLS version=(\S+) cipher=(\S+) group=(\S+) resumed=(yes|no|\?) '
                      r'library=("[^"]*"|\?)$')

DENO = "node_modules/@deno/linux-x64-glibc/deno"
DENO_RUN = [DENO, "run", "--no-config", "--no-lock", "--no-remote", "--no-npm", "--no-prompt",
            "--allow-net=127.0.0.1"]
SERVERS: dict[str, list[str]] = {
    "lws": ["build/bin/lws-echo"],
    "node-ws": ["node_modules/node20/bin/node", "servers/node-ws/server.mjs"],
    "bun": ["node_modules/@oven/bun-linux-x64/bin/bun", "--no-install", "--no-env-file", "servers/bun/server.js"],
    "deno": [*DENO_RUN, "servers/deno/server.ts"],
}
SERVER_ENV = {"deno": {"DENO_NO_UPDATE_CHECK": "1"}}


def manifest() -> dict[str, dict[str, object]]:
    return json.loads((TLS_DIR / "manifest.json").read_text())


def cert_files(name: str) -> tuple[Path, Path]:
    entry = manifest()[name]
    return TLS_DIR / str(entry["cert"]), TLS_DIR / str(entry["key"])


def server_tls_command(server: str, cert: str = "server") -> list[str]:
    """The server's command line in TLS mode (servers/README.md, "TLS per server")."""
    pem, key = (str(p.relative_to(ROOT)) for p in cert_files(cert))
    command = list(SERVERS[server])
    if server == "deno":  # read permission for the two files, before the script
        command.insert(-1, f"--allow-read={pem},{key}")
    return [*command, "--port", "0", "--tls-cert", pem, "--tls-key", key]


def client_trust(command: Sequence[str], runtime: str) -> tuple[list[str], dict[str, str]]:
    """A client's command line and extra environment trusting only the test CA, the
    runtime's documented way (clients/README.md, "wss://")."""
    ca = str(CA.relative_to(ROOT))
    if runtime == "deno":  # `deno run ... --cert FILE SCRIPT`: before the script
        return [*command[:-1], "--cert", ca, command[-1]], {}
    if runtime == "native":  # wsbench-loadgen
        return [*command, "--ca", ca], {}
    return list(command), {"NODE_EXTRA_CA_CERTS": ca}  # Node 20, Node 22, Bun


def client_context(ca: Path = CA) -> ssl.SSLContext:
    """Trusts `ca` alone and checks the host name (ssl's defaults otherwise)."""
    context = ssl.create_default_context(cafile=str(ca))
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    return context


@dataclass
class Server:
    """An echo server in the background; every stdout line kept (drained all along)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    lines: list[str] = field(default_factory=list)

    def __enter__(self) -> "Server":
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env={**os.environ, **self.env}, text=True,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self._stderr, start_new_session=True)
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not self._ready.wait(20) or not self.port:
            self.stop()
            raise AssertionError(f"{self.argv[0]}: no readiness line; stderr: {self.stderr()[-500:]}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            match = READY.match(line)
            if match:
                self.port = int(match.group(1))
                self._ready.set()
        self._ready.set()

    def url(self, path: str = "/") -> str:
        return f"wss://127.0.0.1:{self.port}{path}"

    def tls_lines(self, count: int, timeout: float = 5.0) -> list[re.Match[str]]:
        """The first `count` WSBENCH-TLS lines, waiting for them a little."""
        deadline = time.monotonic() + timeout
        while True:
            found = [m for m in (TLS_LINE.match(line) for line in self.lines) if m]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.02)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def stop(self) -> None:
        """SIGTERM to its process group (it exits 0 by the contract), SIGKILL if it lingers."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._reader.join(timeout=5)
        self.returncode = self.proc.returncode
