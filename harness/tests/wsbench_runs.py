"""What the harness tests share: scratch catalogs of Python fake servers and clients, tiny
workloads, a wsbench CLI run (and one Ctrl-C'd), the run file it wrote. Processes, raw
frames and TLS: the test kit (testkit/)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from testkit.background import ctrl_c, ctrl_c_as_at_a_terminal, kill_group, spawn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = HERE / "fixtures"
PY = sys.executable


def fake_catalog(path: Path, servers: dict[str, list[str]], clients: dict[str, dict[str, str]],
                 client_lines: tuple[str, ...] = ()) -> Path:
    """Write a runtimes file whose servers and clients are the Python fixtures;
    ``client_lines``: more TOML lines for every client (``barrier = "http"``)."""
    lines = ['[runtimes.python]', 'label = "Python"', f'version = ["{PY}", "--version"]', ""]
    for name, extra in servers.items():
        argv = [PY, str(FIXTURES / "echo_server.py"), *extra]
        lines += [f"[servers.{name}]", 'runtime = "python"', f'label = "{name}"',
                  f"command = {json.dumps(argv)}", "ready_timeout_s = 3", ""]
    for name, env in clients.items():
        argv = [PY, str(FIXTURES / "client.py")]
        lines += [f"[clients.{name}]", 'runtime = "python"', f'label = "{name}"',
                  f"command = {json.dumps(argv)}", f"env = {_inline(env)}", *client_lines, ""]
    path.write_text("\n".join(lines))
    return path


def lax_server_entry(*extra: str) -> list[str]:
    """The catalog lines of the test-only lax server (fixtures/lax_server.py: echoes
    anything, checks nothing) and of its Python runtime; ``extra``: its options."""
    argv = [PY, str(FIXTURES / "lax_server.py"), *extra]
    return ['[runtimes.python]', 'label = "Python"', f'version = ["{PY}", "--version"]', "",
            "[servers.lax]", 'runtime = "python"', 'label = "lax echo (checks nothing)"',
            f"command = {json.dumps(argv)}", "ready_timeout_s = 5", ""]


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


def started(*args: str, first_line: str, settle_s: float = 2.0) -> subprocess.Popen[str]:
    """A wsbench started in its own session (for ``interrupt``), returned once it has
    printed ``first_line`` on stderr (its handlers are in place then) and ``settle_s``
    more have passed."""
    proc = spawn([PY, "-m", "wsbench", *args], preexec=ctrl_c_as_at_a_terminal, cwd=ROOT, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith(first_line), first
        time.sleep(settle_s)
    except BaseException:
        kill_group(proc)
        raise
    return proc


def interrupt(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C a wsbench started in its own session: it must exit 130 without a traceback
    and leave no process of its group behind. Returns its stdout and stderr."""
    stdout, stderr = ctrl_c(proc)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    leftovers = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""
    return stdout, stderr


def observe_catalog(path: Path, clients: dict[str, str], tls: dict[str, str] | None = None) -> Path:
    """A runtimes file whose clients are the observe fixture (FAKE_CLIENT = the behaviour
    given); ``tls``: per client that speaks TLS, its fixture file (it trusts the test CA
    by --ca); the others cannot (notes.tls)."""
    lines = ['[runtimes.python]', 'label = "Python"', f'version = ["{PY}", "--version"]', "", "[servers]", ""]
    for name, behaviour in clients.items():
        script = (tls or {}).get(name, "observe_client.py")
        lines += [f"[clients.{name}]", 'runtime = "python"', f'label = "{name}"',
                  f"command = {json.dumps([PY, str(FIXTURES / script)])}",
                  f'env = {{ FAKE_CLIENT = "{behaviour}" }}',
                  'tls = { args = ["--ca", "{ca}"] }' if tls and name in tls
                  else 'notes = { tls = "a plain test client" }', ""]
    path.write_text("\n".join(lines))
    return path
