"""Programs a test starts: each in a process group of its own, so that it and every child
it starts are ended together, by process group (never by name); a server's readiness is
its ``WSBENCH-READY port=N`` line, read with a deadline; a program a test will Ctrl-C has
SIGINT as a terminal's foreground job has it.

``Background``: a server-like program in the background, every stdout line kept (drained
all along by a thread), its stderr in a file; ``spawn`` and ``end_group`` for the programs
a test drives itself."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Sequence

from wsbench.procs import die_with_parent

from . import ROOT

READY = re.compile(r"^WSBENCH-READY port=(\d+)$")


def ctrl_c_as_at_a_terminal() -> None:
    """preexec_fn of a process a test will Ctrl-C: SIGINT back to its default, as a
    terminal's foreground job has it, even when the tests run in a background job (which
    starts with SIGINT ignored, and passes that on)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(argv: Sequence[str], *, preexec: Callable[[], None] | None = None, **popen: Any) -> subprocess.Popen:
    """``argv`` in a new session (its own process group), killed with pytest when started
    from pytest's main thread (the harness's ``procs.die_with_parent``, PR_SET_PDEATHSIG:
    even when pytest is killed before its fixtures' teardown runs, no peer keeps listening;
    it follows the starting thread, so a helper thread's child would die with the thread);
    ``preexec`` runs after that in the child."""
    tied = threading.current_thread() is threading.main_thread()

    def child() -> None:
        if tied:
            die_with_parent()
        if preexec is not None:
            preexec()

    return subprocess.Popen([str(a) for a in argv], start_new_session=True, preexec_fn=child, **popen)


def end_group(proc: subprocess.Popen, grace: float = 5.0) -> int:
    """SIGTERM to the process group (a server exits 0 by the contract), SIGKILL if it
    lingers past ``grace`` seconds; returns the exit code."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            kill_group(proc)
    return proc.wait()


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group, and reap the leader."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def ctrl_c(proc: subprocess.Popen, timeout: float = 30) -> tuple[str, str]:
    """Ctrl-C ``proc`` (started in its own session, with ``ctrl_c_as_at_a_terminal``) and
    wait for its end: its stdout and stderr. Its process group is killed if it outlives
    ``timeout``."""
    try:
        os.kill(proc.pid, signal.SIGINT)
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            kill_group(proc)


class Background:
    """A program in the background that announces its port (``WSBENCH-READY port=N``
    within ``ready_s``); every stdout line after that one kept in ``lines``. A context
    manager, or call ``stop()``."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None, cwd: Any = ROOT,
                 ready_s: float = 20.0, preexec: Callable[[], None] | None = None) -> None:
        self.argv = [str(a) for a in argv]
        self.port = 0
        self.lines: list[str] = []
        self.returncode: int | None = None
        self._stderr = tempfile.TemporaryFile()
        self.proc = spawn(self.argv, preexec=preexec, cwd=cwd, env={**os.environ, **(env or {})}, text=True,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr)
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not self._ready.wait(ready_s) or not self.port:
            self.stop()
            raise AssertionError(f"{self.argv[0]}: no readiness line within {ready_s:g} s; "
                                 f"stderr: {self.stderr()[-500:]}")

    def __enter__(self) -> "Background":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            match = READY.match(line)
            if match and not self.port:
                self.port = int(match.group(1))
                self._ready.set()
            else:
                self.lines.append(line)
        self._ready.set()

    def wait_line(self, prefix: str, timeout: float = 10) -> list[str]:
        """The lines starting with ``prefix``, waiting up to ``timeout`` for the first one
        (and 0.1 s more for those right behind it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(line.startswith(prefix) for line in self.lines):
                time.sleep(0.1)
                return [line for line in self.lines if line.startswith(prefix)]
            time.sleep(0.02)
        return []

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL if it lingers (``end_group``)."""
        self.returncode = end_group(self.proc)
        self._reader.join(timeout=5)
