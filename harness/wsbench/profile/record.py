"""``perf record`` on one process, recording only between ``enable`` and ``disable``.

perf attaches to the process (``-p PID``) with its events disabled (``-D -1``) when the
client is at its start barrier; the harness then enables them over perf's control FIFO
(``--control fifo:CTL,ACK``), waits for perf's ``ack`` before it lets the client go, and
disables them the moment the client reports its result. So the samples are of the
measured phase only. (perf records no mmap while its events are disabled: attached
earlier, it missed the JIT code mapped during the warm-up.) Samples are taken on
the ``cpu-clock`` software event (hardware counters are not available on these machines)
with frame-pointer call graphs (``-g``).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import procs
from ..paths import ROOT

DEFAULT_FREQUENCY = 999  # samples per second per CPU (odd, so it does not beat with timers)
ACK_TIMEOUT_S = 10.0


@dataclass
class PerfRecord:
    """One running ``perf record``; every method returns None or a one-line problem."""

    perf: str
    pid: int  # the process recorded
    data: Path  # perf.data written here
    log: Path
    frequency: int = DEFAULT_FREQUENCY
    proc: subprocess.Popen[bytes] | None = None
    _dir: tempfile.TemporaryDirectory[str] | None = None
    _ctl: int = -1
    _ack: int = -1
    enabled_s: float = 0.0  # how long the events were enabled
    _since: float | None = None
    problems: list[str] = field(default_factory=list)

    def start(self) -> str | None:
        self._dir = tempfile.TemporaryDirectory(prefix="wsbench-perf-")
        ctl, ack = Path(self._dir.name) / "ctl", Path(self._dir.name) / "ack"
        os.mkfifo(ctl)
        os.mkfifo(ack)
        # O_RDWR: opening a FIFO this way never blocks, whether or not perf has opened it yet.
        self._ctl = os.open(ctl, os.O_RDWR)
        self._ack = os.open(ack, os.O_RDWR | os.O_NONBLOCK)
        argv = [self.perf, "record", "-e", "cpu-clock", "-F", str(self.frequency), "-g", "-p", str(self.pid),
                "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-o", str(self.data)]
        try:
            self.proc = procs.spawn(argv, cwd=ROOT, stderr_path=self.log)
        except OSError as exc:
            return f"cannot start perf: {exc.strerror}"
        return None

    def _command(self, word: str) -> str | None:
        if self.proc is None:
            return "perf is not running"
        os.write(self._ctl, word.encode() + b"\n")
        deadline = time.monotonic() + ACK_TIMEOUT_S
        got = b""
        while b"ack" not in got:
            if self.proc.poll() is not None:
                return f"perf exited with code {self.proc.returncode} before it acknowledged '{word}' (log: {self.log})"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return f"perf did not acknowledge '{word}' within {ACK_TIMEOUT_S:g} s (log: {self.log})"
            ready, _, _ = select.select([self._ack], [], [], min(remaining, 0.2))
            if ready:
                try:
                    got += os.read(self._ack, 64)
                except BlockingIOError:
                    pass
        return None

    def enable(self) -> str | None:
        problem = self._command("enable")
        if problem is None:
            self._since = time.monotonic()
        return problem

    def disable(self) -> str | None:
        problem = self._command("disable")
        if self._since is not None:
            self.enabled_s += time.monotonic() - self._since
            self._since = None
        return problem

    def stop(self, timeout_s: float = 60.0) -> str | None:
        """Let perf write its data and exit (SIGINT), then clean up; None or a problem."""
        problem = None
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.kill(self.proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
                try:
                    self.proc.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    problem = f"perf did not finish writing within {timeout_s:g} s"
            killed = procs.terminate(self.proc, grace_s=0.5)
            problem = problem or killed
            if self.proc.returncode not in (0, -signal.SIGINT, 130) and problem is None:
                problem = f"perf record exited with code {self.proc.returncode} (log: {self.log})"
        for fd in (self._ctl, self._ack):
            if fd >= 0:
                os.close(fd)
        self._ctl = self._ack = -1
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        if problem is None and not self.data.is_file():
            problem = f"perf wrote no {self.data.name} (log: {self.log})"
        return problem
