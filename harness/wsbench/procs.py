"""Child processes, each in its own process group, never outliving the harness.

Every process the harness measures or waits on goes through ``spawn`` (or ``run``);
``kill_all`` (registered with atexit and called from the signal handlers in the CLI) kills
every group still alive. Two start their own process group and are stopped by their
starter: dockerd (docker/dockerd.py, which stops it in order before killing its group)
and the command ``wsbench docker engine run`` runs under it. Processes are killed by PID /
process-group id, never by name, and every kill goes through ``signal_group``: a kill the
kernel refuses is not ignored but returned as a one-line problem (``terminate``,
``forget``, ``signal_group``).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import resource
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

_live: dict[int, subprocess.Popen[bytes]] = {}


def spawn(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None,
          stderr_path: Path | None = None, stdin_pipe: bool = False,
          cpus: Iterable[int] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` as the leader of a new process group, stdout (and optionally stdin)
    piped; ``cpus``: run it (and every thread it starts) on these CPUs only."""
    stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True,
            preexec_fn=_child_setup(frozenset(cpus) if cpus is not None else None))
    finally:
        if stderr_path:
            stderr.close()  # type: ignore[union-attr]
    _live[proc.pid] = proc
    return proc


def run(argv: Sequence[str], cwd: Path, timeout_s: float, stdout_path: Path | None = None,
        stdin_path: Path | None = None, stderr_path: Path | None = None,
        env: dict[str, str] | None = None) -> int:
    """Run a short-lived tool to completion in its own process group, stdin and stdout from
    and to files; returns its exit code. Past ``timeout_s`` its group is killed and
    TimeoutError raised. (Raises OSError when it cannot be started.)"""
    files = [open(stdin_path, "rb") if stdin_path else None, open(stdout_path, "wb") if stdout_path else None,
             open(stderr_path, "ab") if stderr_path else None]
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=files[0] or subprocess.DEVNULL,
                                stdout=files[1] or subprocess.DEVNULL, stderr=files[2] or subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_child_setup(None))
    finally:
        for f in files:
            if f:
                f.close()
    _live[proc.pid] = proc
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"{Path(argv[0]).name} did not finish within {timeout_s:g} s") from None
    finally:
        terminate(proc, grace_s=0.5)


def _child_setup(cpus: frozenset[int] | None) -> Callable[[], None]:
    """Runs in the child between fork and exec (the harness has no threads): the child is
    killed if the harness dies without cleaning up (even by SIGKILL), so no server or
    client outlives it; ``cpus``: pin it to these CPUs."""
    def setup() -> None:
        die_with_parent()
        raise_fd_limit()
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    return setup


def raise_fd_limit() -> None:
    """The soft RLIMIT_NOFILE up to the hard one (which only root could raise, and on
    some machines not even root): a server or client holding many connections may use
    every descriptor the machine gives a process. The limits that applied are recorded
    (environment.limits, measure.py)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass  # left as it was: the recorded limits say so


_PR_SET_PDEATHSIG = 1
# Resolved once, here: die_with_parent runs in a forked child before exec, where a
# dlopen (what ctypes.CDLL does) could deadlock on a lock another thread of the parent
# held at fork time (Dask's workers are threaded).
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent() -> None:
    """Linux prctl(PR_SET_PDEATHSIG, SIGKILL) for the calling (child) process."""
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def terminate(proc: subprocess.Popen[bytes], grace_s: float = 2.0) -> str | None:
    """SIGTERM the process group, then SIGKILL it if it is still there after ``grace_s``.
    Returns None, or why the group could not be killed."""
    pgid = proc.pid
    release(proc)
    problem = None
    if proc.poll() is None:
        problem = signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    # Stragglers in the group (children of the leader) go too.
    problem = signal_group(pgid, signal.SIGKILL) or problem
    if proc.poll() is None:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            problem = problem or f"process {pgid} survived SIGKILL for 10 s"
    if proc.stdout:
        proc.stdout.close()
    _live.pop(proc.pid, None)
    return problem


def release(proc: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (a held client takes end-of-file as its cue to exit)."""
    if proc.stdin and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass


def forget(proc: subprocess.Popen[bytes]) -> str | None:
    """The process was reaped by the caller; kill anything left in its group. Returns
    None, or why that kill failed."""
    release(proc)
    problem = signal_group(proc.pid, signal.SIGKILL)
    if proc.stdout:
        proc.stdout.close()
    _live.pop(proc.pid, None)
    return problem


def kill_all() -> None:
    for proc in list(_live.values()):
        terminate(proc, grace_s=1.0)


def signal_group(pgid: int, sig: int) -> str | None:
    """Signal a process group; None, or why the kernel refused (a group that is already
    gone is not a problem)."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except OSError as exc:
        return f"cannot send {signal.Signals(sig).name} to process group {pgid}: {exc.strerror}"
    return None


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


def tell(proc: subprocess.Popen[bytes], line: str) -> str | None:
    """Write one line to the child's stdin; None, or why it could not be written."""
    if proc.stdin is None or proc.stdin.closed:
        return "its stdin is closed"
    try:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
    except OSError as exc:
        return f"cannot write to its stdin: {exc.strerror or exc}"
    return None
