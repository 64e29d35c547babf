"""Child processes, each in its own process group, never outliving the harness.

Every process the harness starts goes through ``spawn``; ``kill_all`` (registered with
atexit and called from the signal handlers in the CLI) kills every group still alive.
Processes are killed by PID / process-group id, never by name.
"""

from __future__ import annotations

import atexit
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

_live: dict[int, subprocess.Popen[bytes]] = {}


def spawn(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None,
          stderr_path: Path | None = None, stdin_pipe: bool = False) -> subprocess.Popen[bytes]:
    """Start ``argv`` as the leader of a new process group, stdout (and optionally stdin) piped."""
    stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
    finally:
        if stderr_path:
            stderr.close()  # type: ignore[union-attr]
    _live[proc.pid] = proc
    return proc


def terminate(proc: subprocess.Popen[bytes], grace_s: float = 2.0) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after ``grace_s``."""
    pgid = proc.pid
    release(proc)
    if proc.poll() is None:
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    # Stragglers in the group (children of the leader) go too.
    _signal_group(pgid, signal.SIGKILL)
    if proc.poll() is None:
        proc.wait()
    if proc.stdout:
        proc.stdout.close()
    _live.pop(proc.pid, None)


def release(proc: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (a held client takes end-of-file as its cue to exit)."""
    if proc.stdin and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass


def forget(proc: subprocess.Popen[bytes]) -> None:
    """The process was reaped by the caller; kill anything left in its group."""
    release(proc)
    _signal_group(proc.pid, signal.SIGKILL)
    if proc.stdout:
        proc.stdout.close()
    _live.pop(proc.pid, None)


def kill_all() -> None:
    for proc in list(_live.values()):
        terminate(proc, grace_s=1.0)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


atexit.register(kill_all)


@dataclass
class LineReader:
    """Reads whole lines from a child's stdout with a deadline."""

    proc: subprocess.Popen[bytes]
    _buffer: bytes = b""
    _selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    _eof: bool = False

    def __post_init__(self) -> None:
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)

    def readline(self, deadline: float) -> str | None:
        """Next line without its newline; None at EOF or when the deadline passes."""
        while True:
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                return line.decode("utf-8", "replace").rstrip("\r")
            if self._eof:
                if self._buffer:
                    line, self._buffer = self._buffer, b""
                    return line.decode("utf-8", "replace")
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if not self._selector.select(timeout=min(remaining, 0.5)):
                continue
            assert self.proc.stdout is not None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True

    @property
    def eof(self) -> bool:
        return self._eof and not self._buffer

    def close(self) -> None:
        self._selector.close()
