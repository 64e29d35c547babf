"""Starting an echo server and waiting for its readiness line (servers/README.md)."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen
from typing import Iterable, Protocol

from . import procs
from .logs import last_line
from .catalog import Program
from .errors import WsbenchError
from .paths import ROOT

READY = re.compile(r"^WSBENCH-READY port=(\d+)\s*$")


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


@dataclass
class RunningServer:
    program: Program
    proc: Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def url(self, path: str = "/") -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

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
    log = log_dir / f"server-{program.name}.log"
    env = {**os.environ, **program.env}
    try:
        proc = procs.spawn([*program.command, "--port", "0"], cwd=ROOT, env=env, stderr_path=log, cpus=cpus)
    except OSError as exc:
        raise WsbenchError(f"server '{program.name}': cannot start {program.command[0]}: {exc.strerror}") from None
    reader = procs.LineReader(proc)
    ready_timeout_s = program.ready_timeout_s
    deadline = time.monotonic() + ready_timeout_s
    try:
        while True:
            line = reader.readline(deadline)
            if line is None:
                break
            match = READY.match(line)
            if match:
                return RunningServer(program, proc, int(match.group(1)), log)
    finally:
        reader.close()
    procs.terminate(proc)
    if reader.eof:
        why = f"exited with code {proc.returncode} before its readiness line"
    else:
        why = f"printed no readiness line within {ready_timeout_s:g} s"
    raise WsbenchError(f"server '{program.name}': {why} (log: {log}{last_line(log)})")
