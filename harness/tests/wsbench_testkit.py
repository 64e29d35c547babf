"""Shared helpers for the harness tests: a scratch catalog of Python fake servers/clients, a CLI runner."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = HERE / "fixtures"
PY = sys.executable


def fake_catalog(path: Path, servers: dict[str, list[str]], clients: dict[str, dict[str, str]]) -> Path:
    """Write a runtimes file whose servers and clients are the Python fixtures."""
    lines = ['[runtimes.python]', 'label = "Python"', f'version = ["{PY}", "--version"]', ""]
    for name, extra in servers.items():
        argv = [PY, str(FIXTURES / "echo_server.py"), *extra]
        lines += [f"[servers.{name}]", 'runtime = "python"', f'label = "{name}"',
                  f"command = {json.dumps(argv)}", "ready_timeout_s = 3", ""]
    for name, env in clients.items():
        argv = [PY, str(FIXTURES / "client.py")]
        lines += [f"[clients.{name}]", 'runtime = "python"', f'label = "{name}"',
                  f"command = {json.dumps(argv)}", f"env = {_inline(env)}", ""]
    path.write_text("\n".join(lines))
    return path


def _inline(env: dict[str, str]) -> str:
    return "{" + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + "}"


def tiny_workloads(directory: Path, count: int = 50, timeout_s: float = 10) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "w.toml").write_text(textwrap.dedent(f"""
        [workload.tiny]
        description = "tiny"
        type = "binary"
        size = 100
        count = {count}
        warmup = 5
        mode = "pingpong"
        timeout_s = {timeout_s}

        [suite.t]
        description = "t"
        workloads = ["tiny"]
        repetitions = 2
        min_seconds = 0
    """))
    return directory


def wsbench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "wsbench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def load_run(out: Path) -> dict[str, Any]:
    files = sorted(out.glob("run-*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def announced_ports(stderr: str) -> list[int]:
    """The ports the harness reported its servers ready on."""
    return [int(p) for p in re.findall(r"ready on port (\d+)", stderr)]


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C a wsbench started in its own session: it must exit 130 without a traceback
    and leave no process of its group behind. Returns its stdout and stderr."""
    try:
        os.kill(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    leftovers = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""
    return stdout, stderr
