"""Starting an echo server, waiting for its readiness line (and taking the ``WSBENCH-INFO``
line it may print before it: what the server's implementation uses, e.g. ws with or
without bufferutil), and reading what it prints afterwards (servers/README.md): the
``WSBENCH-TLS`` line of every TLS connection, the ``WSBENCH-DEFLATE`` line of every
connection to a server with permessage-deflate on (deflate.py). Its stdout is read until it exits, so a
server that prints per connection never blocks."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import Popen
from typing import Any, Iterable, Protocol

from . import procs
from .logs import last_line
from .catalog import Program
from .deflate import parse_deflate_line
from .errors import WsbenchError
from .paths import ROOT

READY = re.compile(r"^WSBENCH-READY port=(\d+)\s*$")
INFO = re.compile(r"^WSBENCH-INFO (\{.*\})\s*$")
TLS_LINE = re.compile(r'^WSBENCH-TLS version=(\S+) cipher=(\S+) group=(\S+) resumed=(yes|no|\?) '
                      r'library=("[^"]*"|\?)$')
SETTLE_S = 0.05  # after a client's result: for the reader to take what the server printed last


class ServerHandle(Protocol):
    """What a cell needs of a server: its catalog entry, its URL, whether it still runs,
    and the process whose CPU and memory are read (``pid`` None: not readable, e.g. a
    server wsbench did not start; the readings are then "n/a (external)")."""

    program: Program
    log: Path

    @property
    def pid(self) -> int | None: ...

    def url(self, path: str = "/") -> str: ...

    def alive(self) -> bool: ...

    def stop(self) -> str | None: ...

    def stdout_mark(self) -> int: ...

    def printed(self, since: int) -> dict[str, list[dict[str, Any]]]: ...


def parse_info_line(line: str) -> dict[str, Any] | None:
    """A WSBENCH-INFO line's object (servers/README.md, item 14), or None for any other line
    (and for one whose JSON is not an object)."""
    m = INFO.match(line.strip())
    if not m:
        return None
    try:
        value = json.loads(m.group(1))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_tls_line(line: str) -> dict[str, Any] | None:
    """A WSBENCH-TLS line as a dict (``?`` fields None), or None for any other line."""
    m = TLS_LINE.match(line.strip())
    if not m:
        return None
    version, cipher, group, resumed, library = (None if v == "?" else v for v in m.groups())
    return {"version": version, "cipher": cipher, "group": group,
            "resumed": None if resumed is None else resumed == "yes",
            "library": library.strip('"') if library else None}


@dataclass
class StdoutTail:
    """Reads a server's stdout after its readiness line, in a thread, until it exits;
    keeps the WSBENCH-TLS and WSBENCH-DEFLATE lines, in order, each as (kind, fields)."""

    reader: procs.LineReader
    lines: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        threading.Thread(target=self._run, name="server-stdout", daemon=True).start()

    def _run(self) -> None:
        try:
            while True:
                line = self.reader.readline(time.monotonic() + 3600)
                if line is None:
                    if self.reader.eof:
                        return
                    continue
                for kind, parse in (("tls", parse_tls_line), ("deflate", parse_deflate_line)):
                    parsed = parse(line)
                    if parsed is not None:
                        with self._lock:
                            self.lines.append((kind, parsed))
        except (OSError, ValueError):
            return  # the server is being stopped: its stdout was closed under us
        finally:
            self.reader.close()

    def mark(self) -> int:
        with self._lock:
            return len(self.lines)

    def since(self, mark: int) -> dict[str, list[dict[str, Any]]]:
        """The lines kept since ``mark``, by kind, in order."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self._lock:
            for kind, fields in self.lines[mark:]:
                out.setdefault(kind, []).append(fields)
        return out


@dataclass
class RunningServer:
    program: Program
    proc: Popen[bytes]
    port: int
    log: Path
    tail: StdoutTail | None = None
    info: dict[str, Any] | None = None  # what its WSBENCH-INFO line said of it (None: no such line)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def url(self, path: str = "/") -> str:
        return f"{'wss' if self.program.secure else 'ws'}://127.0.0.1:{self.port}{path}"

    def stdout_mark(self) -> int:
        return self.tail.mark() if self.tail else 0

    def printed(self, since: int) -> dict[str, list[dict[str, Any]]]:
        """The per-connection lines printed since ``stdout_mark()`` returned ``since``, by
        kind ("tls", "deflate"), after one settling pause for a server that prints them."""
        if self.tail is None or not (self.program.secure or self.program.compressed):
            return {}
        time.sleep(SETTLE_S)
        return self.tail.since(since)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> str | None:
        """Stop the server's process group; None, or why it could not be killed."""
        return procs.terminate(self.proc)


def start_server(program: Program, log_dir: Path, cpus: Iterable[int] | None = None) -> RunningServer:
    """Start ``program`` on a free loopback port (on ``cpus`` only, if given); raise
    WsbenchError if it never gets ready."""
    missing = program.missing()
    if missing:
        raise WsbenchError(f"server '{program.name}': {missing[0]} is missing; run: make setup")
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"server-{program.name}.log".replace("/", "~")
    env = {**os.environ, **program.env}
    try:
        proc = procs.spawn([*program.command, "--port", "0"], cwd=ROOT, env=env, stderr_path=log, cpus=cpus)
    except OSError as exc:
        raise WsbenchError(f"server '{program.name}': cannot start {program.command[0]}: {exc.strerror}") from None
    reader = procs.LineReader(proc)
    ready_timeout_s = program.ready_timeout_s
    deadline = time.monotonic() + ready_timeout_s
    info = None
    while True:
        line = reader.readline(deadline)
        if line is None:
            break
        match = READY.match(line)
        if match:
            tail = StdoutTail(reader)
            tail.start()
            return RunningServer(program, proc, int(match.group(1)), log, tail, info)
        info = parse_info_line(line) or info
    reader.close()
    procs.terminate(proc)
    if reader.eof:
        why = f"exited with code {proc.returncode} before its readiness line"
    else:
        why = f"printed no readiness line within {ready_timeout_s:g} s"
    raise WsbenchError(f"server '{program.name}': {why} (log: {log}{last_line(log)})")
