"""make setup-openssl's last step: the QuickJS client built against another OpenSSL
(scripts/setup-openssl.sh) makes a few wss:// connections to lws-echo, and the qjs
process's /proc/PID/maps holds exactly one libssl.so.3 and one libcrypto.so.3, both from
that OpenSSL's prefix (its libwebsockets.so was built against the system's: the same
sonames, loaded once).

    python scripts/openssl_check.py PREFIX CLIENT_MJS

Prints one line: what was loaded, and the group and cipher lws-echo saw. Exit 1 with one
line naming what is wrong otherwise. Every process it starts is killed by its pid.
"""
from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TLS = ROOT / "build" / "tls"
TIMEOUT_S = 30.0


class CheckFailed(Exception):
    pass


def readline(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stdout is not None
    name = Path(str(proc.args[0] if isinstance(proc.args, list) else proc.args)).name
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
        raise CheckFailed(f"{name}: no line within {TIMEOUT_S:.0f} s")
    line = proc.stdout.readline()
    if not line:
        raise CheckFailed(f"{name} exited (code {proc.wait()})")
    return line.strip()


def wait_for(proc: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        match = re.match(pattern, readline(proc, deadline))
        if match:
            return match


def openssl_maps(pid: int) -> set[str]:
    """The paths of the libssl and libcrypto objects mapped into process ``pid``."""
    text = Path(f"/proc/{pid}/maps").read_text()
    return {line.split()[-1] for line in text.splitlines()
            if re.search(r"/lib(ssl|crypto)\.so", line.split()[-1] if line.split() else "")}


def kill(proc: subprocess.Popen[str] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def check(prefix: Path, client: Path) -> str:
    server = qjs = None
    try:
        server = subprocess.Popen([str(ROOT / "build/bin/lws-echo"), "--port", "0", "--tls-cert",
                                   str(TLS / "server.pem"), "--tls-key", str(TLS / "server.key")],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        port = wait_for(server, r"^WSBENCH-READY port=(\d+)$").group(1)
        env = {**os.environ, "WSBENCH_HOLD": "1", "QJSWS_CA_FILE": str(TLS / "ca.pem")}
        qjs = subprocess.Popen([str(ROOT / "build/prefix/bin/qjs"), str(client), "--url",
                                f"wss://127.0.0.1:{port}/", "--kind", "handshake", "--count", "3",
                                "--warmup", "0", "--min-ms", "0"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=env, cwd=ROOT)
        wait_for(qjs, r"^WSBENCH-START$")
        maps = openssl_maps(qjs.pid)
        ours = {p for p in maps if Path(p).resolve().is_relative_to(prefix.resolve())}
        names = sorted(Path(p).name for p in maps)
        if names != ["libcrypto.so.3", "libssl.so.3"] or ours != maps:
            raise CheckFailed(f"qjs maps {', '.join(sorted(maps)) or 'no OpenSSL'}: want libssl.so.3 and "
                              f"libcrypto.so.3 from {prefix} alone")
        assert qjs.stdin is not None
        qjs.stdin.write("GO\n")
        qjs.stdin.flush()
        result = json.loads(readline(qjs, time.monotonic() + TIMEOUT_S))
        if "error" in result:
            raise CheckFailed(f"the client failed: {str(result['error'])[:200]}")
        tls = wait_for(server, r"^WSBENCH-TLS (.*)$").group(1)
        qjs.stdin.close()
        if qjs.wait(timeout=TIMEOUT_S) != 0:
            raise CheckFailed(f"the client exited with code {qjs.returncode}")
        return f"qjs on {' and '.join(sorted(maps))}: 3 wss:// connections; lws-echo saw: {tls}"
    finally:
        kill(qjs)
        kill(server)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: openssl_check.py PREFIX CLIENT_MJS", file=sys.stderr)
        return 2
    try:
        print(check(Path(argv[1]), Path(argv[2])))
    except (CheckFailed, OSError, ValueError, subprocess.TimeoutExpired) as exc:
        print(f"openssl_check: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
